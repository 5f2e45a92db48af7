"""Fleet runs: the same sweep (or matrix) on every machine of a Dask cluster, one table back.

``ctxbench.sweep(..., scheduler="tcp://host:8786")`` (or ``client=`` a ``distributed.Client``)
lands here. The cluster is Dask's own (``dask scheduler`` / ``dask worker``, ``dask ssh``,
dask-jobqueue); ctxbench adds no scheduler, RPC or SSH of its own. The rules:

* **A machine is a kernel instance plus its installation**: ``machine`` is a hash of
  ``/etc/machine-id`` and the boot id (``/proc/sys/kernel/random/boot_id``), so two hosts with
  the same hostname stay apart, and so do clones of one VM image (same machine-id, different
  boot ids). The raw ids are not published: machine-id(5) asks for that.
* **One worker measures per machine**: the lowest-named worker of each machine gets that
  machine's whole grid, one point at a time (the next point is submitted when the last one is
  back); the machine's other workers stand by. Every measurement holds its kernel's lock
  (``ctxbench._exclusive``: a private ``flock``, bounded wait), so nothing else of this user
  measures on that kernel at the same moment (two fleet sweeps sharing a cluster). The kernel
  drops the lock of a process that dies; a Dask lock would outlive a killed worker.
  Different machines measure in parallel.
* **Points never move**: tasks are bound to their worker (``allow_other_workers=False``). When
  that worker leaves the cluster, the client, which watches the scheduler's worker list, gives
  up on its remaining points; the others finish, then :class:`FleetError` names the lost worker
  and what it did not measure.
* **Every task has a deadline**: a multiple of the core's estimate of it (a point's; a
  matrix's, planned on its machine) plus its timeout and a margin
  (``_fleet_client.deadline_s``). The worker's measuring process carries it into the core,
  which past it stops, ends its children and fails the task; the worker goes on. A task not
  back ``REPORT_S`` later is cancelled by the client and fails naming its worker; that
  worker's other points are not measured, the other machines finish, and
  :class:`FleetError` says so.
* **The worker does not measure in its own process**: each point runs in a fresh
  ``python -m ctxbench._fleet_task`` in a session of its own, and the worker's threads
  (event loop, heartbeats) keep off the CPUs it measures on while it does
  (``ctxbench._aside``; a record says when no CPU was left for them).
* **Every record says where and when**: the worker machine's full metadata plus ``host``,
  ``worker``, ``worker_address``, ``machine``, ``started`` and ``finished`` (UTC ISO);
  ``hostname=False`` withholds the first three with the hostname (``machine`` is a hash).
  ``out`` is resumed per machine: a point counts as done for the machine that measured it.
* **What answers must be a scheduler**: the address is probed before Dask connects (whose
  own handshake waits forever on a peer that accepts and says nothing, such as a web
  server): anything else fails within ``connect_timeout``, naming what answered. A scheduler
  lost mid-sweep ends it with one :class:`FleetError` saying which points are in ``out``.

``CTXBENCH_MACHINE_ID`` and ``CTXBENCH_BOOT_ID``, set in a worker's environment, replace the two
ids: for containers without ``/etc/machine-id``, and for tests that fake several machines on one.
The grid, its checks, the out file and a point's key are ``ctxbench.grid``'s, as for a local
sweep.
"""

from __future__ import annotations

import contextvars
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from . import _core, report, store
from . import grid as grids
from ._aside import aside, measured_cpus
from ._fleet_client import (
    INSTALL,
    REPORT_S,
    FleetError,
    check_address,
    close,
    connect,
    late,
    lost_scheduler,
    point_deadline_s,
    said,
    submit_pinned,
    unfinished,
    wind_down,
    workers_now,
)
from ._fleet_matrix import matrix_tasks
from ._format import plain
from ._progress import progress_bar
from .files import PathLike, as_frame, format_of, records_frame, save, write_records
from .frame import concat, require
from .grid import Placement
from .metadata import machine_identity
from .record import MAX_RECORD_BYTES
from .result import from_record

if TYPE_CHECKING:
    import pandas as pd

# --- on the workers ---------------------------------------------------------------------------


def _probe(dask_worker: Any) -> dict[str, Any]:
    """Who and where a worker is (``Client.run`` passes the worker)."""
    import ctxbench

    return {
        "worker": str(dask_worker.name),
        "worker_address": dask_worker.address,
        "host": socket.gethostname(),
        "version": ctxbench.__version__,
        **machine_identity(),
    }


