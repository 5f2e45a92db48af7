"""lmbench's lat_ctx text ("xgraph"): a title line ``"size=<KiB>k ovr=<µs>`` and a line
``<procs> <µs>`` per point, one block per size; so old lat_ctx outputs load beside new results.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._field import Bad, check_scalar
from ._format import us
from .frame import require
from .schema import XGRAPH

if TYPE_CHECKING:
    import pandas as pd

# lmbench prints `"size=0 ovr=12` (no unit, integer overhead) and ctxbench `"size=0k ovr=1.38`.
_TITLE = re.compile(r'^"size=(\d+)k?\s+ovr=(\S+)$')
_POINT = re.compile(r"^(\d+)\s+(\S+)$")


def block(size_kb: int, overhead_us: float, points: Iterable[tuple[int, float]]) -> str:
    """One size's text: the title line, then a "procs µs" line per point, each time as
    ``_format.us`` prints it (more digits below 0.1 µs, where a fiber's switch lies)."""
    lines = [f'"size={size_kb}k ovr={us(overhead_us)}']
    lines += [f"{procs} {us(value)}" for procs, value in points]
    return "\n".join(lines) + "\n"


def write(ring: Any) -> str:
    """lat_ctx's xgraph text of a ring result."""
    if getattr(ring, "kind", None) != "ring":
        raise TypeError(f"lat_ctx's xgraph format holds ring results, not {type(ring).__name__}")
    return str(ring.to_xgraph())


def read(text: str) -> pd.DataFrame:
    """Parse lat_ctx output (one or more ``"size=..k ovr=..`` blocks) into the tidy frame.

    lmbench records neither placement nor engine; rows say ``"process"``/``"pipe"`` (what
    lat_ctx runs), placement ``"unknown"`` and parallel 1 (lat_ctx's default).
    """
    pd = require("pandas", "reading xgraph text")
    rows: list[dict[str, Any]] = []
    block: tuple[int, float] | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        title = _TITLE.match(line)
        if title:
            block = (_value(title[1], lineno, "size"), _value(title[2], lineno, "ovr"))
            continue
        if block is None:
            raise ValueError(f"line {lineno}: expected a title like '\"size=0k ovr=1.23'")
        point = _POINT.match(line)
        if not point:
            raise ValueError(f"line {lineno}: expected '<procs> <µs>', got {line!r}")
        procs, value = _value(point[1], lineno, "procs"), _value(point[2], lineno, "µs")
        rows.append(
            {
                "benchmark": "ring",
                "engine": "process",
                "transport": "pipe",
                "placement": "unknown",
                "size_kb": block[0],
                "parallel": 1,
                "procs": procs,
                "repetition": 0,
                "value": value,
                "unit": "us",
                "overhead_us": block[1],
                "latency_us": value,
                "below_resolution": value <= 0,
                "source": "xgraph",
            }
        )
    if not rows:
        raise ValueError("no data points: expected lat_ctx output ('\"size=0k ovr=1.23' + lines)")
    return pd.DataFrame(rows)


def _value(text: str, lineno: int, what: str) -> Any:
    """A field of the xgraph text, read and checked as ``schema.XGRAPH`` declares it."""
    spec = XGRAPH[what]
    try:
        value = int(text) if spec.type == "int" else float(text)
        check_scalar(value, spec, what)
    except ValueError:
        raise ValueError(f"line {lineno}: {what}: not a number: {text!r}") from None
    except Bad as e:
        raise ValueError(f"line {lineno}: {e}") from None
    return value
