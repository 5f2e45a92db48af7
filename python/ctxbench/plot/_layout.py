"""Where things go. Which column gives a series its colour, which its marker and dash, and
which splits the data into panels (small multiples of at most six series each, titled by what
they hold); the grid of panels at a size preset; one legend below the panels (beside the
axes, for an ``ax=`` the caller passed), and where the colours themselves are split over
panels (one above the other), each panel's colours in a legend of its own above it, so that
no legend lists more than ``MAX_SERIES``; titles and labels wrapped to the width, and the
height that fits them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _style
from ._data import CUT, FLAGS, PAIR

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

# More series than this in one panel cannot be told apart; they go to further panels.
MAX_SERIES = 6
# Marker and dash for the values of the second dimension (a legend entry each).
STYLES = (("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."))
_NUMERIC = ("size_kb", "procs", "parallel")
# Legend and title text sizes (points) and line heights, as in the style file.
_LEGEND_PT, _TITLE_PT, _LABEL_PT = 7.5, 9.0, 8.0


def name(column: str, value: Any) -> str:
    """A value as a label says it: size=64k, 8 procs, P=2, process/pipe."""
    if column == "size_kb":
        return f"size={value}k"
    if column == "procs":
        return f"{value} procs"
    if column == "parallel":
        return f"P={value}"
    return str(value)


def ordered(values: pd.Series) -> list[Any]:
    """Distinct values: numbers ascending, names in the order the frame has them."""
    import pandas as pd

    distinct = list(pd.unique(values))
    if pd.api.types.is_numeric_dtype(values):
        return sorted(distinct)
    return distinct


@dataclass
class Series:
    label: str
    rows: pd.DataFrame
    color: Any
    marker: str
    dash: str


@dataclass
class Panel:
    title: str
    rows: pd.DataFrame
    series: list[Series] = field(default_factory=list)


@dataclass
class Facets:
    """The data split into panels and series, with the legend that explains the split."""

    hue: str
    style: str | None
    colors: dict[Any, Any]
    styles: dict[Any, tuple[str, str]]
    panels: list[Panel]
    # The colours are split over panels: each panel's legend names its own (``panel_titles``).
    split: bool = False

    def colour_handles(self, values: Any, *, markers: bool = True) -> list[Any]:
        from matplotlib.lines import Line2D

        first = STYLES[0][0] if markers else None
        return [
            Line2D([], [], color=self.colors[v], marker=first, label=name(self.hue, v))
            for v in values
        ]

    def handles(self, *, markers: bool = True) -> list[Any]:
        """The figure legend's entries: one per colour (unless the colours are split over
        panels, each with its own legend), then one per marker/dash (in grey)."""
        from matplotlib.lines import Line2D

        entries = [] if self.split else self.colour_handles(self.colors, markers=markers)
        if self.style is not None:
            entries += [
                Line2D(
                    [],
                    [],
                    color="0.35",
                    marker=m if markers else None,
                    linestyle=d,
                    label=name(self.style, v),
                )
                for v, (m, d) in self.styles.items()
            ]
        return entries


def facets(
    df: pd.DataFrame,
    order: list[str],
    *,
    panels_by: tuple[str, ...] = (),
    one_axes: bool = False,
    styles: bool = True,
) -> Facets:
    """Split ``df`` for drawing. The first column of ``order`` whose value varies gives the
    colour (an engine/transport its own colour in every figure), the next one with at most
    four values the marker and dash (unless not ``styles``), the rest (and ``panels_by``)
    the panels; a panel with more than ``MAX_SERIES`` series is split in turn.
    ``one_axes`` (a caller's ``ax=``): everything in one panel, the rest folded into the
    colour."""
    varying = [c for c in order if df[c].nunique(dropna=False) > 1]
    hue = varying[0] if varying else order[0]
    rest = varying[1:]
    style = rest.pop(0) if styles and rest and df[rest[0]].nunique() <= len(STYLES) else None
    split = [c for c in panels_by if c in df.columns] + rest
    if one_axes:
        many = [c for c in panels_by if df[c].nunique(dropna=False) > 1]
        if many:
            raise ValueError(
                f"ax: this figure draws a panel per {', '.join(many)} "
                f"({df[many].drop_duplicates().shape[0]} here); pass fig= instead, or "
                "select the rows of one"
            )
        if rest:
            columns = [hue, *rest]
            label = df[columns[0]].map(lambda v: name(columns[0], v))
            for c in columns[1:]:
                label = label + " " + df[c].map(lambda v, c=c: name(c, v))
            df = df.assign(_series=label)
            hue = "_series"
        split = []
    colors = _colors(df, hue)
    styles = {v: STYLES[i] for i, v in enumerate(ordered(df[style]))} if style else {}
    found = Facets(hue, style, colors, styles, [])
    groups = df.groupby(split, sort=True, dropna=False) if split else [((), df)]
    for key, rows in groups:
        key = key if isinstance(key, tuple) else (key,)
        title = ", ".join(name(c, v) for c, v in zip(split, key))
        chunks = _chunks(found, title, rows)
        found.split = found.split or len(chunks) > 1
        found.panels += chunks
    return found


def _colors(df: pd.DataFrame, hue: str) -> dict[Any, Any]:
    values = ordered(df[hue])
    if hue == PAIR:
        return _style.pair_colors(values)
    if hue in _NUMERIC:
        return _style.sequential(values)
    return _style.categorical(values)


def _chunks(found: Facets, title: str, rows: pd.DataFrame) -> list[Panel]:
    """One panel, or several of at most ``MAX_SERIES`` series: consecutive colours each."""
    hues = [v for v in found.colors if (rows[found.hue] == v).any()]
    styles = [v for v in found.styles if (rows[found.style] == v).any()] or [None]
    per = max(1, MAX_SERIES // len(styles))
    parts = math.ceil(len(hues) / per)
    size = math.ceil(len(hues) / parts)
    panels = []
    for i in range(parts):
        chunk = hues[i * size : (i + 1) * size]
        part = rows[rows[found.hue].isin(chunk)]
        held = _held(found.hue, chunk) if parts > 1 else ""
        panel = Panel(", ".join(t for t in (title, held) if t), part)
        for h in chunk:
            for s in styles:
                series = part[part[found.hue] == h]
                if s is not None:
                    series = series[series[found.style] == s]
                if series.empty:
                    continue
                marker, dash = found.styles.get(s, STYLES[0])
                label = name(found.hue, h) + (f" {name(found.style, s)}" if s is not None else "")
                panel.series.append(Series(label, series, found.colors[h], marker, dash))
        panels.append(panel)
    return panels


def _held(hue: str, values: list[Any]) -> str:
    """What a panel of some of the colours holds, for its title: "size=4k to size=64k" for
    numbers; names are long (hosts, files) and its legend lists them, so nothing more."""
    names = [name(hue, v) for v in values]
    if hue in _NUMERIC:
        return f"{names[0]} to {names[-1]}" if len(names) > 1 else names[0]
    return ""


@dataclass
class Grid:
    """A figure's panels: ``axes[i]`` is the stack of axes (top to bottom) of panel i, in
    ``cols`` columns and ``rows`` rows; ``grows``: the height is ours to fit the content."""

    fig: Any
    axes: list[list[Axes]]
    width: float
    row_height: float
    grows: bool
    caller_ax: bool
    cols: int = 1
    rows: int = 1
    stack: tuple[float, ...] = (1.0,)
    # Lines of the legends above the panels (``panel_titles``), for the height.
    legend_lines: int = 0


def grid(
    panels: int,
    size: _style.Size,
    *,
    fig: Any = None,
    ax: Any = None,
    sharex: str | None = "all",
    sharey: bool = True,
    stack: tuple[float, ...] = (1.0,),
    one_column: bool = False,
) -> Grid:
    """Axes for ``panels`` panels, each a stack of ``len(stack)`` axes (heights in that
    ratio), in a new figure at ``size``, in the caller's ``fig`` (a Figure or SubFigure), or
    the caller's ``ax`` (one panel of one axes). ``sharex``: "all" panels, a "panel"'s stack
    or None; ``sharey``: the same axes of every stack share y. ``one_column``: the panels
    one above the other, each as wide as the figure, for a legend above it
    (``Facets.split``)."""
    width, row, grows = _style.dimensions(size)
    if ax is not None:
        if fig is not None:
            raise ValueError("ax, fig: pass one of them, not both")
        if panels != 1 or len(stack) != 1:
            raise ValueError("ax: this figure has several panels; pass fig= instead")
        root = _root(ax.figure)
        w, _ = root.get_size_inches()
        return Grid(root, [[ax]], float(w) * ax.get_position().width, row, False, True)
    if fig is None:
        with _style.style():
            fig = _style.StyledFigure(figsize=(width, row), layout="constrained")
    else:
        root = _root(fig)
        if root.get_layout_engine() is None:
            root.set_layout_engine("constrained")
        width = float(root.get_size_inches()[0])
        grows = False
    # As many columns as the width takes (2 or 3), then as few as keep that many rows:
    # four panels are 2 × 2, not 3 + 1.
    rows = panels if one_column else math.ceil(panels / min(panels, 2 if width < 5 else 3))
    cols = math.ceil(panels / rows)
    with _style.style():
        table = fig.subplots(
            rows * len(stack),
            cols,
            squeeze=False,
            gridspec_kw={"height_ratios": list(stack) * rows},
        )
    axes = [
        [table[(i // cols) * len(stack) + k][i % cols] for k in range(len(stack))]
        for i in range(panels)
    ]
    used = {id(a) for stack_ in axes for a in stack_}
    for a in table.ravel():
        if id(a) not in used:
            a.remove()
    _share(axes, sharex, sharey, cols)
    return Grid(fig, axes, width, row, grows, False, cols, rows, stack)


def _root(fig: Any) -> Any:
    while getattr(fig, "figure", fig) is not fig and getattr(fig, "figure", None) is not None:
        fig = fig.figure
    return fig


def _share(axes: list[list[Axes]], sharex: str | None, sharey: bool, cols: int) -> None:
    """Share limits, and keep tick labels where a reader needs them: y on the first
    column, x under the lowest axes of each column (of each stack, for "panel")."""
    first = axes[0]
    lowest = {i % cols: stack[-1] for i, stack in enumerate(axes)}
    for i, stack in enumerate(axes):
        for k, a in enumerate(stack):
            if sharey and i > 0:
                a.sharey(first[k])
                if i % cols:
                    a.tick_params(labelleft=False)
            if sharex == "all" and (i, k) != (0, 0):
                a.sharex(first[0])
            elif sharex == "panel" and k > 0:
                a.sharex(stack[0])
            keep = a is lowest[i % cols] if sharex == "all" else a is stack[-1]
            if sharex is not None and not keep:
                a.tick_params(labelbottom=False)


def labels(g: Grid, xlabel: str, ylabels: tuple[str, ...]) -> None:
    """Axis labels: x under the lowest axes of each column, y beside the first column (per
    row of a stack). Not the figure's supxlabel: constrained layout would put it in the
    same place as the legend below."""
    cols = g.cols
    lowest = {i % cols: stack[-1] for i, stack in enumerate(g.axes)}
    text = _style.wrap(xlabel, 0.92 * g.width * 72 / cols, _LABEL_PT)
    for a in lowest.values():
        a.set_xlabel(text)
    for i, stack in enumerate(g.axes):
        if i % cols == 0:
            for a, label in zip(stack, ylabels):
                a.set_ylabel(label)


def panel_titles(g: Grid, found: Facets, *, markers: bool = True) -> None:
    """Each panel's title; where the colours are split over panels (``Facets.split``), each
    panel's colours instead, in a legend above it titled by what the panel holds."""
    if g.caller_ax:
        return
    for stack, panel in zip(g.axes, found.panels):
        room = 0.75 * g.width * 72 / g.cols
        if found.split:
            held = dict.fromkeys(v for s in panel.series for v in s.rows[found.hue].unique())
            handles = found.colour_handles(held, markers=markers)
            columns, lines = _columns(handles, room)
            title = _style.wrap(panel.title, room, _LEGEND_PT) if panel.title else None
            stack[0].legend(
                handles=handles,
                title=title,
                loc="lower center",
                bbox_to_anchor=(0.5, 1.02),
                ncols=columns,
                borderaxespad=0.0,
            )
            g.legend_lines += lines + (title.count("\n") + 1 if title else 0)
        elif panel.title:
            stack[0].set_title(_style.wrap(panel.title, room, _LABEL_PT))


def finish(
    g: Grid,
    handles: list[Any],
    *,
    title: Any,
    main: str,
    detail: str,
    panels: float | None = None,
) -> Any:
    """The legend (below the panels, or beside a caller's axes), the title (``title``:
    True for ``main`` and ``detail``, False for none, a string for that string), and the
    height that fits them: ``panels`` inches for the panels where a figure knows its own
    (square heatmaps), else its rows of panels. Returns the figure to hand back."""
    text = _title_text(title, main, detail)
    if g.caller_ax:
        a = g.axes[0][0]
        if text:
            a.set_title(_style.wrap(text, 0.95 * g.width * 72, _TITLE_PT), fontsize=_TITLE_PT)
        if handles:
            _wrap_labels(handles, 0.45 * g.width * 72)
            a.legend(
                handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0
            )
        return g.fig
    lines = 0
    if text:
        wrapped = _style.wrap(text, g.width * 72 - 12, _TITLE_PT)
        g.fig.suptitle(wrapped, fontsize=_TITLE_PT)
        lines = wrapped.count("\n") + 1
    rows = _legend(g, handles)
    if g.grows:
        stack = sum(g.stack) / max(g.stack) if len(g.stack) > 1 else 1.0
        if panels is None:
            panels = g.rows * g.row_height * (1.0 + 0.45 * (stack - 1.0))
        rows += g.legend_lines
        height = panels + lines * _TITLE_PT * 1.35 / 72 + rows * _LEGEND_PT * 1.55 / 72 + 0.1
        g.fig.set_size_inches(g.width, height)
    return _root(g.fig)


def _title_text(title: Any, main: str, detail: str) -> str:
    if title is True:
        return main + (f"\n{detail}" if detail else "")
    if title is False or title is None:
        return ""
    if isinstance(title, str):
        return title
    raise TypeError(f"title: expected True, False or a string, got {type(title).__name__}")


def _legend(g: Grid, handles: list[Any]) -> int:
    """A legend below the panels in as many columns as fit the width; its height in lines."""
    if not handles:
        return 0
    columns, lines = _columns(handles, g.width * 72 - 12)
    g.fig.legend(handles=handles, loc="outside lower center", ncols=columns)
    return lines


def _columns(handles: list[Any], room: float) -> tuple[int, int]:
    """How many legend columns of ``handles`` fit ``room`` points (matplotlib fills a legend
    column by column, each as wide as its widest entry), their labels wrapped to it; and the
    legend's height in lines."""
    em = _LEGEND_PT
    frame = (2.4 + 0.8) * em  # the handle and the pad before the text
    _wrap_labels(handles, room - frame)
    widths = [_style.text_width(h.get_label(), em) + frame for h in handles]
    for cols in range(len(handles), 0, -1):
        rows = math.ceil(len(handles) / cols)
        columns = [widths[c * rows : (c + 1) * rows] for c in range(math.ceil(len(handles) / rows))]
        if sum(max(c) for c in columns) + 1.2 * em * (len(columns) - 1) <= room:
            break
    lines = sum(max(h.get_label().count("\n") + 1 for h in handles[r::rows]) for r in range(rows))
    return len(columns), lines


def _wrap_labels(handles: list[Any], width: float) -> None:
    for h in handles:
        h.set_label(_style.wrap(h.get_label(), width, _LEGEND_PT))


def mark_flags(
    ax: Axes, x: np.ndarray, points: pd.DataFrame, color: Any, *, log: bool = False
) -> set[str]:
    """Hollow markers on the flagged points, and a triangle at 0 under each point whose
    band was cut there (not on a log axis, which has no 0); returns the flags that occur."""
    seen = set()
    for flag, (marker, _) in FLAGS.items():
        hit = points[flag].to_numpy(dtype=bool)
        if hit.any():
            seen.add(flag)
            ax.scatter(
                x[hit],
                points["median"].to_numpy()[hit],
                marker=marker,
                s=45,
                facecolors="none",
                edgecolors=color,
                linewidths=1.1,
                zorder=4,
                label=f"_flag {flag}",
            )
    flag, marker, _ = CUT
    cut = points[flag].to_numpy(dtype=bool) if flag in points.columns else np.zeros(0, bool)
    if cut.any() and not log:
        seen.add(flag)
        ax.scatter(x[cut], np.zeros(int(cut.sum())), marker=marker, s=30, color=color,
                   clip_on=False, zorder=4, label=f"_flag {flag}")  # fmt: skip
    return seen


def flag_handles(seen: set[str]) -> list[Any]:
    from matplotlib.lines import Line2D

    flags = [
        Line2D([], [], marker=marker, linestyle="none", markersize=6, markerfacecolor="none",
               markeredgecolor="black", label=text)
        for flag, (marker, text) in FLAGS.items()
        if flag in seen
    ]  # fmt: skip
    flag, marker, text = CUT
    if flag in seen:
        flags.append(Line2D([], [], marker=marker, linestyle="none", markersize=6,
                            color="black", label=text))  # fmt: skip
    return flags
