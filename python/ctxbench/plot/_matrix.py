"""The CPU×CPU wake-up matrix of ``ctxbench.matrix``: a heatmap on the machine's topology with
each class of CPU pair's median and range beside it; the machines of a fleet run as small
multiples on one colour scale, their classes compared machine by machine in one panel."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._matrix_table import MACHINE, cells, class_summary
from . import _heatmap, _layout, _style, _ticks
from ._style import Size, styled

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Each class of CPU pair, closest first: its colour and marker in the summary.
CLASS_STYLE = {
    "same-cpu": ("#000000", "o"),
    "smt-sibling": ("#0072B2", "s"),
    "shared-l2": ("#009E73", "^"),
    "shared-llc": ("#E69F00", "D"),
    "same-package": ("#CC79A7", "v"),
    "cross-package": ("#D55E00", "P"),
}
# Markers for a relation's classes at a further NUMA distance (its colour, another marker).
_FAR_MARKERS = ("X", "*", "p", "h", "<", ">")
_SPREAD = 0.6  # of a machine's row in the fleet summary, shared by its classes

# Inches a heatmap needs besides its square (tick labels; a machine's name above it), the
# axis labels and the colour bar. A heatmap's side: at most, per CPU while small, and the
# least worth drawing for one machine or a machine among many. The summary: its width
# beside the maps, a class's row (one machine), a line of a machine's row (a fleet), and
# its axis and title.
_TICKS_IN, _NAME_IN, _LABEL_IN, _COLORBAR_IN = 0.22, 0.17, 0.2, 0.6
_MAX_SIDE, _SMALL_SIDE, _CPU_IN = 2.6, 1.4, 0.3
_MIN_SIDE, _MIN_SIDE_FLEET = 1.8, 0.65
_SUMMARY_IN, _CLASS_ROW_IN, _LINE_IN, _SUMMARY_AXIS_IN = 2.6, 0.16, 0.13, 0.6
_NAME_PT, _LABEL_PT = 8.0, 7.5


@dataclass
class _Plan:
    """Where things go: ``rows`` × ``cols`` heatmaps of ``side`` inches, the summary beside
    them (``beside``, ``summary_width`` inches wide) or below; the heights both need."""

    beside: bool
    cols: int
    rows: int
    side: float
    maps: float
    summary: float
    summary_width: float

    @property
    def height(self) -> float:
        return max(self.maps, self.summary) if self.beside else self.maps + self.summary


def _plan(width: float, machines: int, cpus: int, summary: float | None) -> _Plan:
    """The layout that takes the least height with heatmaps big enough to read (the
    biggest where none is): the summary (``summary`` inches high; None: none) beside the
    maps where the width allows, else below them; as many maps a row as keep them big."""
    fleet = machines > 1
    cap = min(_MAX_SIDE, max(_SMALL_SIDE, _CPU_IN * cpus))
    plans = []
    for beside in (True, False) if summary is not None and width >= 5 else (False,):
        room = width - (_SUMMARY_IN if beside else 0.0) - _COLORBAR_IN - _LABEL_IN
        for cols in range(1, machines + 1):
            rows = math.ceil(machines / cols)
            side = min(room / cols - _TICKS_IN, cap)
            maps = rows * (side + _TICKS_IN + (_NAME_IN if fleet else 0.0)) + _LABEL_IN
            used = cols * (side + _TICKS_IN) + _COLORBAR_IN + _LABEL_IN
            rest = width - used if beside else width
            plans.append(_Plan(beside, cols, rows, side, maps, summary or 0.0, rest))
    least = min(cap, _MIN_SIDE_FLEET if fleet else _MIN_SIDE)
    readable = [p for p in plans if p.side >= least]
    if not readable:
        return max(plans, key=lambda p: p.side)
    return min(readable, key=lambda p: (round(p.height, 2), -p.side))


# --- the data ------------------------------------------------------------------------------


def _machines(c: pd.DataFrame) -> tuple[str | None, list[tuple[Any, str, pd.DataFrame]]]:
    """The column that tells machines apart (None in a frame of one run), and each
    machine's key, name and cells: its host, "host (machine)" where machines share one."""
    column = next((m for m in MACHINE if m in c.columns), None)
    if column is None:
        return None, [(None, "", c)]
    out = []
    for key, g in c.groupby(column, sort=False):
        name = str(key)
        if column == "machine" and "host" in g.columns:
            host = str(g["host"].iloc[0])
            shared = c.loc[c["host"] == host, "machine"].nunique() > 1
            name = f"{host} ({key})" if shared else host
        out.append((key, name, g))
    return column, out


