"""The measuring functions (ring, lat_ctx, pingpong): what a result holds, every engine and
transport, the evidence on every result and bad input (failures and teardown: test_api_failures)."""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import FAST, children

import ctxbench
from ctxbench import _core, _exclusive

# The lat_ctx ring


def test_shapes_and_dtypes(no_leaks: None) -> None:
    r = ctxbench.lat_ctx([2, 3, 8], size_kb=16, **FAST)
    assert r.procs.dtype == np.int64 and r.procs.tolist() == [2, 3, 8]
    for arr in (r.latency_us, r.min_us, r.raw_us, r.overhead_point_us):
        assert arr.dtype == np.float64 and arr.shape == (3,)
        assert np.isfinite(arr).all()
    assert r.samples_us.shape == (3, 3) and r.samples_us.dtype == np.float64
    assert isinstance(r.overhead_us, float) and r.overhead_us > 0
    assert (r.raw_us > 0).all()
    # The reported figures are the summaries of the samples that are kept.
    np.testing.assert_allclose(r.latency_us, np.median(r.samples_us, axis=0))
    np.testing.assert_allclose(r.min_us, r.samples_us.min(axis=0))
    np.testing.assert_allclose(r.samples_us, r.raw_samples_us - r.overhead_samples_us)
    assert (r.min_us <= r.latency_us).all()
    assert r.engine == "process" and r.transport == "pipe"
    assert r.work_verified.all()
    assert (r.trips > 0).all() and (r.overhead_rounds > 0).all()
    assert [c.shape for c in r.cpus] == [(1, 2), (1, 3), (1, 8)]
    assert all((c >= 0).all() for c in r.cpus)


def test_workload_checksum_matches_numpy() -> None:
    for kb in (0, 1, 4, 16, 65):
        words = np.arange(kb * 128, dtype=np.uint64)  # 8-byte words holding their index
        assert _core.workload_checksum(kb) == int(words.sum())
    # Out of range as a ring's size_kb is, wider than 64 bits too: the range is named.
    for kb in (-1, 2**70):
        with pytest.raises(ValueError, match=r"size_kb: must be between 0 and \d+, got"):
            _core.workload_checksum(kb)


def test_single_placement_pins_every_process() -> None:
    first = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    r = ctxbench.lat_ctx([2, 5], placement="single", **FAST)
    assert all((c == first).all() for c in r.cpus)
    assert os.sched_getaffinity(0) == before, "the caller's affinity was not restored"


def test_explicit_cpu_list_and_spread() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    r = ctxbench.lat_ctx([4], placement=[cpus[-1]], **FAST)
    assert (r.cpus[0] == cpus[-1]).all()
    r = ctxbench.lat_ctx([4], placement="spread", **FAST)
    assert r.cpus[0][0].tolist() == [cpus[i % len(cpus)] for i in range(4)]


def test_a_list_of_one_cpu_is_one_cpu_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    """ "On one CPU" is decided once, in the core, over the CPUs a placement resolves to: the
    switch model, the transports that need one CPU and the CLI's hints all see the same."""
    from ctxbench import report
    from ctxbench.cli import main

    cpus = sorted(os.sched_getaffinity(0))
    c = cpus[-1]
    for placement, cpu in [("single", c), ([c], None), ([c, c], None)]:
        r = ctxbench.ring([2, 3], placement=placement, cpu=cpu, **FAST)
        assert r.one_cpu.tolist() == [True, True], placement
        # The model's one-CPU transport runs where `single` runs.
        ctxbench.ring([2], transport="yield", placement=placement, cpu=cpu, **FAST)
    if len(cpus) > 1:
        for placement in ("spread", [cpus[0], c]):
            assert not ctxbench.ring([2], placement=placement, **FAST).one_cpu.any()
            with pytest.raises(ValueError, match="needs every participant on one CPU"):
                ctxbench.ring([2], transport="yield", placement=placement, **FAST)

    # The CLI's unpinned hint follows the same decision: an unpinned run that may use one
    # CPU only is on one CPU, and no hop of it crosses CPUs.
    hint = "unpinned: the share of hops that cross CPUs"
    flags = ["-N", "2", "-W", "0", "--min-time", "0.002", "--placement"]
    for placement in (str(c), "single"):
        capsys.readouterr()
        assert main(["lat-ctx", *flags, placement, "2"]) == 0
        assert hint not in capsys.readouterr().err, placement
    before = os.sched_getaffinity(0)
    for allowed in ([c], cpus):
        os.sched_setaffinity(0, allowed)
        try:
            capsys.readouterr()
            assert main(["lat-ctx", *flags, "default", "2"]) == 0
        finally:
            os.sched_setaffinity(0, before)
        assert (hint in capsys.readouterr().err) == (len(allowed) > 1), allowed
    assert report.hints({}, placement="default", one_cpu=True) == []
    assert hint in report.hints({}, placement="default", one_cpu=False)[0]