def _measure(
    task: dict[str, Any],
    where: dict[str, str],
    version: str,
    kind: str = "ring",
    deadline: float | None = None,
) -> dict:
    """A task: measure one point (``kind`` "matrix": one matrix) in a child process, which
    holds this kernel's lock while it measures (``ctxbench._exclusive``), in a session of
    its own as a command typed in a terminal is, while this worker's threads keep off the
    CPUs it measures on (``ctxbench._aside``). The child carries ``deadline`` (seconds from
    now) into the core, which past it stops, ends its children and fails; should the child
    not end ``REPORT_S`` later, its whole session is killed here and reaped: a task the
    client gave up on never measures on (cancelling it cannot stop this thread)."""
    message = {kind: task, "parent": os.getpid(), "version": version, "deadline": deadline}
    pipe = subprocess.PIPE
    command = [sys.executable, "-m", "ctxbench._fleet_task"]
    # Started before the worker's threads move: the child keeps the worker's whole mask.
    proc = subprocess.Popen(
        command, stdin=pipe, stdout=pipe, stderr=pipe, text=True, start_new_session=True
    )
    wait = None if deadline is None else deadline + REPORT_S
    with aside(measured_cpus(task, kind, sorted(os.sched_getaffinity(0)))) as shared:
        try:
            out, err = proc.communicate(json.dumps(message), timeout=wait)
        except subprocess.TimeoutExpired:
            _end_session(proc)
            raise RuntimeError(
                f"past its deadline of {deadline:.0f} s and {REPORT_S:g} s more, the "
                "measuring process had not stopped: it and its children were killed"
            ) from None
    if proc.returncode != 0:
        lines = err.strip().splitlines()
        raise RuntimeError(f"exit status {proc.returncode}: {lines[-1] if lines else ''}")
    if len(out) > MAX_RECORD_BYTES[kind]:
        raise RuntimeError(
            f"the {kind} record is {len(out):,} bytes, more than one holds "
            f"({MAX_RECORD_BYTES[kind]:,} at most)"
        )
    rec = json.loads(out)
    rec["metadata"].update(where)
    if shared:
        report.Record(rec["warnings"]).say(report.Line("warning", shared))
    return rec


def _end_session(proc: subprocess.Popen[str]) -> None:
    """Kills the measuring process's session (it leads its own process group, which its
    ring's participants share) and reaps the process."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()


def _matrix_time(task: dict[str, Any]) -> tuple[float, float]:
    """What a matrix task costs on this worker's machine, for its deadline: the core's
    estimate of it here (``_core.matrix_plan`` on the live host, as ``_matrix.measure``
    plans it) and its rings' timeout."""
    args = dict(task)
    cpus = args.pop("cpus")
    plan = _core.matrix_plan(cpus, sysfs="/sys", **args)
    timeout = {"timeout": args["timeout"]} if args.get("timeout") is not None else {}
    return plan["estimated_s"], _core.ring_config(2, **timeout)["timeout"]


# --- on the client ----------------------------------------------------------------------------


def _check_cluster(what: str, scheduler: str | None, client: Any, **seconds: float) -> None:
    """Exactly one of ``scheduler`` (an address that can be one) and ``client``, and each of
    ``seconds`` (a wait) a positive number of seconds: else a ``ValueError`` naming it."""
    if (scheduler is None) == (client is None):
        raise ValueError(f"{what}: give exactly one of scheduler= and client=")
    if scheduler is not None:
        check_address(scheduler)
    for name, value in seconds.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"{name}: must be a number of seconds > 0, got {value!r}")


