from __future__ import annotations

import itertools
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import matplotlib as mpl
import matrices
import numpy as np
import pandas as pd
import pytest
from conftest import FAST
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

import ctxbench
from ctxbench import compare as compare_runs
from ctxbench import files, plot
from ctxbench._matrix_table import grid
from ctxbench.plot import _heatmap
from ctxbench.plot import _matrix as matrix_module

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
FLAG_TEXTS = {
    "below resolution (net ≤ 0)",
    "bimodal (two modes: the median is neither)",
    "interval cut at 0 µs (it reaches below)",
}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return ctxbench.sweep(
        procs=[2, 3],
        sizes_kb=[0, 4],
        placements=["default", "single"],
        repetitions=FAST["repetitions"],
        min_time=FAST["min_time"],
        warmup=FAST["warmup"],
        progress=False,
    )


def saves(fig: Figure, path: Path) -> None:
    fig.savefig(path)
    assert path.read_bytes().startswith(b"\x89PNG")


def legend(fig: Figure) -> list[str]:
    """The texts of the figure's legend, which sits outside the axes."""
    assert not any(ax.get_legend() for ax in fig.axes), "a legend inside the axes"
    (only,) = fig.legends
    return [t.get_text() for t in only.get_texts()]


def title(fig: Figure) -> str:
    """The figure's title on one line, however it was wrapped."""
    return " ".join(fig._suptitle.get_text().split())


def bands(ax: Any) -> list[PolyCollection]:
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def curves(ax: Any) -> list[Any]:
    """The data lines of an axes (not cache marks or reference lines)."""
    return [line for line in ax.lines if not line.get_label().startswith("_cache")]


def series_colours(ax: Any) -> set[str]:
    """The colours of an axes' series: its points with bars, else its labelled lines."""
    points = [c.lines[0] for c in ax.containers if isinstance(c, ErrorbarContainer)]
    lines = points or [line for line in ax.lines if not line.get_label().startswith("_")]
    return {mpl.colors.to_hex(line.get_color()) for line in lines}


# --- synthetic frames: any number of series, any names, no measuring --------------------

PAIRS = [
    ("process", "pipe"),
    ("thread", "pipe"),
    ("thread", "futex"),
    ("fiber", "resume"),
    ("process", "eventfd"),
    ("thread", "condvar"),
]
LONG_RUN = "results-before-upgrading-the-kernel-to-6.8-on-{}.json"
LONG_HOST = "compute-node-{:02d}.cluster.cs.example-university.edu"


def synthetic(series: list[dict[str, Any]], procs: tuple[int, ...] = (2, 4, 8, 16)) -> pd.DataFrame:
    """Rows as a sweep makes them, 5 ring instances a point, one point of the first series
    flagged bimodal; fibers 100 times faster than the rest, as measured."""
    rng = np.random.default_rng(0)
    rows = []
    for i, key in enumerate(series):
        point = {
            "benchmark": "ring",
            "engine": "process",
            "transport": "pipe",
            "placement": "default",
            "size_kb": 16,
            "parallel": 1,
            "host": "node-a",
            **key,
        }
        for p in procs:
            centre = (1 + i) * (1 + 0.1 * p) * (0.01 if point["engine"] == "fiber" else 1)
            values = centre * rng.lognormal(0, 0.1, 5)
            for r, v in enumerate(values):
                rows.append(
                    {
                        **point,
                        "procs": p,
                        "repetition": r,
                        # each repetition a ring instance of its own, so runs compare
                        "instance": r,
                        "block": r,
                        "value": v,
                        "unit": "us",
                        "ci_low": np.quantile(values, 0.2),
                        "ci_high": np.quantile(values, 0.8),
                        "verdict": "bimodal" if (i, p) == (0, 4) else "stable",
                        "below_resolution": False,
                    }
                )
    return pd.DataFrame(rows)


def series_of(n: int, long: bool) -> list[dict[str, Any]]:
    """n series; long names where they are the runs' files or the fleet's hostnames."""
    if n == 1:
        return [{}]
    if n == 4 and long:
        return [
            {"engine": e, "transport": t, "run": LONG_RUN.format(node)}
            for e, t in PAIRS[:2]
            for node in ("node-a", "node-b")
        ]
    if n == 4:
        return [{"engine": e, "transport": t, "size_kb": s} for e, t in PAIRS[:2] for s in (16, 64)]
    if long:
        return [{"host": LONG_HOST.format(k)} for k in range(12)]
    return [{"engine": e, "transport": t, "size_kb": s} for e, t in PAIRS for s in (16, 64)]


def slower(df: pd.DataFrame, factor: float = 1.1) -> pd.DataFrame:
    return df.assign(
        value=df["value"] * factor, ci_low=df["ci_low"] * factor, ci_high=df["ci_high"] * factor
    )


def with_ratio_interval(comparison: pd.DataFrame) -> pd.DataFrame:
    # As issue 17 adds them to ctxbench.compare(): the ratio's interval, here ±5%.
    return comparison.assign(
        ratio_low=comparison["ratio"] * 0.95, ratio_high=comparison["ratio"] * 1.05
    )


def knees_of(df: pd.DataFrame) -> pd.DataFrame:
    """Knees as ctxbench.knees finds them: each ring size leaving L2 near 1 MiB, and one
    knee between caches."""
    procs = sorted(df["procs"].unique())
    rows = [
        {"procs": p, "working_set_kb": 1024 * (1 + 0.05 * i), "cache": "L2"}
        for i, p in enumerate(procs)
    ] + [{"procs": procs[0], "working_set_kb": 200.0, "cache": None}]
    knees = pd.DataFrame(rows)
    return knees.assign(
        working_set_low_kb=knees["working_set_kb"] / 1.2,
        working_set_high_kb=knees["working_set_kb"] * 1.2,
    )


