"""Compare two runs point by point, pyperf compare_to style: ratio of medians, a Mann-Whitney
U test (computed in the core), a verdict word, and whether the point regressed past a
threshold, so CI can gate on it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from . import _core
from .frame import POINT_KEY, as_frame, require

if TYPE_CHECKING:
    import pandas as pd

ALPHA = 0.05
# Below this relative change a difference is not worth a word, however significant.
MIN_EFFECT = 0.01


def _samples(df: pd.DataFrame, key: tuple[str, ...]) -> dict[tuple[Any, ...], list[float]]:
    return {
        values: g["value"].dropna().tolist()
        for values, g in df.groupby(list(key), sort=True, dropna=False)
    }


def compare(base: Any, new: Any, threshold: float = 0.05) -> pd.DataFrame:
    """One row per point present in both runs (benchmark, engine, transport, placement,
    size_kb, parallel, procs): medians, ``ratio`` = new/base, Mann-Whitney ``p_value``, ``verdict``
    ("faster", "slower" or "no change": significant at p < 0.05 and more than 1% apart) and
    ``regressed`` (slower by more than ``threshold``, e.g. 0.05 = 5%).

    When both runs name the test that measured each point (a ``test`` column, as files
    saved by the pytest plugin have), the test id is part of the point and a column.

    ``ratio`` is NaN when the base median is <= 0 (below resolution); the verdict then rests
    on the test alone. Points in only one run are listed in ``attrs["only_base"]`` and
    ``attrs["only_new"]``.
    """
    pd = require("pandas", "ctxbench.compare")
    if not threshold >= 0:
        raise ValueError(f"threshold: must be >= 0, got {threshold}")
    base, new = as_frame(base), as_frame(new)
    key = POINT_KEY + (("test",) if "test" in base.columns and "test" in new.columns else ())
    base_samples, new_samples = _samples(base, key), _samples(new, key)
    rows = []
    for point, a in base_samples.items():
        b = new_samples.get(point)
        if b is None or not a or not b:
            continue
        base_median, new_median = float(pd.Series(a).median()), float(pd.Series(b).median())
        ratio = new_median / base_median if base_median > 0 else math.nan
        _, p = _core.mann_whitney(a, b)
        significant = p < ALPHA and (math.isnan(ratio) or abs(ratio - 1) > MIN_EFFECT)
        verdict = "no change"
        if significant:
            verdict = "slower" if new_median > base_median else "faster"
        rows.append(
            {
                **dict(zip(key, point)),
                "n_base": len(a),
                "n_new": len(b),
                "base_us": base_median,
                "new_us": new_median,
                "ratio": ratio,
                "p_value": p,
                "verdict": verdict,
                "regressed": verdict == "slower" and (math.isnan(ratio) or ratio > 1 + threshold),
            }
        )
    if not rows:
        raise ValueError(f"the two runs have no point in common ({', '.join(key)})")
    out = pd.DataFrame(rows)
    out.attrs["threshold"] = threshold
    out.attrs["only_base"] = sorted(set(base_samples) - set(new_samples), key=str)
    out.attrs["only_new"] = sorted(set(new_samples) - set(base_samples), key=str)
    return out


def format_comparison(df: pd.DataFrame) -> str:
    """The comparison as an aligned text table with a one-line summary."""
    threshold = df.attrs.get("threshold")
    tests = "test" in df.columns
    header = (
        *(("test",) if tests else ()),
        "engine/transport",
        "placement",
        "size",
        "P",
        "procs",
        "base µs",
        "new µs",
        "ratio",
        "p",
        "verdict",
    )
    lines = [header]
    for r in df.itertuples(index=False):
        verdict = r.verdict + (" (regressed)" if r.regressed else "")
        name = f"{r.engine}/{r.transport}"
        lines.append(
            (
                *((str(r.test),) if tests else ()),
                name if r.benchmark == "ring" else f"{name} ({r.benchmark})",
                str(r.placement),
                f"{r.size_kb}k",
                str(r.parallel),
                str(r.procs),
                f"{r.base_us:.2f}",
                f"{r.new_us:.2f}",
                "n/a" if math.isnan(r.ratio) else f"{r.ratio:.2f}x",
                "<0.001" if r.p_value < 0.001 else f"{r.p_value:.3f}",
                verdict,
            )
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    # Text columns left-aligned, numbers right-aligned, the verdict last and ragged.
    left = {0, 1, 2, len(header) - 1} if tests else {0, 1, len(header) - 1}
    text = [
        "  ".join(
            c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
        ).rstrip()
        for row in lines
    ]
    counts = df["verdict"].value_counts()
    summary = (
        f"{counts.get('slower', 0)} slower, {counts.get('faster', 0)} faster, "
        f"{counts.get('no change', 0)} no change"
    )
    if threshold is not None:
        summary += f"; {int(df['regressed'].sum())} regressed by more than {100 * threshold:g}%"
    text.append(summary)
    for side in ("only_base", "only_new"):
        missing = df.attrs.get(side) or []
        if missing:
            text.append(f"{len(missing)} points only in the {side[5:]} run, not compared")
    return "\n".join(text)