def test_parallel_rings_report_per_ring(no_leaks: None) -> None:
    r = ctxbench.lat_ctx([2, 4], parallel=3, placement="balanced", **FAST)
    assert r.ring_us.shape == (2, 3)
    assert [c.shape for c in r.cpus] == [(3, 2), (3, 4)]
    cpus = sorted(os.sched_getaffinity(0))
    for ring, row in enumerate(r.cpus[1]):
        assert (row == cpus[ring % len(cpus)]).all()


@pytest.mark.slow
def test_large_ring(no_leaks: None) -> None:
    r = ctxbench.lat_ctx([256], min_time=0.01, repetitions=2, warmup=0)
    assert r.cpus[0].shape == (1, 256) and r.work_verified.all()
    assert np.isfinite(r.latency_us).all()


def test_negative_points_are_kept_and_flagged() -> None:
    r = ctxbench.lat_ctx([2, 2, 2, 2], **FAST)
    assert len(r.latency_us) == 4
    np.testing.assert_array_equal(r.below_resolution, r.latency_us <= 0)
    assert len(r.to_xgraph().splitlines()) == 5


def test_numpy_integers_are_ints() -> None:
    r = ctxbench.lat_ctx(
        np.int64(2), size_kb=np.int32(4), repetitions=np.uint8(2), min_time=0.002, warmup=0
    )
    assert r.procs.tolist() == [2] and r.size_kb == 4 and r.repetitions == 2
    r = ctxbench.lat_ctx(np.array([2, 3]), placement=[np.int64(0)], **FAST)
    assert r.procs.tolist() == [2, 3] and r.placement == "[0]"
    with pytest.raises(TypeError, match="loops"):
        ctxbench.pingpong(True)  # type: ignore[arg-type]
    assert ctxbench.pingpong(np.int64(10)).loops == 10


def test_many_runs_leak_nothing(no_leaks: None) -> None:
    for _ in range(5):
        ctxbench.lat_ctx([2, 6], size_kb=4, **FAST)


