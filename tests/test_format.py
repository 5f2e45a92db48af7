"""How µs are printed: lat_ctx's two decimals, and enough digits for a fiber's nanoseconds."""

from __future__ import annotations

import pytest

from ctxbench._format import us


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.14159, "3.14"),
        (12345.6, "12345.60"),
        (0.5, "0.50"),
        (0.1, "0.10"),
        (0.0990, "0.0990"),
        (0.0047312, "0.00473"),
        (-0.003, "-0.00300"),
        (0.0, "0.00"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
    ],
)
def test_microseconds(value: float, text: str) -> None:
    assert us(value) == text
