from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib as mpl
import matrices
import numpy as np
import pandas as pd
import pytest
from conftest import FAST
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from plot_frames import (
    DATA,
    FLAG_TEXTS,
    ROOT,
    bands,
    curves,
    drawn_texts,
    knees_of,
    layout_faults,
    legend,
    saves,
    series_colours,
    series_of,
    synthetic,
    title,
)

import ctxbench
from ctxbench import files, plot


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


def test_a_transport_added_to_the_core_has_a_colour_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Eight new transports for threads and processes: past the reserve, into spaced hues.
    added = [f"new{i}" for i in range(8)]
    grown = {e: (*ts, *added) for e, ts in ctxbench._core.TRANSPORTS.items() if e != "fiber"}
    monkeypatch.setattr(ctxbench._core, "TRANSPORTS", {**ctxbench._core.TRANSPORTS, **grown})
    pairs = [(e, t) for e in ctxbench._core.ENGINES for t in ctxbench._core.TRANSPORTS[e]]
    colours = {(e, t): plot.color(e, t) for e, t in pairs}
    assert len(set(colours.values())) == len(pairs)
    # The same colour whichever pairs a figure holds.
    mixed = plot._style.pair_colors(["process/pipe", "thread/new3", "process/new0"])
    assert mixed["thread/new3"] == colours[("thread", "new3")]
    assert mixed["process/new0"] == colours[("process", "new0")]


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
    # From the positive samples: under load a measured point at 3 processes can fall to 0
    # or below too (5 points, not 4, in run 2 of the two-hog series).
    below = positive.copy()
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
