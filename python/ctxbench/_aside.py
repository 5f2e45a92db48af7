"""A Dask worker's own threads kept off the CPUs a fleet point measures on.

The point runs in a child process (``ctxbench._fleet_task``), but the worker stays alive
beside it: an idle worker's event loop wakes about 120 times a second (the profiler's 10 ms
trigger, heartbeats to the scheduler, the system monitor) for about 5 % of a CPU, and the
kernel puts it on any CPU the worker may use, the measured one among them, where each wake-up
preempts the ring. While the
child measures, ``aside`` pins every thread of the worker to the CPUs the point does not use,
and gives each back its own mask after. Where the point uses every CPU the worker may (an
unpinned placement, a matrix, a one-CPU machine) nothing is left to move them to, and the
record says so instead (``shared``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from . import _core

# What a record says when the worker's threads could not be kept off the measured CPUs.
SHARED = (
    "the Dask worker's own threads (event loop, heartbeats) may have run on the measured "
    "CPUs {cpus}: {why}"
)


def measured_cpus(task: dict[str, Any], kind: str, allowed: Sequence[int]) -> set[int]:
    """The CPUs a fleet task's participants may run on: a matrix's ``cpus``, a ring's as the
    core places it (``_core.placement_cpus``); every allowed CPU where the scheduler decides,
    or where the task's placement is one the measurement will refuse with its own error."""
    every = set(allowed)
    if kind == "matrix":
        cpus = task.get("cpus")
        return set(cpus) & every if cpus else every
    procs = task.get("procs", 2)
    most = max(procs) if isinstance(procs, (list, tuple)) and procs else procs
    try:
        placed = _core.placement_cpus(
            task.get("placement"), task.get("cpu"), int(most), int(task.get("parallel", 1))
        )
        return set(placed)
    except (TypeError, ValueError, OverflowError):
        return every


def _threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [0]


@contextmanager
def aside(measured: set[int]) -> Iterator[str]:
    """Every thread of this process on the allowed CPUs outside ``measured`` for the block,
    each back on its own mask after (a thread started meanwhile: on the process's first).
    Yields "" when done, else what ``SHARED`` says of it."""
    allowed = sorted(os.sched_getaffinity(0))
    spare = set(allowed) - measured
    cpus = ",".join(map(str, sorted(measured)))
    if not spare:
        why = f"the point uses all {len(allowed)} CPUs this worker may run on"
        yield SHARED.format(cpus=cpus, why=why)
        return
    saved: dict[int, set[int]] = {}
    for tid in _threads():
        try:
            saved[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, spare)
        except OSError:  # a thread that ended meanwhile
            continue
    try:
        yield ""
    finally:
        first = next(iter(saved.values()), set(allowed))
        for tid in _threads():
            try:
                os.sched_setaffinity(tid, saved.get(tid, first))
            except OSError:
                continue
