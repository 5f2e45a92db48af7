"""The client's side of a fleet matrix: one task per machine on its designated worker, each
with the deadline of the core's plan of it on that machine, and the records checked as they
arrive. ``fleet`` hands in the two functions its workers run (``measure``, ``plan``): a worker
resolves them by their module, where a test's worker hook may have replaced them."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from . import _core
from ._field import show
from ._fleet_client import deadline_s, late, said, submit_pinned, wind_down, workers_now
from ._progress import progress_bar
from .record import check_arrived


def matrix_tasks(
    client: Any,
    designated: dict[str, dict[str, Any]],
    task: dict[str, Any],
    progress: bool | str,
    poll: float,
    measure: Callable[..., Any],
    plan: Callable[..., Any],
) -> tuple[dict[str, dict], list[str], dict[str, str]]:
    """One matrix task per machine, bound to its worker, each with its deadline
    (``deadline_s`` of the core's plan of it on that machine); the records back by machine,
    the workers lost and the machines whose matrix failed or passed its deadline."""
    version = _core.__version__
    failed: dict[str, str] = {}
    running: dict[Any, str] = {}
    due: dict[Any, tuple[float, float]] = {}  # a future's deadline: (monotonic, seconds)
    for machine, (estimate, timeout) in _matrix_times(
        client, designated, task, failed, plan
    ).items():
        w = designated[machine]
        where = {k: w[k] for k in ("host", "worker", "worker_address")}
        seconds = deadline_s(estimate, timeout)
        args = (task, {**where, "machine": machine}, version, "matrix")
        future, when = submit_pinned(client, measure, args, w["worker_address"], seconds)
        running[future] = machine
        due[future] = when
    done: dict[str, dict] = {}
    lost: list[str] = []
    bar = progress_bar(progress, len(running), "ctxbench fleet matrix", unit="machine")
    try:
        while running:
            finished = [f for f in running if f.done()]
            alive = workers_now(client)
            for future, machine in list(running.items()):
                w = designated[machine]
                worker = w["worker"]
                if future in finished and future.status == "finished":
                    try:
                        done[machine] = matrix_arrived(future.result(), task, machine)
                    except ValueError as e:
                        failed[f"{said(worker)}: matrix"] = f"its record was refused: {said(e)}"
                elif future in finished and future.status == "error":
                    failed[f"{said(worker)}: matrix"] = said(future.exception())
                elif future in finished or w["worker_address"] not in alive:
                    future.cancel()
                    lost.append(worker)
                elif time.monotonic() > due[future][0]:
                    future.cancel()
                    failed[f"{said(worker)}: matrix"] = late(w, "its matrix", due[future][1])
                else:
                    continue
                running.pop(future)
                if bar is not None:
                    bar.update(1)
            if running:
                time.sleep(poll)
    finally:
        wind_down(running, bar)
    return done, lost, failed


def _matrix_times(
    client: Any,
    designated: dict[str, dict[str, Any]],
    task: dict[str, Any],
    failed: dict,
    plan: Callable[..., Any],
) -> dict[str, tuple[float, float]]:
    """What the matrix costs on each machine (``_matrix_time`` on its designated worker), by
    machine; a machine whose plan was refused (its CPUs, its memory) fails into ``failed``
    and is not measured."""
    workers = {w["worker_address"]: m for m, w in designated.items()}
    found = client.run(plan, task, workers=list(workers), on_error="return")
    times = {}
    for address, machine in workers.items():
        got = found.get(address)
        if got is None or isinstance(got, BaseException):
            why = "its worker did not answer" if got is None else said(got)
            failed[f"{said(designated[machine]['worker'])}: matrix"] = f"not planned: {why}"
        else:
            times[machine] = (float(got[0]), float(got[1]))
    return times


# What a matrix task asks that its record repeats as it was asked.
_MATRIX_ASKED = ("engine", "transport", "size_kb", "repetitions", "warmup", "passes", "per_class")


def matrix_arrived(rec: Any, task: dict[str, Any], machine: str) -> dict[str, Any]:
    """A worker's matrix record, checked as ``grid.arrived`` checks a point's: the record
    (``record.check_arrived``), then that it is the matrix asked, of ``machine``."""
    check_arrived(rec, "matrix")
    asked = {k: task.get(k) for k in _MATRIX_ASKED if task.get(k) is not None}
    asked["metadata.machine"] = machine
    if task.get("cpus") is not None:
        asked["cpus"] = sorted(task["cpus"])
    have = {**rec, "metadata.machine": (rec.get("metadata") or {}).get("machine")}
    have["cpus"] = sorted(rec["cpus"])
    for name, want in asked.items():
        if have[name] != want:
            raise ValueError(f"{name}: {show(have[name])}, but the matrix asked {show(want)}")
    return rec
