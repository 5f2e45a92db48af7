"""Points at each process count, each drawn at its count (never shifted sideways): engines,
transports, placements or machines of one run (medians with interval bars, never bars on a
log axis), and two runs before/after with the ratio of their medians per point."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..files import as_frame
from ..frame import concat
from . import _layout, _ticks
from ._data import (
    PAIR,
    PROCS_LABEL,
    SWITCH_LABEL,
    VARIANT,
    dropped_note,
    frame,
    frame_of,
    limits,
    points,
    positive,
)
from ._style import Size, styled

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# The columns a point of the two runs is matched on (besides size and procs), as in
# ctxbench.compare; what else differs between the runs (run, host, source) is the A/B.
_MATCHED = ("benchmark", "placement", "parallel")
_SERIES_KEY = ("engine", "transport", *_MATCHED)
_VERDICTS = {
    "slower": ("^", "slower"),
    "faster": ("v", "faster"),
    "no change": ("D", "no change"),
    "inconclusive": ("o", "inconclusive"),
}


def _procs_axis(ax: Axes, procs: list[Any]) -> None:
    """Process counts as evenly spaced categories, labelled where there is room."""

    def text(i: float) -> str:
        k = int(round(i))
        return str(procs[k]) if 0 <= k < len(procs) else ""

    ax.xaxis.set_major_locator(_ticks.SpacedLocator(range(len(procs)), text))
    ax.xaxis.set_major_formatter(_ticks.PlainFormatter(text))
    ax.set_xlim(-0.5, len(procs) - 0.5)
    ax.grid(False, axis="x")


def _whiskers(p: pd.DataFrame) -> np.ndarray:
    median = p["median"].to_numpy(dtype=float)
    return np.vstack(
        [
            np.clip(median - p["low"].to_numpy(dtype=float), 0, None),
            np.clip(p["high"].to_numpy(dtype=float) - median, 0, None),
        ]
    )


def _dots(
    ax: Axes,
    x: np.ndarray,
    p: pd.DataFrame,
    color: Any,
    marker: str,
    dash: str,
    hollow: bool = False,
) -> None:
    ax.errorbar(
        x,
        p["median"],
        yerr=_whiskers(p),
        color=color,
        marker=marker,
        linestyle=dash,
        linewidth=0.8,
        elinewidth=0.9,
        markerfacecolor="white" if hollow else color,
        markeredgecolor=color,
        markeredgewidth=1.0,
        zorder=3,
    )


@styled
def compare(
    data: Any,
    log: bool = False,
    *,
    new: Any = None,
    labels: tuple[str, str] | None = None,
    size: Size = None,
    title: bool | str = True,
    fig: Any = None,
    ax: Any = None,
) -> Figure:
    """Engines/transports (and placements, runs) side by side: at each process count a
    point per series, drawn at that count (no sideways dodge: the series' colours tell them
    apart), the median µs per switch with the 95% confidence interval of the
    median as its bar (the interquartile range where the frame has no interval), one panel
    per size. ``log=True`` puts µs on a log axis (fibers next to processes); set it here
    rather than on the returned axes, so the limits are chosen for it.

    Before/after: ``compare(base, new=after)`` draws two runs (two files, or two hosts of
    a fleet run: ``fleet.select(df, "a")``) side by side, hollow and filled, above the ratio
    of their medians per point (``ctxbench.compare``; a bar for the ratio's
    interval where that frame has ``ratio_low``/``ratio_high``). ``data`` may also be
    such a comparison frame itself. ``labels`` names the two runs (default: their hosts or
    run names where those differ, else "base" and "new").

    ``size``, ``title``, ``fig`` and ``ax`` as in ``lat_ctx``; ``ax`` takes a figure of
    one panel (one size, no ``new``)."""
    if new is not None or _is_comparison(data):
        if ax is not None:
            raise ValueError("ax: a before/after figure has two rows of axes; pass fig= instead")
        return _before_after(data, new, labels, log, size, title, fig)
    main = "Context-switch latency side by side"
    return _side_by_side(frame(data), log, size, title, fig, ax, main)


def _side_by_side(
    df: pd.DataFrame, log: bool, size: Size, title: Any, fig: Any, ax: Any, main: str
) -> Figure:
    found = _layout.facets(df, [PAIR, VARIANT], panels_by=("size_kb",), one_axes=ax is not None)
    g = _layout.grid(len(found.panels), size, one_column=found.split, fig=fig, ax=ax, sharex=None)
    drawn, seen, dropped = [], set(), 0
    for stack, panel in zip(g.axes, found.panels):
        a = stack[0]
        procs = sorted(panel.rows["procs"].unique())
        slot = {p: i for i, p in enumerate(procs)}
        for s in panel.series:
            p = points(s.rows, "procs", "ci")
            if log:
                dropped += int((p["median"] <= 0).sum())
                p = positive(p)
            if p.empty:
                continue
            drawn.append(p)
            x = np.array([slot[v] for v in p.index], dtype=float)
            _dots(a, x, p, s.color, s.marker, s.dash)
            seen |= _layout.mark_flags(a, x, p, s.color, log=log)
        if log:
            _ticks.plain_log(a, "y")
        _procs_axis(a, procs)
    limits(g.axes[0][0], drawn, log=log)
    _layout.labels(g, PROCS_LABEL, (SWITCH_LABEL,))
    _layout.panel_titles(g, found)
    detail = "point: median; bar: 95% CI of the median (IQR where a point has none)"
    return _layout.finish(
        g,
        found.handles() + _layout.flag_handles(seen),
        title=title,
        main=main,
        detail="; ".join(t for t in (detail, dropped_note(dropped)) if t),
    )


@styled
def machines(
    data: Any,
    by: str = "host",
    *,
    log: bool = False,
    size: Size = None,
    title: bool | str = True,
    fig: Any = None,
    ax: Any = None,
) -> Figure:
    """The machines of a fleet run side by side: ``compare``'s points with one series per
    value of ``by`` ("host", "machine" or "worker"); machines that share a hostname are
    labelled "host (machine)". ``log``, ``size``, ``title``, ``fig`` and ``ax`` as in
    ``compare``."""
    df = as_frame(data)
    if by not in df.columns:
        raise ValueError(f"the frame has no {by!r} column: machines() draws fleet runs")
    name = df[by].astype(str)
    if by == "host" and "machine" in df.columns:
        # Two machines under one hostname stay two series.
        shared = df.groupby("host")["machine"].transform("nunique") > 1
        name = name.where(~shared, name + " (" + df["machine"].astype(str) + ")")
    # The machine takes the place of the host among what tells series apart.
    df = frame(df.assign(host=name))
    return _side_by_side(df, log, size, title, fig, ax, f"Context-switch latency by {by}")


def _is_comparison(data: Any) -> bool:
    import pandas as pd

    return isinstance(data, pd.DataFrame) and {"ratio", "base_us", "new_us"} <= set(data.columns)


def _names(base: pd.DataFrame, new: pd.DataFrame) -> tuple[str, str]:
    """The runs' own names where each has one and they differ: run, host, source."""
    for column in ("run", "host", "source"):
        if column in base.columns and column in new.columns:
            a, b = base[column].dropna().unique(), new[column].dropna().unique()
            if len(a) == 1 and len(b) == 1 and a[0] != b[0]:
                return str(a[0]), str(b[0])
    return "base", "new"


