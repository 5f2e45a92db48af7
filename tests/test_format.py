"""How µs are printed: lat_ctx's two decimals, and enough digits for a fiber's nanoseconds;
how intervals are: ±percent, a factor past ±50 %, bounds where they reach zero."""

from __future__ import annotations

import pandas as pd
import pytest

from ctxbench._format import figure, interval, plain, us
from ctxbench.report._comparison import _ratio_text, point, ratio_interval
from ctxbench.report._measurement import stop_phrase


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


@pytest.mark.parametrize(
    ("center", "low", "high", "text"),
    [
        (10.0, 9.0, 11.0, "±10.0%"),
        (10.0, 5.0, 15.0, "±50.0%"),
        # ±700 % of a positive figure: within a factor of 8, said so.
        (1.0, 0.125, 15.0, "×/÷ 15"),
        (1.0, 0.25, 3.0, "×/÷ 4"),
        (0.01, -0.04, 0.05, "[-0.0400, 0.0500] reaches 0: not known"),
        (-0.02, -0.03, -0.01, "[-0.0300, -0.0100]"),
        (1.0, float("nan"), 2.0, "no interval"),
        (1.0, 0.5, float("inf"), "no interval"),
    ],
)
def test_intervals_wider_than_half_print_as_factors(
    center: float, low: float, high: float, text: str
) -> None:
    assert interval(center, low, high) == text


def test_an_interval_with_bounds_keeps_them_while_narrow() -> None:
    three = lambda v: f"{v:.3g}"  # noqa: E731
    assert interval(1.5, 1.4, 1.6, three) == "[1.4, 1.6]"
    assert interval(1.5, 0.2, 9.0, three) == "×/÷ 7.5"


def test_every_printer_of_an_interval_prints_a_wide_one_as_a_factor() -> None:
    wide = {"median": [1.0], "ci_low": [0.125], "ci_high": [8.0]}
    assert stop_phrase(wide, 0, 2, "time_cap", None) == "2: time_cap, ×/÷ 8"
    row = pd.Series({"ratio": 1.0, "ratio_low": 0.1, "ratio_high": 10.0})
    assert _ratio_text(row) == "1.000x ×/÷ 10"
    assert ratio_interval(row) == "×/÷ 10"


def test_plain_text_escapes_what_a_terminal_would_obey() -> None:
    assert plain("process/pipe µs ×/÷") == "process/pipe µs ×/÷"
    assert plain("a\x1b[31mb\nc\x9bd\x7f") == "a\\x1b[31mb\\nc\\x9bd\\x7f"
    assert plain(3) == "3"


def test_matrix_text_and_regression_lines_escape_names_from_files() -> None:
    import matrices

    from ctxbench._matrix_table import format_matrix

    text = format_matrix(matrices.fleet([(1, 1, 2, 1)], ["a"]).assign(machine="node\x1b[2J"))
    assert "\x1b" not in text and "# node\\x1b[2J" in text
    row = pd.Series({"engine": "process\x1b[1m", "transport": "pipe", "benchmark": "ring",
                     "placement": "single", "size_kb": 0, "parallel": 1, "procs": 2})  # fmt: skip
    assert point(row).startswith("process\\x1b[1m/pipe placement=single")


def test_an_interval_reaching_zero_is_said_as_not_known() -> None:
    """`2.27 usecs/op [-23.6, 28.1]` (unpinned) printed a figure nothing supported."""
    from dataclasses import replace

    import ctxbench

    p = ctxbench.pingpong(max_time=0.05, min_time=0.002)
    stats = {**p.stats, "median": [2.27], "ci_low": [-23.6], "ci_high": [28.1]}
    text = replace(p, stats=stats).to_perf()
    assert "not known: its 95% interval [-23.600000, 28.100000] reaches 0" in text
    assert "95% interval\n" not in text
    assert figure(2.27, -23.6, 28.1) == "not known: [-23.60, 28.10] reaches 0"
    assert figure(2.27, 2.0, 2.5) == "2.27 [2.00, 2.50]"
