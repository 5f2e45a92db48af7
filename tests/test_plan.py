"""``ctxbench plan``: what telling a change takes on this machine, from its own recent runs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import usable_runs

import ctxbench
from ctxbench import _core, _history
from ctxbench.cli import main

RUN = {"placement": "single", "max_time": 0.05}


def test_the_core_plans_more_runs_for_a_wider_spread_and_a_smaller_change() -> None:
    assert _core.runs_to_detect(0.02, 0.05) < _core.runs_to_detect(0.05, 0.05)
    assert _core.runs_to_detect(0.05, 0.10) < _core.runs_to_detect(0.05, 0.05)
    # An anytime-valid stop costs rounds beyond a fixed plan of the same spread.
    assert _core.rounds_to_detect(0.05, 0.05) > _core.runs_to_detect(0.05 / math.sqrt(2), 0.05)
    assert _core.runs_to_detect(5.0, 0.001) is None
    for bad in ({"detect": 0.0}, {"detect": float("nan")}, {"power": 1.0}, {"spread": -1.0}):
        args = {"spread": 0.05, "detect": 0.05, **bad}
        with pytest.raises(ValueError, match=next(iter(bad))):
            _core.runs_to_detect(**args)


def test_a_point_without_runs_says_so_and_a_pilot_measures_it(kept: Path) -> None:
    empty = ctxbench.plan(0.05, [2], **RUN)
    assert [(p.procs, p.runs, p.spread, p.runs_per_side) for p in empty] == [(2, 0, None, None)]
    piloted = ctxbench.plan(0.05, [2], pilot=_core.MIN_SERIES, **RUN)[0]
    ((key, _),) = ctxbench.api.ring_points([2], **RUN)  # type: ignore[misc]
    # Every run the pilot kept that a run level can use is counted (the others, whose own
    # error passed their figure under load, are left out).
    assert piloted.runs == usable_runs(kept, key) <= _core.MIN_SERIES
    # (No count at all where the spread is too wide for any: runs_to_detect's None.)
    if piloted.spread is not None and piloted.runs_per_side is not None:
        assert piloted.runs_per_side >= 2
        assert piloted.rounds is None or piloted.rounds >= 6
        assert piloted.seconds_per_side == pytest.approx(
            piloted.runs_per_side * RUN["max_time"]  # type: ignore[operator]
        )
    # The pilot's runs are in the history: the next plan reads them without measuring.
    again = ctxbench.plan(0.05, [2], **RUN)[0]
    # (The same runs, a moment older: their weights by age moved by a hair.)
    assert again.runs == piloted.runs
    assert (again.spread is None) == (piloted.spread is None)
    if again.spread is not None:
        assert again.spread == pytest.approx(piloted.spread)


def test_plan_reads_the_same_points_as_ring(kept: Path) -> None:
    for _ in range(_core.MIN_SERIES):
        ctxbench.ring([2, 3], **RUN)
    plans = ctxbench.plan(0.05, [2, 3], **RUN)
    keys = [key for key, _ in ctxbench.api.ring_points([2, 3], **RUN)]  # type: ignore[union-attr]
    assert [p.runs for p in plans] == [usable_runs(kept, key) for key in keys]
    # Another size is another point: nothing known of it.
    assert ctxbench.plan(0.05, [2], size_kb=64, **RUN)[0].runs == 0


@pytest.mark.parametrize("pilot", [True, -1, 101, 2.0])
def test_pilot_must_be_a_count(kept: Path, pilot: object) -> None:
    with pytest.raises(ValueError, match="pilot"):
        ctxbench.plan(0.05, [2], pilot=pilot)  # type: ignore[arg-type]


@pytest.mark.parametrize("power", [True, 0.2, 1.0, float("nan"), "0.9"])
def test_power_must_be_a_probability_in_its_range_even_with_nothing_known(
    kept: Path, power: object
) -> None:
    with pytest.raises(ValueError, match="^power: must be a number from 0.5 to 0.999"):
        ctxbench.plan(0.05, [2], power=power)  # type: ignore[arg-type]


def test_a_plan_is_for_the_power_asked(kept: Path) -> None:
    assert _core.runs_to_detect(0.05, 0.05, 0.95) > _core.runs_to_detect(0.05, 0.05, 0.6)
    for _ in range(_core.MIN_SERIES):
        ctxbench.ring([2], **RUN)
    for power in (0.6, 0.95):
        (p,) = ctxbench.plan(0.05, [2], power=power, **RUN)
        if p.spread is not None:  # (under load a run's own error can leave it unusable)
            assert p.runs_per_side == _core.runs_to_detect(p.spread, 0.05, power)
            assert p.rounds == _core.rounds_to_detect(math.sqrt(2) * p.spread, 0.05, power)


def test_the_command_prints_each_point_and_what_the_figures_assume(
    kept: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "--detect", "5%", "--placement", "single", "2", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "to tell a change of 5% with 80% probability on this machine now:"
    assert f"0 of the {_core.MIN_SERIES} comparable runs a spread needs" in out[2]
    assert out[-1].startswith("runs: comparable runs of the point in the run history")
    assert main(["plan", "--detect", "0.1", "--placement", "single", "2"]) == 0
    assert "a change of 10%" in capsys.readouterr().out
    assert main(["plan", "--power", "90%", "--placement", "single", "2"]) == 0
    assert "with 90% probability" in capsys.readouterr().out
    for bad in ("10", "0", "five", "0%"):
        with pytest.raises(SystemExit):
            main(["plan", "--detect", bad])
        assert "expected a fraction like 5% or 0.05" in capsys.readouterr().err


def test_history_off_plans_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_history.ENV, "off")
    assert ctxbench.plan(0.05, [2])[0].runs == 0
