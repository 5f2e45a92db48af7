"""The core's change-point detection as Python sees it (`_core.change_points`,
`_core.change_at`): a shift found where it is, quiet series quiet, bad input named."""

from __future__ import annotations

import math
import random

import pytest

from ctxbench import _core


def series(seed: int, shift_at: int = 20, factor: float = 1.0, runs: int = 40) -> list[float]:
    rng = random.Random(seed)
    return [
        math.log(2.0) + rng.gauss(0.0, 0.03) + (math.log(factor) if i >= shift_at else 0.0)
        for i in range(runs)
    ]


def test_a_shift_is_found_at_its_run_with_its_size() -> None:
    scans = _core.change_points([(f"s{i}", series(i, factor=1.2)) for i in range(5)])
    for scan in scans:
        assert scan["status"] == "scanned"
        assert [c["index"] for c in scan["changes"]] == [20]
        c = scan["changes"][0]
        assert 1.0 < c["ratio_lo"] < c["ratio"] < c["ratio_hi"]
        assert c["p"] <= c["level"] <= 0.05


def test_series_without_a_shift_are_quiet_and_short_ones_too_short() -> None:
    scans = _core.change_points([(f"s{i}", series(i)) for i in range(5)] + [("short", [0.0] * 9)])
    assert [s["changes"] for s in scans[:5]] == [[]] * 5
    assert scans[5]["status"] == "too short"


def test_change_at_answers_for_one_run() -> None:
    xs = series(1, shift_at=15, factor=1.5, runs=30)
    assert _core.change_at("p", xs, 15)["status"] == "change"
    assert _core.change_at("p", xs, 10)["status"] == "none found"
    assert _core.change_at("p", xs, 28)["status"] == "too few runs"


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"level": 0.7}, "level"),
        ({"min_runs": 1}, "min_runs"),
        ({"permutations": 3}, "permutations"),
    ],
)
def test_bad_settings_are_refused_naming_them(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        _core.change_points([("s", series(0))], **kwargs)
