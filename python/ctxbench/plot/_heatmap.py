"""One machine's CPU×CPU matrix as a heatmap: cells in the topology's order, lines where the
package, LLC and core change, CPU ids at the starts of cores (or LLCs, or packages: whichever
fit), each cell's value written in it where the cells are big enough, and the colour scale
the machines of a figure share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from matplotlib import ticker

from .._matrix_table import grid
from . import _ticks

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

# Lines between groups of CPUs along both axes: the wider the group, the heavier the line.
BOUNDARIES = (("package", 1.6, "black"), ("llc", 0.9, "0.25"), ("core", 0.4, "0.55"))
# Core lines only where a cell is this many points wide: closer together they grey the map.
_CORE_CELL_PT = 4.0
# Each cell's value written in it where a cell is this many points wide (at this size).
_VALUE_CELL_PT, _VALUE_PT = 20.0, 6.5
_TICK_PT = 7.0
_UNMEASURED = "0.88"


def norm(values: np.ndarray, log: bool | None) -> tuple[Any, bool]:
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


def places(c: pd.DataFrame) -> dict[int, dict[str, int]]:
    """Package, LLC and core of each CPU of a machine's cells."""
    out: dict[int, dict[str, int]] = {}
    for end in ("from", "to"):
        cols = [f"{w}_{end}" for w, _, _ in BOUNDARIES]
        if not all(col in c.columns for col in cols):
            continue
        for row in c[[f"cpu_{end}", *cols]].itertuples(index=False):
            out[int(row[0])] = {w: int(v) for (w, _, _), v in zip(BOUNDARIES, row[1:])}
    return out


def starts(cpus: list[int], where: dict[int, dict[str, int]], what: str) -> list[int]:
    """The positions along the axes where a new ``what`` (package, llc, core) begins."""
    key = [where.get(cpu, {}).get(what, -1) for cpu in cpus]
    return [i for i in range(len(cpus)) if i == 0 or key[i] != key[i - 1]]


def heatmap(
    ax: Axes, c: pd.DataFrame, scale: Any, cmap: str, side: float
) -> tuple[Any, set[str], bool]:
    """One machine's matrix on ``ax`` (about ``side`` inches square); returns the image, the
    kinds of boundary drawn and whether a cell was not measured."""
    cpus, m = grid(c)
    ax.set_facecolor(_UNMEASURED)  # cells not measured (class mode)
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(True)
    image = ax.imshow(
        np.ma.masked_invalid(m), cmap=cmap, norm=scale, interpolation="nearest", aspect="equal"
    )
    cell = side * 72 / max(len(cpus), 1)
    where = places(c)
    drawn = _boundaries(ax, cpus, where, cores=cell >= _CORE_CELL_PT)
    _cpu_ticks(ax, cpus, where)
    if cell >= _VALUE_CELL_PT:
        _values(ax, m, image)
    return image, drawn, bool(np.isnan(m).any())


def _boundaries(
    ax: Axes, cpus: list[int], where: dict[int, dict[str, int]], cores: bool
) -> set[str]:
    """A line wherever the package, LLC or (``cores``) core changes between neighbours on
    the axes, the heaviest where several do; returns the kinds drawn."""
    drawn: dict[int, str] = {}
    for what, width, color in BOUNDARIES:
        if what == "core" and not cores:
            continue
        for i in starts(cpus, where, what)[1:]:
            if i in drawn:
                continue
            drawn[i] = what
            for line in (ax.axhline, ax.axvline):
                line(i - 0.5, color=color, linewidth=width)
    return set(drawn.values())


def _values(ax: Axes, m: np.ndarray, image: Any) -> None:
    """Each measured cell's median in it, light on dark cells and dark on light ones."""
    rgba = image.to_rgba(m)
    for (i, j), v in np.ndenumerate(m):
        if not np.isfinite(v):
            continue
        r, g, b = rgba[i, j, :3]
        dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
        ax.text(
            j,
            i,
            f"{v:.3g}",
            ha="center",
            va="center",
            fontsize=_VALUE_PT,
            color="white" if dark else "black",
        )


class GroupLocator(ticker.Locator):
    """Ticks at the first cell of every core where their labels fit, else of every 2nd,
    4th … core, else of every LLC, every package, else every n-th core: the ids a reader
    can count on, never a label in the middle of a group that looks like the next CPU."""

    def __init__(self, choices: list[list[int]], text: Callable[[float], str]) -> None:
        self.choices = choices
        self.text = text

    def __call__(self) -> Sequence[float]:
        return self.tick_values(*self.axis.get_view_interval())

    def tick_values(self, vmin: float, vmax: float) -> Sequence[float]:
        if self.axis is None:
            return self.choices[0]
        for ticks in self.choices:
            if _ticks._fits(self.axis, ticks, self.text):
                return ticks
        base = self.choices[0]
        for stride in range(2, len(base) + 1):
            if _ticks._fits(self.axis, base[::stride], self.text):
                return base[::stride]
        return base[:1]


def _cpu_ticks(ax: Axes, cpus: list[int], where: dict[int, dict[str, int]]) -> None:
    def text(i: float) -> str:
        k = int(round(i))
        return str(cpus[k]) if 0 <= k < len(cpus) else ""

    cores = starts(cpus, where, "core")
    choices = [list(range(len(cpus)))]
    stride = 1
    while stride < len(cores):
        choices.append(cores[::stride])
        stride *= 2
    choices += [starts(cpus, where, "llc"), starts(cpus, where, "package")]
    unique = sorted(
        (t for k, t in enumerate(choices) if t and t not in choices[:k]), key=len, reverse=True
    )
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(GroupLocator(unique, text))
        axis.set_major_formatter(_ticks.PlainFormatter(text))
        axis.set_minor_locator(ticker.NullLocator())
    ax.tick_params(labelsize=_TICK_PT)


def colorbar(parent: Any, image: Any, axes: list[Axes], log: bool) -> None:
    """The colour bar beside the heatmaps, in plain numbers on a log scale."""
    bar = parent.colorbar(image, ax=axes, location="right", label="µs per switch")
    bar.outline.set_linewidth(0.6)
    if log:
        bar.locator = _ticks.PlainLogLocator()
        bar.formatter = _ticks.PlainFormatter()
        bar.minorformatter = ticker.NullFormatter()
