"""matplotlib figures of tidy frames (or results): every function returns a Figure and never
calls ``show()``; figures are built with ``matplotlib.figure.Figure``, so no GUI backend and
no pyplot state is involved. In Jupyter, ``%matplotlib inline`` displays a returned figure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._plot_matrix import matrix as matrix
from .frame import as_frame, require

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# What tells series apart besides size and procs; only the ones that vary go in a label.
# "source" exists in frames that include files read from lmbench's xgraph output.
_SERIES = ("source", "benchmark", "engine", "transport", "placement", "parallel")
_PROCS_LABEL = "participants in the ring (procs)"
_SWITCH_LABEL = "µs per switch"


def _setup(data: Any) -> tuple[pd.DataFrame, type[Figure]]:
    require("matplotlib", "ctxbench.plot")
    from matplotlib.figure import Figure

    df = as_frame(data)
    if df.empty:
        raise ValueError("nothing to plot: the frame has no rows")
    if "source" in df.columns:
        # Rows measured here have no source; name it so old and new runs label apart.
        df = df.assign(source=df["source"].fillna("ctxbench"))
    return df, Figure


def _label(df: pd.DataFrame, key: dict[str, Any], always: tuple[str, ...] = ()) -> str:
    """A legend label naming only what differs between the frame's series."""
    varies = {k for k in df.columns if k in key and (k in always or df[k].nunique() > 1)}
    parts = [str(key[k]) for k in ("source", "benchmark") if k in varies]
    if varies & {"engine", "transport"}:
        parts.append(f"{key['engine']}/{key['transport']}")
    if "placement" in varies:
        parts.append(str(key["placement"]))
    if "parallel" in varies:
        parts.append(f"P={key['parallel']}")
    if "size_kb" in varies:
        parts.append(f"size={key['size_kb']}k")
    if "procs" in varies:
        parts.append(f"{key['procs']} procs")
    return " ".join(parts) or "all"


def _present(df: pd.DataFrame, names: list[str]) -> list[str]:
    return [n for n in names if n in df.columns]


def _groups(df: pd.DataFrame, keys: list[str]) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    keys = _present(df, keys)
    return [
        (dict(zip(keys, values)), group)
        for values, group in df.groupby(keys, sort=True, dropna=False)
    ]


def _rest(key: dict[str, Any], names: tuple[str, ...] | list[str]) -> tuple[Any, ...]:
    # Only the columns the frame has, as in _combos.
    return tuple(key[n] for n in names if n in key)


def _combos(df: pd.DataFrame, names: list[str]) -> list[tuple[Any, ...]]:
    """The distinct combinations of ``names`` in the frame, in a stable order."""
    names = _present(df, names)
    return sorted(df[names].drop_duplicates().itertuples(index=False, name=None), key=str)


def _palette(distinct: list[Any], cmap: str) -> dict[Any, Any]:
    """One color per value, in the given order."""
    from matplotlib import colormaps

    colormap = colormaps[cmap]
    if cmap == "tab10":
        return {v: colormap(i % 10) for i, v in enumerate(distinct)}
    # Sequential maps: spread the values over the map, stopping short of its pale end.
    return {v: colormap(0.85 * i / max(len(distinct) - 1, 1)) for i, v in enumerate(distinct)}


def _dashes(combos: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], str]:
    """A line style per combination, so color can carry the main variable."""
    styles = ("-", "--", ":", "-.")
    return {combo: styles[i % len(styles)] for i, combo in enumerate(combos)}


def _procs_ticks(ax: Axes, procs: np.ndarray) -> None:
    # Label the measured counts themselves when there are few enough to read.
    if len(procs) <= 12:
        ax.set_xticks(procs)


BANDS = ("ci", "iqr", "range", None)
_BAND_TEXT = {
    "ci": "95% CI of the median",
    "iqr": "interquartile range",
    "range": "min–max of the repetitions",
}
# How a point the statistics distrust is drawn: a hollow marker over the line's own.
_FLAGS = {
    "below_resolution": ("v", "below resolution (net ≤ 0)"),
    "bimodal": ("D", "bimodal: two modes, the median is neither"),
}
_CACHE_LEVELS = ("L1d", "L2", "L3")


def _has_ci(g: pd.DataFrame) -> bool:
    return {"ci_low", "ci_high"} <= set(g.columns) and bool(
        g[["ci_low", "ci_high"]].notna().all(axis=None)
    )