@pytest.mark.parametrize(
    ("kwargs", "exc", "param"),
    [
        ({"procs": []}, ValueError, "procs"),
        ({"procs": [1]}, ValueError, "procs"),
        ({"procs": [2, -4]}, ValueError, "procs"),
        ({"procs": [2.5]}, TypeError, "procs"),
        ({"procs": "24"}, TypeError, "procs"),
        ({"procs": [10**9]}, ValueError, "procs"),
        ({"size_kb": -1}, ValueError, "size_kb"),
        ({"size_kb": 10**9}, ValueError, "size_kb"),
        ({"repetitions": 0}, ValueError, "repetitions"),
        ({"warmup": -1}, ValueError, "warmup"),
        ({"parallel": 0}, ValueError, "parallel"),
        ({"min_time": 0.0}, ValueError, "min_time"),
        ({"min_time": -1.0}, ValueError, "min_time"),
        ({"timeout": 0.0}, ValueError, "timeout"),
        ({"placement": "nowhere"}, ValueError, "placement"),
        ({"placement": 3.5}, TypeError, "placement"),
        ({"placement": [4096]}, ValueError, "placement"),
        ({"placement": "single", "cpu": 4095}, ValueError, "cpu"),
        ({"placement": "spread", "cpu": 0}, ValueError, "cpu"),
        # bool is an int to Python, never a count; bytes is no list of CPUs.
        ({"procs": None}, TypeError, "procs"),
        ({"procs": True}, TypeError, "procs"),
        ({"procs": [2, True]}, TypeError, "procs"),
        ({"size_kb": True}, TypeError, "size_kb"),
        ({"repetitions": True}, TypeError, "repetitions"),
        ({"warmup": False}, TypeError, "warmup"),
        ({"parallel": True}, TypeError, "parallel"),
        ({"size_kb": 1.0}, TypeError, "size_kb"),
        ({"placement": "single", "cpu": True}, TypeError, "cpu"),
        ({"placement": [0, True]}, TypeError, "placement"),
        ({"placement": b"\x00\x01"}, TypeError, "placement"),
        # Buffers and unordered collections are no list of counts or CPUs.
        ({"procs": bytearray(b"\x02\x03")}, TypeError, "procs"),
        ({"procs": memoryview(b"\x02\x03")}, TypeError, "procs"),
        ({"procs": {2: "a", 3: "b"}}, TypeError, "procs"),
        ({"procs": {2, 3}}, TypeError, "procs"),
        ({"placement": bytearray(b"\x00")}, TypeError, "placement"),
        ({"placement": memoryview(b"\x00")}, TypeError, "placement"),
        ({"placement": {0: 1}}, TypeError, "placement"),
        ({"placement": {0}}, TypeError, "placement"),
        ({"placement": True}, TypeError, "placement"),
        # An int too wide for 64 bits is out of range, not of the wrong type.
        ({"procs": 2**63}, ValueError, "procs: must be between 2 and 100000, got 9223372036"),
        ({"procs": [2, -(2**70)]}, ValueError, "procs: must be between"),
        ({"size_kb": 2**64}, ValueError, "size_kb: must be between"),
        ({"placement": [2**64]}, ValueError, "placement: CPU ids must be between 0 and "),
        ({"placement": "single", "cpu": 2**63}, ValueError, "cpu: CPU ids must be between 0 and "),
        ({"stride_bytes": 2**64}, ValueError, "stride_bytes: must be a power of two between 8"),
        # bool is no number of seconds or fraction either.
        ({"min_time": True}, TypeError, "min_time"),
        ({"timeout": True}, TypeError, "timeout"),
        ({"precision": False, "repetitions": None}, TypeError, "precision"),
        ({"max_time": True, "repetitions": None}, TypeError, "max_time"),
        ({"min_time": "0.1"}, TypeError, "min_time"),
        ({"timeout": float("nan")}, ValueError, "timeout"),
        ({"engine": 3}, TypeError, "engine"),
        ({"transport": ["pipe"]}, TypeError, "transport"),
        ({"record_hops": 1}, TypeError, "record_hops"),
        ({"history": "yes"}, TypeError, "history: expected True or False, got str"),
    ],
)
def test_bad_input_names_the_parameter(
    kwargs: dict[str, object], exc: type[Exception], param: str, no_leaks: None
) -> None:
    args = {"procs": [2], **FAST, **kwargs}
    call = ctxbench.ring if {"engine", "transport"} & set(kwargs) else ctxbench.lat_ctx
    with pytest.raises(exc, match=re.escape(param)):
        call(**args)  # type: ignore[arg-type]


def test_an_endless_iterator_of_counts_ends_in_a_range_error() -> None:
    with pytest.raises(ValueError, match="procs: lists more than 10000 process counts"):
        ctxbench.ring(itertools.repeat(2))
    with pytest.raises(ValueError, match="placement: lists more than 100000 CPU ids"):
        ctxbench.ring([2], placement=itertools.repeat(0))
    # A finite generator is a sequence like any other.
    r = ctxbench.ring((n for n in (2, 3)), **FAST)
    assert r.procs.tolist() == [2, 3]


COMBOS = [(engine, t) for engine, transports in _core.TRANSPORTS.items() for t in transports]

RT_SIGNAL = signal.SIGRTMIN + 7


def _tasks() -> int:
    return len(os.listdir("/proc/self/task"))


def _tasks_settle_to(limit: int) -> int:
    """This process's task count once joined threads have left /proc: the kernel lists a
    thread for a moment after pthread_join returned (its tid is cleared before it is
    reaped), so a count taken right after the call can include one. A leaked thread stays."""
    deadline = time.monotonic() + 2.0
    while _tasks() > limit and time.monotonic() < deadline:
        time.sleep(0.01)
    return _tasks()


