"""Synthetic frames and figure readers shared by the plot tests: any number of series, any
names, no measuring. Tests only."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import matplotlib as mpl
import matrices
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.text import Text

from ctxbench import compare as compare_runs
from ctxbench import plot

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
FLAG_TEXTS = {
    "below resolution (net ≤ 0)",
    "bimodal (two modes: the median is neither)",
    "interval cut at 0 µs (it reaches below)",
}


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