# Machines of a fleet matrix in turn: a 2-socket SMT2 server (16 CPUs), a 2-vCPU VM, and a
# 2-socket server of two LLCs a socket (64 CPUs).
TOPOLOGIES = [(2, 1, 4, 2), (1, 1, 2, 1), (2, 2, 8, 2)]


def matrix_frame(n: int, long: bool) -> pd.DataFrame:
    """A fleet matrix frame of n machines (16, 2 and 64 CPUs in turn), by long or short
    host names."""
    hosts = [LONG_HOST.format(k) if long else f"node-{k}" for k in range(n)]
    return matrices.fleet(TOPOLOGIES, hosts)


def every_figure(df: pd.DataFrame, size: str) -> dict[str, Callable[[], Figure]]:
    """Every ctxbench.plot function (and its before/after form) on one frame."""
    cached = df.assign(cache_L1d_kb=32, cache_L2_kb=1024)
    return {
        "lat_ctx": lambda: plot.lat_ctx(df, size=size),
        "lat_ctx log": lambda: plot.lat_ctx(df, size=size, log=True),
        "sizes": lambda: plot.sizes(cached, size=size),
        "sizes knees": lambda: plot.sizes(cached, size=size, knees=knees_of(df)),
        "compare": lambda: plot.compare(df, size=size),
        "compare log": lambda: plot.compare(df, size=size, log=True),
        "compare new=": lambda: plot.compare(df, new=slower(df), size=size),
        "compare frame": lambda: plot.compare(
            with_ratio_interval(compare_runs(df, slower(df))), size=size
        ),
        "distribution": lambda: plot.distribution(df, size=size),
        "machines": lambda: plot.machines(df, size=size),
    }


# --- text layout, measured on the drawn figure ------------------------------------------


def drawn_texts(fig: Figure) -> tuple[list[tuple[Text, Any]], Any]:
    """Every non-empty text the figure draws (tick labels only of the ticks drawn), with
    its bounding box in pixels after the layout."""
    drawn: dict[int, Text] = {}
    draw = Text.draw

    def record(self: Text, renderer: Any) -> None:
        draw(self, renderer)
        if self.get_visible() and self.get_text().strip():
            drawn[id(self)] = self

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    with mock.patch.object(Text, "draw", record):
        fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    return [(t, t.get_window_extent(renderer)) for t in drawn.values()], renderer


def _overlap(a: Any, b: Any) -> bool:
    # More than a pixel each way: boxes that touch are fine.
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1


def _outside(box: Any, fig: Figure) -> bool:
    w, h = fig.bbox.width, fig.bbox.height
    return box.x0 < -1 or box.y0 < -1 or box.x1 > w + 1 or box.y1 > h + 1


def layout_faults(fig: Figure) -> list[str]:
    """Texts cut off by the figure's edge, texts over texts, legends over texts or over a
    plotting area: each as one line."""
    texts, renderer = drawn_texts(fig)
    faults = [f"clipped: {t.get_text()!r}" for t, box in texts if _outside(box, fig)]
    faults += [
        f"overlap: {a.get_text()!r} / {b.get_text()!r}"
        for (a, box_a), (b, box_b) in itertools.combinations(texts, 2)
        if _overlap(box_a, box_b)
    ]
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    for leg in legends:
        box = leg.get_window_extent(renderer)
        own = {id(t) for t in [*leg.get_texts(), leg.get_title()]}
        if _outside(box, fig):
            faults.append("legend clipped")
        faults += [
            f"legend over {t.get_text()!r}"
            for t, b in texts
            if id(t) not in own and _overlap(box, b)
        ]
        faults += ["legend over an axes" for ax in fig.axes if _overlap(box, ax.bbox)]
    return faults


def test_layout_check_sees_collisions() -> None:
    """The check itself: a legend over the title, a text off the edge, two texts on one
    spot are each reported."""
    fig = plot.lat_ctx(synthetic(series_of(1, False)), size="column")
    fig.legends[0].set_loc("upper center")
    fig.legends[0].set_bbox_to_anchor((0.5, 1.0), transform=fig.transFigure)
    fig.text(1.02, 0.5, "off the edge")
    fig.axes[0].text(0.5, 0.5, "here", transform=fig.axes[0].transAxes)
    fig.axes[0].text(0.5, 0.5, "here too", transform=fig.axes[0].transAxes)
    faults = layout_faults(fig)
    assert any(f.startswith("legend over 'Context-switch") for f in faults)
    assert "clipped: 'off the edge'" in faults
    assert "overlap: 'here' / 'here too'" in faults


def layout_cases() -> list[Any]:
    """(figure, size, series, long names) for every figure at both presets with 1, 4 and
    12 series, and long names with 4 and 12. The quick loop takes the hardest case of each
    (12 series with long names); the full suite every case."""
    counts = [(1, False), (4, False), (12, False), (4, True), (12, True)]
    return [
        pytest.param(
            kind,
            size,
            n,
            long,
            id=f"{kind}-{size}-{n}{'-long' if long else ''}",
            marks=() if (n, long) == (12, True) else pytest.mark.slow,
        )
        for kind in [*every_figure(pd.DataFrame(), "page"), "matrix"]
        for size in ("column", "page")
        for n, long in counts
    ]


@pytest.mark.parametrize("kind, size, n, long", layout_cases())
def test_no_text_collides_or_is_clipped(kind: str, size: str, n: int, long: bool) -> None:
    # A matrix's series are the machines of a fleet run, drawn side by side.
    if kind == "matrix":
        fig = plot.matrix(matrix_frame(n, long), size=size)
        assert len([ax for ax in fig.axes if ax.images]) == n
    else:
        fig = every_figure(synthetic(series_of(n, long)), size)[kind]()
    assert layout_faults(fig) == []
    width = {"column": 3.5, "page": 7.16}[size]
    assert fig.get_size_inches()[0] == pytest.approx(width)
    # Small multiples: never more than six series on one axes.
    assert all(len(series_colours(ax)) <= 6 for ax in fig.axes)