@pytest.mark.parametrize(("engine", "transport"), COMBOS)
def test_every_combination_measures_and_leaks_nothing(
    engine: str, transport: str, no_leaks: None
) -> None:
    tasks = _tasks()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    handler = signal.getsignal(RT_SIGNAL)
    r = ctxbench.ring(
        [2, 5], engine=engine, transport=transport, size_kb=8, placement="single", **FAST
    )
    assert (r.engine, r.transport) == (engine, transport)
    assert r.samples_us.shape == (3, 2)
    assert np.isfinite(r.samples_us).all() and (r.raw_us > 0).all()
    assert r.work_verified.all(), "a participant skipped its work or lost the token"
    first = min(os.sched_getaffinity(0))
    assert all((c == first).all() for c in r.cpus)
    assert _tasks_settle_to(tasks) <= tasks, "a participant thread outlived the call"
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == mask
    assert signal.getsignal(RT_SIGNAL) == handler


def test_default_transport_follows_the_engine() -> None:
    assert ctxbench.ring([2], **FAST).transport == "pipe"
    assert ctxbench.ring([2], engine="thread", **FAST).transport == "pipe"
    assert ctxbench.ring([2], engine="fiber", **FAST).transport == "resume"


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"engine": "fiber", "transport": "pipe"}, "resume"),
        ({"engine": "process", "transport": "resume"}, "futex"),
        ({"engine": "thread", "transport": "carrier-pigeon"}, "eventfd"),
        ({"engine": "greenlet"}, "fiber"),
        ({"transport": "yield", "placement": "default"}, "placement='single'"),
        ({"transport": "yield", "placement": "spread"}, "placement='single'"),
    ],
)
def test_nonsense_combinations_list_the_valid_ones(kwargs: dict[str, str], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        ctxbench.ring([2], **kwargs, **FAST)  # type: ignore[arg-type]


def test_ten_thousand_fibers() -> None:
    r = ctxbench.ring([10_000], engine="fiber", min_time=0.01, repetitions=2, warmup=0)
    assert r.work_verified.all()
    assert np.isfinite(r.latency_us).all()


def test_large_thread_ring_is_joined(no_leaks: None) -> None:
    tasks = _tasks()
    r = ctxbench.ring([200], engine="thread", transport="futex", min_time=0.01, repetitions=2)
    assert r.work_verified.all()
    assert _tasks_settle_to(tasks) <= tasks


def test_parallel_thread_rings() -> None:
    r = ctxbench.ring([3], engine="thread", parallel=2, placement="balanced", **FAST)
    assert r.ring_us.shape == (1, 2)


def _kill_one_during(kwargs: dict[str, object]) -> BaseException | None:
    """Runs a ring of 4 while another thread kills its second forked participant."""
    errors: list[BaseException] = []
    before = children()

    def kill() -> None:
        end = time.monotonic() + 5
        while len(children() - before) < 3 and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(0.1)
        os.kill(sorted(children() - before)[1], signal.SIGKILL)

    t = threading.Thread(target=kill)
    # The machine's measuring lock first, as in `_while_running`: the killer's wait for the
    # ring's children starts only when the ring can start.
    with _exclusive.measuring():
        t.start()
        try:
            ctxbench.ring([4], repetitions=200, min_time=0.05, **kwargs)  # type: ignore[arg-type]
        except BaseException as e:  # noqa: BLE001 - inspected below
            errors.append(e)
        t.join()
    return errors[0] if errors else None


@pytest.mark.parametrize("transport", ["futex", "signal", "eventfd"])
def test_dead_child_without_eof_is_named_not_hung(transport: str, no_leaks: None) -> None:
    # These transports have no EOF: only the watchdog's check of the children notices.
    e = _kill_one_during({"transport": transport, "timeout": 60})
    assert isinstance(e, RuntimeError), e
    assert "participant" in str(e) and "signal 9" in str(e)


def test_pingpong_reports_perfs_fields(no_leaks: None) -> None:
    r = ctxbench.pingpong(20_000, placement="single")
    assert r.loops == 20_000 and r.engine == "process" and not r.threads
    assert r.usecs_per_op == pytest.approx(2 * r.usecs_per_switch)
    assert r.ops_per_sec * r.usecs_per_op == pytest.approx(1e6)
    assert r.elapsed_s == pytest.approx(r.loops * r.usecs_per_op / 1e6)
    assert r.cpus.tolist() == [min(os.sched_getaffinity(0))] * 2
    t = ctxbench.pingpong(20_000, threads=True, transport="futex")
    assert t.engine == "thread" and t.threads and t.transport == "futex"


@pytest.mark.parametrize("bad", [{"loops": 0}, {"loops": -5}, {"transport": "resume"}])
def test_pingpong_bad_input(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="loops|transport"):
        ctxbench.pingpong(**bad)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("engine", [e for e, ts in _core.TRANSPORTS.items() if "signal" in ts])
def test_signal_queue_never_overflows(engine: str) -> None:
    # A repetition long enough to send more signals than RLIMIT_SIGPENDING allows queued:
    # every token must consume its signal.
    r = ctxbench.ring(
        [2], engine=engine, transport="signal", placement="single", repetitions=1,
        warmup=0, min_time=0.5,
    )  # fmt: skip
    assert r.work_verified.all()


# The evidence on every result: kernel counters, hops, statistics, cycles, metadata


def test_counters_are_reported_per_point() -> None:
    r = ctxbench.lat_ctx([2, 4], placement="single", **FAST)
    assert r.switches_per_hop.dtype == np.float64 and r.switches_per_hop.shape == (2,)
    assert r.involuntary_switches.dtype == np.int64 and (r.involuntary_switches >= 0).all()
    assert r.migrations.dtype == np.int64 and (r.migrations >= -1).all()
    # The kernel's own accounting of the timed windows, read at their edges.
    assert r.switch_source == ["kernel", "kernel"]
    assert r.counters == "evidence"
    # On one CPU the token cannot move without a switch: at least one per hop.
    assert (r.switches_per_hop >= 0.95).all(), r.switches_per_hop
    assert (r.migrations == 0).all(), "pinned to one CPU: nothing migrates"
    if r.hardware["cycles_per_switch"] is None:
        assert isinstance(r.counters_unavailable_reason, str)


def test_fibers_are_invisible_to_the_kernel() -> None:
    r = ctxbench.ring([4], engine="fiber", **FAST)
    assert (r.switches_per_hop < 0.5).all(), r.switches_per_hop


def test_hardware_fields_are_none_with_a_reason_never_zero() -> None:
    hw = ctxbench.lat_ctx([2], **FAST).hardware
    per_switch = ("cycles_per_switch", "instructions_per_switch")
    misses = ("cache_misses_per_switch", "dtlb_misses_per_switch")
    assert set(hw) == {*per_switch, *misses, "unavailable_reason"}
    for key in (*per_switch, *misses):
        if hw[key] is None:
            assert isinstance(hw["unavailable_reason"], str) and hw["unavailable_reason"]
        else:
            assert (hw[key] >= 0).all() if key in misses else (hw[key] > 0).all()


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
                "clocksource", "hypervisor", "vulnerabilities", "ctxbench_version"):  # fmt: skip
        assert key in m
    assert m["ctxbench_version"] == ctxbench.__version__
    assert m["affinity"] == sorted(os.sched_getaffinity(0))
    assert m["compiler"] and "rustc" in m["compiler"]
    p = ctxbench.pingpong(1000).metadata
    assert p["kernel"] == m["kernel"]


