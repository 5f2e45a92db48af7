"""The pytest plugin's summary of a session's measurements: one row per recorded point (test,
what was measured, median, CV, verdict, and its change against the baseline when comparing),
then what is said about each measurement and about the comparison."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .._core import NOISY_CV
from .._table_schema import POINT_KEY
from ._comparison import change
from ._to import Line

if TYPE_CHECKING:
    import pandas as pd


def summary_table(
    recorded: list[tuple[str, Any]], comparisons: dict[str, pd.DataFrame] | None
) -> list[str]:
    """The aligned table of every point of ``recorded`` (test id, result), with its change
    where ``comparisons`` (test id -> comparison table; None: not comparing) has one."""
    rows = _rows(recorded, comparisons)
    if not rows:
        return []
    header = ["test", "engine", "transport", "placement", "procs", "size"]
    if any(row["P"] != "1" for row in rows):
        header.append("P")
    header += ["median µs", "CV", "verdict"] + (["change"] if comparisons is not None else [])
    if any("change_point" in t for t in (comparisons or {}).values()):
        header.append("change point")  # the gate's: is this run one of its series?
    cells = [header] + [[row[h] for h in header] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    numeric = {"procs", "size", "P", "median µs", "CV"}
    return [
        "  ".join(
            c.rjust(w) if h in numeric else c.ljust(w) for h, c, w in zip(header, line, widths)
        ).rstrip()
        for line in cells
    ]


def _rows(
    recorded: list[tuple[str, Any]], comparisons: dict[str, pd.DataFrame] | None
) -> list[dict[str, str]]:
    changes: dict[tuple[Any, ...], Any] = {}
    for test, table in (comparisons or {}).items():
        for row in table.itertuples(index=False):
            key = tuple(getattr(row, k) for k in POINT_KEY)
            changes[(test, *key[:5], *(int(v) for v in key[5:]))] = row
    rows = []
    for test, r in recorded:
        if r.kind == "ring":
            points = zip(r.procs.tolist(), r.latency_us.tolist(), list(r.stats["cv"]),
                         list(r.stats["verdict"]), r.below_resolution.tolist())  # fmt: skip
            size, parallel, engine = r.size_kb, r.parallel, r.engine
        else:
            points = iter([(2, r.usecs_per_switch, math.nan, "", False)])
            size, parallel, engine = 0, 1, f"{r.engine} (pingpong)"
        for procs, median, cv, verdict, low in points:
            key = (test, r.kind, r.engine, r.transport, r.placement, int(size), int(parallel))
            row = changes.get((*key, int(procs)))
            rows.append({
                "test": test, "engine": engine, "transport": r.transport,
                "placement": str(r.placement), "procs": str(procs), "size": f"{size}k",
                "P": str(parallel), "median µs": f"{median:.3f}",
                "CV": "" if math.isnan(cv) else f"{100 * cv:.1f}%",
                "verdict": _word(verdict, cv) + (" (below resolution)" if low else ""),
                "change": "" if comparisons is None else ("new" if row is None else change(row)),
                "change point": str(getattr(row, "change_point", "") or ""),
            })  # fmt: skip
    return rows


def _word(verdict: str, cv: float) -> str:
    """A point's word as the table prints it beside its CV: "stable" only where its samples
    are too (CV at most ``_core.NOISY_CV``); a steady median of samples scattered by 29 % is
    no stable point to the eye that reads the CV beside it."""
    if verdict == "stable" and cv > NOISY_CV:
        return "steady median, noisy samples"
    return verdict


def saved(count: int, path: object) -> Line:
    """Where a session's results were written."""
    return Line("note", f"saved {count} results to {path}")
