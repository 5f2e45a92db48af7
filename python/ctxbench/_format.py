"""How figures are printed everywhere (xgraph, tables, reprs, stop lines, comparisons): a time
in µs with lat_ctx's two decimals, and three significant digits below 0.1 µs, where two
decimals would lose more than a tenth of the value (a fiber's 0.0047 µs prints as 0.00470,
not 0.00); a 95 % interval as ±percent while it is within ±``FACTOR_BEYOND``, as a factor
×/÷ beyond (a ±700 % interval of a positive figure means "within a factor of 8", and reads
so), and with its bounds where it reaches zero, which no factor covers; text read from a file
or another process (``plain``) with its control characters made visible."""

from __future__ import annotations

import math
from typing import Callable

# Intervals wider than ± this fraction of their figure print as factors.
FACTOR_BEYOND = 0.5


def us(value: float) -> str:
    """``value`` µs as text: "3.14", "0.50", "0.0473", "0.00473"; "nan" and "inf" as Python
    spells them."""
    if not math.isfinite(value) or value == 0 or abs(value) >= 0.1:
        return f"{value:.2f}"
    return f"{value:.{max(2, 2 - math.floor(math.log10(abs(value))))}f}"


def interval(
    center: float, low: float, high: float, bounds: Callable[[float], str] | None = None
) -> str:
    """The interval [``low``, ``high``] of the figure ``center`` as every printer says it:
    "no interval" when a bound is not finite; "[low, high] reaches 0: not known" when it
    reaches zero (the figure could be nothing at all),
    "[low, high]" when it lies below (bounds by ``bounds``, else ``us``); "×/÷ 3.2" when
    wider than ±``FACTOR_BEYOND`` (the larger of high / center and center / low); else
    "[low, high]" by ``bounds`` where given, "±4.2%" without."""
    values = (center, low, high)
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        return "no interval"
    text = bounds or us
    if low <= 0 <= high:
        return f"[{text(low)}, {text(high)}] reaches 0: not known"
    if center <= 0 or high < 0:
        return f"[{text(low)}, {text(high)}]"
    if (high - low) / 2 / center > FACTOR_BEYOND:
        return f"×/÷ {max(high / center, center / low):.3g}"
    if bounds is not None:
        return f"[{bounds(low)}, {bounds(high)}]"
    return f"±{(high - low) / 2 / center:.1%}"


def reaches_zero(low: float, high: float) -> bool:
    """Whether an interval [``low``, ``high``] reaches 0: its figure is then not known, and
    is printed as such, never as a figure (``figure``)."""
    return math.isfinite(low) and math.isfinite(high) and low <= 0 <= high


def figure(center: float, low: float, high: float, text: Callable[[float], str] = us) -> str:
    """A figure with its interval ("2.27 [2.00, 2.50]"), or where the interval reaches 0 what is
    not known instead: "not known: [-23.60, 28.10] reaches 0"."""
    if reaches_zero(low, high):
        return f"not known: [{text(low)}, {text(high)}] reaches 0"
    return f"{text(center)} {interval(center, low, high, text)}"


def plain(value: object) -> str:
    """``value`` as text safe to print on a terminal: every character that is not printable
    (escape sequences, carriage returns, newlines, other control characters) written as its
    Python escape, ``\\x1b`` for ESC. Every string a printer takes from a results file or
    another process goes through here: a file can hold anything."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