MATRICES = {
    "2-cpus": lambda: matrices.frame(1, 1, 2, 1),
    "16-cpus": lambda: matrices.frame(2, 1, 4, 2),
    "64-cpus": lambda: matrices.frame(2, 2, 8, 2),
    "16-cpus-classes": lambda: matrices.frame(2, 1, 4, 2, every=3),
}


@pytest.mark.parametrize(
    "case, size",
    [
        pytest.param(case, size, marks=() if case == "64-cpus" else pytest.mark.slow)
        for case in MATRICES
        for size in ("column", "page")
    ],
)
def test_a_matrix_of_any_size_reads(case: str, size: str) -> None:
    """2, 16 and 64 CPUs (and class mode's gaps): CPU ids thinned to where they fit,
    always at the start of a core, LLC or package; the topology's lines; values written in
    cells big enough for them."""
    df = MATRICES[case]()
    fig = plot.matrix(df, size=size)
    assert layout_faults(fig) == []
    assert fig.get_size_inches()[0] == pytest.approx({"column": 3.5, "page": 7.16}[size])
    (heatmap,) = [ax for ax in fig.axes if ax.images]
    texts, _ = drawn_texts(fig)
    shown = [t for t, _ in texts]
    cpus, _ = grid(df)
    where = _heatmap.places(df)
    starts = set(_heatmap.starts(cpus, where, "core"))
    for axis in (heatmap.xaxis, heatmap.yaxis):
        ticks = [t for t in axis.get_ticklabels() if t in shown]
        at = [round(t.get_position()[0 if axis is heatmap.xaxis else 1]) for t in ticks]
        assert 2 <= len(ticks) <= len(cpus)
        assert [t.get_text() for t in ticks] == [str(cpus[i]) for i in at]
        assert set(at) <= starts or len(ticks) == len(cpus), at
    widths = {round(line.get_linewidth(), 1) for line in heatmap.lines}
    assert {"2-cpus": {0.4}, "64-cpus": {0.9, 1.6}}.get(case, {0.4, 1.6}) <= widths
    values = [t for t in heatmap.texts if t in shown]
    assert len(values) == (4 if case == "2-cpus" else 0)
    assert np.ma.is_masked(heatmap.images[0].get_array()) == (case == "16-cpus-classes")


