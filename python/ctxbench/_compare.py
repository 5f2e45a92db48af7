"""``ctxbench.compare``: two runs point by point, on the variance model the points were measured
under.

Each side of a point is one figure with its uncertainty: from the spread between runs when that
side holds several runs of the point, else from the levels one run measured (ring instances, the
blocks inside them; see ``ctxbench._core.estimate``). The two are compared as a ratio, new /
base, with Welch's interval on the log scale, and the core says the word
(``_core.compare_estimates``): "slower" or "faster" only when the 95 % interval excludes 1 *and*
the ratio is further from 1 than ``threshold``; "no change" only when the 90 % interval lies
within ± ``threshold`` (two one-sided tests at 5 %: shown, not assumed); anything else
"inconclusive", with the reason and what would decide it. A side that is one run also carries
the spread between runs that one run cannot show: the run level its run knew from earlier runs,
else the one the core assumes (``_core.ASSUMED_RUN_SD``), so that one run a side calls only a
change beyond what the machine's drift between runs could make. A side with too little to go on
is inconclusive, never "no change": one sample (perf's fixed loop). The math is the core's and
the words ``ctxbench.report``'s (``format_comparison`` prints a comparison); this module groups
rows.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from . import _core, metadata
from ._table_schema import POINT_IDENTITY as IDENTITY
from ._table_schema import POINT_KEY, identity_text
from .files import as_frame
from .frame import require
from .report import INCONCLUSIVE as INCONCLUSIVE
from .report import reason

if TYPE_CHECKING:
    import pandas as pd

# Below this relative change a difference is no change, however significant: the default
# precision a point is measured to.
DEFAULT_THRESHOLD = _core.DEFAULT_PRECISION
# Columns whose values must agree between the two sides for a difference to be the code's.
_CONTEXT = (*metadata.COMPARED, "host")


def _runs(group: pd.DataFrame) -> list[pd.DataFrame]:
    """The group's rows, one frame per run that measured the point."""
    if "run_id" in group.columns and group["run_id"].notna().any():
        return [g for _, g in group.groupby("run_id", sort=True, dropna=False)]
    return [group]


def _estimate(group: pd.DataFrame) -> dict[str, Any]:
    """One side's figure and uncertainty: from its runs' figures when it holds several runs
    of the point, else from the levels of its one run."""
    runs = _runs(group)
    if len(runs) > 1:
        figures = [float(r["value"].median()) for r in runs]
        out = dict(_core.runs_estimate(figures))
        out["units"] = len(figures)
        out["replicated"] = True
        out["run_level"] = "measured"
        return out
    rows = group.sort_values("repetition")
    values = rows["value"].astype(float).tolist()
    if "instance" in rows.columns and rows["instance"].notna().all():
        instance = rows["instance"].astype(int).tolist()
        block = rows["block"].astype(int).tolist()
    else:  # a frame from before the levels were recorded: one instance, blocks of one
        instance, block = [0] * len(values), list(range(len(values)))
    per_block = max(1, round(len(values) / max(1, len(set(block)))))
    instance_blocks = [
        len({b for i, b in zip(instance, block) if i == k}) for k in sorted(set(instance))
    ]
    # The run level the run knew of from this machine's earlier runs, if it recorded one.
    # And how busy the machine was as it started.
    arguments = {
        "sd_run": "run_sd",
        "runs_seen": "runs_seen",
        "runnable_per_cpu": "runnable_per_cpu",
    }
    run = {
        argument: float(rows[column].dropna().iloc[0])
        for column, argument in arguments.items()
        if column in rows.columns and rows[column].notna().any()
    }
    out = dict(_core.run_side(values, per_block, instance_blocks, **run))
    # A side at the run level is one run; below it, its instances or blocks.
    by_level = {"run": 1, "instance": len(instance_blocks)}
    out["units"] = by_level.get(out["level"], len(set(block)))
    return out


def _seconds_per_unit(rows: pd.DataFrame, unit: str) -> float | None:
    """About how long one more unit of a side takes: a run, its point's ``max_time`` (the
    cap a precision-mode point rarely stops before here); None where it is not known."""
    if unit != "run" or "max_time" not in rows.columns:
        return None
    cap = rows["max_time"].dropna()
    return float(cap.iloc[0]) if len(cap) else None


def _context_differences(base: pd.DataFrame, new: pd.DataFrame) -> list[str]:
    """What differs between the two runs' machines and versions, one phrase each."""
    out = []
    for column in _CONTEXT:
        if column in base.columns and column in new.columns:
            a = sorted({str(v) for v in base[column].dropna()})
            b = sorted({str(v) for v in new[column].dropna()})
            if a and b and a != b:
                out.append(_difference(column, a, b))
    return out


def _difference(column: str, a: list[str], b: list[str]) -> str:
    """``column`` a vs b in words; of the vulnerabilities, only the entries that differ."""
    if column == "vulnerabilities" and len(a) == len(b) == 1:
        was, now = (metadata.vulnerability_states(side[0]) for side in (a, b))
        changed = sorted(k for k in was.keys() | now.keys() if was.get(k) != now.get(k))
        shown = "; ".join(
            f"{k} {was.get(k, 'absent')!r} vs {now.get(k, 'absent')!r}" for k in changed
        )
        return f"vulnerabilities ({shown})"
    return f"{column} {', '.join(a)} vs {', '.join(b)}"


