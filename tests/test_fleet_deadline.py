"""Every fleet task has a deadline, and a task past it stops where it runs: a matrix task's
deadline (from the core's plan of it on its machine), and a point whose ring hangs on the
worker, stopped there by the core with no process of it left."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import FLEET_GRID
from dask_cluster import Cluster, process_tree

import ctxbench
from ctxbench import _fleet_client, _fleet_matrix, fleet

pytestmark = pytest.mark.slow

distributed = pytest.importorskip(
    "distributed", reason="fleet runs need distributed: pip install 'ctxbench[fleet]'"
)


def in_thread(run: Any) -> list[BaseException]:
    """What ``run()`` raised, run on a thread given far more than any deadline here: the old
    client waited forever."""
    raised: list[BaseException] = []

    def catching() -> None:
        try:
            run()
        except BaseException as e:  # noqa: BLE001 - inspected by the caller
            raised.append(e)

    thread = threading.Thread(target=catching, daemon=True)
    thread.start()
    thread.join(300)
    assert not thread.is_alive(), "the run still waits for a task that never returns"
    return raised


# A worker whose matrix task never returns.
NEVER = """
import time
import ctxbench.fleet as fleet
real = fleet.__dict__.setdefault("_real_measure", fleet._measure)
def _measure(task, where, version, kind="ring", deadline=None):
    if kind == "matrix":
        time.sleep(3600)
    return real(task, where, version, kind, deadline)
fleet._measure = _measure
"""


def test_a_matrix_past_its_deadline_fails_naming_its_worker(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preload = tmp_path / "never.py"
    preload.write_text(NEVER)
    cluster.start_workers({"m1": {}}, "--preload", str(preload))
    # Small margins on the client, which keeps the deadline: the matrix's timeout is in it.
    monkeypatch.setattr(_fleet_client, "DEADLINE_MARGIN_S", 5.0)
    monkeypatch.setattr(_fleet_client, "REPORT_S", 5.0)
    asked: list[tuple[float, float]] = []
    rule = _fleet_client.deadline_s
    monkeypatch.setattr(_fleet_matrix, "deadline_s", lambda *a: asked.append(a) or rule(*a))
    cpus = sorted(os.sched_getaffinity(0))[:2]
    quick = {"repetitions": 1, "min_time": 0.001, "warmup": 0, "progress": False}
    raised = in_thread(lambda: ctxbench.matrix(cpus, scheduler=cluster.address, **quick))
    assert len(raised) == 1 and isinstance(raised[0], fleet.FleetError), raised
    error = raised[0]
    assert list(error.failed) == ["m1: matrix"], error.failed
    assert "'m1'" in error.failed["m1: matrix"] and "deadline" in error.failed["m1: matrix"]
    # The deadline came from the core's plan of this matrix on the worker's machine.
    plan = ctxbench.matrix_plan(cpus, repetitions=1, min_time=0.001, warmup=0)
    ((estimate, timeout),) = asked
    assert estimate == pytest.approx(plan["estimated_s"]) and timeout == 10.0


# The measuring process's children (its ring's participants) stopped as the 4 KiB point
# starts, and its rings told to wait for a token an hour: the point hangs on the worker.
HANG = """
import os, signal, threading, time
from pathlib import Path
import ctxbench.fleet as fleet
real = fleet.__dict__.setdefault("_real_measure", fleet._measure)

def children(pid):
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return found

def stop_participants():
    # Only the 4 KiB point's: the first measuring process this worker starts from here.
    end, measuring = time.monotonic() + 60, None
    while time.monotonic() < end:
        if measuring is None:
            measuring = min(children(os.getpid()), default=None)
        elif not Path(f"/proc/{measuring}").exists():
            return
        elif participants := children(measuring):
            for p in participants:
                os.kill(p, signal.SIGSTOP)
            return
        time.sleep(0.001)

def _measure(task, where, version, kind="ring", deadline=None):
    if task.get("size_kb") == 4:
        # Long enough that its participants are surely found and stopped, and past the
        # deadline even if they were not: the point asked for 3 repetitions, and on a quiet
        # machine it ended before they were seen (CI rehearsal at load 0.5).
        task = {**task, "timeout": 3600, "repetitions": 10_000}
        threading.Thread(target=stop_participants, daemon=True).start()
    return real(task, where, version, kind, deadline)
fleet._measure = _measure
"""


def test_a_point_hung_on_the_worker_is_stopped_there_and_leaves_no_process(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preload = tmp_path / "hang.py"
    preload.write_text(HANG)
    cluster.start_workers({"w1": {}}, "--preload", str(preload))
    worker = cluster.procs["w1"].pid
    monkeypatch.setattr(_fleet_client, "DEADLINE_MARGIN_S", 15.0)
    out = tmp_path / "fleet.json"
    raised = in_thread(
        lambda: ctxbench.sweep(sizes_kb=[4, 8], out=out, scheduler=cluster.address, **FLEET_GRID)
    )
    assert len(raised) == 1 and isinstance(raised[0], fleet.FleetError), raised
    error = raised[0]
    (what,) = [w for w in error.failed if w.startswith("w1: process/pipe single size=4k")]
    # The worker's own word: the core stopped the point at its deadline; the client did not
    # have to give up on it, so the worker went on to the next point (measured, or failed
    # by its own deadline where the load and the lock ate it: never left unmeasured).
    assert "past its deadline" in error.failed[what], error.failed
    assert "processes ended" in error.failed[what], error.failed
    assert not error.unmeasured, error.unmeasured
    sizes = [r["size_kb"] for r in json.loads(out.read_text())["results"]]
    assert sizes == [8] or "past its deadline" in str(error.failed), error.failed
    # No process of the hung point is left: not the measuring process, not a participant
    # (killed here if they are: a stopped one would hold the kernel's lock for good).
    left = process_tree({worker}) - {worker}
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left
