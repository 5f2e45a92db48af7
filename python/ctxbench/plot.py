"""matplotlib figures of tidy frames (or results): every function returns a Figure and never
calls ``show()``; figures are built with ``matplotlib.figure.Figure``, so no GUI backend and
no pyplot state is involved. In Jupyter, ``%matplotlib inline`` displays a returned figure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

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


def lat_ctx(data: Any) -> Figure:
    """lmbench's context-switch graph: µs per switch (median) against the number of
    processes, one line per size (and per engine/transport/placement when they vary), with
    the min–max range of the repetitions shaded."""
    df, Figure = _setup(data)
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    combos = _combos(df, list(_SERIES))
    sizes = sorted(df["size_kb"].unique())
    # Color carries the size, as in lmbench's graph; with one size it tells the series apart.
    by_size = len(sizes) > 1
    colors = _palette(sizes if by_size else combos, "tab10")
    dashes = _dashes(combos) if by_size else dict.fromkeys(combos, "-")
    for key, g in _groups(df, [*_SERIES, "size_kb"]):
        by_procs = g.groupby("procs")["value"].agg(["median", "min", "max"])
        x = by_procs.index.to_numpy()
        combo = _rest(key, _SERIES)
        color = colors[key["size_kb"] if by_size else combo]
        ax.plot(
            x,
            by_procs["median"],
            marker="o",
            color=color,
            linestyle=dashes[combo],
            label=_label(df, key, always=("size_kb",)),
        )
        ax.fill_between(x, by_procs["min"], by_procs["max"], color=color, alpha=0.15, linewidth=0)
    _procs_ticks(ax, np.unique(df["procs"]))
    reps = df.groupby(_present(df, [*_SERIES, "size_kb", "procs"]))["value"].size()
    ax.set_title(
        "Context-switch latency (lat_ctx)\n"
        f"line: median of {_range(reps)} repetitions; band: min–max",
        fontsize=11,
    )
    ax.set_xlabel(_PROCS_LABEL)
    ax.set_ylabel(f"{_SWITCH_LABEL} (median)")
    ax.set_ylim(bottom=min(0.0, float(df["value"].min())))
    ax.grid(alpha=0.3)
    ax.legend()
    return fig


def _range(counts: pd.Series) -> str:
    lo, hi = int(counts.min()), int(counts.max())
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _interval(g: pd.DataFrame) -> tuple[float, float]:
    # The point's confidence interval when the frame has one, else the samples' range.
    if {"ci_low", "ci_high"} <= set(g.columns) and g[["ci_low", "ci_high"]].notna().all(axis=None):
        return float(g["ci_low"].iloc[0]), float(g["ci_high"].iloc[0])
    return float(g["value"].min()), float(g["value"].max())


def compare(data: Any) -> Figure:
    """Engines/transports (and placements) side by side: grouped bars of the median µs per
    switch at each process count, one panel per size, with the median's confidence interval
    as error bars (the min–max of the samples where the frame has no interval)."""
    df, Figure = _setup(data)
    sizes = sorted(df["size_kb"].unique())
    fig = Figure(figsize=(1.5 + 5 * len(sizes), 4.5), layout="constrained")
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    series = _groups(df, list(_SERIES))
    width = 0.8 / len(series)
    for ax, size in zip(axes, sizes):
        at_size = df[df["size_kb"] == size]
        procs = np.unique(at_size["procs"])
        for i, (key, g) in enumerate(series):
            g = g[g["size_kb"] == size]
            median = np.full(len(procs), np.nan)
            err = np.zeros((2, len(procs)))
            for j, p in enumerate(procs):
                point = g[g["procs"] == p]
                if point.empty:
                    continue
                median[j] = point["value"].median()
                low, high = _interval(point)
                err[:, j] = max(median[j] - low, 0.0), max(high - median[j], 0.0)
            ax.bar(
                np.arange(len(procs)) + (i - (len(series) - 1) / 2) * width,
                median,
                width,
                yerr=err,
                capsize=3,
                label=_label(df, key, always=("engine", "transport")),
            )
        ax.set_xticks(np.arange(len(procs)), [str(p) for p in procs])
        ax.set_xlabel(_PROCS_LABEL)
        ax.set_ylabel(f"{_SWITCH_LABEL} (median)")
        ax.set_title(f"size={size}k")
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend()
    fig.suptitle("Context-switch latency side by side; error bars: CI of the median")
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
    """ECDF on a log axis: per-hop latencies (``hop_us``) where recorded, otherwise the
    per-repetition samples (``value``), one curve per engine/transport/procs (and placement
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
