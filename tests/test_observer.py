"""Who watches the timed repetitions: the kernel's accounting at their edges by default, perf
in untimed evidence repetitions or (asked for) through the timed ones; no perf event of ours
on the timed path, and none in the second after one closed."""

from __future__ import annotations

import os
import threading
import time
from typing import Callable

import numpy as np
import pytest

import ctxbench

PINNED = {"placement": "single", "repetitions": 6, "min_time": 0.005, "warmup": 0}


def _perf_fds() -> int:
    """perf events this process holds open now."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[perf_event]"
        except OSError:
            pass
    return n


def _most_perf_fds_while(run: Callable[[], object]) -> int:
    """The most perf events this process held at once while ``run`` ran (sampled)."""
    seen, done = [0], threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen[0] = max(seen[0], _perf_fds())
            time.sleep(0.0005)

    t = threading.Thread(target=watch)
    t.start()
    try:
        run()
    finally:
        done.set()
        t.join()
    return seen[0]


def test_the_observer_stays_off_the_timed_path() -> None:
    # A perf event on any task makes the kernel run its hooks at every switch: "off" never
    # opens one, and "evidence" opens one only where hardware counters are there to read.
    off = _most_perf_fds_while(lambda: ctxbench.lat_ctx([2, 4], counters="off", **PINNED))
    assert off == 0
    r = ctxbench.lat_ctx([2], **PINNED)
    if r.hardware["cycles_per_switch"] is None:
        assert _most_perf_fds_while(lambda: ctxbench.lat_ctx([2, 4], **PINNED)) == 0
    assert (r.switches_per_hop >= 0.95).all() and r.switch_source == ["kernel"]


def test_timed_counters_are_attached_through_the_timed_repetitions() -> None:
    seen = _most_perf_fds_while(lambda: ctxbench.lat_ctx([2], counters="timed", **PINNED))
    r = ctxbench.lat_ctx([2], counters="timed", **PINNED)
    assert r.counters == "timed"
    if r.counters_unavailable_reason is None:  # perf permitted here
        assert seen > 0
        # The next run waited for the kernel's hooks to go off before timing anything.
        after = ctxbench.lat_ctx([2], counters="off", **PINNED)
        assert after.phase_s["observer_wait"][0] > 0


def test_counters_must_be_named() -> None:
    with pytest.raises(ValueError, match=r"counters.*\"evidence\", \"off\", \"timed\""):
        ctxbench.ring([2], counters="on", **PINNED)
    with pytest.raises(ValueError, match="counters"):
        ctxbench.pingpong(counters="perf", max_time=0.01)


# CPU time per hop: the kernel's accounting of every observed task over the timed windows.
CPU_FIELDS = ("cpu_us_per_hop", "cpu_user_us_per_hop", "cpu_sys_us_per_hop", "runq_wait_us_per_hop")


def test_cpu_time_and_wait_per_hop_are_reported_per_point() -> None:
    r = ctxbench.ring([2, 3], **PINNED)
    for name in CPU_FIELDS:
        v = getattr(r, name)
        assert v.dtype == np.float64 and v.shape == (2,), name
        assert np.isfinite(v).all() and (v >= 0).all(), (name, v)
    # A hop moves the token through the kernel: some CPU time is spent on every one.
    assert (r.cpu_us_per_hop > 0).all(), r.cpu_us_per_hop
    frame = r.to_frame()
    for name in CPU_FIELDS:
        assert (frame.groupby("procs")[name].first().to_numpy() == getattr(r, name)).all()


def test_system_time_says_where_a_hop_is_spent() -> None:
    # Enough timed CPU time for the clock ticks that split it (100 a second) to show: a fiber
    # switches in user space, a pipe's hop is spent in the kernel. The measuring thread's
    # split follows its whole life's (the kernel scales its tick samples to its runtime), so
    # compare the system shares, not each split against its own user time.
    long = {**PINNED, "min_time": 0.05}
    fiber = ctxbench.ring([2], engine="fiber", **long)
    pipe = ctxbench.ring([2], engine="process", transport="pipe", **long)

    def system_share(r: ctxbench.RingResult) -> float:
        sys_us, user_us = r.cpu_sys_us_per_hop[0], r.cpu_user_us_per_hop[0]
        return float(sys_us / (sys_us + user_us))

    assert system_share(pipe) > system_share(fiber), (
        pipe.cpu_sys_us_per_hop,
        fiber.cpu_sys_us_per_hop,
    )
