"""How a time in µs is printed everywhere (xgraph, tables, reprs): lat_ctx's two decimals,
and three significant digits below 0.1 µs, where two decimals would lose more than a tenth
of the value: a fiber's 0.0047 µs prints as 0.00470, not 0.00. And how a relative spread is:
± per cent up to ±50 %, a factor ×/÷ beyond (a ±970 % interval is a factor of about 11)."""

from __future__ import annotations

import math


def us(value: float) -> str:
    """``value`` µs as text: "3.14", "0.50", "0.0473", "0.00473"; "nan" and "inf" as Python
    spells them."""
    if not math.isfinite(value) or value == 0 or abs(value) >= 0.1:
        return f"{value:.2f}"
    return f"{value:.{max(2, 2 - math.floor(math.log10(abs(value))))}f}"


def spread(half_log: float) -> str:
    """A relative half-width on the log scale as text: "±3.8 %", "±38 %", "×/÷ 2.3"."""
    if not math.isfinite(half_log):
        return "no interval"
    factor = math.exp(abs(half_log))
    if factor - 1 > 0.5:
        return f"×/÷ {factor:.2g}" if factor < 10 else f"×/÷ {factor:.0f}"
    pct = (factor - 1) * 100
    return f"±{pct:.1f} %" if pct < 10 else f"±{pct:.0f} %"