def test_tsc_cycles_agree_with_nanoseconds_or_say_why_not() -> None:
    r = ctxbench.lat_ctx([2, 4], placement="single", **FAST)
    if r.tsc["unavailable_reason"] is not None:
        assert r.tsc_cycles_per_switch is None and r.tsc["ghz"] is None
        return
    assert r.tsc["ghz"] > 0 and r.tsc["read_cost_cycles"] >= 0
    # Both clocks timed the same intervals: cycles = ns x GHz, up to calibration error and the
    # samples where the machine came between the two clocks' reads. Each figure is a median
    # of its own samples, so under load the two may part by up to the samples' spread (4.4 %
    # at 4 processes beside two CPU hogs): the bound is that spread where it is wider.
    expected = r.latency_us * 1000 * r.tsc["ghz"]
    q1, q3 = np.nanpercentile(r.samples_us, [25, 75], axis=0)
    bound = np.maximum(0.02 * np.abs(expected), (q3 - q1) * 1000 * r.tsc["ghz"]) + 5
    assert (np.abs(np.asarray(r.tsc_cycles_per_switch) - expected) <= bound).all(), (
        r.tsc_cycles_per_switch,
        expected,
        bound,
    )
    p = ctxbench.pingpong(2000)
    assert p.cycles_per_switch == pytest.approx(p.usecs_per_switch * 1000 * p.tsc["ghz"], rel=0.02)