def _machines(client: Any, scheduler: str) -> tuple[dict[str, dict[str, Any]], list[dict]]:
    """The designated worker of each machine, and the workers standing by."""
    probes = client.run(_probe, on_error="return")
    if not probes:
        raise FleetError(f"no Dask workers are connected to the scheduler at {scheduler}")
    broken = {a: r for a, r in probes.items() if isinstance(r, BaseException)}
    if broken:
        raise FleetError(
            "workers could not run ctxbench (install it on every machine: pip install "
            f"{INSTALL}): "
            + "; ".join(f"{said(a)}: {said(repr(e))}" for a, e in sorted(broken.items()))
        )
    mine = _core.__version__
    other = [p for p in probes.values() if p["version"] != mine]
    if other:
        raise FleetError(
            "refusing workers whose ctxbench version differs from this client's "
            f"({mine}): "
            + "; ".join(
                f"worker {said(repr(p['worker']))} ({said(p['worker_address'])}, host "
                f"{said(p['host'])}) runs ctxbench {said(p['version'])}"
                for p in sorted(other, key=lambda p: p["worker"])
            )
        )
    designated: dict[str, dict[str, Any]] = {}
    standby = []
    for p in sorted(probes.values(), key=lambda p: (p["worker"], p["worker_address"])):
        if p["machine"] in designated:
            standby.append(p)
        else:
            designated[p["machine"]] = p
    return designated, standby


def _check_on_every_machine(
    client: Any, designated: dict[str, dict[str, Any]], points: list[grids.GridPoint]
) -> None:
    """Every point checked on the machine that will measure it (its CPUs, its memory) before
    any is measured: ``grid.check_here`` on each designated worker."""
    workers = {w["worker_address"]: w for w in designated.values()}
    found = client.run(grids.check_here, points, workers=list(workers), on_error="return")
    refused = {a: r for a, r in found.items() if r is not None}
    if refused:
        raise FleetError(
            "the grid cannot run on every machine; nothing was measured: "
            + "; ".join(
                f"worker {said(repr(workers[a]['worker']))} (host {said(workers[a]['host'])}): "
                f"{said(r)}"
                for a, r in sorted(refused.items())
            )
        )


def sweep(
    # BEGIN written by `python -m ctxbench._codegen` from grid.AXES, grid.SWEEP_OPTIONS; edit there
    procs: Sequence[int],
    sizes_kb: Sequence[int] = (0,),
    engines: Sequence[str] = ("process",),
    transports: Sequence[str | None] = (None,),
    placements: Sequence[Placement] = ("default",),
    repetitions: int | None = None,
    out: PathLike | None = None,
    progress: bool | str = True,
    # END written by `python -m ctxbench._codegen`
    *,
    scheduler: str | None = None,
    client: Any = None,
    connect_timeout: float = 5.0,
    poll: float = 0.2,
    hostname: bool = True,
    **ring_kwargs: Any,
) -> pd.DataFrame:
    """``ctxbench.sweep`` on every machine of a Dask cluster: the same grid, one tidy frame
    with ``host``, ``worker``, ``machine``, ``started`` and ``finished`` on every row.

    Give ``scheduler`` (an address; a client is opened and closed here) or ``client``. With
    ``out``, each point is written as it arrives, and points a machine already measured there
    are skipped. ``hostname=False`` writes ``metadata.HOSTNAME_WITHHELD`` for the host,
    worker and worker address of every row and record (those already in ``out`` too). Raises
    :class:`FleetError` when what answers at ``scheduler`` is no Dask scheduler or does not
    within ``connect_timeout`` seconds, when a worker runs another ctxbench version, when the
    scheduler is lost mid-sweep, or at the end when a worker was lost or a point failed (the
    rest of the fleet finishes first).
    """
    axes = grids.axes_of(locals())
    _check_cluster("fleet sweep", scheduler, client, connect_timeout=connect_timeout, poll=poll)
    require("pandas", "ctxbench.sweep")
    require("distributed", "ctxbench fleet runs", install=INSTALL)
    points = grids.grid(axes, repetitions, ring_kwargs, here=False)
    json.dumps([p.kwargs for p in points])  # the arguments must travel: fail here, not there
    if progress is not False:
        from ._host_plan import say_if_long

        say_if_long("ctxbench fleet sweep", points, " on each machine, one at a time per kernel")
    with grids.OutFile.open(out, hostname=hostname) as book:
        return _sweep(points, book, out, progress, scheduler, client, connect_timeout, poll)