def _points(g: pd.DataFrame, x: str, band: str | None) -> pd.DataFrame:
    """Per point (by ``x``): the median of the samples, the band to shade, the interval
    the axis limits come from (the CI, else the IQR: never the extremes) and the flags."""
    rows = {}
    for at, point in g.groupby(x, sort=True):
        values = point["value"].dropna()
        median = float(values.median())
        q1, q3 = float(values.quantile(0.25)), float(values.quantile(0.75))
        ci = _has_ci(point)
        robust = (
            (float(point["ci_low"].iloc[0]), float(point["ci_high"].iloc[0])) if ci else (q1, q3)
        )
        shade = {
            "ci": robust,
            "iqr": (q1, q3),
            "range": (float(values.min()), float(values.max())),
            None: (median, median),
        }[band]
        flags = {
            "below_resolution": "below_resolution" in point
            and bool(point["below_resolution"].fillna(False).astype(bool).any()),
            "bimodal": "verdict" in point and bool((point["verdict"] == "bimodal").any()),
        }
        rows[at] = {
            "median": median,
            "low": shade[0],
            "high": shade[1],
            "lim_low": min(median, robust[0]),
            "lim_high": max(median, robust[1]),
            **flags,
        }
    return _frame_of(rows)


def _frame_of(rows: dict[Any, dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame.from_dict(rows, orient="index").sort_index()


def _mark_flags(ax: Axes, x: np.ndarray, points: pd.DataFrame, color: Any) -> set[str]:
    """Hollow markers on the flagged points; returns the flags that occur."""
    seen = set()
    for flag, (marker, _) in _FLAGS.items():
        hit = points[flag].to_numpy(dtype=bool)
        if hit.any():
            seen.add(flag)
            ax.scatter(
                x[hit],
                points["median"].to_numpy()[hit],
                marker=marker,
                s=90,
                facecolors="none",
                edgecolors=color,
                linewidths=1.6,
                zorder=4,
                label=f"_flag {flag}",
            )
    return seen


def _flag_handles(seen: set[str]) -> list[Any]:
    from matplotlib.lines import Line2D

    return [
        Line2D(
            [],
            [],
            marker=marker,
            linestyle="none",
            markersize=8,
            markerfacecolor="none",
            markeredgecolor="black",
            label=text,
        )
        for flag, (marker, text) in _FLAGS.items()
        if flag in seen
    ]


def _limits(ax: Axes, points: list[pd.DataFrame], *, log: bool = False) -> None:
    """y limits from the medians, widened to their intervals by at most a quarter of the
    medians' span on each side (a factor of 2 on a log axis): one stray sample, or the wide
    interval of a point on a disturbed machine, cannot squash every curve; a band or error
    bar that goes further is clipped. On a linear axis 0 stays in view."""
    medians = np.concatenate([p["median"].to_numpy(dtype=float) for p in points])
    lows = np.concatenate([p["lim_low"].to_numpy(dtype=float) for p in points])
    highs = np.concatenate([p["lim_high"].to_numpy(dtype=float) for p in points])
    if log:
        positive = medians[medians > 0]
        if not len(positive):
            return
        bottom, top = float(positive.min()), float(positive.max())
        low = max(float(np.nanmin(lows[lows > 0], initial=bottom)), bottom / 2)
        high = min(float(np.nanmax(highs)), top * 2)
        ax.set_ylim(min(low, bottom) / 1.2, max(high, top) * 1.2)
        return
    bottom, top = min(float(np.nanmin(medians)), 0.0), float(np.nanmax(medians))
    span = (top - bottom) or abs(top) or 1.0
    low = max(float(np.nanmin(lows)), bottom - span / 4)
    high = min(float(np.nanmax(highs)), top + span / 4)
    low, high = min(low, bottom), max(high, top)
    pad = 0.04 * (high - low)
    ax.set_ylim(low - (pad if low < 0 else 0.0), high + pad)


def _outside_legend(fig: Figure, ax: Axes, extra: list[Any]) -> None:
    handles, _ = ax.get_legend_handles_labels()
    _legend(fig, handles + list(extra))


def _legend(fig: Figure, handles: list[Any], below: bool = False) -> None:
    # Outside the axes (right of them, or below a row of panels): the legend covers no data
    # whatever the curves or bars do.
    if not handles:
        return
    labels = [h.get_label() for h in handles]
    if below:
        fig.legend(
            handles,
            labels,
            loc="outside lower center",
            ncols=min(len(handles), 4),
            fontsize="small",
        )
    else:
        fig.legend(handles, labels, loc="outside right upper", fontsize="small")


def _check_band(band: str | None) -> None:
    if band not in BANDS:
        raise ValueError(f"band: expected one of {', '.join(map(repr, BANDS))}, got {band!r}")


def lat_ctx(data: Any, band: str | None = "ci") -> Figure:
    """lmbench's context-switch graph: µs per switch (median) against the number of
    processes, one line per size (and per engine/transport/placement when they vary).

    ``band`` shades the 95% confidence interval of each median (``"ci"``, the default; the
    interquartile range where a frame has no interval), the interquartile range (``"iqr"``),
    the min–max of the repetitions (``"range"``) or nothing (None). The y axis is scaled to
    the medians and their intervals, never to single samples, so one disturbed repetition
    cannot squash the curves (a ``"range"`` band may then leave the axes). Points flagged
    below resolution or bimodal get a hollow marker and a legend entry."""
    _check_band(band)
    df, Figure = _setup(data)
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.add_subplot()
    combos = _combos(df, list(_SERIES))
    sizes = sorted(df["size_kb"].unique())
    # Color carries the size, as in lmbench's graph; with one size it tells the series apart.
    by_size = len(sizes) > 1
    colors = _palette(sizes if by_size else combos, "tab10")
    dashes = _dashes(combos) if by_size else dict.fromkeys(combos, "-")
    drawn, seen = [], set()
    for key, g in _groups(df, [*_SERIES, "size_kb"]):
        points = _points(g, "procs", band)
        drawn.append(points)
        x = points.index.to_numpy()
        combo = _rest(key, _SERIES)
        color = colors[key["size_kb"] if by_size else combo]
        ax.plot(
            x,
            points["median"],
            marker="o",
            color=color,
            linestyle=dashes[combo],
            label=_label(df, key, always=("size_kb",)),
        )
        if band is not None:
            ax.fill_between(x, points["low"], points["high"], color=color, alpha=0.15, linewidth=0)
        seen |= _mark_flags(ax, x, points, color)
    _procs_ticks(ax, np.unique(df["procs"]))
    reps = df.groupby(_present(df, [*_SERIES, "size_kb", "procs"]))["value"].size()
    what = f"; band: {_BAND_TEXT[band]}" if band else ""
    ax.set_title(
        f"Context-switch latency (lat_ctx)\nline: median of {_range(reps)} repetitions{what}",
        fontsize=11,
    )
    ax.set_xlabel(_PROCS_LABEL)
    ax.set_ylabel(f"{_SWITCH_LABEL} (median)")
    _limits(ax, drawn)
    ax.grid(alpha=0.3)
    _outside_legend(fig, ax, _flag_handles(seen))
    return fig


def _range(counts: pd.Series) -> str:
    lo, hi = int(counts.min()), int(counts.max())
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _interval(g: pd.DataFrame) -> tuple[float, float]:
    # The point's confidence interval when the frame has one, else the interquartile range
    # (a single stray sample must not make an error bar).
    if _has_ci(g):
        return float(g["ci_low"].iloc[0]), float(g["ci_high"].iloc[0])
    return float(g["value"].quantile(0.25)), float(g["value"].quantile(0.75))


_HATCH = {"below_resolution": "..", "bimodal": "//"}


def compare(data: Any, log: bool = False) -> Figure:
    """Engines/transports (and placements) side by side: grouped bars of the median µs per
    switch at each process count, one panel per size, with the median's confidence interval
    as error bars (the interquartile range where the frame has no interval). Bars of points
    flagged below resolution or bimodal are hatched; the legend sits below the panels.
    ``log=True`` puts µs on a log axis (engines that differ by orders of magnitude); set it
    here rather than on the returned axes, so the limits are chosen for it."""
    from matplotlib.patches import Patch

    df, Figure = _setup(data)
    sizes = sorted(df["size_kb"].unique())
    fig = Figure(figsize=(3 + 4.5 * len(sizes), 4.5), layout="constrained")
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    series = _groups(df, list(_SERIES))
    width = 0.8 / len(series)
    colors = _palette([_rest(key, _SERIES) for key, _ in series], "tab10")
    seen: set[str] = set()
    for ax, size in zip(axes, sizes):
        at_size = df[df["size_kb"] == size]
        procs = np.unique(at_size["procs"])
        drawn = []
        for i, (key, g) in enumerate(series):
            g = g[g["size_kb"] == size]
            median = np.full(len(procs), np.nan)
            err = np.zeros((2, len(procs)))
            hatches: list[str | None] = [None] * len(procs)
            for j, p in enumerate(procs):
                point = g[g["procs"] == p]
                if point.empty:
                    continue
                median[j] = point["value"].median()
                low, high = _interval(point)
                err[:, j] = max(median[j] - low, 0.0), max(high - median[j], 0.0)
                for flag, hatch in _HATCH.items():
                    if _points(point, "procs", None)[flag].any():
                        hatches[j] = hatch
                        seen.add(flag)
            bars = ax.bar(
                np.arange(len(procs)) + (i - (len(series) - 1) / 2) * width,
                median,
                width,
                yerr=err,
                capsize=3,
                color=colors[_rest(key, _SERIES)],
                label=_label(df, key, always=("engine", "transport")),
            )
            for bar, hatch in zip(bars, hatches):
                if hatch:
                    bar.set_hatch(hatch)
                    bar.set_edgecolor("black")
            drawn.append(
                _frame_of(
                    {
                        j: {
                            "median": median[j],
                            "lim_low": median[j] - err[0, j],
                            "lim_high": median[j] + err[1, j],
                        }
                        for j in range(len(procs))
                        if not np.isnan(median[j])
                    }
                )
            )
        # Error bars longer than the quarter-span margin are clipped, not scaled to.
        if log:
            ax.set_yscale("log")
        _limits(ax, [d for d in drawn if not d.empty], log=log)
        ax.set_xticks(np.arange(len(procs)), [str(p) for p in procs])
        ax.set_xlabel(_PROCS_LABEL)
        ax.set_ylabel(f"{_SWITCH_LABEL} (median)")
        ax.set_title(f"size={size}k")
        ax.grid(axis="y", alpha=0.3)
    # Plain patches: a container's legend entry would copy its first bar, hatched or not.
    handles = [
        Patch(facecolor=colors[_rest(key, _SERIES)], label=_label(df, key, ("engine", "transport")))
        for key, _ in series
    ] + [
        Patch(facecolor="white", edgecolor="black", hatch=hatch, label=_FLAGS[flag][1])
        for flag, hatch in _HATCH.items()
        if flag in seen
    ]
    _legend(fig, handles, below=True)
    fig.suptitle("Context-switch latency side by side; error bars: 95% CI of the median")
    return fig


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


def _kib(kb: float) -> str:
    for unit, scale in (("GiB", 1024 * 1024), ("MiB", 1024)):
        if kb >= scale:
            return f"{kb / scale:g} {unit}"
    return f"{kb:g} KiB"


def _cache_lines(ax: Axes, cache: dict[str, float], xmin: float, xmax: float) -> list[str]:
    """Dotted vertical lines at the caches within reach of the data (a factor of 4 either
    side); returns the caches left out, for the title."""
    out = []
    for name, kb in sorted(cache.items(), key=lambda item: item[1]):
        if xmin / 4 <= kb <= xmax * 4:
            ax.axvline(kb, color="0.35", linestyle=":", linewidth=1.2, label=f"_cache {name}")
            ax.text(
                kb,
                0.98,
                f"{name} {_kib(kb)} ",
                transform=ax.get_xaxis_transform(),
                rotation=90,
                ha="right",
                va="top",
                fontsize="small",
                color="0.25",
            )
        else:
            out.append(f"{name} {_kib(kb)}")
    return out


def sizes(data: Any, cache_kb: dict[str, float] | None = None, band: str | None = "ci") -> Figure:
    """µs per switch against the ring's working set, procs × size_kb (log axis), one line
    per size (and per engine/transport/placement when they vary), with the CPU's cache
    sizes as dotted reference lines: the curve steps up where the working set leaves a cache.

    ``cache_kb`` (e.g. ``{"L1d": 48, "L2": 2048}``) overrides the sizes recorded in the
    results' metadata. Size 0 has no working set and is left out. ``band`` as in ``lat_ctx``.
    """
    from matplotlib import ticker

    _check_band(band)
    df, Figure = _setup(data)
    df = df[df["size_kb"] > 0]
    if df.empty:
        raise ValueError("nothing to plot: every point has size 0 (no working set)")
    df = df.assign(working_set_kb=df["procs"] * df["size_kb"])
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.add_subplot()
    combos = _combos(df, list(_SERIES))
    sizes_kb = sorted(df["size_kb"].unique())
    colors = _palette(sizes_kb, "tab10")
    dashes = _dashes(combos)
    drawn, seen = [], set()
    for key, g in _groups(df, [*_SERIES, "size_kb"]):
        points = _points(g, "working_set_kb", band)
        drawn.append(points)
        x = points.index.to_numpy(dtype=float)
        color = colors[key["size_kb"]]
        ax.plot(
            x,
            points["median"],
            marker="o",
            color=color,
            linestyle=dashes[_rest(key, _SERIES)],
            label=_label(df, key, always=("size_kb",)),
        )
        if band is not None:
            ax.fill_between(x, points["low"], points["high"], color=color, alpha=0.15, linewidth=0)
        seen |= _mark_flags(ax, x, points, color)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda kb, _: _kib(kb).replace(" ", "")))
    xmin, xmax = float(df["working_set_kb"].min()), float(df["working_set_kb"].max())
    missing = _cache_lines(ax, _cache_sizes(df, cache_kb), xmin, xmax)
    title = "Context-switch latency against the ring's working set"
    if band:
        title += f"\nband: {_BAND_TEXT[band]}; dotted: CPU caches"
    if missing:
        title += f" ({', '.join(missing)}: off the axis)"
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("working set: procs × size (KiB summed per hop, all participants)")
    ax.set_ylabel(f"{_SWITCH_LABEL} (median)")
    _limits(ax, drawn)
    ax.grid(alpha=0.3, which="both")
    _outside_legend(fig, ax, _flag_handles(seen))
    return fig


