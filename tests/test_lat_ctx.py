from __future__ import annotations

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
from ctxbench import _core


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


def test_xgraph_format() -> None:
    r = ctxbench.lat_ctx([2, 4], **FAST)
    lines = r.to_xgraph().splitlines()
    assert re.fullmatch(r'"size=0k ovr=-?\d+\.\d\d', lines[0])
    assert [line.split()[0] for line in lines[1:]] == ["2", "4"]
    assert all(re.fullmatch(r"\d+ -?\d+\.\d\d", line) for line in lines[1:])
    assert "process/pipe" in repr(r)


def test_workload_checksum_matches_numpy() -> None:
    for kb in (0, 1, 4, 16, 65):
        words = np.arange(kb * 128, dtype=np.uint64)  # 8-byte words holding their index
        assert _core.workload_checksum(kb) == int(words.sum())


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


def test_parallel_rings_report_per_ring(no_leaks: None) -> None:
    r = ctxbench.lat_ctx([2, 4], parallel=3, placement="balanced", **FAST)
    assert r.ring_us.shape == (2, 3)
    assert [c.shape for c in r.cpus] == [(3, 2), (3, 4)]
    cpus = sorted(os.sched_getaffinity(0))
    for ring, row in enumerate(r.cpus[1]):
        assert (row == cpus[ring % len(cpus)]).all()


def test_large_ring(no_leaks: None) -> None:
    r = ctxbench.lat_ctx([256], min_time=0.01, repetitions=2, warmup=0)
    assert r.cpus[0].shape == (1, 256) and r.work_verified.all()
    assert np.isfinite(r.latency_us).all()


def test_negative_points_are_kept_and_flagged() -> None:
    r = ctxbench.lat_ctx([2, 2, 2, 2], **FAST)
    assert len(r.latency_us) == 4
    np.testing.assert_array_equal(r.below_resolution, r.latency_us <= 0)
    assert len(r.to_xgraph().splitlines()) == 5


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
    ],
)
def test_bad_input_names_the_parameter(
    kwargs: dict[str, object], exc: type[Exception], param: str, no_leaks: None
) -> None:
    args = {"procs": [2], **FAST, **kwargs}
    with pytest.raises(exc, match=param):
        ctxbench.lat_ctx(**args)  # type: ignore[arg-type]


def _ring_children(want: int, deadline: float = 5.0) -> list[int]:
    """Waits until the running ring's children exist and have started."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        kids = sorted(children())
        if len(kids) >= want:
            return kids
        time.sleep(0.01)
    raise AssertionError("the ring's children never appeared")


def _while_running(action, **kwargs: object) -> BaseException | None:
    """Runs a long lat_ctx in this thread while `action` meddles from another thread."""
    errors: list[BaseException] = []
    t = threading.Thread(target=action)
    t.start()
    try:
        ctxbench.lat_ctx(**kwargs)  # type: ignore[arg-type]
    except BaseException as e:  # noqa: BLE001 - the test inspects it
        errors.append(e)
    t.join()
    return errors[0] if errors else None


def test_killed_child_raises_naming_the_participant(no_leaks: None) -> None:
    def kill_one() -> None:
        kids = _ring_children(3)
        time.sleep(0.1)
        os.kill(kids[1], signal.SIGKILL)

    e = _while_running(kill_one, procs=[4], repetitions=200, min_time=0.05)
    assert isinstance(e, RuntimeError), e
    assert "participant" in str(e) and "signal 9" in str(e)


def test_stopped_child_times_out_instead_of_hanging(no_leaks: None) -> None:
    def stop_one() -> None:
        kids = _ring_children(2)
        time.sleep(0.1)
        os.kill(kids[0], signal.SIGSTOP)

    e = _while_running(stop_one, procs=[3], repetitions=200, min_time=0.05, timeout=0.5)
    assert isinstance(e, RuntimeError), e
    assert "timeout" in str(e) and "stopped" in str(e)


def test_ctrl_c_stops_within_a_second_and_reaps(no_leaks: None) -> None:
    import _thread

    sent: list[float] = []

    def interrupt() -> None:
        _ring_children(7)
        time.sleep(0.2)
        sent.append(time.monotonic())
        _thread.interrupt_main()

    e = _while_running(interrupt, procs=[8] * 10, repetitions=100, min_time=0.05)
    assert isinstance(e, KeyboardInterrupt), e
    # A liveness bound, not a speed test: a repetition is 0.05 s, so "about a second" has
    # a wide margin even on a loaded VM.
    assert time.monotonic() - sent[0] < 3.0


def _in_child(code: str) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a fresh interpreter, so lowered limits stay there."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_descriptor_limit_gives_oserror_with_hint() -> None:
    p = _in_child(
        "import resource, ctxbench\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
        "try:\n"
        "    ctxbench.lat_ctx([100], min_time=0.002, repetitions=1)\n"
        "except OSError as e:\n"
        "    print('OSError', e)\n"
    )
    assert "OSError" in p.stdout and "RLIMIT_NOFILE" in p.stdout, p.stdout + p.stderr


def test_memory_limit_gives_oserror_with_hint() -> None:
    p = _in_child(
        "import resource, ctxbench\n"
        "status = open('/proc/self/status').read().splitlines()\n"
        "vm = next(int(x.split()[1]) for x in status if x.startswith('VmSize'))\n"
        "cap = (vm << 10) + (256 << 20)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (cap, cap))\n"
        "try:\n"
        "    ctxbench.lat_ctx([2], size_kb=1 << 20, min_time=0.002, repetitions=1)\n"
        "except OSError as e:\n"
        "    print('OSError', e)\n"
    )
    assert "OSError" in p.stdout and "size_kb" in p.stdout, p.stdout + p.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root is exempt from RLIMIT_NPROC")
def test_process_limit_gives_oserror_with_hint() -> None:
    p = _in_child(
        "import resource, ctxbench\n"
        "resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))\n"
        "try:\n"
        "    ctxbench.lat_ctx([8], min_time=0.002, repetitions=1)\n"
        "except OSError as e:\n"
        "    print('OSError', e)\n"
    )
    assert "OSError" in p.stdout and "ulimit -u" in p.stdout, p.stdout + p.stderr