def _shortened(names: list[str], width: float) -> tuple[list[str], str]:
    """Names that fit ``width`` points: what all of them share dropped (their domain, then
    a prefix up to a - _ or .), said once as a pattern ("hosts node-*.example.org"); what
    still does not fit wrapped."""
    note = ""

    def too_wide(ns: list[str]) -> bool:
        return any(_style.text_width(n, _NAME_PT) > width for n in ns)

    if len(names) > 1 and too_wide(names):
        tail = os.path.commonprefix([n[::-1] for n in names])[::-1]
        tail = tail[tail.index(".") :] if "." in tail and tail not in names else ""
        names = [n[: len(n) - len(tail)] for n in names]
        head = ""
        if too_wide(names):
            common = os.path.commonprefix(names)
            head = common[: max(common.rfind(d) for d in "-_.") + 1]
            head = "" if head in names else head
            names = [n[len(head) :] for n in names]
        if head or tail:
            note = f"hosts {head}*{tail}"
    return [_style.wrap(n, width, _NAME_PT) for n in names], note


def _classes(s: pd.DataFrame) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """Each summary row's class as a label (the relation, and the NUMA distance where it is
    not the local one), and each class's colour and marker, closest class first."""
    distances = s["numa_distance"].astype(float)
    local = float(distances[distances >= 0].min()) if (distances >= 0).any() else -1.0
    labels = [
        f"{r} (NUMA {int(d)})" if d > local else str(r) for r, d in zip(s["relation"], distances)
    ]
    order = sorted(
        dict.fromkeys(zip(s["relation"], distances, labels)),
        key=lambda k: (list(CLASS_STYLE).index(k[0]) if k[0] in CLASS_STYLE else 99, k[1]),
    )
    far = iter(_FAR_MARKERS)
    looks: dict[str, tuple[str, str]] = {}
    for relation, _, label in order:
        colour, marker = CLASS_STYLE.get(relation, ("#777777", "o"))
        looks.setdefault(label, (colour, marker if label == relation else next(far, "o")))
    return labels, looks


# --- the summary ---------------------------------------------------------------------------


def _summary_one(ax: Axes, s: pd.DataFrame, width: float) -> None:
    """Rows = classes: each class's median (marker) and range (line) of its cells' medians,
    its number of cells at the right."""
    labels, looks = _classes(s)
    y = np.arange(len(s))[::-1]
    for at, label, r in zip(y, labels, s.itertuples()):
        colour, marker = looks[label]
        ax.hlines(at, r.min_us, r.max_us, color=colour, linewidth=1.5)
        ax.plot([r.median_us], [at], marker=marker, color=colour, linestyle="none")
        ax.annotate(
            f"n={r.cells}",
            (1.0, at),
            xycoords=("axes fraction", "data"),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
            color="0.3",
        )
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.7, len(s) - 0.3)
    _summary_title(ax, "per class: median and range", width, labels, 0.4)


def _summary_fleet(
    ax: Axes, s: pd.DataFrame, column: str, names: dict[Any, str], width: float
) -> list[Any]:
    """Rows = machines, a marker (median) and a line (range) per class: a class's cost on
    every machine at a glance. Returns the legend's entries, one per class."""
    from matplotlib.lines import Line2D

    labels, looks = _classes(s)
    s = s.assign(_class=labels)
    row = {key: len(names) - 1 - i for i, key in enumerate(names)}
    n = len(looks)
    shift = (np.arange(n)[::-1] - (n - 1) / 2) * (_SPREAD / n)
    handles = []
    for (label, (colour, marker)), dy in zip(looks.items(), shift):
        rows = s[s["_class"] == label]
        at = np.array([row[k] for k in rows[column]], dtype=float) + dy
        ax.hlines(at, rows["min_us"], rows["max_us"], color=colour, linewidth=1.0)
        ax.plot(rows["median_us"], at, marker=marker, color=colour, linestyle="none", label=label)
        handles.append(Line2D([], [], color=colour, marker=marker, label=label))
    ax.set_yticks(list(row.values()), list(names.values()))
    ax.set_ylim(-0.6, len(names) - 0.4)
    _summary_title(ax, "per class and machine: median and range", width, list(names.values()), 0.1)
    return handles


