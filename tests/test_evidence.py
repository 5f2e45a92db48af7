"""Issue 4: kernel counters, distributions, statistics and metadata on every result."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import FAST

import ctxbench
from ctxbench import _core


def test_counters_are_reported_per_point() -> None:
    r = ctxbench.lat_ctx([2, 4], placement="single", **FAST)
    assert r.switches_per_hop.dtype == np.float64 and r.switches_per_hop.shape == (2,)
    assert r.involuntary_switches.dtype == np.int64 and (r.involuntary_switches >= 0).all()
    assert r.migrations.dtype == np.int64 and (r.migrations >= -1).all()
    assert set(r.switch_source) <= {"perf", "rusage"}
    # On one CPU the token cannot move without a switch: at least one per hop.
    assert (r.switches_per_hop >= 0.95).all(), r.switches_per_hop
    if "perf" not in r.switch_source:
        assert isinstance(r.counters_unavailable_reason, str)


def test_fibers_are_invisible_to_the_kernel() -> None:
    r = ctxbench.ring([4], engine="fiber", **FAST)
    assert (r.switches_per_hop < 0.5).all(), r.switches_per_hop


def test_hardware_fields_are_none_with_a_reason_never_zero() -> None:
    hw = ctxbench.lat_ctx([2], **FAST).hardware
    assert set(hw) == {"cycles_per_switch", "instructions_per_switch", "unavailable_reason"}
    for key in ("cycles_per_switch", "instructions_per_switch"):
        if hw[key] is None:
            assert isinstance(hw["unavailable_reason"], str) and hw["unavailable_reason"]
        else:
            assert (hw[key] > 0).all()


def test_statistics_per_point() -> None:
    r = ctxbench.lat_ctx([2, 3], repetitions=7, min_time=0.002, warmup=0)
    s = r.stats
    for key in ("min", "median", "mean", "stdev", "cv", "ci_low", "ci_high"):
        assert s[key].shape == (2,) and s[key].dtype == np.float64
    assert s["outliers"].dtype == np.int64 and s["clusters"].dtype == np.int64
    assert all(v in {"stable", "noisy", "unstable", "bimodal"} for v in s["verdict"])
    assert (s["ci_low"] <= s["median"]).all() and (s["median"] <= s["ci_high"]).all()
    np.testing.assert_allclose(s["median"], np.median(r.samples_us, axis=0))
    np.testing.assert_allclose(s["stdev"], r.samples_us.std(axis=0, ddof=1))


@pytest.mark.parametrize(("engine", "transport"), [("process", "pipe"), ("thread", "futex"),
                                                   ("fiber", None)])  # fmt: skip
def test_every_timed_hop_is_recorded(engine: str, transport: str | None, no_leaks: None) -> None:
    r = ctxbench.ring(
        [2, 6], engine=engine, transport=transport, record_hops=True, placement="single", **FAST
    )
    pct = r.hop_percentiles_us
    assert pct is not None and list(pct) == ["p50", "p90", "p99", "p99.9", "max"]
    for lo, hi in zip(list(pct.values()), list(pct.values())[1:]):
        assert (lo <= hi * 1.04).all()  # bucket midpoints vs the exact maximum
    hist = r.hop_histogram
    assert hist is not None
    assert hist["counts"].shape == (2, len(hist["edges_us"]) - 1)
    assert (np.diff(hist["edges_us"]) > 0).all()
    # Exactly the hops of the timed repetitions: repetitions x trips x procs.
    expected = r.repetitions * r.trips * r.procs
    np.testing.assert_array_equal(hist["counts"].sum(axis=1), expected)


def test_without_recording_the_fields_are_none() -> None:
    r = ctxbench.lat_ctx([2], **FAST)
    assert r.hop_percentiles_us is None and r.hop_histogram is None


def test_model_disagreement_becomes_a_user_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    real = _core.ring

    def with_warning(*args: object, **kwargs: object) -> dict[str, object]:
        d = real(*args, **kwargs)
        d["warnings"] = ["2 participants: switches_per_hop=0.10: spinning?"]
        return d

    monkeypatch.setattr(_core, "ring", with_warning)
    with pytest.warns(UserWarning, match="switches_per_hop=0.10"):
        r = ctxbench.lat_ctx([2], **FAST)
    assert r.warnings == ["2 participants: switches_per_hop=0.10: spinning?"]


def test_metadata_travels_with_every_result() -> None:
    m = ctxbench.lat_ctx([2], **FAST).metadata
    for key in ("kernel", "cpu_model", "cpu_count", "affinity", "smt", "governor",
                "clocksource", "hypervisor", "mitigations", "ctxbench_version"):  # fmt: skip
        assert key in m
    assert m["ctxbench_version"] == ctxbench.__version__
    assert m["affinity"] == sorted(os.sched_getaffinity(0))
    assert m["compiler"] and "rustc" in m["compiler"]
    p = ctxbench.pingpong(1000).metadata
    assert p["kernel"] == m["kernel"]


def test_info_command_prints_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxbench.cli import main

    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "kernel" in out and "clocksource" in out and "ctxbench_version" in out


def test_tsc_cycles_agree_with_nanoseconds_or_say_why_not() -> None:
    r = ctxbench.lat_ctx([2, 4], placement="single", **FAST)
    if r.tsc["unavailable_reason"] is not None:
        assert r.tsc_cycles_per_switch is None and r.tsc["ghz"] is None
        return
    assert r.tsc["ghz"] > 0 and r.tsc["read_cost_cycles"] >= 0
    # Both clocks timed the same intervals: cycles = ns x GHz, up to calibration error.
    expected = r.latency_us * 1000 * r.tsc["ghz"]
    np.testing.assert_allclose(r.tsc_cycles_per_switch, expected, rtol=0.02, atol=5)
    p = ctxbench.pingpong(2000)
    assert p.cycles_per_switch == pytest.approx(p.usecs_per_switch * 1000 * p.tsc["ghz"], rel=0.02)
