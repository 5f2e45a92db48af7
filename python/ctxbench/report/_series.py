"""The words of a run judged against its series (``ctxbench compare NEW`` with a store, the
pytest gate): a line per point with its interval printed on its side of 1, the verdicts
counted, and what the judgement rests on."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .._core import FAMILY_ALPHA, SERIES_WINDOW
from .._format import plain
from ._comparison import point, ratio_interval, verdict_counts

if TYPE_CHECKING:
    import pandas as pd


def series_verdict(row: Any) -> str:
    """A point's word with its reason: "no change (known mode)", "inconclusive: short series
    (3 of 5 comparable runs)", "slower"."""
    if row.why == "known mode":
        return f"{row.verdict} (known mode)"
    if row.reason:
        return f"{row.verdict}: {row.reason}"
    return row.verdict


def series_ratio(row: Any) -> str:
    """The ratio with its prediction interval: "1.094x [1.004, 1.18]"."""
    if math.isnan(row.ratio):
        return "n/a"
    if math.isnan(row.ratio_low):
        return f"{row.ratio:.3f}x"
    return f"{row.ratio:.3f}x {ratio_interval(row)}"


def format_series(df: pd.DataFrame) -> str:
    """The judgement of a run against its series as text: a line per point, then the
    verdicts counted and what they rest on."""
    tests = "test" in df.columns
    header = (*(("test",) if tests else ()), "point", "series", "base µs", "new µs",
              "ratio [interval]", "verdict")  # fmt: skip
    lines = [header]
    for r in df.itertuples(index=False):
        lines.append((
            *((plain(r.test),) if tests else ()), point(r), f"{r.runs} runs",
            f"{r.base_us:.4g}", f"{r.new_us:.4g}", series_ratio(r), series_verdict(r),
        ))  # fmt: skip
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    text = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in lines]
    text.append(verdict_counts(df["verdict"].tolist()))
    alpha = df.attrs.get("family_alpha", FAMILY_ALPHA)
    labels = df.attrs.get("labels") or {}
    against = (
        "the stored runs labelled " + ", ".join(f"{k}={v}" for k, v in labels.items())
        if labels
        else "the store's earlier runs on this machine in comparable conditions"
    )
    text.append(
        f"judged against {plain(against)} (the newest {SERIES_WINDOW} a point, its modes and "
        "the spread within them): a prediction interval around the level of the nearest "
        f"mode; Holm across the {len(df)} points, so the chance of any false call in this "
        f"comparison is at most {alpha:.0%}; slower/faster also needs the ratio beyond "
        f"±{df.attrs.get('threshold', 0):.0%}"
    )
    return "\n".join(text)


def _of_runs(row: Any) -> str:
    """How many new runs a figure is the mean of, where more than one (--ctxbench-runs)."""
    runs = getattr(row, "new_runs", 1)
    return f" (geometric mean of {runs} runs)" if runs > 1 else ""


def series_regressed(test: str, table: pd.DataFrame) -> str:
    """Why a test fails the gate against its series: each point called slower, both
    figures, the ratio's interval and the series it rests on."""
    lines = [f"ctxbench: {test} is slower than its stored series:"]
    for row in table[table["regressed"]].itertuples(index=False):
        lines.append(
            f"  {point(row)}: {row.new_us:.3f} µs{_of_runs(row)}, series level "
            f"{row.base_us:.3f} µs "
            f"({series_ratio(row)} at {row.confidence:.2%}, Holm's level for the point; "
            f"series of {row.runs} runs)"
        )
    return "\n".join(lines)