def _runs(data: Any, new: Any) -> tuple[pd.DataFrame, pd.DataFrame, tuple[str, str]]:
    """Both runs as one frame (column ``_run``: 0 base, 1 new), the comparison frame, and
    the runs' names."""
    if new is None:
        comparison = as_frame(data)
        value = {0: comparison["base_us"], 1: comparison["new_us"]}
        rows = concat([comparison.assign(value=value[k], _run=k) for k in (0, 1)])
        return rows, comparison, ("base", "new")
    from .._compare import compare as compare_runs

    base, after = as_frame(data), as_frame(new)
    comparison = compare_runs(base, after)
    rows = concat([base.assign(_run=0), after.assign(_run=1)])
    return rows, comparison, _names(base, after)


def _ratios(comparison: pd.DataFrame, key: dict[str, Any]) -> pd.DataFrame:
    """The comparison's rows of one series, indexed by procs: ratio, its interval (NaN
    where the frame has none), verdict."""
    rows = comparison
    for column, value in key.items():
        if column in rows.columns:
            rows = rows[rows[column].astype(str) == str(value)]
    out = {}
    for r in rows.to_dict("records"):
        ratio = float(r["ratio"])
        low, high = float(r.get("ratio_low", math.nan)), float(r.get("ratio_high", math.nan))
        has = math.isfinite(low) and math.isfinite(high)
        out[r["procs"]] = {
            "median": ratio,
            "low": low if has else ratio,
            "high": high if has else ratio,
            "lim_low": min(ratio, low) if has else ratio,
            "lim_high": max(ratio, high) if has else ratio,
            "verdict": r.get("verdict", "inconclusive"),
        }
    return frame_of(out)


@dataclass
class _Drawn:
    """What a before/after figure drew, for its limits, legend and title."""

    points: list[pd.DataFrame] = field(default_factory=list)
    ratios: list[pd.DataFrame] = field(default_factory=list)
    verdicts: set[str] = field(default_factory=set)
    flags: set[str] = field(default_factory=set)
    dropped: int = 0  # medians ≤ 0 off a log axis
    unknown: int = 0  # ratios ≤ 0 or undefined


def _labels(labels: Any) -> tuple[str, str]:
    """``labels``: the two runs' names, or a TypeError/ValueError naming it."""
    if isinstance(labels, (str, bytes)) or not isinstance(labels, (tuple, list)):
        raise TypeError(f"labels: expected two names, like ('v1', 'v2'), got {labels!r}")
    if len(labels) != 2:
        raise ValueError(f"labels: expected two names (base, new), got {len(labels)}: {labels!r}")
    return str(labels[0]), str(labels[1])


