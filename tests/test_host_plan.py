"""What a run would measure, before it runs: ``ctxbench.matrix_plan``, ``ctxbench.sizes_plan``
and the commands' ``--plan`` on every described host (tests/hosts.py), each bounded;
planned, never measured, so nothing here grows with the host it describes."""

from __future__ import annotations

import hosts
import pytest
from conftest import FAST, Described

import ctxbench
from ctxbench import _core
from ctxbench.cli import main

BUDGET_S = _core.TIME_BUDGET_S
MIN_PER_CLASS = _core.MATRIX_MIN_PER_CLASS


def at(described: Described, monkeypatch: pytest.MonkeyPatch, host: str) -> None:
    monkeypatch.setenv("CTXBENCH_SYSFS", str(described(host)))


@pytest.mark.parametrize("host", sorted(hosts.PROFILES))
def test_every_described_hosts_default_matrix_is_within_the_budget_with_every_class(
    host: str, described: Described, monkeypatch: pytest.MonkeyPatch
) -> None:
    at(described, monkeypatch, host)
    plan = ctxbench.matrix_plan()
    assert plan["sysfs"].endswith(host)
    n = len(plan["cpus"])
    assert plan["full_cells"] == n * n
    assert sum(c["pairs"] for c in plan["classes"]) == n * n
    assert plan["cells"] == sum(c["cells"] for c in plan["classes"]) <= n * n
    assert 0 < plan["memory_bytes"] < 2**30
    if plan["per_class"] is None:  # every pair: within the budget
        assert plan["cells"] == n * n and plan["estimated_s"] <= BUDGET_S
    else:  # a sample: every class covered with an interval's worth, within the budget
        assert plan["estimated_s"] <= BUDGET_S, plan
        assert plan["full_estimated_s"] > BUDGET_S
        assert all(c["cells"] >= min(MIN_PER_CLASS, c["pairs"]) for c in plan["classes"])
    assert plan["estimated_s"] == pytest.approx(plan["cells"] * plan["cell_s"])


def test_the_384_cpu_host_plans_a_sample_of_each_class_in_minutes(
    described: Described, monkeypatch: pytest.MonkeyPatch
) -> None:
    at(described, monkeypatch, "xeon6-2s-snc3")
    plan = ctxbench.matrix_plan()
    assert len(plan["cpus"]) == 384 and plan["per_class"] >= MIN_PER_CLASS
    assert plan["estimated_s"] <= 300
    names = {c["name"] for c in plan["classes"]}
    assert {"smt-sibling at distance 10", "shared-llc at distance 12",
            "cross-package at distance 21"} <= names  # fmt: skip
    full = ctxbench.matrix_plan(full=True)
    assert full["cells"] == 384 * 384 and full["per_class"] is None
    assert full["estimated_s"] == pytest.approx(plan["full_estimated_s"])
    assert ctxbench.matrix_plan(classes=3)["cells"] == 3 * len(plan["classes"])
    assert ctxbench.matrix_plan(classes=False)["cells"] == 384 * 384


def test_matrix_plan_refuses_what_a_run_refuses(
    described: Described, monkeypatch: pytest.MonkeyPatch
) -> None:
    at(described, monkeypatch, "container-cpuset1")
    assert ctxbench.matrix_plan()["cpus"] == [5]
    with pytest.raises(ValueError, match="cpus: .*cpuset"):
        ctxbench.matrix_plan([0, 5])
    with pytest.raises(ValueError, match="full"):
        ctxbench.matrix_plan(full=True, classes=4)
    with pytest.raises(ValueError, match="engine"):
        ctxbench.matrix_plan(engine="fiber")


