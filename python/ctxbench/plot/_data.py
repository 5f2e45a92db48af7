"""What the figures draw, from a tidy frame: the series each row belongs to, each point's
median with its interval and flags, and y limits that no stray sample can move."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..files import as_frame
from ..frame import require

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

# Columns that tell runs of one engine/transport apart, in the order a label names them:
# "run" (the file a row came from, set by `ctxbench plot a.json b.json`), "source" (lmbench's
# xgraph files), "host" (fleet runs), then what a sweep varies besides engine, size, procs.
VARIANTS = ("run", "source", "host", "benchmark", "placement", "parallel")
PAIR, VARIANT = "engine/transport", "variant"

BANDS = ("ci", "iqr", "range", None)
BAND_TEXT = {
    "ci": "95% CI of the median",
    "iqr": "interquartile range",
    "range": "min–max of the repetitions",
}
# How a point the statistics distrust is drawn: a hollow marker over the series' own.
FLAGS = {
    "below_resolution": ("v", "below resolution (net ≤ 0)"),
    "bimodal": ("D", "bimodal (two modes: the median is neither)"),
    "throttled": ("X", "throttled (a CPU quota stalled it: no switch's cost)"),
}
# A band or bar cut at 0 µs, where its interval reaches below (no time is negative): a
# filled triangle at 0 under the point.
CUT = ("band_cut", 7, "interval cut at 0 µs (it reaches below)")
PROCS_LABEL = "participants in the ring (procs)"
SWITCH_LABEL = "µs per switch (median)"


def frame(data: Any, variants: tuple[str, ...] = VARIANTS) -> pd.DataFrame:
    """The rows to draw, with the ``PAIR`` of each and its ``VARIANT``: the values of the
    ``variants`` columns that differ between rows (NaN keys named)."""
    require("matplotlib", "ctxbench.plot")
    df = as_frame(data)
    if df.empty:
        raise ValueError("nothing to plot: the frame has no rows")
    named = {}
    for column in VARIANTS:
        if column in df.columns and df[column].isna().any():
            # Rows measured here have no source; name it so old and new runs label apart.
            fill = "ctxbench" if column == "source" else "?"
            named[column] = df[column].astype(object).where(df[column].notna(), fill)
    df = df.assign(**named)
    return df.assign(
        **{
            PAIR: df["engine"].astype(str) + "/" + df["transport"].astype(str),
            VARIANT: variant_labels(df, variants),
        }
    )


def variant_labels(df: pd.DataFrame, variants: tuple[str, ...]) -> pd.Series:
    """Per row, the values of the ``variants`` columns that differ between rows."""
    import pandas as pd

    parts = []
    for column in variants:
        if column in df.columns and df[column].nunique(dropna=False) > 1:
            text = df[column].astype(str)
            parts.append("P=" + text if column == "parallel" else text)
    if not parts:
        return pd.Series("", index=df.index)
    label = parts[0]
    for part in parts[1:]:
        label = label + " " + part
    return label


def check_band(band: str | None) -> None:
    if band not in BANDS:
        raise ValueError(f"band: expected one of {', '.join(map(repr, BANDS))}, got {band!r}")


def points(g: pd.DataFrame, x: str, band: str | None) -> pd.DataFrame:
    """Per point (by ``x``): the median of the samples, the band to draw (``low``,
    ``high``, cut at 0 where it reaches below: ``band_cut``), the interval the axis limits
    come from (the CI, else the IQR: never the extremes) and the flags."""
    values = g.groupby(x, sort=True)["value"]
    out = values.median().to_frame("median")
    q1, q3 = values.quantile(0.25), values.quantile(0.75)
    robust_low, robust_high = q1, q3
    if {"ci_low", "ci_high"} <= set(g.columns):
        # A point's interval where the frame has one for it, else its interquartile range.
        ci = g.groupby(x, sort=True)[["ci_low", "ci_high"]].first()
        whole = ci.notna().all(axis=1)
        robust_low = ci["ci_low"].where(whole, q1)
        robust_high = ci["ci_high"].where(whole, q3)
    low, high = {
        "ci": (robust_low, robust_high),
        "iqr": (q1, q3),
        "range": (values.min(), values.max()),
        None: (out["median"], out["median"]),
    }[band]
    # A time is never below 0: a band or bar that would reach below is cut there, and
    # flagged (``CUT``), as are the axis limits it sets.
    low, high = low.astype(float), high.astype(float)
    out["band_cut"] = (low < 0).to_numpy()
    out["low"], out["high"] = low.clip(lower=0.0), high.clip(lower=0.0)
    out["lim_low"] = np.minimum(out["median"], robust_low.astype(float).clip(lower=0.0))
    out["lim_high"] = np.maximum(out["median"], robust_high.astype(float))
    out["below_resolution"] = False
    if "below_resolution" in g.columns:
        flagged = g["below_resolution"].astype(object).fillna(False).astype(bool)
        out["below_resolution"] = flagged.groupby(g[x]).any().reindex(out.index, fill_value=False)
    # The verdicts drawn as flags: a point where any row has it.
    for word in ("bimodal", "throttled"):
        out[word] = False
        if "verdict" in g.columns:
            has = (g["verdict"] == word).groupby(g[x]).any()
            out[word] = has.reindex(out.index, fill_value=False)
    return out


def frame_of(rows: dict[Any, dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame.from_dict(rows, orient="index").sort_index()


def positive(p: pd.DataFrame) -> pd.DataFrame:
    """The points a log axis can show (median > 0)."""
    return p[p["median"] > 0]


def limits(ax: Axes, drawn: list[pd.DataFrame], *, log: bool = False) -> None:
    """y limits from the medians, widened to their intervals by at most a quarter of the
    medians' span on each side (a factor of 2 on a log axis): one stray sample, or the wide
    interval of a point on a disturbed machine, cannot squash every curve; a band or error
    bar that goes further is clipped. On a linear axis 0 stays in view."""
    drawn = [p for p in drawn if not p.empty]
    if not drawn:
        return
    medians = np.concatenate([p["median"].to_numpy(dtype=float) for p in drawn])
    lows = np.concatenate([p["lim_low"].to_numpy(dtype=float) for p in drawn])
    highs = np.concatenate([p["lim_high"].to_numpy(dtype=float) for p in drawn])
    if log:
        above = medians[medians > 0]
        if not len(above):
            return
        bottom, top = float(above.min()), float(above.max())
        low = max(float(np.nanmin(lows[lows > 0], initial=bottom)), bottom / 2)
        high = min(float(np.nanmax(highs)), top * 2)
        ax.set_ylim(min(low, bottom) / 1.15, max(high, top) * 1.15)
        return
    bottom, top = min(float(np.nanmin(medians)), 0.0), float(np.nanmax(medians))
    span = (top - bottom) or abs(top) or 1.0
    low = max(float(np.nanmin(lows)), bottom - span / 4)
    high = min(float(np.nanmax(highs)), top + span / 4)
    low, high = min(low, bottom), max(high, top)
    pad = 0.04 * (high - low)
    ax.set_ylim(low - (pad if low < 0 else 0.0), high + pad)


def repetitions(df: pd.DataFrame, keys: list[str]) -> str:
    """How many repetitions the points have: "7" or "3–11"."""
    counts = df.groupby([k for k in keys if k in df.columns], dropna=False)["value"].size()
    lo, hi = int(counts.min()), int(counts.max())
    return str(lo) if lo == hi else f"{lo}–{hi}"


def dropped_note(count: int, what: str = "point") -> str:
    """What a log axis left out, for a title: "3 points ≤ 0 (...) not on the log axis"."""
    if not count:
        return ""
    return f"{count} {what}{'s' if count > 1 else ''} ≤ 0 (below resolution) not on the log axis"