def _before_after(
    data: Any, new: Any, labels: tuple[str, str] | None, log: bool, size: Size, title: Any, fig: Any
) -> Figure:
    rows, comparison, names = _runs(data, new)
    if labels is not None:
        names = _labels(labels)
    found = _layout.facets(frame(rows, variants=_MATCHED), [PAIR, VARIANT], panels_by=("size_kb",))
    g = _layout.grid(
        len(found.panels), size, one_column=found.split, fig=fig, sharex="panel", stack=(1.6, 1.0)
    )
    drawn = _Drawn()
    for (top, bottom), panel in zip(g.axes, found.panels):
        procs = sorted(panel.rows["procs"].unique())
        slot = {p: i for i, p in enumerate(procs)}
        for s in panel.series:
            _medians(top, s, slot, log, drawn)
            _ratio_points(bottom, s, comparison, slot, drawn)
        bottom.axhline(1.0, color="0.4", linewidth=0.8, zorder=1)
        for a in (top, bottom) if log else (bottom,):
            _ticks.plain_log(a, "y")
        _procs_axis(bottom, procs)
        _procs_axis(top, procs)
    limits(g.axes[0][0], drawn.points, log=log)
    one = frame_of({0: {"median": 1.0, "lim_low": 1.0, "lim_high": 1.0}})
    limits(g.axes[0][1], [*drawn.ratios, one], log=True)
    _layout.labels(g, PROCS_LABEL, (SWITCH_LABEL, "ratio"))
    _layout.panel_titles(g, found)
    handles = found.handles() + _run_handles(names) + _verdict_handles(drawn.verdicts)
    return _layout.finish(
        g,
        handles + _layout.flag_handles(drawn.flags),
        title=title,
        main=f"Before and after: {names[0]} → {names[1]}",
        detail=_ab_detail(names, comparison, drawn),
    )


def _medians(
    ax: Axes,
    s: _layout.Series,
    slot: dict[Any, int],
    log: bool,
    drawn: _Drawn,
) -> None:
    """Both runs' medians of one series with their intervals at the process count itself
    (never shifted sideways, where a reader would take the point for another count): base
    hollow, new filled over it."""
    for run in (0, 1):
        p = points(s.rows[s.rows["_run"] == run], "procs", "ci")
        if log:
            drawn.dropped += int((p["median"] <= 0).sum())
            p = positive(p)
        if p.empty:
            continue
        drawn.points.append(p)
        x = np.array([slot[v] for v in p.index], dtype=float)
        _dots(ax, x, p, s.color, s.marker, "none", hollow=run == 0)
        drawn.flags |= _layout.mark_flags(ax, x, p, s.color, log=log)


def _ratio_points(
    ax: Axes,
    s: _layout.Series,
    comparison: pd.DataFrame,
    slot: dict[Any, int],
    drawn: _Drawn,
) -> None:
    """The series' ratios new/base, marked by verdict, with a bar for the ratio's interval
    where the comparison has one."""
    key = dict(s.rows.iloc[0][[c for c in _SERIES_KEY if c in s.rows.columns]])
    key["size_kb"] = s.rows["size_kb"].iloc[0]
    r = _ratios(comparison, key)
    if r.empty:
        return
    # A ratio with a median ≤ 0 on either side has no place on the log axis.
    known = r[r["median"].astype(float) > 0]
    drawn.unknown += len(r) - len(known)
    drawn.ratios.append(known)
    for verdict, part in known.groupby("verdict"):
        drawn.verdicts.add(verdict)
        marker = _VERDICTS.get(verdict, _VERDICTS["inconclusive"])[0]
        x = np.array([slot[v] for v in part.index], dtype=float)
        whiskers = _whiskers(part) if part["high"].gt(part["low"]).any() else None
        ax.errorbar(
            x,
            part["median"],
            yerr=whiskers,
            color=s.color,
            marker=marker,
            linestyle="none",
            elinewidth=0.9,
            zorder=3,
        )


def _ab_detail(names: tuple[str, str], comparison: pd.DataFrame, drawn: _Drawn) -> str:
    # Which run is hollow and which filled, the legend says.
    a, b = names
    ratio = f"below: their ratio {b}/{a}"
    if {"ratio_low", "ratio_high"} <= set(comparison.columns):
        ratio += " with its 95% interval"
    parts = ["above: medians with their 95% CI", ratio]
    if drawn.unknown:
        ratios = "ratio" if drawn.unknown == 1 else "ratios"
        parts.append(f"{drawn.unknown} {ratios} not drawn (a median ≤ 0, below resolution)")
    return "; ".join([*parts, *([dropped_note(drawn.dropped)] if drawn.dropped else [])])


def _run_handles(names: tuple[str, str]) -> list[Any]:
    from matplotlib.lines import Line2D

    return [
        Line2D(
            [],
            [],
            color="0.35",
            marker="o",
            linestyle="none",
            markerfacecolor="white" if run == 0 else "0.35",
            label=name,
        )
        for run, name in enumerate(names)
    ]


def _verdict_handles(verdicts: set[str]) -> list[Any]:
    from matplotlib.lines import Line2D

    return [
        Line2D([], [], color="0.35", marker=marker, linestyle="none", label=f"ratio: {text}")
        for verdict, (marker, text) in _VERDICTS.items()
        if verdict in verdicts
    ]
