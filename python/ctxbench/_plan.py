"""How much measuring tells a change of a given size on this machine, before measuring: from
the spread this machine's own recent runs of each point show (the run history, in conditions
comparable to now), the runs per side ``compare`` needs, and the rounds ``ctxbench ab`` needs,
to tell it with 80 % probability. The arithmetic is the core's (``_core.runs_to_detect``,
``_core.rounds_to_detect``) and the words ``ctxbench.report.format_plan``'s; a point with
too few runs in the history says so, or, with ``pilot``, is measured that many times first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import _core, _history
from ._series import series_spread
from .api import result_metadata, ring, ring_points

# A plan's own parameters, the core's table's (door "plan"): the change to tell, the points
# (lat_ctx's classic sweep where none are named) and the pilot runs.
_PARAMETERS = {p["name"]: p for p in _core.PARAMETERS if "plan" in p["doors"]}
DEFAULT_PROCS: tuple[int, ...] = _PARAMETERS["procs"]["default"]
DETECT: float = _PARAMETERS["detect"]["default"]
# The probability a plan tells the change asked for where none is named.
POWER: float = _PARAMETERS["power"]["default"]


@dataclass(frozen=True)
class PointPlan:
    """One point's plan: its runs in the history comparable to now, the relative spread of
    one run's figure (its own error and the spread between runs; None with fewer than
    ``_core.MIN_SERIES`` runs), the runs per side a comparison needs and about how long they
    take, and the rounds ``ab`` needs (None: more than the core plans, or nothing known)."""

    procs: int
    label: str
    runs: int
    spread: float | None
    runs_per_side: int | None
    seconds_per_side: float | None
    rounds: int | None


def _spread(history: _history.History | None) -> tuple[int, float | None]:
    """How many comparable runs, and the relative spread of one run's figure among them
    (the series' spread within its modes, as ``compare NEW`` judges by: ``_series``)."""
    if history is None:
        return 0, None
    figures, errors, _ = history
    us = [math.exp(y) for y in figures]
    return len(figures), series_spread(us, errors)


def _in_range(name: str, value: object) -> None:
    """A plan's own value within its row's range (the table's): a ValueError naming it."""
    row = _PARAMETERS[name]
    whole = row["kind"].startswith("count")
    number = isinstance(value, int if whole else (int, float)) and not isinstance(value, bool)
    if not number or not row["lo"] <= value <= row["hi"]:  # type: ignore[operator]
        what = "a number of runs" if whole else "a number"
        raise ValueError(
            f"{name}: must be {what} from {row['lo']:g} to {row['hi']:g}, got {value!r}"
        )


def plan(
    # BEGIN written by `python -m ctxbench._codegen` from _core.PARAMETERS: positional
    detect: float = 0.05,
    procs: int | Sequence[int] = (2, 4, 8, 16, 20),
    # END written by `python -m ctxbench._codegen`
    *,
    # BEGIN written by `python -m ctxbench._codegen` from _core.PARAMETERS; edit src/request
    pilot: int = 0,
    power: float = 0.8,
    # END written by `python -m ctxbench._codegen`
    max_time: float = _core.DEFAULT_MAX_TIME,
    **ring_kwargs: Any,
) -> list[PointPlan]:
    """Per point of ``ring(procs, **ring_kwargs)``: what telling a change of ``detect`` (a
    fraction: 0.05 is 5 %) with probability ``power`` takes on this machine now. ``pilot=N``
    measures a point that has fewer than ``_core.MIN_SERIES`` comparable runs N times first
    (each run goes into the history, as any run does); ``max_time`` is the seconds one run of
    a point takes at most, for the time a side takes.

    A round of ``ab`` pairs two fresh ring instances; its ln ratio is taken to scatter as
    two runs' figures do (√2 times one run's spread), which overstates it where the host
    drifts over seconds: the pairing cancels that.
    """
    _in_range("pilot", pilot)
    _in_range("power", power)
    points = ring_points(procs, **{k: v for k, v in ring_kwargs.items() if k != "history"})
    if points is None:
        raise TypeError(f"procs: expected an int or a sequence of ints, got {procs!r}")
    counts = [procs] if isinstance(procs, int) else list(procs)
    meta = result_metadata()
    histories = _history.earlier(meta, [p for p, _ in points], _history.conditions())
    for k, (count, history) in enumerate(zip(counts, histories)):
        if pilot and _spread(history)[1] is None:
            for _ in range(pilot):
                ring([count], max_time=max_time, **ring_kwargs)
            now = _history.conditions()
            histories[k] = _history.earlier(meta, [points[k][0]], now)[0]
    out = []
    for count, (_, label), history in zip(counts, points, histories):
        runs, spread = _spread(history)
        per_side = rounds = None
        if spread is not None:
            per_side = _core.runs_to_detect(spread, detect, power)
            rounds = _core.rounds_to_detect(math.sqrt(2) * spread, detect, power)
        seconds = per_side * max_time if per_side is not None else None
        out.append(PointPlan(count, label, runs, spread, per_side, seconds, rounds))
    return out
