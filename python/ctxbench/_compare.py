"""Compare two runs point by point on the variance model the points were measured under.

Each side of a point is one figure with its uncertainty: from the spread between runs when
that side holds several runs of the point, else from the levels one run measured (ring
instances, the blocks inside them; see ``ctxbench._core.estimate``). The two are compared as
a ratio, new / base, with Welch's interval on the log scale, and the core says the word
(``_core.compare_estimates``): "slower" or "faster" only when the 95 % interval excludes 1
*and* the ratio is further from 1 than ``threshold``; "no change" only when the 90 % interval
lies within ± ``threshold`` (two one-sided tests at 5 %: shown, not assumed); anything else
"inconclusive", with the reason and what would decide it. A side with too little to go on is
inconclusive, never "no change": one sample (perf's fixed loop), or one ring instance however
many repetitions it made (the repetitions of one ring are not independent draws of the next
run: lmbench's fixed count is one instance). The math is the core's; this module groups rows
and words the reasons.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from . import _core
from ._format import interval, plain
from .files import as_frame
from .frame import POINT_KEY, require

if TYPE_CHECKING:
    import pandas as pd

# Below this relative change a difference is no change, however significant: the default
# precision a point is measured to.
DEFAULT_THRESHOLD = _core.DEFAULT_PRECISION
INCONCLUSIVE = "inconclusive"
# Units a decision would take beyond which the reason says "far more".
_FAR_MORE = 1000
# Columns whose values must agree between the two sides for a difference to be the code's.
_CONTEXT = ("cpu_model", "kernel", "hypervisor", "ctxbench_version", "host")


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
    run = {
        name: float(rows[name].iloc[0])
        for name in ("sd_run", "runs_seen")
        if name in rows.columns and rows[name].notna().any()
    }
    out = dict(
        _core.estimate(values, per_block, instance_blocks, run.get("sd_run"), run.get("runs_seen"))
    )
    out["units"] = len(instance_blocks) if out["level"] == "instance" else len(set(block))
    # One ring instance is one draw of what the next run will see, however many
    # repetitions it made: a side needs two instances, or a run level from earlier runs.
    out["replicated"] = len(instance_blocks) > 1 or out["level"] == "run"
    return out


def reason(c: dict[str, Any], units: int, unit: str, seconds_per_unit: float | None) -> str:
    """Why a comparison is inconclusive, and what would decide it ("" once decided)."""
    why = c["why"]
    if why == "one instance":
        return (
            "a side is one ring instance (as lmbench's fixed count): nothing in it shows how "
            "another run would differ; measure in precision mode, or use `ctxbench ab`"
        )
    if why == "below resolution":
        return "a figure at or below 0: below the method's resolution"
    if why == "at threshold":
        return "the ratio sits on the threshold: no amount of data decides it soon"
    if why != "too wide":
        return ""
    more = math.ceil(units * c["data_factor"] - units)
    if more > _FAR_MORE:
        return (
            f"{interval(c['ratio'], c['low'], c['high'])}: far more data than this "
            "would decide it; "
            "`ctxbench ab` stops as soon as it can"
        )
    took = f", ~{more * seconds_per_unit:.0f} s" if seconds_per_unit else ""
    return (
        f"{interval(c['ratio'], c['low'], c['high'])}: about {more} more "
        f"{unit}{'s' if more != 1 else ''} "
        f"per side{took} would decide it if the ratio stays at {c['ratio']:.3g}x, "
        "or `ctxbench ab`"
    )


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
                out.append(f"{column} {', '.join(a)} vs {', '.join(b)}")
    return out


def compare(base: Any, new: Any, threshold: float = DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Compare two runs, as ``ctxbench compare`` does: each side is what that command and
    ``ctxbench.plot`` take (a results file of any format ``ctxbench.load`` reads, a result, a
    tidy frame, or a list of them: ``files.as_frame``).

    One row per point present in both runs (``POINT_KEY``, plus ``test`` when both name
    the test that measured it): each side's figure (``base_us``, ``new_us``: medians, or the
    mean of its runs' medians), how many samples and independent units it rests on and at
    which level (``units_base``, ``level_base``, ...), ``ratio`` = new / base with its 95 %
    interval (``ratio_low``, ``ratio_high``) and 90 % equivalence interval
    (``equivalent_low``, ``equivalent_high``), the ``p_value`` of "no difference", and the
    ``verdict``: "slower" or "faster" (the 95 % interval excludes 1 and the ratio is more
    than ``threshold`` from 1), "no change" (the 90 % interval lies within ± ``threshold``),
    else "inconclusive", with the ``reason`` and what would decide it (``data_factor``: how
    many times each side's data a decision would take, if the ratio stayed). ``regressed``
    is the verdict "slower".

    ``attrs`` holds ``threshold``, the points in only one run (``only_base``, ``only_new``)
    and ``context``: what differs between the two runs' machines or versions (CPU, kernel,
    host, ctxbench version), so that a difference that may be the machine's is never called
    the code's in silence.
    """
    pd = require("pandas", "ctxbench.compare")
    if not (isinstance(threshold, (int, float)) and 0 <= threshold < 1):
        raise ValueError(f"threshold: must be a fraction >= 0 and < 1, got {threshold!r}")
    base, new = as_frame(base), as_frame(new)
    key = POINT_KEY + (("test",) if "test" in base.columns and "test" in new.columns else ())
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
        rows.append(
            {
                **dict(zip(key, point)),
                "n_base": len(a),
                "n_new": len(b),
                "units_base": eb["units"],
                "units_new": en["units"],
                "level_base": eb["level"],
                "level_new": en["level"],
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
                "reason": reason(c, units, unit, seconds),
                "data_factor": c["data_factor"],
                "regressed": c["verdict"] == "slower",
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


def _ratio_text(r: Any) -> str:
    if math.isnan(r.ratio):
        return "n/a"
    if math.isinf(r.ratio_high) or math.isnan(r.ratio_low):
        return f"{r.ratio:.3f}x"
    return f"{r.ratio:.3f}x {interval(r.ratio, r.ratio_low, r.ratio_high, lambda v: f'{v:.3g}')}"


def side(units: int, level: str) -> str:
    """What one side of a comparison rests on: "6 instances", "3 runs", "1 repetition"."""
    return f"{units} {level}{'s' if units != 1 else ''}"


def verdict_counts(verdicts: list[str]) -> str:
    """Every verdict word, each counted: "2 slower, 0 faster, 1 no change, 3 inconclusive"."""
    return ", ".join(f"{verdicts.count(word)} {word}" for word in _core.CHANGES)


def _reasons(df: pd.DataFrame) -> list[str]:
    """One line per inconclusive point: which, and why."""
    out = []
    for r in df.itertuples(index=False):
        if r.verdict == INCONCLUSIVE:
            test = f"{r.test} " if "test" in df.columns else ""
            out.append(f"inconclusive: {test}{r.engine}/{r.transport} {r.procs} procs: {r.reason}")
    return out


def format_comparison(df: pd.DataFrame) -> str:
    """The comparison as an aligned text table: every point's figures, its ratio with the
    95 % interval, what each side rests on, the verdict; then what was compared with what."""
    threshold = df.attrs.get("threshold", DEFAULT_THRESHOLD)
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
        "ratio [95 % interval]",
        "base on",
        "new on",
        "verdict",
    )
    lines = [header]
    for r in df.itertuples(index=False):
        # Names come from the files compared: printed with their control characters escaped.
        name = plain(f"{r.engine}/{r.transport}")
        lines.append(
            (
                *((plain(r.test),) if tests else ()),
                name if r.benchmark == "ring" else f"{name} ({plain(r.benchmark)})",
                plain(r.placement),
                f"{r.size_kb}k",
                str(r.parallel),
                str(r.procs),
                f"{r.base_us:.4g}",
                f"{r.new_us:.4g}",
                _ratio_text(r),
                side(r.units_base, r.level_base),
                side(r.units_new, r.level_new),
                r.verdict + (" (regressed)" if r.regressed else ""),
            )
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    # Text columns left-aligned, numbers right-aligned, the verdict last and ragged.
    first_number = 4 if tests else 3
    text = [
        "  ".join(
            c.rjust(w) if first_number <= i < len(header) - 3 else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths))
        ).rstrip()
        for row in lines
    ]
    text.append(verdict_counts(df["verdict"].tolist()))
    text.extend(_reasons(df))
    text.append(
        "compared: each side's median with the uncertainty of its ring instances (the spread "
        "between runs where a side holds several), ratio by Welch's t on the log scale; "
        f"slower/faster: the 95 % interval beyond 1 and the ratio beyond ±{threshold:.0%}; "
        f"no change: the 90 % interval within ±{threshold:.0%} (shown, not assumed)"
    )
    for which in ("only_base", "only_new"):
        missing = df.attrs.get(which) or []
        if missing:
            text.append(f"{len(missing)} points only in the {which[5:]} run, not compared")
    context = df.attrs.get("context") or []
    if context:
        text.append(
            "the two runs differ in "
            + "; ".join(plain(c) for c in context)
            + ": a difference may be the machine's, not the code's"
        )
    return "\n".join(text)