def _summary_title(ax: Axes, text: str, width: float, labels: list[str], right: float) -> None:
    """The panel's title wrapped to its axes: the summary's width less its tick labels and
    the ``right`` inches of notes beside it."""
    widest = max((_style.text_width(t, _LABEL_PT) for t in labels), default=0.0)
    room = (width - right) * 72 - widest
    ax.set_title(_style.wrap(text, max(room, 60.0), _NAME_PT))
    ax.grid(False, axis="y")


# --- the figure ----------------------------------------------------------------------------


@styled
def matrix(
    data: Any,
    cmap: str = "viridis",
    log: bool | None = None,
    *,
    summary: bool = True,
    size: Size = None,
    title: bool | str = True,
    fig: Any = None,
    ax: Any = None,
) -> Figure:
    """The matrix of ``ctxbench.matrix`` (a result, a frame or a loaded file) as a heatmap:
    the median µs per switch of each cell, rows = waker, CPUs in the topology's order
    (package → LLC → core → SMT sibling) with lines where the package (heavy), the LLC and
    the core (light, where the cells are big enough to show it) change, CPU ids at the
    starts of cores (or LLCs, or packages), cells not measured (class mode) in grey and,
    where the cells are big enough, each one's value in it. Beside it (below it at a
    column's width) each class of CPU pair's median and range, and its number of cells.

    A fleet frame (``ctxbench.matrix(scheduler=...)``) draws a heatmap per machine, named
    by its host, in rows of small multiples on one colour scale, and one panel comparing
    the classes machine by machine (a colour and marker per class). Host names too long
    for a panel lose what they all share (their domain), said once in the title.

    ``log``: the colour scale logarithmic (True), linear (False), or (None, the default)
    logarithmic where the cells span more than a factor of ten; ``cmap``: a matplotlib
    colour map. ``summary=False`` leaves the per-class panel out. ``size``, ``title`` and
    ``fig`` as in ``lat_ctx``; ``ax`` takes one machine's heatmap alone
    (``summary=False``), its colour bar beside it. Returns the figure."""
    c = cells(data)
    if c.empty:
        raise ValueError("nothing to plot: the frame has no matrix cells")
    column, machines = _machines(c)
    if ax is not None:
        _check_ax(fig, len(machines), summary)
    scale, log = _heatmap.norm(c["latency_us"].to_numpy(dtype=float), log)
    s = class_summary(c)
    g = _axes(size, fig, ax, machines, s if summary else None)
    fleet = len(machines) > 1
    drawn: set[str] = set()
    gaps = False
    image = None
    for (_, _, rows), name, a in zip(machines, g.names, g.maps):
        image, kinds, missing = _heatmap.heatmap(a, rows, scale, cmap, g.plan.side)
        drawn, gaps = drawn | kinds, gaps or missing
        if fleet:
            a.set_title(name, fontsize=_NAME_PT)
    _labels(g, fleet)
    _heatmap.colorbar(g.maps_parent, image, g.maps, log)
    handles: list[Any] = []
    if g.summary is not None:
        width = g.plan.summary_width
        if fleet:
            keys = {key: name for (key, _, _), name in zip(machines, g.names)}
            handles = _summary_fleet(g.summary, s, str(column), keys, width)
        else:
            _summary_one(g.summary, s, width)
        if log:
            _ticks.plain_log(g.summary, "x")
        g.summary.margins(x=0.08)
        g.summary.set_xlabel("µs per switch")
    # One machine's name whole: the title wraps it to the figure's width.
    host = "" if fleet or not machines[0][1] else f" on {machines[0][1]}"
    return _layout.finish(
        g.layout,
        handles,
        title=title,
        main=f"Wake-up cost between CPUs{host}",
        detail=_detail(c, drawn, gaps, g.hosts),
        panels=g.plan.height,
    )


def _check_ax(fig: Any, machines: int, summary: bool) -> None:
    if fig is not None:
        raise ValueError("ax, fig: pass one of them, not both")
    if machines > 1:
        raise ValueError(
            f"ax: this figure draws a heatmap per machine ({machines} here); pass fig= "
            "instead, or select one machine's rows"
        )
    if summary:
        raise ValueError(
            "ax: this figure draws a heatmap and the per-class summary beside it; pass fig= "
            "instead, or summary=False for the heatmap alone"
        )


