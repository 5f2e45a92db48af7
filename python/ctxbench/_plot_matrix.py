"""``ctxbench.plot.matrix``: the CPU×CPU heatmap of a matrix frame, with the topology drawn on
it and the per-class summary beside it; machines of a fleet frame side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._matrix_table import MACHINE, cells, class_summary, grid
from .frame import require

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Lines between groups of CPUs along both axes: the wider the group, the heavier the line.
_BOUNDARIES = (("package", 1.6, "black"), ("llc", 0.9, "0.25"), ("core", 0.4, "0.55"))
# Core boundaries only where they stay readable.
_CORE_LINES_MAX_CPUS = 64
_TICKS_MAX = 32


def _places(c: pd.DataFrame) -> dict[int, dict[str, int]]:
    """Package, LLC and core of each CPU of a machine's cells."""
    out: dict[int, dict[str, int]] = {}
    for end in ("from", "to"):
        cols = [f"{w}_{end}" for w, _, _ in _BOUNDARIES]
        if not all(col in c.columns for col in cols):
            continue
        for row in c[[f"cpu_{end}", *cols]].itertuples(index=False):
            out[int(row[0])] = {w: int(v) for (w, _, _), v in zip(_BOUNDARIES, row[1:])}
    return out


def _boundaries(ax: Axes, cpus: list[int], places: dict[int, dict[str, int]]) -> None:
    """A line wherever the package, LLC or core changes between neighbours on the axes."""
    drawn: set[int] = set()
    for what, width, color in _BOUNDARIES:
        if what == "core" and len(cpus) > _CORE_LINES_MAX_CPUS:
            continue
        for i in range(1, len(cpus)):
            a, b = places.get(cpus[i - 1], {}), places.get(cpus[i], {})
            if i in drawn or a.get(what, -1) == b.get(what, -1):
                continue
            drawn.add(i)
            for line in (ax.axhline, ax.axvline):
                line(i - 0.5, color=color, linewidth=width)


def _ticks(ax: Axes, cpus: list[int]) -> None:
    step = max(1, int(np.ceil(len(cpus) / _TICKS_MAX)))
    at = list(range(0, len(cpus), step))
    ax.set_xticks(at, [str(cpus[i]) for i in at], fontsize=7, rotation=90)
    ax.set_yticks(at, [str(cpus[i]) for i in at], fontsize=7)


def _heatmap(ax: Axes, c: pd.DataFrame, norm: Any, cmap: str) -> Any:
    cpus, m = grid(c)
    ax.set_facecolor("0.92")  # cells not measured (class mode)
    image = ax.imshow(
        np.ma.masked_invalid(m), cmap=cmap, norm=norm, interpolation="nearest", aspect="equal"
    )
    _boundaries(ax, cpus, _places(c))
    _ticks(ax, cpus)
    ax.set_xlabel("wakee CPU (to)")
    ax.set_ylabel("waker CPU (from)")
    return image


def _classes(ax: Axes, c: pd.DataFrame, log: bool) -> None:
    """Median (dot) and range (line) of the cells' medians, one row per class."""
    s = class_summary(c)
    y = np.arange(len(s))[::-1]
    ax.hlines(y, s["min_us"], s["max_us"], color="0.4", linewidth=1.5)
    ax.plot(s["median_us"], y, "o", color="black", markersize=5)
    labels = []
    for _, r in s.iterrows():
        d = f" ({int(r['numa_distance'])})" if r["numa_distance"] >= 0 else ""
        labels.append(f"{r['relation']}{d}\nn={r['cells']}")
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_ylim(-0.7, len(s) - 0.3)
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("µs per switch")
    ax.set_title("per class: median, range", fontsize=8)
    ax.grid(axis="x", alpha=0.3)


def _title(c: pd.DataFrame) -> str:
    first = c.iloc[0]
    where = str(first["host"]) if "host" in c.columns else ""
    what = f"{first['engine']}/{first['transport']}, size {first['size_kb']}k"
    return f"{where}\n{what}" if where else what


def _norm(values: np.ndarray, log: bool | None) -> tuple[Any, bool]:
    """One colour scale for every machine; logarithmic when asked, or (``log=None``) when the
    cells span more than a factor of ten and are all positive."""
    from matplotlib.colors import LogNorm, Normalize

    finite = values[np.isfinite(values)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if log is None:
        log = lo > 0 and hi / lo > 10
    if log and lo <= 0:
        raise ValueError("log: a cell's median is <= 0 (below resolution): use log=False")
    return (LogNorm(lo, hi) if log else Normalize(lo, hi)), log


def matrix(data: Any, cmap: str = "viridis", log: bool | None = None) -> Figure:
    """The matrix of ``ctxbench.matrix`` (a result, a frame or a loaded file) as a heatmap:
    median µs per switch of each cell, rows = waker, CPUs ordered package → LLC → core →
    SMT sibling with lines where the package (heavy), LLC and core (light) change, cells not
    measured in grey; beside it each relation class's median and range. A fleet frame draws
    each machine side by side on one colour scale (logarithmic where the cells span more than
    a factor of ten, unless ``log`` says otherwise)."""
    require("matplotlib", "ctxbench.plot.matrix")
    from matplotlib.figure import Figure

    c = cells(data)
    if c.empty:
        raise ValueError("nothing to plot: the frame has no matrix cells")
    column = next((m for m in MACHINE if m in c.columns), None)
    machines = [g for _, g in c.groupby(column, sort=False)] if column else [c]
    norm, log = _norm(c["latency_us"].to_numpy(dtype=float), log)
    fig = Figure(figsize=(6.4 * len(machines), 5.2), layout="constrained")
    grids = fig.add_gridspec(1, 2 * len(machines), width_ratios=[3, 1.4] * len(machines))
    heatmaps = []
    for k, g in enumerate(machines):
        ax = fig.add_subplot(grids[0, 2 * k])
        image = _heatmap(ax, g, norm, cmap)
        ax.set_title(_title(g), fontsize=9)
        heatmaps.append(ax)
        _classes(fig.add_subplot(grids[0, 2 * k + 1]), g, log)
    fig.colorbar(
        image, ax=heatmaps, label="µs per switch (cell median)", location="bottom", shrink=0.8
    )
    return fig
