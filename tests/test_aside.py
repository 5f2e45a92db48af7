"""A Dask worker's own threads keep off the CPUs a fleet point measures on (``_aside``), and
a record says so where no CPU was left for them. The worker here is this test process:
``fleet._measure`` is what a worker runs for a task."""

from __future__ import annotations

import os
import threading
import time

import pytest
from conftest import FAST

import ctxbench
from ctxbench import _aside, _core, fleet

ALLOWED = sorted(os.sched_getaffinity(0))
two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs two CPUs to keep one free")


def masks() -> dict[int, set[int]]:
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            out[int(tid)] = os.sched_getaffinity(int(tid))
        except OSError:
            continue
    return out


def test_the_measured_cpus_are_the_placements() -> None:
    first = ALLOWED[0]
    assert _aside.measured_cpus({"placement": "single"}, "ring", ALLOWED) == {first}
    last = ALLOWED[-1]
    assert _aside.measured_cpus({"placement": "single", "cpu": last}, "ring", ALLOWED) == {last}
    assert _aside.measured_cpus({"placement": [last, first]}, "ring", ALLOWED) == {first, last}
    # A placement the ring will refuse (a CPU outside the mask): every CPU kept clear.
    outside = {"placement": "single", "cpu": _core.MAX_CPUS - 1}
    assert _aside.measured_cpus(outside, "ring", ALLOWED) == set(ALLOWED)
    for spread in ("default", "spread"):
        assert _aside.measured_cpus({"placement": spread}, "ring", ALLOWED) == set(ALLOWED)
    # balanced puts each of the parallel rings on a CPU of its own.
    assert _aside.measured_cpus({"placement": "balanced"}, "ring", ALLOWED) == {first}
    both = {"placement": "balanced", "parallel": len(ALLOWED)}
    assert _aside.measured_cpus(both, "ring", ALLOWED) == set(ALLOWED)
    assert _aside.measured_cpus({"cpus": None}, "matrix", ALLOWED) == set(ALLOWED)
    assert _aside.measured_cpus({"cpus": [first]}, "matrix", ALLOWED) == {first}


@two_cpus
def test_every_thread_keeps_off_the_measured_cpu_and_gets_its_mask_back() -> None:
    stop = threading.Event()
    others = [threading.Thread(target=stop.wait) for _ in range(3)]
    for t in others:
        t.start()
    try:
        before = masks()
        measured = {ALLOWED[0]}
        with _aside.aside(measured) as shared:
            assert shared == ""
            during = masks()
            assert set(before) <= set(during)
            assert all(not (mask & measured) for mask in during.values()), during
        assert masks() == before
    finally:
        stop.set()
        for t in others:
            t.join()


def test_with_no_cpu_to_spare_the_threads_stay_and_it_is_said() -> None:
    before = masks()
    with _aside.aside(set(ALLOWED)) as shared:
        assert masks() == before
    assert shared.startswith("the Dask worker's own threads (event loop, heartbeats) may have")
    assert f"all {len(ALLOWED)} CPUs this worker may run on" in shared


@two_cpus
def test_a_fleet_task_measures_with_the_worker_off_its_cpu() -> None:
    """What a worker runs for a point: the child measures on the single CPU while every
    thread of the worker is elsewhere; the record says nothing of sharing."""
    seen: list[dict[int, set[int]]] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            children = [p for p in os.listdir("/proc") if p.isdigit() and _child(int(p))]
            if children:
                sample = masks()
                # Kept only if the task was still there after: then the masks were read before
                # it was reaped and the threads put back (a loaded machine can stall this
                # thread between the two reads).
                if any(_child(int(p)) for p in children):
                    seen.append(sample)
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    before = {tid: m for tid, m in masks().items() if tid != watcher.native_id}
    try:
        point = {"procs": [2], "placement": "single", "min_time": 0.02, "repetitions": 20}
        rec = fleet._measure(point, {}, ctxbench.__version__)
    finally:
        done.set()
        watcher.join()
    assert rec["cpus"] == [[[ALLOWED[0], ALLOWED[0]]]]
    assert not any("Dask worker" in w for w in rec["warnings"])
    # The child starts with the worker's whole mask, a moment before the threads move (it
    # must keep all of it): from the first sample with them moved, they stay moved.
    off = [all(ALLOWED[0] not in m for m in sample.values()) for sample in seen]
    assert True in off, seen
    assert all(off[off.index(True) :]), seen
    # Every thread that was there before and still is has its mask back; one that ended
    # meanwhile (a thread an earlier test left winding down) has none to compare.
    after = masks()
    assert {t: m for t, m in after.items() if t in before} == {
        t: m for t, m in before.items() if t in after
    }


def test_an_unpinned_fleet_task_says_the_worker_shared_its_cpus() -> None:
    rec = fleet._measure({"procs": [2], "placement": "default", **FAST}, {}, ctxbench.__version__)
    (said,) = [w for w in rec["warnings"] if "Dask worker" in w]
    assert "may have run on the measured CPUs" in said


def _child(pid: int) -> bool:
    """Whether ``pid`` is a child of this process (the fleet task)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1]) == os.getpid()
    except (OSError, ValueError, IndexError):
        return False