def machines(data: Any, by: str = "host") -> Figure:
    """The machines of a fleet run side by side: ``compare``'s bars with one bar per value of
    ``by`` ("host", "machine" or "worker") in each group; machines that share a hostname are
    labelled "host (machine)"."""
    df = as_frame(data)
    if by not in df.columns:
        raise ValueError(f"the frame has no {by!r} column: machines() draws fleet runs")
    name = df[by].astype(str)
    if by == "host" and "machine" in df.columns:
        # Two machines under one hostname stay two bars.
        shared = df.groupby("host")["machine"].transform("nunique") > 1
        name = name.where(~shared, name + " (" + df["machine"].astype(str) + ")")
    # compare() tells series apart by "source" first; the machine takes that place.
    fig = compare(df.assign(source=name))
    fig.suptitle(f"Context-switch latency by {by}; error bars: CI of the median")
    return fig


def distribution(data: Any) -> Figure:
    """ECDF on a log axis of the per-repetition samples (``value``), or of a ``hop_us``
    column of per-hop latencies where the frame has one (the tidy frame does not: a result
    keeps its hops as ``hop_histogram``), one curve per engine/transport/procs (and placement
    or size when they vary). Values <= 0 cannot go on a log axis; the title counts them."""
    df, Figure = _setup(data)
    column = "hop_us" if "hop_us" in df.columns else "value"
    from matplotlib import ticker

    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.add_subplot()
    others = [*_SERIES, "size_kb"]
    colors = _palette(sorted(df["procs"].unique()), "viridis")
    dashes = _dashes(_combos(df, others))
    dropped = 0
    for key, g in _groups(df, [*others, "procs"]):
        values = g[column].dropna().to_numpy(dtype=float)
        positive = np.sort(values[values > 0])
        dropped += len(values) - len(positive)
        if len(positive):
            # Start each curve at 0 so its first step is drawn.
            ax.step(
                np.r_[positive[0], positive],
                np.arange(len(positive) + 1) / len(positive),
                where="post",
                color=colors[key["procs"]],
                linestyle=dashes[_rest(key, others)],
                label=_label(df, key, always=("engine", "transport", "procs")),
            )
    ax.set_xscale("log")
    # Plain numbers (3, 5, 10, 20) rather than 3×10⁰: these axes rarely span many decades.
    ax.xaxis.set_major_formatter(ticker.LogFormatter())
    ax.xaxis.set_minor_formatter(ticker.LogFormatter(labelOnlyBase=False))
    what = "µs per hop" if column == "hop_us" else "µs per switch, one sample per repetition"
    ax.set_xlabel(what)
    ax.set_ylabel("fraction of samples ≤ x")
    title = "Latency distribution (ECDF)"
    if dropped:
        title += f"\n{dropped} values ≤ 0 (below resolution) not shown"
    ax.set_title(title, fontsize=11)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3, which="both")
    if ax.lines:
        fig.legend(loc="outside right upper", fontsize="small")
    return fig
