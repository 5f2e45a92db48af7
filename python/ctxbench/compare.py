"""Compare two runs point by point on the variance model the points were measured under.

Each side of a point is one figure with its uncertainty: from the spread between runs when
that side holds several runs of the point, else from the levels one run measured (ring
instances, the blocks inside them; see ``ctxbench._core.estimate``). The two are compared as
a ratio, new / base, with Welch's interval on the log scale (``_core.difference``). A point is
"slower" or "faster" only when that interval excludes 1 *and* the ratio is further from 1 than
``threshold``: a difference below the threshold is "no change" whatever its p-value. A side
with too little to go on makes the point "too few to decide", never "no change": one
sample (perf's fixed loop), or one ring instance however many repetitions it made (the
repetitions of one ring are not independent draws of the next run: lmbench's fixed count is
one instance). The math is the core's; this module
groups rows and words the outcome.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from . import _core
from ._format import interval, plain
from .frame import POINT_KEY, as_frame, require

if TYPE_CHECKING:
    import pandas as pd

# Below this relative change a difference is "no change", however significant: the default
# precision a point is measured to.
DEFAULT_THRESHOLD = _core.DEFAULT_PRECISION
TOO_FEW = "too few to decide"
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


def _verdict(d: dict[str, float], base: dict[str, Any], new: dict[str, Any], threshold: float):
    sides = (base, new)
    if any(side["df"] <= 0 or not side["replicated"] for side in sides):
        return TOO_FEW
    if math.isnan(d["ratio"]):
        return "below resolution"
    if d["low"] > 1 and d["ratio"] > 1 + threshold:
        return "slower"
    if d["high"] < 1 and d["ratio"] < 1 - threshold:
        return "faster"
    return "no change"


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
    """One row per point present in both runs (``POINT_KEY``, plus ``test`` when both name
    the test that measured it): each side's figure (``base_us``, ``new_us``: medians, or the
    mean of its runs' medians), how many samples and independent units it rests on and at
    which level (``units_base``, ``level_base``, ...), ``ratio`` = new / base with its 95 %
    interval (``ratio_low``, ``ratio_high``), the ``p_value`` of "no difference", and the
    ``verdict``: "slower" or "faster" (the interval excludes 1 and the ratio is more than
    ``threshold`` from 1), "no change", "too few to decide" (a side measured on one ring
    instance, or without an uncertainty) or "below resolution" (a figure at or below zero).
    ``regressed`` is the verdict "slower".

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
        d = _core.difference(eb, en)
        verdict = _verdict(d, eb, en, threshold)
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
                "ratio": d["ratio"],
                "ratio_low": d["low"],
                "ratio_high": d["high"],
                "p_value": d["p_value"],
                "verdict": verdict,
                "regressed": verdict == "slower",
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
    counts = df["verdict"].value_counts()
    text.append(
        f"{counts.get('slower', 0)} slower, {counts.get('faster', 0)} faster, "
        f"{counts.get('no change', 0)} no change"
        + (f", {counts.get(TOO_FEW, 0)} too few to decide" if counts.get(TOO_FEW, 0) else "")
    )
    text.append(
        "compared: each side's median with the uncertainty of its ring instances (the spread "
        "between runs where a side holds several), ratio by Welch's t on the log scale; "
        f"a difference within ±{threshold:.0%} is no change whatever its p-value"
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
