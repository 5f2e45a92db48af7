"""The words of a plan (``ctxbench.plan``): per point, the runs per side ``compare`` needs and
the rounds ``ctxbench ab`` needs to tell a change of a given size, and what they assume."""

from __future__ import annotations

from typing import Any

from .._core import MIN_SERIES
from ..metadata import LOAD_TOLERANCE


def format_plan(plans: list[Any], detect: float, power: float) -> str:
    """The plan as text: a line per point (``_plan.PointPlan``), then what the figures
    assume; ``power`` is the probability of telling the change."""
    lines = [
        f"to tell a change of {detect:.0%} with {power:.0%} probability on this machine now:",
        f"{'procs':>5} {'runs':>5} {'spread':>7} {'compare: runs/side':>19} {'ab: rounds':>10}",
    ]
    for p in plans:
        if p.spread is None:
            lines.append(
                f"{p.procs:>5} {p.runs:>5} {'-':>7}  {p.runs} of the {MIN_SERIES} comparable "
                "runs a spread needs (runs of the last day in conditions like now's: other "
                f"tasks runnable within ±{LOAD_TOLERANCE:g} per CPU): run the point a few "
                "times, or --pilot N"
            )
            continue
        per_side = "more" if p.runs_per_side is None else str(p.runs_per_side)
        seconds = p.seconds_per_side
        took = f" (~{seconds:.2g} s)" if seconds is not None else ""
        rounds = "more" if p.rounds is None else str(p.rounds)
        lines.append(
            f"{p.procs:>5} {p.runs:>5} {100 * p.spread:>6.1f}% {per_side + took:>19} {rounds:>10}"
        )
    lines.append(
        "runs: comparable runs of the point in the run history; spread: one run's relative "
        "spread (its own error and the spread between runs, within the modes of its series); "
        "compare: runs per side for Welch's t at 95 %; ab: rounds of its anytime-valid "
        "interval, which stops as soon as it decides"
    )
    return "\n".join(lines)