def _identified(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame`` with each of ``columns`` (``IDENTITY``'s) as text that pairs
    (``identity_text``): what a run without the column measured under where it has none or
    a cell is empty."""
    frame = frame.copy()
    for column in columns:
        default = IDENTITY[column]
        values = frame[column] if column in frame.columns else [default] * len(frame)
        texts = [identity_text(v) for v in values]
        frame[column] = [identity_text(default) if t == "-" else t for t in texts]
    return frame


def _switches_per_hop(rows: pd.DataFrame) -> float:
    """The context switches per hop a side measured (median over its rows); NaN where not
    recorded."""
    if "switches_per_hop" not in rows.columns:
        return math.nan
    column = rows["switches_per_hop"].astype(float).dropna()
    return float(column.median()) if len(column) else math.nan


def compare(base: Any, new: Any, threshold: float = DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Compare two runs, as ``ctxbench compare`` does: each side is what that command and
    ``ctxbench.plot`` take (a results file of any format ``ctxbench.load`` reads, a result, a
    tidy frame, or a list of them: ``files.as_frame``).

    One row per point present in both runs (``POINT_KEY``, plus ``test`` when both name
    the test that measured it, plus the policy, cgroups and neighbours it ran under,
    ``POINT_IDENTITY``: a point under a CPU hog is never paired with a plain one): each side's
    figure (``base_us``, ``new_us``: medians, or the
    mean of its runs' medians), how many samples and independent units it rests on and at
    which level (``units_base``, ``level_base``, ...), ``ratio`` = new / base with its 95 %
    interval (``ratio_low``, ``ratio_high``) and 90 % equivalence interval
    (``equivalent_low``, ``equivalent_high``), the ``p_value`` of "no difference", and the
    ``verdict``: "slower" or "faster" (the 95 % interval excludes 1 and the ratio is more
    than ``threshold`` from 1), "no change" (the 90 % interval lies within ± ``threshold``),
    else "inconclusive", with the ``reason`` and what would decide it (``data_factor``: how
    many times each side's data a decision would take, if the ratio stayed). ``regressed``
    is the verdict "slower". ``switches_per_hop_base``/``_new``: the context switches each
    side made per hop (the figures are per hop, as lat_ctx's; ``format_comparison`` says
    where they differ). ``run_level_base``/``run_level_new`` say where a side's spread
    between runs came from: "measured" (several runs), "earlier runs" (the run history),
    "assumed" (one run alone: ``_core.ASSUMED_RUN_SD``), "unknown" (one sample).

    ``attrs`` holds ``threshold``, the points in only one run (``only_base``, ``only_new``)
    and ``context``: what differs between the two runs' machines or versions (CPU, kernel,
    host, ctxbench version), so that a difference that may be the machine's is never called
    the code's in silence.
    """
    pd = require("pandas", "ctxbench.compare")
    if not (isinstance(threshold, (int, float)) and 0 <= threshold < 1):
        raise ValueError(f"threshold: must be a fraction >= 0 and < 1, got {threshold!r}")
    base, new = as_frame(base), as_frame(new)
    under = [c for c in IDENTITY if c in base.columns or c in new.columns]
    base, new = _identified(base, under), _identified(new, under)
    key = POINT_KEY + (("test",) if "test" in base.columns and "test" in new.columns else ())
    key += tuple(under)
    base_groups = dict(tuple(base.groupby(list(key), sort=True, dropna=False)))
    new_groups = dict(tuple(new.groupby(list(key), sort=True, dropna=False)))
    rows = []
    for point, a in base_groups.items():
        b = new_groups.get(point)
        if b is None:
            continue
        a, b = a.dropna(subset=["value"]), b.dropna(subset=["value"])
        if a.empty or b.empty:
            continue
        eb, en = _estimate(a), _estimate(b)
        c = _core.compare_estimates(eb, eb["replicated"], en, en["replicated"], threshold)
        units = min(eb["units"], en["units"])
        unit = "run" if "run" in (eb["level"], en["level"]) else "ring instance"
        seconds = _seconds_per_unit(a, unit)
        assumed = "assumed" in (eb["run_level"], en["run_level"])
        rows.append(
            {
                **dict(zip(key, point)),
                "n_base": len(a),
                "n_new": len(b),
                "units_base": eb["units"],
                "units_new": en["units"],
                "level_base": eb["level"],
                "level_new": en["level"],
                "run_level_base": eb["run_level"],
                "run_level_new": en["run_level"],
                "base_us": eb["center"],
                "new_us": en["center"],
                "ratio": c["ratio"],
                "ratio_low": c["low"],
                "ratio_high": c["high"],
                "equivalent_low": c["equivalent_low"],
                "equivalent_high": c["equivalent_high"],
                "p_value": c["p_value"],
                "verdict": c["verdict"],
                "why": c["why"],
                "reason": reason(c, units, unit, seconds, assumed),
                "data_factor": c["data_factor"],
                "regressed": c["verdict"] == "slower",
                "switches_per_hop_base": _switches_per_hop(a),
                "switches_per_hop_new": _switches_per_hop(b),
            }
        )
    if not rows:
        raise ValueError(f"the two runs have no point in common ({', '.join(key)})")
    out = pd.DataFrame(rows)
    out.attrs["threshold"] = threshold
    out.attrs["only_base"] = sorted(set(base_groups) - set(new_groups), key=str)
    out.attrs["only_new"] = sorted(set(new_groups) - set(base_groups), key=str)
    out.attrs["context"] = _context_differences(base, new)
    return out