def _sweep(
    points: list[grids.GridPoint],
    book: grids.OutFile,
    out: PathLike | None,
    progress: bool | str,
    scheduler: str | None,
    client: Any,
    connect_timeout: float,
    poll: float,
) -> pd.DataFrame:
    own = client is None
    if own:
        client = connect(str(scheduler), connect_timeout)
    address = str(scheduler or client.scheduler.address)
    before = len(book)
    try:
        designated, standby = _machines(client, address)
        _check_on_every_machine(client, designated, points)
        todo = {m: [p for p in points if not book.done(p.key(m))] for m in designated}
        bar = progress_bar(progress, sum(map(len, todo.values())), "ctxbench fleet")
        running: dict[Any, tuple[str, grids.GridPoint]] = {}
        due: dict[Any, tuple[float, float]] = {}  # a future's deadline: (monotonic, seconds)
        unmeasured: dict[str, list[str]] = {}
        failed: dict[str, str] = {}
        stuck: set[str] = set()
        version = _core.__version__
        arrived = threading.Event()

        def submit(machine: str) -> None:
            if not todo[machine]:
                return
            point = todo[machine].pop(0)
            w = designated[machine]
            where = {
                "host": w["host"],
                "worker": w["worker"],
                "worker_address": w["worker_address"],
                "machine": machine,
            }
            seconds = point_deadline_s(point)
            args = ({**point.kwargs, "procs": point.procs}, where, version, "ring")
            future, when = submit_pinned(client, _measure, args, w["worker_address"], seconds)
            running[future] = (machine, point)
            due[future] = when
            future.add_done_callback(lambda _: arrived.set())

        try:
            for machine in designated:
                submit(machine)
            while running:
                arrived.wait(poll)
                arrived.clear()
                for future in [f for f in running if f.done()]:
                    machine, point = running.pop(future)
                    worker = said(designated[machine]["worker"])
                    if future.status == "finished":
                        _add(book, future.result(), point, machine, failed, worker)
                    elif future.status == "error":
                        failed[f"{worker}: {point.label()}"] = said(future.exception())
                    else:  # cancelled by the scheduler: its worker is going
                        unmeasured.setdefault(worker, []).append(point.label())
                    if bar is not None:
                        bar.update(1)
                    submit(machine)
                alive = workers_now(client)
                now = time.monotonic()
                for future, (machine, point) in list(running.items()):
                    w = designated[machine]
                    worker = said(w["worker"])
                    if w["worker_address"] in alive and now <= due[future][0]:
                        continue
                    # Lost, or past its deadline (its worker's one thread may still be in it):
                    # the point and the rest are not moved to another worker (another machine).
                    running.pop(future)
                    future.cancel()
                    lost = [point, *todo[machine]]
                    todo[machine] = []
                    if w["worker_address"] in alive:
                        failed[f"{worker}: {point.label()}"] = late(
                            w, point.label(), due[future][1]
                        )
                        stuck.add(worker)
                        lost.pop(0)
                    if lost:
                        unmeasured.setdefault(worker, []).extend(p.label() for p in lost)
        finally:
            wind_down(running, bar)
    except (OSError, TimeoutError, CancelledError) as e:
        # The scheduler (or the connection to it) is gone: say what is safe, in one line.
        raise FleetError(lost_scheduler(address, e, len(book) - before, out)) from None
    finally:
        if own:
            close(client)

    done = [p.key(m) for m in designated for p in points]
    frames = [book.frame(key) for key in done if book.done(key)]
    df = concat(frames)
    df.attrs["fleet"] = {
        "scheduler": address,
        "machines": {m: w["worker"] for m, w in designated.items()},
        "standby": {w["worker"]: w["machine"] for w in standby},
    }
    if unmeasured or failed:
        error = FleetError(
            unfinished(unmeasured, failed, designated, len(frames), out, stuck), unmeasured, failed
        )
        error.frame = df
        raise error
    return df


def _add(
    book: grids.OutFile,
    rec: Any,
    point: grids.GridPoint,
    machine: str,
    failed: dict[str, str],
    worker: str,
) -> None:
    """A worker's record into ``book``, or, when it is not a good record of ``point`` on
    ``machine`` (``grid.arrived``), that point's failure, naming the field; never into out."""
    try:
        rec = grids.arrived(rec, point, machine)
    except ValueError as e:
        failed[f"{worker}: {point.label()}"] = f"its record was refused: {said(e)}"
        return
    book.add(point.key(machine), rec)
    # The client's results store keeps every machine's runs (a worker's own keeps its own).
    store.keep_quietly(from_record(rec), source="fleet")


