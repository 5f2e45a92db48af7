"""Curves of the median against the process count (lmbench's graph) and against the ring's
working set (where the caches overflow), each median with its interval as a band."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import _layout, _ticks
from ._data import (
    BAND_TEXT,
    PAIR,
    PROCS_LABEL,
    SWITCH_LABEL,
    VARIANT,
    check_band,
    dropped_note,
    frame,
    limits,
    points,
    positive,
    repetitions,
)
from ._style import Size, styled

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

_CACHE_LEVELS = ("L1d", "L2", "L3")
_KEYS = [PAIR, VARIANT, "size_kb"]


def _curves(g: _layout.Grid, found: _layout.Facets, x: str, band: str | None, log: bool) -> Any:
    """Draw every series of every panel; returns the points drawn, the flags seen and the
    number of points a log axis could not show."""
    drawn, seen, dropped = [], set(), 0
    for stack, panel in zip(g.axes, found.panels):
        ax = stack[0]
        for s in panel.series:
            p = points(s.rows, x, band)
            if log:
                dropped += int((p["median"] <= 0).sum())
                p = positive(p)
            if p.empty:
                continue
            drawn.append(p)
            at = p.index.to_numpy(dtype=float)
            ax.plot(
                at, p["median"], marker=s.marker, linestyle=s.dash, color=s.color, label=s.label
            )
            if band is not None:
                ax.fill_between(at, p["low"], p["high"], color=s.color, alpha=0.15, linewidth=0)
            seen |= _layout.mark_flags(ax, at, p, s.color, log=log)
        if log:
            _ticks.plain_log(ax, "y")
    limits(g.axes[0][0], drawn, log=log)
    return drawn, seen, dropped


def _detail(df: pd.DataFrame, band: str | None, dropped: int, *extra: str) -> str:
    parts = [f"line: median of {repetitions(df, [*_KEYS, 'procs'])} repetitions"]
    if band:
        parts.append(f"band: {BAND_TEXT[band]}")
    return "; ".join([*parts, *(e for e in (*extra, dropped_note(dropped)) if e)])


@styled
def lat_ctx(
    data: Any,
    band: str | None = "ci",
    *,
    log: bool = False,
    size: Size = None,
    title: bool | str = True,
    fig: Any = None,
    ax: Any = None,
) -> Figure:
    """lmbench's context-switch graph: µs per switch (median) against the number of
    processes. An engine/transport has its own colour in every figure; with one of them,
    the colour follows the size, as in lmbench's graph. Series beyond six go to further
    panels (a panel per size when engines vary).

    ``band`` shades the 95% confidence interval of each median (``"ci"``, the default; the
    interquartile range where a frame has no interval), the interquartile range (``"iqr"``),
    the min–max of the repetitions (``"range"``) or nothing (None). The y axis is scaled to
    the medians and their intervals, never to single samples, so one disturbed repetition
    cannot squash the curves. ``log=True`` puts µs on a log axis (pinned ~1 µs and unpinned
    ~30 µs curves in one figure); medians ≤ 0 then cannot be drawn and the title counts
    them. Points flagged below resolution, bimodal or throttled get a hollow marker.

    ``size``: "page" (default) or "column" width of a two-column paper, or (width, height)
    in inches; ``title``: False for none (a paper's caption says it), or a string; ``fig``:
    a Figure or SubFigure to draw the panels in; ``ax``: one axes to draw everything in.
    Returns the figure."""
    check_band(band)
    df = frame(data)
    found = _layout.facets(df, _KEYS, one_axes=ax is not None)
    g = _layout.grid(len(found.panels), size, one_column=found.split, fig=fig, ax=ax)
    _, seen, dropped = _curves(g, found, "procs", band, log)
    procs = sorted(df["procs"].unique())
    if len(procs) <= 32:
        g.axes[0][0].xaxis.set_major_locator(_ticks.SpacedLocator(procs))
    _layout.labels(g, PROCS_LABEL, (SWITCH_LABEL,))
    _layout.panel_titles(g, found)
    return _layout.finish(
        g,
        found.handles() + _layout.flag_handles(seen),
        title=title,
        main="Context-switch latency (lat_ctx)",
        detail=_detail(df, band, dropped),
    )


def _curve_of(df: pd.DataFrame) -> str:
    """What one curve of ``sizes`` follows: the column of ``procs`` and ``size_kb`` with the
    fewer values (size on a tie, as lmbench draws), the other running along the x axis."""
    return "procs" if df["procs"].nunique() < df["size_kb"].nunique() else "size_kb"


def _cache_sizes(df: pd.DataFrame, cache_kb: dict[str, float] | None) -> dict[str, float]:
    """The cache sizes to mark: given, else the ``cache_<name>_kb`` columns the frame has
    (from each result's ``metadata["cache_kb"]``); L1d, L2 and L3 only."""
    if cache_kb is None:
        cache_kb = {}
        for level in _CACHE_LEVELS:
            column = f"cache_{level}_kb"
            if column in df.columns and df[column].notna().any():
                # Results from several machines: the first machine's caches.
                cache_kb[level] = float(df[column].dropna().iloc[0])
    return {k: float(v) for k, v in cache_kb.items() if k in _CACHE_LEVELS and v}


def _cache_lines(axes: list[Any], cache: dict[str, float], xmin: float, xmax: float) -> list[str]:
    """Dotted vertical lines at the caches within reach of the data (a factor of 4 either
    side), named at the top of each panel; returns the caches left out, for the title."""
    out = []
    for name, kb in sorted(cache.items(), key=lambda item: item[1]):
        if not xmin / 4 <= kb <= xmax * 4:
            out.append(f"{name} {_ticks.kib(kb)}")
            continue
        for ax in axes:
            ax.axvline(kb, color="0.35", linestyle=":", linewidth=1.0, label=f"_cache {name}")
            ax.text(
                kb,
                0.98,
                f"{name} {_ticks.kib(kb)} ",
                transform=ax.get_xaxis_transform(),
                rotation=90,
                ha="right",
                va="top",
                fontsize=6.5,
                color="0.25",
            )
    return out


# What plot.sizes reads of each knee (the frame ctxbench.knees returns).
_KNEE_COLUMNS = ("procs", "working_set_kb", "working_set_low_kb", "working_set_high_kb", "cache")


def _knee_frame(knees: Any) -> pd.DataFrame:
    """``knees``, checked: the frame ``ctxbench.knees`` returns, or a TypeError/ValueError
    naming it."""
    if not hasattr(knees, "columns") or not hasattr(knees, "itertuples"):
        raise TypeError(
            f"knees: expected the frame ctxbench.knees returns, got {type(knees).__name__}"
        )
    missing = [c for c in _KNEE_COLUMNS if c not in knees.columns]
    if missing:
        raise ValueError(f"knees: not a frame of ctxbench.knees; it lacks {', '.join(missing)}")
    return knees


def _mark_knees(axes: list[Any], knees: pd.DataFrame) -> None:
    """Each knee (a ``ctxbench.knees`` row): its interval of working sets shaded and a
    triangle at it on the bottom edge; labelled right of it."""
    for ax in axes:
        for k in knees.itertuples():
            ax.axvspan(k.working_set_low_kb, k.working_set_high_kb, color="0.5", alpha=0.12, lw=0)
            ax.plot(
                [k.working_set_kb],
                [0.0],
                marker="^",
                color="black",
                markersize=6,
                transform=ax.get_xaxis_transform(),
                clip_on=False,
                linestyle="none",
            )
        for at, label in _knee_labels(knees):
            ax.annotate(
                label,
                (at, 0.04),
                xycoords=("data", "axes fraction"),
                rotation=90,
                fontsize=6.5,
                va="bottom",
                ha="left",
            )


def _knee_labels(knees: pd.DataFrame) -> list[tuple[float, str]]:
    """(working set, label): one label per cache for all the knees matched to it, since
    every ring size leaves a cache at about the same working set ("knee 2p, 8p: L2"), and
    one per knee matched to none."""
    labels, matched = [], {}
    for k in knees.itertuples():
        if isinstance(k.cache, str):
            matched.setdefault(k.cache, []).append(k)
        else:
            labels.append((float(k.working_set_kb), f"knee {k.procs}p"))
    for cache, found in matched.items():
        procs = ", ".join(f"{p}p" for p in sorted({k.procs for k in found}))
        at = float(np.exp(np.mean([np.log(k.working_set_kb) for k in found])))
        labels.append((at, f"knee {procs}: {cache}"))
    return labels


@styled
def sizes(
    data: Any,
    cache_kb: dict[str, float] | None = None,
    band: str | None = "ci",
    *,
    log: bool = False,
    size: Size = None,
    title: bool | str = True,
    fig: Any = None,
    ax: Any = None,
    knees: Any = None,
) -> Figure:
    """µs per switch against the ring's working set, procs × size_kb (log axis), one line
    per engine/transport (colours as in ``lat_ctx``) and per ring size or per array size,
    whichever the data has fewer of (a ``cache_sweep``'s few ring sizes over many sizes: a
    curve per ring size; lmbench's few sizes over many process counts: a curve per size),
    with the CPU's cache sizes as dotted reference lines: the curve steps up where the
    working set leaves a cache.

    ``cache_kb`` (e.g. ``{"L1d": 48, "L2": 2048}``) overrides the sizes recorded in the
    results' metadata. Size 0 has no working set and is left out. ``knees`` (the frame
    ``ctxbench.knees`` returns) marks each knee and its interval. ``band``, ``log``,
    ``size``, ``title``, ``fig`` and ``ax`` as in ``lat_ctx``."""
    check_band(band)
    df = frame(data)
    df = df[df["size_kb"] > 0]
    if df.empty:
        raise ValueError("nothing to plot: every point has size 0 (no working set)")
    df = df.assign(working_set_kb=df["procs"] * df["size_kb"])
    found = _layout.facets(df, [PAIR, VARIANT, _curve_of(df)], one_axes=ax is not None)
    g = _layout.grid(len(found.panels), size, one_column=found.split, fig=fig, ax=ax)
    _, seen, dropped = _curves(g, found, "working_set_kb", band, log)
    axes = [stack[0] for stack in g.axes]
    _ticks.plain_log(axes[0], "x", base=2, text=_ticks.kib)
    xmin, xmax = float(df["working_set_kb"].min()), float(df["working_set_kb"].max())
    missing = _cache_lines(axes, _cache_sizes(df, cache_kb), xmin, xmax)
    if knees is not None:
        _mark_knees(axes, _knee_frame(knees))
    caches = "dotted: CPU caches" + (f" ({', '.join(missing)} off the axis)" if missing else "")
    _layout.labels(
        g, "working set: procs × size (KiB summed per hop, all participants)", (SWITCH_LABEL,)
    )
    _layout.panel_titles(g, found)
    return _layout.finish(
        g,
        found.handles() + _layout.flag_handles(seen),
        title=title,
        main="Context-switch latency against the ring's working set",
        detail=_detail(df, band, dropped, caches),
    )