def test_precision_mode_stops_on_its_interval_or_names_the_cap() -> None:
    r = ctxbench.lat_ctx([2, 4], precision=0.05, max_time=0.3, min_time=0.002)
    assert r.repetitions is None and r.precision == 0.05 and r.max_time == 0.3
    assert len(r.stopped) == 2
    for j, how in enumerate(r.stopped):
        made = int(r.repetitions_made[j])
        column = r.samples_us[:, j]
        assert np.isfinite(column[:made]).all() and np.isnan(column[made:]).all()
        half = (r.stats["ci_high"][j] - r.stats["ci_low"][j]) / 2
        shape = r.instance_blocks[j]
        assert (
            r.block[j] == 4
            and made == 4 * shape.sum()
            and int(r.stats["instances"][j]) == len(shape)
        )
        if how == "precision":
            # Two instances and four blocks at least, and an interval as narrow as asked.
            assert len(shape) >= 2 and made >= 16
            assert half <= 0.05 * r.latency_us[j] + 1e-12
            assert r.stats["verdict"][j] in ("stable", "bimodal")
        elif how == "max_repetitions":
            # Repetitions calibrated while the machine was slow run short once it is not:
            # 400 of them can come before the time cap.
            assert made + 4 > 400
        else:
            # The first instance measures its share (two) of the four blocks an interval
            # needs. The cap stopped a point that had not met its precision: too few
            # instances or blocks, or an interval wider than asked. (How long it measured is
            # the machine's: under load one block can take the whole cap.)
            assert how == "time_cap", r.stopped
            assert shape[0] >= 2
            unmet = len(shape) < 2 or made < 16 or half > 0.05 * r.latency_us[j]
            assert unmet, (half, r.latency_us[j], shape)
            assert "raise max_time" in r.stop_line()
    assert "instance" in r.stop_line()


def test_a_repetition_ceiling_is_reported_as_such() -> None:
    r = ctxbench.lat_ctx(2, precision=1e-9, max_repetitions=24, max_time=60, min_time=0.002)
    assert r.stopped == ["max_repetitions"] and r.repetitions_made.tolist() == [24]
    assert r.samples_us.shape == (24, 1)


def test_a_fixed_count_is_lmbenchs_way() -> None:
    r = ctxbench.lat_ctx([2, 3], repetitions=5, min_time=0.002, warmup=0)
    assert r.stopped == ["repetitions"] * 2 and r.repetitions_made.tolist() == [5, 5]
    assert r.precision is None and r.samples_us.shape == (5, 2)


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"precision": 0.0}, "precision"),
        ({"precision": 0.9}, "precision"),
        ({"max_time": 0.0}, "max_time"),
        ({"max_repetitions": 15}, "max_repetitions"),
        ({"repetitions": True}, "repetitions"),
    ],
)
def test_bad_stopping_rules_name_the_parameter(kwargs: dict[str, object], param: str) -> None:
    with pytest.raises((ValueError, TypeError), match=param):
        ctxbench.lat_ctx(2, **kwargs)  # type: ignore[arg-type]


def test_names_and_public_modules_import_on_first_use() -> None:
    """``import ctxbench`` is light, and every public name and module is there when used."""
    code = (
        "import sys, ctxbench\n"
        "assert 'pandas' not in sys.modules and 'ctxbench.api' not in sys.modules\n"
        "for name in ctxbench.__all__: getattr(ctxbench, name)\n"
        "for module in ('api', 'files', 'frame', 'metadata', 'result'):\n"
        "    assert getattr(ctxbench, module).__name__ == 'ctxbench.' + module\n"
        "assert ctxbench.compare.__module__ == 'ctxbench._compare'\n"
        "for missing in ('nope', '_nope'):\n"
        "    try: getattr(ctxbench, missing)\n"
        "    except AttributeError: pass\n"
        "    else: raise SystemExit(missing)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