def matrix(
    cpus: Sequence[int] | None,
    args: dict[str, Any],
    *,
    progress: bool | str = True,
    scheduler: str | None = None,
    client: Any = None,
    out: PathLike | None = None,
    connect_timeout: float = 5.0,
    poll: float = 0.2,
) -> pd.DataFrame:
    """``ctxbench.matrix`` on every machine of a Dask cluster: each machine's designated
    worker measures its own matrix (``cpus``, or every CPU it may use) under the machine's
    lock, in a fresh process, as a sweep's points are; one tidy frame comes back, every row
    naming its ``host``, ``worker`` and ``machine``. ``args`` are ``_core.matrix``'s keyword
    arguments. ``out`` receives the machines' records (.json) or the frame (.csv, .parquet),
    also when some machine failed. Raises :class:`FleetError` as ``sweep`` does, its
    ``frame`` holding the machines that finished."""
    _check_cluster("fleet matrix", scheduler, client, connect_timeout=connect_timeout, poll=poll)
    require("pandas", "ctxbench.matrix on a fleet")
    ids = None if cpus is None else grids.listed("cpus", cpus, "CPU ids")
    task = {"cpus": None if ids is None else [int(c) for c in ids], **args}
    json.dumps(task)  # the arguments must travel: fail here, not there
    own = client is None
    if own:
        client = connect(str(scheduler), connect_timeout)
    address = str(scheduler or client.scheduler.address)
    try:
        designated, _ = _machines(client, address)
        done, lost, failed = matrix_tasks(
            client, designated, task, progress, poll, _measure, _matrix_time
        )
    finally:
        if own:
            close(client)
    records = [done[m] for m in designated if m in done]
    # The client's results store keeps every machine's matrix, as it keeps their points.
    store.keep_quietly([from_record(rec) for rec in records], source="fleet")
    df = concat(records_frame([rec]) for rec in records)
    df.attrs["fleet"] = {
        "scheduler": address,
        "machines": {m: w["worker"] for m, w in designated.items()},
    }
    sink = _kept.get()
    if sink is not None:
        sink.extend(records)
    if out is not None and format_of(out).holds == "records":
        write_records(records, out)
    elif out is not None:
        save(df, out)
    if lost or failed:
        by_name = {w["worker"]: w for w in designated.values()}
        parts = [
            f"worker {said(repr(w))} ({said(by_name[w]['worker_address'])}, host "
            f"{said(by_name[w]['host'])}) was lost"
            for w in lost
        ] + [f"{what} failed: {e}" for what, e in sorted(failed.items())]
        error = FleetError(
            f"fleet matrix incomplete: {' | '.join(parts)}. {len(done)} machines finished "
            "(FleetError.frame).",
            {w: ["its matrix"] for w in lost},
            failed,
        )
        error.frame = df
        raise error
    return df


# Where fleet matrices also hand their machines' records, within ``kept()``.
_kept: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "kept", default=None
)


@contextmanager
def kept() -> Iterator[list[dict[str, Any]]]:
    """The records of every fleet matrix measured in the block, appended to the list this
    yields: a fleet matrix returns one frame, and ``ctxbench matrix --json`` prints the
    records, the document a ``.json`` out holds."""
    records: list[dict[str, Any]] = []
    token = _kept.set(records)
    try:
        yield records
    finally:
        _kept.reset(token)


def select(data: Any, who: str) -> pd.DataFrame:
    """The rows of a fleet frame (or file) measured on one machine, named by its ``machine``,
    ``worker`` or ``host`` (tried in that order): e.g. two hosts of one fleet file compared with
    ``ctxbench.compare(select(df, "a"), select(df, "b"))``."""
    df = as_frame(data)
    columns = [c for c in ("machine", "worker", "host") if c in df.columns]
    if not columns:
        raise ValueError("not a fleet run: the rows name no machine, worker or host")
    for col in columns:
        rows = df[df[col].astype(str) == who]
        if rows.empty:
            continue
        machines = sorted(rows["machine"].dropna().unique())
        if len(machines) > 1:
            raise ValueError(
                f"{col} {who!r} ran on {len(machines)} machines ({plain(', '.join(machines))}): "
                "name one of them"
            )
        return rows.reset_index(drop=True)
    known = ", ".join(sorted({str(v) for c in columns for v in df[c].dropna().unique()}))
    raise ValueError(f"no machine, worker or host is called {who!r}; known: {plain(known)}")