def test_the_command_prints_the_plan_and_measures_nothing(
    described: Described, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    at(described, monkeypatch, "xeon6-2s-snc3")

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("--plan measured")

    monkeypatch.setattr(_core, "matrix", refused)
    assert main(["matrix", "--plan"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("matrix of 384 CPUs on ")
    assert "cells per class at most" in out and "cross-package at distance 21" in out
    assert "time: about " in out and "memory: " in out and "--full" in out
    assert main(["matrix", "--plan", "--full"]) == 0
    out = capsys.readouterr().out
    assert "every ordered pair" in out and f"cells: {384 * 384} " in out
    assert " h, " in out  # the full matrix's hours, shown before anything runs


def test_a_long_matrix_says_so_as_it_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # This machine's plan, made long: the line comes before the first cell.
    real = _core.matrix_plan

    def long(*args: object, **kwargs: object) -> dict[str, object]:
        plan = dict(real(*args, **kwargs))  # type: ignore[arg-type]
        plan["estimated_s"] = 2 * _core.LONG_RUN_S
        return plan

    def first_cell(*args: object, **kwargs: object) -> None:
        assert "about 2.0 min" in capsys.readouterr().err
        raise KeyboardInterrupt

    monkeypatch.setattr(_core, "matrix_plan", long)
    monkeypatch.setattr(_core, "matrix", first_cell)
    with pytest.raises(KeyboardInterrupt):
        ctxbench.matrix([0], progress=True)


@pytest.mark.parametrize("host", sorted(hosts.PROFILES))
def test_every_described_hosts_sizes_plan_prints_bounded_sizes_memory_and_time(
    host: str,
    described: Described,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    at(described, monkeypatch, host)
    monkeypatch.setattr(_core, "cache_sweep", None)  # --plan measures nothing
    assert main(["sizes", "--plan"]) == 0
    out = capsys.readouterr().out.splitlines()
    plan = ctxbench.sizes_plan()
    assert out[0] == f"sweep of sizes on {plan['sysfs']}, CPUs {plan['cpus']}"
    assert [line.split(":")[0] for line in out[3:5]] == ["2 procs", "8 procs"]
    assert out[5].startswith("memory: ") and out[6].startswith("time: about ")
    assert plan["estimated_s"] <= BUDGET_S and plan["memory_bytes"] > 0
    limit = next(p for p in _core.PARAMETERS if p["name"] == "size_kb")["hi"]
    assert all(max(grid) <= limit for grid in plan["sizes_kb"])
    assert len(out) == 7 + len(plan["notes"])


def test_a_long_sweep_of_sizes_says_so_as_it_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = _core.cache_plan

    def long(*args: object, **kwargs: object) -> dict[str, object]:
        plan = dict(real(*args, **kwargs))  # type: ignore[arg-type]
        plan["estimated_s"] = 2 * _core.LONG_RUN_S
        return plan

    def first_point(*args: object, **kwargs: object) -> None:
        assert "about 2.0 min" in capsys.readouterr().err
        raise KeyboardInterrupt

    monkeypatch.setattr(_core, "cache_plan", long)
    monkeypatch.setattr(_core, "cache_sweep", first_point)
    with pytest.raises(KeyboardInterrupt):
        ctxbench.cache_sweep(2, [0, 16], rounds=2, progress=True)


def test_the_core_estimates_a_ring_call_at_its_caps() -> None:
    fixed = _core.ring_estimate([2, 8], repetitions=10, min_time=0.01, warmup=0)
    one = _core.ring_estimate([2], repetitions=10, min_time=0.01, warmup=0)
    assert one < fixed < 2 * one + 1 and one >= 10 * 2 * 0.01
    assert _core.ring_estimate([2], max_time=1.0) > _core.ring_estimate([2], max_time=0.1)
    with pytest.raises(ValueError, match="max_time"):
        _core.ring_estimate([2], max_time=-1.0)


def test_a_long_sweep_says_so_as_it_starts_and_a_short_one_says_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ctxbench.sweep([2], progress=True, **FAST)
    assert "ctxbench sweep:" not in capsys.readouterr().err
    monkeypatch.setattr(_core, "ring_estimate", lambda procs, **kw: _core.LONG_RUN_S)
    ctxbench.sweep([2, 3], progress=True, **FAST)
    assert "ctxbench sweep: 2 points, about 2.0 min" in capsys.readouterr().err
    ctxbench.sweep([2, 3], progress=False, **FAST)
    assert "ctxbench sweep:" not in capsys.readouterr().err