def test_layout_check_sees_a_crowded_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check on the matrix: 12 long host names left whole over small maps, and every
    CPU id of a 64-CPU axis, are reported."""
    whole = monkeypatch.context()
    with whole as m:
        m.setattr(matrix_module, "_shortened", lambda names, width: (names, ""))
        faults = layout_faults(plot.matrix(matrix_frame(12, True), size="column"))
    assert any("compute-node-" in f for f in faults), faults
    monkeypatch.setattr(_heatmap.GroupLocator, "tick_values", lambda self, lo, hi: self.choices[0])
    faults = layout_faults(plot.matrix(matrices.frame(2, 2, 8, 2), size="column"))
    assert any(f.startswith("overlap: '") for f in faults), faults


def test_matrix_composes_and_keeps_its_options() -> None:
    one = matrices.frame(2, 1, 4, 2)
    with plot.style():
        fig = Figure(figsize=(7.16, 3), layout="constrained")
    left, right = fig.subplots(1, 2)
    assert plot.matrix(one, summary=False, ax=left, title=False) is fig
    assert left.images and len(fig.axes) == 3, "the heatmap's colour bar beside it"
    with pytest.raises(ValueError, match="ax: this figure draws a heatmap and the per-class"):
        plot.matrix(one, ax=right)
    with pytest.raises(ValueError, match=r"ax: this figure draws a heatmap per machine \(4 here"):
        plot.matrix(matrix_frame(4, False), summary=False, ax=right)
    with pytest.raises(ValueError, match="ax, fig"):
        plot.matrix(one, summary=False, ax=right, fig=fig)
    sub = Figure(figsize=(7.16, 8)).subfigures(2, 1)
    assert plot.matrix(one, fig=sub[0]) is sub[0].figure
    assert plot.matrix(matrix_frame(4, False), fig=sub[1], title="Figure 4") is sub[1].figure
    assert layout_faults(sub[0].figure) == []
    assert len(plot.matrix(one, summary=False).axes) == 2
    assert plot.matrix(one, title=False)._suptitle is None
    # The colour scale: linear for 2-14 µs, log where asked (plain numbers), refused at 0.
    bar = plot.matrix(one).axes[-1]
    assert bar.get_yscale() == "linear"
    log = plot.matrix(one, log=True)
    labels = [t.get_text() for t, _ in drawn_texts(log)[0] if t in log.axes[-1].get_yticklabels()]
    assert log.axes[-1].get_yscale() == "log" and labels
    assert all(re.fullmatch(r"\d+(\.\d+)?", t) for t in labels), labels
    with pytest.raises(ValueError, match="log: a cell's median is <= 0"):
        plot.matrix(one.assign(latency_us=one["latency_us"] - 3), log=True)
    # Two files of `ctxbench plot`, labelled by a run column, are two matrices.
    runs = pd.concat([one.assign(run="a.json"), one.assign(run="b.json")])
    assert len([ax for ax in plot.matrix(runs).axes if ax.images]) == 2


def test_every_class_has_its_look() -> None:
    assert set(matrix_module.CLASS_STYLE) == set(ctxbench._core.RELATIONS)
    looks = list(matrix_module.CLASS_STYLE.values())
    assert len(set(looks)) == len(looks)


# --- the style ----------------------------------------------------------------------------


def test_rcparams_untouched(frame: pd.DataFrame, tmp_path: Path) -> None:
    before = dict(mpl.rcParams)
    fig = plot.lat_ctx(frame)
    fig.savefig(tmp_path / "f.pdf")
    plot.compare(frame, new=frame)
    plot.matrix(matrices.frame()).savefig(tmp_path / "m.pdf")
    with plot.style():
        assert mpl.rcParams["pdf.fonttype"] == 42
    assert dict(mpl.rcParams) == before


def test_figures_are_not_pyplots(frame: pd.DataFrame) -> None:
    # Built as Figure objects: pyplot never holds them, show() is never called.
    for fig in (plot.lat_ctx(frame), plot.compare(frame), plot.distribution(frame)):
        assert fig.canvas.manager is None


def _fonts(pdf: bytes) -> set[str]:
    """The subtypes of the font dictionaries of a PDF (matplotlib writes them uncompressed)."""
    return {m.decode() for m in re.findall(rb"/Type\s*/Font\b[^>]*?/Subtype\s*/(\w+)", pdf)} | {
        m.decode() for m in re.findall(rb"/Subtype\s*/(\w+)[^>]*?/Type\s*/Font\b", pdf)
    }


def test_pdf_has_no_type3_font(frame: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "f.pdf"
    # matplotlib's default is Type 3; the figure saves with the style's Type 42 anyway.
    with mpl.rc_context({"pdf.fonttype": 3, "ps.fonttype": 3}):
        plot.lat_ctx(frame, log=True).savefig(path)
        plot.compare(frame).savefig(tmp_path / "f.eps")
        plot.matrix(matrices.frame()).savefig(tmp_path / "m.pdf")
        fig = Figure()
        fig.add_subplot().set_title("µs")
        fig.savefig(tmp_path / "plain.pdf")
    for pdf in (path, tmp_path / "m.pdf"):
        fonts = _fonts(pdf.read_bytes())
        assert fonts and "Type3" not in fonts, fonts
        assert fonts <= {"Type0", "CIDFontType2", "TrueType"}
    assert "Type3" in _fonts((tmp_path / "plain.pdf").read_bytes())  # the check can fail
    # PostScript embeds the TrueType font itself (matplotlib 3.8 adds a Type 3 wrapper too).
    assert b"%!PS-TrueTypeFont" in (tmp_path / "f.eps").read_bytes()


def test_output_by_suffix(frame: pd.DataFrame, tmp_path: Path) -> None:
    fig = plot.lat_ctx(frame, size="column")
    for suffix in ("png", "svg", "pdf"):
        fig.savefig(tmp_path / f"f.{suffix}")
    from matplotlib.image import imread

    height, width = imread(tmp_path / "f.png").shape[:2]
    assert width == round(3.5 * 300)  # 300 dpi
    assert (tmp_path / "f.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "f.pdf").read_bytes().startswith(b"%PDF")
    # plot.save gives any figure the same: Type 42 in a pyplot-free figure of one's own.
    own = plot.figure("column")
    own.add_subplot().plot([1, 2])
    plot.save(own, tmp_path / "own.pdf")
    assert "Type3" not in _fonts((tmp_path / "own.pdf").read_bytes())


def test_size_presets(frame: pd.DataFrame) -> None:
    assert plot.SIZES["column"][0] == 3.5 and plot.SIZES["page"][0] == 7.16
    assert tuple(plot.lat_ctx(frame, size=(5, 3)).get_size_inches()) == (5, 3)
    assert plot.figure("column").get_size_inches()[0] == 3.5
    with pytest.raises(ValueError, match="size: expected 'column', 'page'"):
        plot.lat_ctx(frame, size="poster")
    with pytest.raises(ValueError, match="size: width and height"):
        plot.lat_ctx(frame, size=(0, 3))
    with pytest.raises(TypeError, match="title"):
        plot.lat_ctx(frame, title=3)


def test_title_off_or_given(frame: pd.DataFrame) -> None:
    assert plot.lat_ctx(frame, title=False)._suptitle is None
    assert title(plot.compare(frame, title="Figure 3")) == "Figure 3"


def test_log_ticks_are_plain_numbers() -> None:
    df = synthetic([{"engine": "fiber", "transport": "resume"}, {}, {"transport": "futex"}])
    for fig in (plot.lat_ctx(df, log=True), plot.compare(df, log=True), plot.distribution(df)):
        texts, _ = drawn_texts(fig)
        ax = fig.axes[0]
        axis = ax.xaxis if fig.axes[0].get_xscale() == "log" else ax.yaxis
        labels = [t.get_text() for t in axis.get_ticklabels() if t in dict(texts)]
        assert len(labels) >= 2, labels
        assert all(re.fullmatch(r"\d+(\.\d+)?", s) for s in labels), labels
    assert [plot._ticks.plain(v) for v in (0.5, 1.0, 2e-3, 20.0, 1500.0)] == [
        "0.5",
        "1",
        "0.002",
        "20",
        "1500",
    ]


def test_one_colour_per_engine_transport_everywhere() -> None:
    two = synthetic([{}, {"engine": "thread"}])
    four = synthetic([{"engine": "thread"}, {"engine": "fiber", "transport": "resume"}, {}])
    process_pipe = mpl.colors.to_hex(plot.color("process", "pipe"))
    thread_pipe = mpl.colors.to_hex(plot.color("thread", "pipe"))
    assert process_pipe != thread_pipe
    for fig in (plot.lat_ctx(two), plot.compare(four), plot.sizes(four), plot.lat_ctx(four)):
        colours = {
            t.get_text(): mpl.colors.to_hex(h.get_color())
            for h, t in zip(fig.legends[0].legend_handles, fig.legends[0].get_texts())
        }
        assert colours["process/pipe"] == process_pipe
        assert colours["thread/pipe"] == thread_pipe
    # Every engine/transport ctxbench has, a colour of its own.
    pairs = [(e, t) for e in ctxbench._core.ENGINES for t in ctxbench._core.TRANSPORTS[e]]
    assert len({plot.color(e, t) for e, t in pairs}) == len(pairs)


# --- composing: ax= and fig= --------------------------------------------------------------


def test_ax_and_fig_compose_panels(frame: pd.DataFrame) -> None:
    one_size = frame[frame["size_kb"] == 0]
    with plot.style():
        fig = Figure(figsize=(10, 4), layout="constrained")
    left, right = fig.subplots(1, 2)
    assert plot.lat_ctx(frame, ax=left) is fig
    assert plot.compare(one_size, ax=right) is fig
    assert len(curves(left)) == 4 and right.lines
    assert left.get_legend() is not None  # beside its own axes, not the figure's
    sub = Figure(figsize=(10, 6)).subfigures(1, 2)
    assert plot.distribution(frame, fig=sub[0]) is sub[0].figure
    assert plot.compare(frame, new=frame, fig=sub[1]) is sub[1].figure
    assert len(sub[1].axes) == 4  # two sizes: medians and ratio each
    with pytest.raises(ValueError, match="ax: this figure draws a panel per size_kb"):
        plot.compare(frame, ax=left)
    with pytest.raises(ValueError, match="ax: a before/after figure"):
        plot.compare(frame, new=frame, ax=left)
    with pytest.raises(ValueError, match="ax, fig"):
        plot.lat_ctx(frame, ax=left, fig=fig)


# --- what each figure draws ---------------------------------------------------------------


def test_lat_ctx_one_line_and_band_per_series(frame: pd.DataFrame, tmp_path: Path) -> None:
    fig = plot.lat_ctx(frame)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    assert len(ax.lines) == 4  # 2 sizes × 2 placements
    assert len(bands(ax)) == 4  # one band each
    # Colour for the size, marker and dash for the placement: one legend entry each.
    assert set(legend(fig)) - FLAG_TEXTS == {"size=0k", "size=4k", "default", "single"}
    assert "µs" in ax.get_ylabel() and "procs" in ax.get_xlabel()
    for line in ax.lines:
        assert line.get_xdata().tolist() == [2, 3]
    saves(fig, tmp_path / "lat_ctx.png")


def test_lat_ctx_label_is_the_series(frame: pd.DataFrame) -> None:
    one = frame[(frame["placement"] == "single") & (frame["size_kb"] == 4)]
    assert legend(plot.lat_ctx(one))[0] == "process/pipe"


def test_lat_ctx_log(frame: pd.DataFrame) -> None:
    positive = frame[frame["value"] > 0]
    ax = plot.lat_ctx(positive, log=True).axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] > 0
    below = frame.copy()
    below.loc[below["procs"] == 2, "value"] = -1.0
    fig = plot.lat_ctx(below, log=True)
    assert "4 points ≤ 0 (below resolution) not on the log axis" in title(fig)
    assert all(line.get_xdata().tolist() == [3] for line in fig.axes[0].lines)


def test_many_series_become_panels_each_with_its_own_legend() -> None:
    fig = plot.lat_ctx(synthetic(series_of(12, False)))
    assert len(fig.axes) == 2
    assert [len(curves(ax)) for ax in fig.axes] == [6, 6]
    # No "(1 of 2)": a legend above each panel names its colours, at most six; the figure's
    # legend keeps what the panels share (markers, flags), never the twelve colours.
    named = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes]
    assert all(len(names) <= 6 for names in named)
    assert len({n for names in named for n in names}) == len(series_colours_of(fig))
    for ax, names in zip(fig.axes, named):
        assert all(any(line.get_label().startswith(n) for line in curves(ax)) for n in names)
    assert all(len(leg.get_texts()) <= 6 for leg in fig.legends)
    assert layout_faults(fig) == []
    # Both panels on one y scale, labelled once.
    assert fig.axes[0].get_ylim() == fig.axes[1].get_ylim()


def series_colours_of(fig: Figure) -> set[str]:
    return {c for ax in fig.axes for c in series_colours(ax)}


def test_a_sizes_panel_is_titled_by_the_sizes_it_holds() -> None:
    many = synthetic([{"size_kb": 4 * 2**k} for k in range(8)], procs=tuple(range(2, 11)))
    fig = plot.sizes(many)
    titles = [ax.get_legend().get_title().get_text() for ax in fig.axes]
    assert titles == ["size=4k to size=32k", "size=64k to size=512k"]
    assert all(ax.get_title() == "" for ax in fig.axes)
    legends = [ax.get_legend() for ax in fig.axes] + list(fig.legends)
    assert all(len(leg.get_texts()) <= 6 for leg in legends)
    assert layout_faults(fig) == []


def test_compare_points_per_series_and_panel_per_size(frame: pd.DataFrame) -> None:
    fig = plot.compare(frame)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        # Medians as points with interval bars: no bars, no rectangles but the background.
        assert not [c for c in ax.containers if isinstance(c, BarContainer)]
        assert not [p for p in ax.patches if isinstance(p, Rectangle)]
        points = [c.lines[0] for c in ax.containers if isinstance(c, ErrorbarContainer)]
        assert len(points) == 2 and all(len(line.get_xdata()) == 2 for line in points)
    assert [ax.get_title() for ax in fig.axes] == ["size=0k", "size=4k"]
    assert set(legend(fig)) - FLAG_TEXTS == {"default", "single"}


def test_compare_interval_bars_are_the_ci(frame: pd.DataFrame) -> None:
    ax = plot.compare(frame).axes[0]
    # Cut at 0 where a measured interval reaches below (a loaded machine's few repetitions).
    ends = np.r_[frame["ci_low"].unique(), frame["ci_high"].unique()].clip(0.0)
    bars = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert bars
    for bar in bars:
        for segment in bar.get_segments():
            for y in segment[:, 1]:
                assert np.isclose(ends, y).any(), f"bar end {y} is not a CI end"


def test_compare_log_axis(frame: pd.DataFrame) -> None:
    ax = plot.compare(frame[frame["value"] > 0], log=True).axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] > 0


def test_distribution_panels_of_at_most_six(frame: pd.DataFrame, tmp_path: Path) -> None:
    fig = plot.distribution(frame)
    assert all(ax.get_xscale() == "log" for ax in fig.axes)
    points = frame.groupby(["placement", "size_kb", "procs"]).ngroups
    assert sum(len(ax.lines) for ax in fig.axes) == points
    # A panel per placement and size, a curve per process count.
    assert len(fig.axes) == 4 and all(len(ax.lines) == 2 for ax in fig.axes)
    big = plot.distribution(synthetic(series_of(12, False)))
    assert all(len(ax.lines) <= 6 for ax in big.axes)
    saves(fig, tmp_path / "distribution.png")


def test_distribution_prefers_hop_us(frame: pd.DataFrame) -> None:
    hops = frame.assign(hop_us=frame["value"] * 0 + 7.0)
    fig = plot.distribution(hops)
    assert all(set(line.get_xdata()) == {7.0} for ax in fig.axes for line in ax.lines)
    assert "hop" in fig.axes[-1].get_xlabel()


def test_accepts_results_and_xgraph_frames(tmp_path: Path) -> None:
    r = ctxbench.lat_ctx([2, 3], **FAST)
    assert len(plot.lat_ctx(r).axes[0].lines) == 1
    assert len(plot.lat_ctx([r, r]).axes[0].lines) == 1
    path = tmp_path / "old.xgraph"
    path.write_text('"size=0 ovr=12\n2 34\n4 5.25\n')
    both = ctxbench.concat([r, files.load(path)])
    assert set(legend(plot.lat_ctx(both))) - FLAG_TEXTS == {
        "ctxbench default",
        "xgraph unknown",
    }
    assert len(plot.compare(both).axes) == 1


def test_every_figure_takes_files_as_compare_and_load_do(tmp_path: Path) -> None:
    # A path, a list of paths, a path beside a frame: what `ctxbench plot` and
    # `ctxbench.compare` take, read by `ctxbench.load`.
    a, b = DATA / "sweep-a.json", DATA / "sweep-b.json"
    loaded = files.load(a)
    lines = [ax.lines[0].get_ydata().tolist() for ax in plot.lat_ctx(loaded).axes if ax.lines]
    by_path = [ax.lines[0].get_ydata().tolist() for ax in plot.lat_ctx(str(a)).axes if ax.lines]
    assert by_path == lines
    assert len(plot.compare([a, b]).axes) == len(
        plot.compare(ctxbench.concat([loaded, files.load(b)])).axes
    )
    assert len(plot.compare(a, new=b).axes) == 2 * len(plot.compare(loaded).axes)
    assert plot.matrix(DATA / "matrix-sample.json").axes
    with pytest.raises(FileNotFoundError, match="nope.json"):
        plot.lat_ctx(tmp_path / "nope.json")


def test_empty_frame() -> None:
    with pytest.raises(ValueError, match="nothing to plot"):
        plot.lat_ctx(pd.DataFrame(columns=["procs", "value"]))


def test_pingpong_is_its_own_series() -> None:
    ring = ctxbench.ring([2, 3], placement="single", **FAST)
    pingpong = ctxbench.pingpong(loops=1000, placement="single")
    fig = plot.compare([ring, pingpong])
    assert set(legend(fig)) - FLAG_TEXTS == {"ring", "pingpong"}


# --- before/after -------------------------------------------------------------------------


def stacks(fig: Figure) -> list[tuple[Any, Any]]:
    """A before/after figure's (medians, ratios) axes, panel by panel."""
    rows = {}
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        rows[(spec.rowspan.start // 2, spec.colspan.start, spec.rowspan.start % 2)] = ax
    return [(rows[k], rows[(k[0], k[1], 1)]) for k in sorted(rows) if k[2] == 0]


def ratio_markers(ax: Any) -> list[Any]:
    """The ratio row's points (not the caps of their bars)."""
    return [c.lines[0] for c in ax.containers if isinstance(c, ErrorbarContainer)]


def ratio_points(ax: Any) -> list[float]:
    return sorted(float(y) for line in ratio_markers(ax) for y in line.get_ydata())


def test_before_after_draws_runs_and_ratios() -> None:
    base = synthetic(series_of(4, False)).assign(host="node-a")
    new = slower(base, 1.25).assign(host="node-b")
    fig = plot.compare(base, new=new)
    assert len(fig.axes) == 4  # a size per column, medians above the ratios
    expected = compare_runs(base, new)
    top, bottom = stacks(fig)[0]
    assert bottom.get_yscale() == "log"
    assert ratio_points(bottom) == pytest.approx(
        sorted(expected[expected["size_kb"] == 16]["ratio"])
    )
    # compare() gives each ratio its interval: a bar where it has one.
    bars = [c for c in bottom.collections if isinstance(c, LineCollection)]
    assert bool(bars) == bool(np.isfinite(expected["ratio_low"]).any())
    # Hosts name the runs; hollow base, filled new.
    names = legend(fig)
    assert "node-a" in names and "node-b" in names
    assert "Before and after: node-a → node-b" in title(fig)
    faces = {mpl.colors.to_hex(line.get_markerfacecolor()) for line in top.lines}
    assert "#ffffff" in faces and len(faces) > 1
    assert {"v1", "v2"} <= set(legend(plot.compare(base, new=new, labels=("v1", "v2"))))


def test_before_after_draws_the_ratio_interval() -> None:
    base = synthetic(series_of(4, False))
    comparison = with_ratio_interval(compare_runs(base, slower(base, 1.25)))
    fig = plot.compare(comparison)
    _, bottom = stacks(fig)[0]
    want = comparison[comparison["size_kb"] == 16]
    ends = np.r_[want["ratio_low"], want["ratio_high"]]
    segments = [
        s for c in bottom.collections if isinstance(c, LineCollection) for s in c.get_segments()
    ]
    assert len(segments) == len(want)
    for segment in segments:
        assert all(np.isclose(ends, y).any() for y in segment[:, 1])
    assert "with its 95% interval" in title(fig)


def test_before_after_marks_the_verdict() -> None:
    base = synthetic(series_of(1, False))
    fig = plot.compare(base, new=slower(base, 2.0))
    assert "ratio: slower" in legend(fig)
    markers = {line.get_marker() for line in ratio_markers(stacks(fig)[0][1])}
    assert markers == {"^"}


# --- what an outlier cannot do -----------------------------------------------------------


def with_outliers(frame: pd.DataFrame) -> pd.DataFrame:
    """Each point's fastest sample moved to -33 µs and its slowest to +1000 µs: the
    medians and the recorded confidence intervals stay as they were."""
    out = frame.copy()
    for _, g in out.groupby(["placement", "size_kb", "procs"]):
        out.loc[g["value"].idxmin(), "value"] = -33.0
        out.loc[g["value"].idxmax(), "value"] = 1000.0
    return out


def test_band_is_the_confidence_interval(frame: pd.DataFrame) -> None:
    fig = plot.lat_ctx(frame)
    # Cut at 0 where a measured interval reaches below (a loaded machine's few repetitions).
    ends = np.r_[frame["ci_low"].unique(), frame["ci_high"].unique()].clip(0.0)
    for band in bands(fig.axes[0]):
        for y in band.get_paths()[0].vertices[:, 1]:
            assert np.isclose(ends, y).any(), f"band at {y} is not a CI end"
    assert "95% CI of the median" in title(fig)


def test_iqr_band_and_bad_band(frame: pd.DataFrame) -> None:
    ax = plot.lat_ctx(frame, band="iqr").axes[0]
    q = frame.groupby(["placement", "size_kb", "procs"])["value"].quantile([0.25, 0.75])
    # A quartile below 0 (a net time below resolution, as a loaded machine gives) is drawn
    # cut at 0.
    drawn = np.maximum(q.to_numpy(), 0.0)
    for band in bands(ax):
        for y in band.get_paths()[0].vertices[:, 1]:
            assert np.isclose(drawn, y).any()
    assert not bands(plot.lat_ctx(frame, band=None).axes[0])
    with pytest.raises(ValueError, match="band"):
        plot.lat_ctx(frame, band="minmax")


@pytest.mark.parametrize("kind", ["lat_ctx", "compare", "sizes"])
def test_far_outliers_do_not_move_the_axes(frame: pd.DataFrame, kind: str) -> None:
    before = [ax.get_ylim() for ax in getattr(plot, kind)(frame).axes]
    after = [ax.get_ylim() for ax in getattr(plot, kind)(with_outliers(frame)).axes]
    # The limits come from the medians (and their intervals, within bounds), so samples at
    # -33 and +1000 µs change nothing; how wide the limits are depends on the measured frame.
    assert after == before


def test_flagged_points_are_marked(frame: pd.DataFrame, tmp_path: Path) -> None:
    flagged = frame.copy()
    low = (flagged["placement"] == "single") & (flagged["procs"] == 2)
    two = (flagged["placement"] == "default") & (flagged["procs"] == 3)
    flagged.loc[:, "below_resolution"] = low
    flagged.loc[:, "verdict"] = np.where(two, "bimodal", "stable")
    fig = plot.lat_ctx(flagged)
    # One hollow marker per flagged point: two sizes of each flagged (placement, procs).
    # (An interval of this loaded machine's few repetitions may also reach below 0: its cut
    # mark is no flag of the point.)
    cut = "_flag band_cut"
    marks = sorted(
        (c.get_label(), c.get_offsets()[:, 0].tolist())
        for c in fig.axes[0].collections
        if isinstance(c, PathCollection) and c.get_label() != cut
    )
    assert marks == [("_flag below_resolution", [2.0])] * 2 + [("_flag bimodal", [3.0])] * 2
    assert [t for t in legend(fig) if not t.startswith("interval cut")][-2:] == [
        "below resolution (net ≤ 0)",
        "bimodal (two modes: the median is neither)",
    ]
    saves(fig, tmp_path / "flagged.png")
    points = plot.compare(flagged)
    hollow = [
        c
        for ax in points.axes
        for c in ax.collections
        if isinstance(c, PathCollection) and c.get_label() != cut
    ]
    assert len(hollow) == 2 * 2  # two flagged points per size, two sizes
    assert "bimodal (two modes: the median is neither)" in legend(points)


def test_sizes_draws_the_caches(frame: pd.DataFrame, tmp_path: Path) -> None:
    cached = frame.assign(cache_L1d_kb=16, cache_L1i_kb=16, cache_L2_kb=32, cache_L3_kb=2**20)
    fig = plot.sizes(cached)
    ax = fig.axes[0]
    lines = {line.get_label(): line.get_xdata()[0] for line in ax.lines}
    assert lines.pop("_cache L1d") == 16 and lines.pop("_cache L2") == 32
    assert "_cache L3" not in lines and "L3 1 GiB off the axis" in title(fig)
    assert {t.get_text().strip() for t in ax.texts} == {"L1d 16 KiB", "L2 32 KiB"}
    # Working set = procs × size: only size 4 has one, at 2 × 4 and 3 × 4 KiB.
    assert len(lines) == 2
    assert all(list(line.get_xdata()) == [8, 12] for line in curves(ax))
    assert ax.get_xscale() == "log"
    saves(fig, tmp_path / "sizes.png")
    given = plot.sizes(frame, cache_kb={"L2": 10})
    assert [line.get_label() for line in given.axes[0].lines][-1] == "_cache L2"
    with pytest.raises(ValueError, match="size 0"):
        plot.sizes(frame[frame["size_kb"] == 0])


def test_sizes_marks_the_knees() -> None:
    df = synthetic(series_of(1, False))
    fig = plot.sizes(df, cache_kb={"L2": 1024}, knees=knees_of(df))
    texts = sorted(t.get_text() for t in fig.axes[0].texts)
    assert texts == ["L2 1 MiB ", "knee 2p", "knee 2p, 4p, 8p, 16p: L2"]
    assert len([p for p in fig.axes[0].patches if p.get_alpha() == 0.12]) == 5


def test_frames_carry_the_machines_caches(frame: pd.DataFrame) -> None:
    cache = ctxbench.api.result_metadata()["cache_kb"]
    if not cache:
        pytest.skip("this machine does not show its caches in sysfs")
    assert frame["cache_L1d_kb"].iloc[0] == cache["L1d"]


def test_machines_one_series_per_host() -> None:
    df = synthetic([{"host": "a"}, {"host": "b"}, {"host": "b", "machine": "m2"}])
    df["machine"] = df["machine"].fillna("m1")
    fig = plot.machines(df)
    assert set(legend(fig)) - FLAG_TEXTS == {"a", "b (m1)", "b (m2)"}
    assert "by host" in title(fig)
    with pytest.raises(ValueError, match="no 'worker' column"):
        plot.machines(df, by="worker")


# --- the docs' gallery ---------------------------------------------------------------------


@pytest.mark.slow
def test_gallery_script_renders_every_figure_on_the_page(tmp_path: Path) -> None:
    script = ROOT / "docs" / "_scripts" / "gallery.py"
    if not script.exists():
        pytest.skip("not a checkout: no docs/")
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True)
    rendered = {p.name for p in tmp_path.glob("*.png")}
    page = (ROOT / "docs" / "gallery.md").read_text()
    shown = set(re.findall(r"_gallery/([\w.-]+\.png)", page))
    assert rendered and rendered == shown


@pytest.mark.parametrize(
    ("draw", "error", "match"),
    [
        (lambda d: plot.compare(d, new=d, labels=("a",)), ValueError, "labels: expected two"),
        (lambda d: plot.compare(d, new=d, labels=("a", "b", "c")), ValueError, "labels: .* 3"),
        (lambda d: plot.compare(d, new=d, labels="ab"), TypeError, "labels: expected two"),
        (lambda d: plot.sizes(d, knees="bogus"), TypeError, "knees: expected the frame"),
        (lambda d: plot.sizes(d, knees=d), ValueError, "knees: not a frame of ctxbench.knees"),
        (lambda d: plot.matrix(matrices.frame().drop(columns="latency_us")), ValueError,
         "data: a matrix frame needs the column.s. latency_us"),
    ],
)  # fmt: skip
def test_bad_arguments_name_the_parameter(
    draw: Callable[[Any], Any], error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        draw(synthetic(series_of(1, False)))


def test_a_band_that_reaches_below_zero_is_cut_there_and_marked(frame: pd.DataFrame) -> None:
    df = synthetic(series_of(1, False))
    df.loc[df["procs"] == 2, "ci_low"] = -1.5
    for fig in (plot.lat_ctx(df), plot.sizes(df)):
        ax = fig.axes[0]
        lowest = min(c.get_paths()[0].vertices[:, 1].min() for c in bands(ax))
        assert lowest == 0.0 and ax.get_ylim()[0] == 0.0
        assert "interval cut at 0 µs (it reaches below)" in legend(fig)
        (cut,) = [c for c in ax.collections if c.get_label() == "_flag band_cut"]
        assert cut.get_offsets()[:, 1].tolist() == [0.0]
    bars = plot.compare(df).axes[0]
    ends = [s[:, 1].min() for c in bars.collections if isinstance(c, LineCollection)
            for s in c.get_segments()]  # fmt: skip
    assert min(ends) == 0.0
    uncut = plot.lat_ctx(synthetic(series_of(1, False)))
    assert "interval cut at 0 µs (it reaches below)" not in legend(uncut)


def test_side_by_side_points_sit_at_their_process_count() -> None:
    """No sideways dodge: on the evenly spaced counts 2, 4, 8, 16 (a log scale to the eye)
    a point shifted right of 16 reads as 18 or 19."""
    fig = plot.compare(synthetic(series_of(4, False)), log=True)
    for ax in fig.axes:
        points = [c.lines[0] for c in ax.containers if isinstance(c, ErrorbarContainer)]
        assert points and all(set(p.get_xdata()) <= {0.0, 1.0, 2.0, 3.0} for p in points)
    both = plot.compare(synthetic(series_of(4, False)), new=synthetic(series_of(4, False)))
    for ax in both.axes:
        for line in ax.lines:
            assert set(np.asarray(line.get_xdata(), dtype=float)) <= {0.0, 1.0, 2.0, 3.0}


def test_sizes_draws_a_curve_per_ring_size_over_many_sizes() -> None:
    """A cache sweep: 2 ring sizes over 29 array sizes is two curves against the working set
    (a curve per size was 29 legend entries over panels titled "(1 of 5)")."""
    sizes = [4 * 2 ** (k / 2) for k in range(29)]
    sweep = synthetic([{"size_kb": round(s)} for s in sizes], procs=(2, 8))
    fig = plot.sizes(sweep)
    (ax,) = fig.axes
    assert sorted(line.get_label() for line in curves(ax)) == ["2 procs", "8 procs"]
    assert set(legend(fig)) - FLAG_TEXTS == {"2 procs", "8 procs"}
