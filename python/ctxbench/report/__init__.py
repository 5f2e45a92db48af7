"""Everything ctxbench says to a person about a measurement, worded in one place: how its
points stopped, the points below resolution, the hints and warnings that apply to it, a
comparison's verdicts and why one is inconclusive, a plan, a wait for the machine's lock.

Every front door says the same ``Line``\\s through a destination (criterion's ``Report``):
``Terminal`` (the command line's stderr, or a notebook's stdout, or the pytest plugin's
terminal past its capture), ``Lines`` (kept for a summary or a notebook's HTML), ``Record``
(a fleet record's warnings), ``Reports`` (several at once). ``lines(result)`` is what is said
about a measurement; ``show(result)`` prints it.
"""

from __future__ import annotations

import sys
from typing import Any

from ._ab import ab_html, ab_lines, ab_side, ab_verdict, ab_why, format_ab
from ._changes import change_point_words
from ._comparison import (
    INCONCLUSIVE,
    WANTING_DATA,
    compared,
    context_line,
    format_comparison,
    inconclusive,
    inconclusive_lines,
    reason,
    regressed,
    side,
    undecided,
    verdict_counts,
)
from ._counts import hops_said, per_switch
from ._groups import format_groups, format_plan_by
from ._lock import busy, holder, step, waited, waiting
from ._measurement import ONE_THREAD_ENGINES, heard, hints, lines, stop_line, stop_phrase
from ._planning import format_plan
from ._series import format_series, series_ratio, series_regressed, series_verdict
from ._summary import saved, summary_table
from ._to import LABELS, Line, Lines, Record, Report, Reports, Terminal, current, say, saying

__all__ = [
    "hops_said",
    "INCONCLUSIVE",
    "LABELS",
    "ONE_THREAD_ENGINES",
    "WANTING_DATA",
    "ab_html",
    "ab_lines",
    "ab_side",
    "ab_verdict",
    "ab_why",
    "Line",
    "Lines",
    "Record",
    "Report",
    "Reports",
    "Terminal",
    "busy",
    "change_point_words",
    "compared",
    "context_line",
    "current",
    "format_ab",
    "format_groups",
    "format_plan_by",
    "format_comparison",
    "format_plan",
    "format_series",
    "series_ratio",
    "series_regressed",
    "series_verdict",
    "heard",
    "hints",
    "holder",
    "inconclusive",
    "inconclusive_lines",
    "lines",
    "reason",
    "regressed",
    "saved",
    "say",
    "saying",
    "show",
    "side",
    "step",
    "stop_line",
    "per_switch",
    "stop_phrase",
    "summary_table",
    "undecided",
    "verdict_counts",
    "waited",
    "waiting",
]


def show(measured: Any, to: Report | None = None) -> None:
    """Print what is said about ``measured`` (``lines``): on stdout by default, as a notebook
    or a script shows it, else to ``to``."""
    say(lines(measured), to if to is not None else Terminal(sys.stdout))
