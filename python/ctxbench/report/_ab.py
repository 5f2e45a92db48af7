"""The words of an A/B run (``ctxbench.ab``, ``ctxbench ab``): each side in a phrase, the
verdict with its interval, why it was said or what would decide it, how the rounds stopped;
as text for the command line and as HTML for a notebook."""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np

from .._format import interval, plain, ratio_bound
from ._comparison import FAR_MORE
from ._to import LABELS, Line

# What each verdict says the interval showed; {t} is the threshold.
_SHOWN = {
    "slower": "the 95 % interval lies above 1 and the ratio beyond +{t}",
    "faster": "the 95 % interval lies below 1 and the ratio beyond -{t}",
    "no change": "the 95 % interval lies within ±{t}",
}
# Why the rounds stopped, in words (``_core.AB_STOPS``).
_STOPPED = {
    "decided": "as soon as the interval decided",
    "budget": "at the budget",
    "below resolution": "a round had a figure at or below 0 (below the method's resolution), "
    "and leaving it out would bias the ratio: measure on a quieter machine, or compare "
    "precision-mode runs (ctxbench compare)",
    "max rounds": "at the most rounds a run makes",
    "no more rounds": "when the rounds given ran out",
    "throttled": "a CPU quota throttled a side's groups in a round (restriction cpu_quota: "
    "ctxbench info names it), so that round's figures hold the throttle's stalls, not a "
    "switch's cost: it was not kept; measure outside the quota",
}


# What every side's phrase names; any other parameter is named where the sides differ in it.
_NAMED = ("measure", "procs", "engine", "transport", "placement", "size_kb")


def ab_side(side: dict[str, Any], other: dict[str, Any] | None = None) -> str:
    """One side in a phrase: "ring 2 procs process/pipe placement=single size=0k", then every
    other parameter in which it differs from ``other`` ("policy=fifo interference=hogs=1"):
    two sides that differ never read the same."""
    phrase = (
        f"{side['measure']} {side['procs']} procs {side['engine']}/{side['transport']} "
        f"placement={side['placement']} size={side['size_kb']}k"
    )
    for key in sorted(set(side) | set(other or {})):
        if other is not None and key not in _NAMED and side.get(key) != other.get(key):
            phrase += f" {key}={_value(side.get(key))}"
    return plain(phrase)


def _value(value: Any) -> str:
    """A parameter's value in a side's phrase: a mapping as its pairs (``hogs=1,duty=0.5``),
    nothing as "none"."""
    if value is None:
        return "none"
    if isinstance(value, dict):
        pairs = (f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in value.items())
        return ",".join(sorted(pairs)) or "none"
    return str(value)


def _ratio(r: Any) -> str:
    if math.isnan(r.ratio):
        return "no ratio"
    spread = interval(r.ratio, r.ratio_low, r.ratio_high, ratio_bound)
    return f"{r.ratio:.3g}x {spread}"


def ab_verdict(r: Any) -> str:
    """The word with B / A and its interval, the rounds and the time they took:
    "slower: B/A 1.62x [1.51, 1.74], 12 rounds in 8.1 s of a 30 s budget"."""
    n = len(r.a_us)
    return (
        f"{r.verdict}: B/A {_ratio(r)}, {n} round{'s' if n != 1 else ''} in "
        f"{r.elapsed_s:.1f} s of a {r.budget_s:g} s budget"
    )


