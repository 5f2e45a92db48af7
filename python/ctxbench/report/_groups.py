"""The words of groups of stored runs compared by a label (``ctxbench compare --by``) and of
the plan for one (``plan --by``): a line per point with the runs a side and the interval
printed on its side of 1, then what the verdicts rest on."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._core import FAMILY_ALPHA
from .._format import plain
from ._comparison import verdict_counts
from ._series import series_ratio

if TYPE_CHECKING:
    import pandas as pd


def _table(lines: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in lines]


def format_groups(df: pd.DataFrame) -> str:
    """``compare --by`` as text: per point its runs a side, both levels, the ratio with its
    interval, the word; then the verdicts counted and the method."""
    label = plain(df.attrs.get("label", "?"))
    base, new = (plain(v) for v in df.attrs.get("values", ("?", "?")))
    lines = [("point", "machine", "runs a side", f"{base} µs", f"{new} µs", "ratio [interval]",
              "verdict")]  # fmt: skip
    for r in df.itertuples(index=False):
        word = f"{r.verdict}: {r.reason}" if r.reason else r.verdict
        lines.append((
            plain(r.point), plain(r.machine), f"{r.base_runs} vs {r.new_runs}",
            f"{r.base_us:.4g}", f"{r.new_us:.4g}", series_ratio(r), word,
        ))  # fmt: skip
    text = _table(lines) if len(df) else ["no stored point carries either value"]
    text.append(verdict_counts(df["verdict"].tolist() if len(df) else []))
    alpha = df.attrs.get("family_alpha", FAMILY_ALPHA)
    text.append(
        f"{label}={new} against {label}={base}, each stored run one unit (the spread between "
        f"runs and boots is measured, not assumed): Welch's t on the runs' ln figures, Holm "
        f"across the {len(df)} points, so the chance of any false call in this comparison is "
        f"at most {alpha:.0%}; slower/faster also needs the ratio beyond "
        f"±{df.attrs.get('threshold', 0):.0%}"
    )
    return "\n".join(text)


def format_plan_by(df: pd.DataFrame) -> str:
    """``plan --by`` as text: per point the runs the spread rests on, the spread and the runs
    a side; then what the figures assume."""
    label = plain(df.attrs.get("label", "?"))
    values = ", ".join(plain(v) for v in df.attrs.get("values", ()))
    detect = df.attrs.get("detect", math.nan)
    lines = [("point", "machine", "spread from", "spread", "runs a side")]
    for r in df.itertuples(index=False):
        if math.isnan(r.sd):
            lines.append((plain(r.point), plain(r.machine), f"{r.runs} runs", "-",
                          "no spread: fewer than 2 runs under each value"))  # fmt: skip
            continue
        per_side = "more than the core plans" if r.runs_per_side is None else str(r.runs_per_side)
        lines.append((plain(r.point), plain(r.machine), f"{r.runs} runs",
                      f"{100 * r.sd:.1f}%", per_side))  # fmt: skip
    power = df.attrs.get("power", math.nan)
    text = [f"to tell a change of {detect:.0%} between values of {label} ({values}) with "
            f"{power:.0%} probability:"]  # fmt: skip
    text += _table(lines) if len(df) else ["no stored point carries the label"]
    text.append(
        "spread: one run's (ln), from the stored runs under each value about their own mean; "
        "runs a side: Welch's t at 95 % per point, each run (boot) one unit; across many "
        "points Holm asks more of the first few"
    )
    return "\n".join(text)