def _detail(c: pd.DataFrame, drawn: set[str], gaps: bool, hosts: str) -> str:
    runs = zip(c["engine"], c["transport"], c["size_kb"])
    parts = [
        ", ".join(dict.fromkeys(f"{e}/{t}, size {k}k" for e, t, k in runs)),
        "cell: median µs per switch, row = waker",
    ]
    lines = [n for n in ("package", "llc", "core") if n in drawn]
    if lines:
        parts.append("lines: " + ", ".join("LLC" if n == "llc" else n for n in lines))
    if gaps:
        parts.append("grey: not measured")
    return "; ".join([*parts, *([hosts] if hosts else [])])


@dataclass
class _Axes:
    """A matrix figure's parts: the layout ``_layout.finish`` completes, the plan, the
    heatmaps and the figure they (and their colour bar) are in, the summary (None: left
    out), the machines' names as drawn and what was dropped from them."""

    layout: _layout.Grid
    plan: _Plan
    maps: list[Axes]
    maps_parent: Any
    summary: Any
    names: list[str]
    hosts: str


def _axes(size: Size, fig: Any, ax: Any, machines: list[Any], s: pd.DataFrame | None) -> _Axes:
    """The figure (new at ``size``, the caller's ``fig`` or ``ax``) split as planned for its
    width into the heatmaps (with their colour bar) and the summary ``s`` (None: none)."""
    names = [name for _, name, _ in machines]
    if ax is not None:
        root = _layout._root(ax.figure)
        w = float(root.get_size_inches()[0]) * ax.get_position().width
        g = _layout.Grid(root, [[ax]], w, 0.0, False, True)
        plan = _Plan(False, 1, 1, w, 0.0, 0.0, 0.0)
        return _Axes(g, plan, [ax], ax.figure, None, names, "")
    width, height, grows = _style.dimensions(size)
    if fig is None:
        fig = _style.StyledFigure(figsize=(width, height), layout="constrained")
    else:
        root = _layout._root(fig)
        if root.get_layout_engine() is None:
            root.set_layout_engine("constrained")
        width, grows = float(root.get_size_inches()[0]), False
    cpus = max(len(set(rows["cpu_from"]) | set(rows["cpu_to"])) for _, _, rows in machines)
    fleet = len(machines) > 1

    def summary_height(lines: int) -> float | None:
        if s is None:
            return None
        rows = len(machines) if fleet else len(s)
        pitch = max(0.08 + 0.025 * s["relation"].nunique(), _LINE_IN * lines) if fleet else None
        return rows * (pitch or _CLASS_ROW_IN) + _SUMMARY_AXIS_IN

    plan = _plan(width, len(machines), cpus, summary_height(1))
    names, hosts = _shortened(names, min(plan.side, 0.45 * _SUMMARY_IN) * 72)
    lines = max(n.count("\n") + 1 for n in names)
    if lines > 1:
        plan = _plan(width, len(machines), cpus, summary_height(lines))
    parts = [fig]
    if s is not None and plan.beside:
        ratios = [width - plan.summary_width, plan.summary_width]
        parts = list(fig.subfigures(1, 2, width_ratios=ratios))
    elif s is not None:
        parts = list(fig.subfigures(2, 1, height_ratios=[plan.maps, plan.summary]))
    table = parts[0].subplots(plan.rows, plan.cols, squeeze=False).ravel()
    for a in table[len(machines) :]:
        a.remove()
    maps = list(table[: len(machines)])
    g = _layout.Grid(fig, [[a] for a in maps], width, 0.0, grows, False)
    summary_ax = parts[1].subplots() if s is not None else None
    return _Axes(g, plan, maps, parts[0], summary_ax, names, hosts)


def _labels(g: _Axes, fleet: bool) -> None:
    """Waker and wakee named once: beside and below the heatmaps."""
    if not fleet:
        g.maps[0].set_xlabel("wakee CPU (to)")
        g.maps[0].set_ylabel("waker CPU (from)")
        return
    g.maps_parent.supxlabel("wakee CPU (to)", fontsize=_LABEL_PT + 0.5)
    g.maps_parent.supylabel("waker CPU (from)", fontsize=_LABEL_PT + 0.5)