def ab_why(r: Any) -> str:
    """Why the verdict: what the interval showed, or what keeps it undecided and what would
    decide it."""
    t = f"{r.threshold:.0%}"
    if r.verdict in _SHOWN:
        return _SHOWN[r.verdict].format(t=t)
    if r.stopped in ("below resolution", "throttled"):
        return _STOPPED[r.stopped]
    if math.isnan(r.ratio) or not math.isfinite(r.ratio_high):
        return "too few rounds to bound the ratio: give it a longer budget"
    if math.isnan(r.data_factor):
        return f"the ratio sits on the threshold (±{t}): no amount of data decides it soon"
    n = len(r.a_us)
    more = math.ceil(n * r.data_factor - n)
    spread = interval(r.ratio, r.ratio_low, r.ratio_high)
    if more > FAR_MORE:
        return f"{spread}: far more rounds than this would decide it"
    seconds = more * r.elapsed_s / max(1, n)
    return (
        f"{spread}: about {more} more round{'s' if more != 1 else ''} (~{seconds:.0f} s, "
        f"a budget of about {r.elapsed_s + seconds:.0f} s) would decide it if the ratio "
        f"stays at {r.ratio:.3g}x"
    )


def ab_lines(r: Any) -> list[Line]:
    """What is said of an A/B run: its verdict and why, then how its rounds stopped, and
    where the sides made different context switches per hop, that the figures count it."""
    firsts = int(sum(bool(x) for x in r.a_first))
    out = [
        Line("verdict", f"{ab_verdict(r)}; {ab_why(r)}"),
        Line(
            "stopped",
            f"{_STOPPED.get(r.stopped, plain(r.stopped))}; A ran first in {firsts} of "
            f"{len(r.a_us)} rounds (seed {r.seed})",
        ),
    ]
    switches = ab_switches(r)
    return out + ([Line("note", switches)] if switches else [])


# Switches per hop further apart than this (relative) make the sides' figures count
# different things.
SWITCHES_APART = 0.05


def ab_switches(r: Any) -> str:
    """ "" unless the sides made different context switches per hop (medians over the
    rounds): the figures are per hop, so B/A then counts the extra switches too."""
    sides = [getattr(r, f"{k}_switches_per_hop", None) for k in ("a", "b")]
    if any(s is None or not len(s) for s in sides):
        return ""
    a, b = (float(np.nanmedian(np.asarray(s, dtype=float))) for s in sides)
    if not (math.isfinite(a) and math.isfinite(b)) or abs(b - a) <= SWITCHES_APART * max(a, b):
        return ""
    return (
        f"A made {a:.2f} context switches per hop, B {b:.2f}: the figures are per hop, so "
        f"B/A counts the extra switches too (per switch about {r.ratio * a / b:.3g}x)"
    )


def format_ab(r: Any) -> str:
    """An A/B run as text: the two sides, then the verdict, why, and how it stopped."""
    lines = [f"A: {ab_side(r.a, r.b)}", f"B: {ab_side(r.b, r.a)}"]
    lines += [f"{LABELS[line.kind]}{line.text}" for line in ab_lines(r)]
    lines.append(
        "ab: rounds of one fresh ring instance per side in a random order; B/A from the "
        "rounds' log ratios with a 95 % confidence sequence (valid at every round, so the "
        f"run stops as soon as it decides); no change: the interval within ±{r.threshold:.0%}"
    )
    return "\n".join(lines)


def ab_html(r: Any) -> str:
    """An A/B run for Jupyter: the sides, the word and why, and the rounds' figures."""
    esc = html.escape
    rows = "".join(
        f"<tr><td>{k}</td><td>{a:.3f}</td><td>{b:.3f}</td><td>{b / a if a > 0 else math.nan:.3f}"
        f"</td><td>{'A' if first else 'B'}</td></tr>"
        for k, (a, b, first) in enumerate(zip(r.a_us.tolist(), r.b_us.tolist(), r.a_first))
    )
    said = "".join(
        f'<div class="ctxbench-{line.kind}">{esc(line.text)}</div>' for line in ab_lines(r)
    )
    return (
        f"<div><p>A: {esc(ab_side(r.a, r.b))}<br>B: {esc(ab_side(r.b, r.a))}</p>{said}"
        "<details><summary>rounds</summary><table><thead><tr><th>round</th><th>A µs</th>"
        f"<th>B µs</th><th>B/A</th><th>first</th></tr></thead><tbody>{rows}</tbody></table>"
        "</details></div>"
    )
