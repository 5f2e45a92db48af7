"""The client's side of a fleet's connection: the address checked before anything else, the
scheduler probed before Dask connects (its own handshake waits forever on a peer that accepts
and says nothing), the connection bounded in time, and a client closed quietly. One error
type for every fleet run that could not run or did not measure everything."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from . import _core
from . import grid as grids
from ._exclusive import PATIENCE
from ._format import plain
from .files import PathLike
from .frame import require

if TYPE_CHECKING:
    import pandas as pd

INSTALL = "'ctxbench[fleet]'"
# Characters of one worker-supplied string (a name, address, host, error text) kept in a
# message: a worker controls them, and one line must not bury the rest of the message.
SAID_CHARS = 200


def said(value: object) -> str:
    """What a worker or peer said (its name, address, host or error text), as it may be
    echoed: every control character escaped (``_format.plain``) and at most ``SAID_CHARS``
    characters, the cut marked. Every worker-supplied string in a fleet message, and in
    :class:`FleetError`'s ``failed`` and ``unmeasured``, goes through here."""
    text = plain(value)
    if len(text) <= SAID_CHARS:
        return text
    return f"{text[:SAID_CHARS]}... ({len(text) - SAID_CHARS} more characters)"


class FleetError(RuntimeError):
    """A fleet sweep that could not run, or did not measure every point.

    ``unmeasured`` maps a lost worker's name to the points it did not measure; ``failed`` maps
    "worker: point" to the error of a point that raised; ``frame`` is the tidy frame of what
    was measured (None when nothing ran). Every finished point is in ``out``. The message
    holds what workers and peers said (names, hosts, versions, errors), which they control:
    its control characters are escaped (``_format.plain``), so that printing it cannot move
    the cursor, retitle the terminal or hide a line; so are ``failed``'s and ``unmeasured``'s
    (``said``).
    """

    def __init__(
        self,
        message: str,
        unmeasured: dict[str, list[str]] | None = None,
        failed: dict[str, str] | None = None,
    ) -> None:
        super().__init__(plain(message))
        self.unmeasured = unmeasured or {}
        self.failed = failed or {}
        self.frame: pd.DataFrame | None = None


def check_address(scheduler: Any) -> None:
    """A scheduler address is a non-empty string without spaces, or a ``TypeError`` or
    ``ValueError`` naming ``scheduler``, at once: Dask takes "" as no address at all and
    starts a cluster of its own, which fails ten seconds later with a traceback."""
    if not isinstance(scheduler, str):
        raise TypeError(
            f"scheduler: expected an address such as tcp://127.0.0.1:8786, got "
            f"{type(scheduler).__name__} {scheduler!r}"
        )
    if not scheduler or scheduler != scheduler.strip() or " " in scheduler:
        raise ValueError(
            f"scheduler: expected an address such as tcp://127.0.0.1:8786, got {scheduler!r}"
        )


def connect(scheduler: str, timeout: float) -> Any:
    """A ``distributed.Client`` of the scheduler at ``scheduler``, within ``timeout`` seconds
    (plus Dask's own handshake, bounded too), or a :class:`FleetError` naming what answered."""
    distributed = require("distributed", "ctxbench fleet runs", install=INSTALL)
    _probe_scheduler(scheduler, timeout)
    made: list[Any] = []
    failed: list[BaseException] = []

    def attempt() -> None:
        try:
            made.append(distributed.Client(scheduler, timeout=timeout, set_as_default=False))
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            failed.append(e)

    # Dask's handshake has no deadline of its own: bound it here too.
    thread = threading.Thread(target=attempt, name="ctxbench-connect", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    if made:
        return made[0]
    why = f"{failed[0]}" if failed else "no Dask handshake came back"
    raise FleetError(f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s: {why}")


def _probe_scheduler(scheduler: str, timeout: float) -> None:
    """Raises FleetError, naming what answered, unless a Dask scheduler answers at
    ``scheduler`` (a ``tcp://`` or bare ``host:port`` address; others are left to Dask). A
    scheduler greets a new connection with its handshake at once; a web server waits for a
    request, so one is sent when nothing came, to see who it is."""
    scheme, _, rest = scheduler.rpartition("://")
    host, _, port = rest.rpartition(":")
    if scheme not in ("", "tcp") or not port.isdigit() or not host:
        return
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    except OSError as e:
        raise FleetError(
            f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s: {e}"
        ) from None
    with sock:
        greeting = _read(sock, min(deadline, time.monotonic() + timeout / 2))
        if not greeting:
            try:
                sock.sendall(f"GET / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            except OSError:
                pass
            greeting = _read(sock, deadline)
    if b"compression" in greeting and b"python" in greeting:
        return
    raise FleetError(f"{scheduler} is not a Dask scheduler: {_answer(greeting, timeout)}")


def _read(sock: socket.socket, deadline: float) -> bytes:
    """What the peer sends before ``deadline`` (up to 4 KiB), or b"" if nothing."""
    data = b""
    while len(data) < 4096:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            chunk = sock.recv(4096 - len(data))
        except OSError:  # a timeout, a reset
            break
        if not chunk:
            break
        data += chunk
        if b"compression" in data or b"\r\n\r\n" in data:
            break
    return data


def _answer(greeting: bytes, timeout: float) -> str:
    """What answered, in words."""
    if not greeting:
        return (
            f"it accepted the connection but said nothing within {timeout:g} s (a Dask "
            "scheduler greets at once)"
        )
    head, _, _ = greeting.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").splitlines()
    if lines and lines[0].startswith("HTTP/"):
        fields = (line.partition(":") for line in lines[1:])
        headers = {k.strip().lower(): v.strip() for k, _, v in fields}
        server = f", server {headers['server']}" if "server" in headers else ""
        what = f"a web server answered ({lines[0]}{server})"
        if "tornado" in headers.get("server", "").lower() or "status" in headers.get(
            "location", ""
        ):
            what += (
                "; this looks like the Dask dashboard: the scheduler listens on another "
                "port (8786 unless set otherwise)"
            )
        return what
    return f"it answered {greeting[:40]!r}, not Dask's handshake"


def close(client: Any) -> None:
    """Closes a client this sweep opened, quietly and within seconds, even when the
    scheduler is gone (its reconnection attempts would log errors and tracebacks)."""
    loggers = [logging.getLogger(n) for n in ("distributed.client", "distributed.core")]
    levels = [log.level for log in loggers]
    for log in loggers:
        log.setLevel(logging.CRITICAL)
    try:
        client.close(timeout=5)
    except Exception:  # noqa: BLE001 - closing what is already broken
        pass
    finally:
        for log, level in zip(loggers, levels):
            log.setLevel(level)


# Unmeasured points named per lost worker in an error message; all are in FleetError.unmeasured.
SHOWN = 20

# A task dispatched to a worker (a point, or a machine's matrix) must be back within
# DEADLINE_FACTOR times the core's estimate of it at its cap (a point: ``_core.ring_estimate``;
# a matrix: ``_core.matrix_plan``'s ``estimated_s`` on its machine; an estimate, which a loaded
# machine may pass, so a factor well above 1), plus its rings' ``timeout`` (a start-up may
# wait that long), plus DEADLINE_MARGIN_S: the wait for the kernel's lock
# (``_exclusive.PATIENCE``, another sweep measuring there) and a fresh interpreter's start.
# The worker's measuring process carries the deadline into the core, which past it stops,
# ends its children and fails the task (``_fleet_task``); the client gives that word
# REPORT_S more to arrive, then has the task failed: it cancels it and stops waiting, and that
# worker's other points are not measured.
DEADLINE_FACTOR = 3.0
DEADLINE_MARGIN_S = PATIENCE + 60.0
REPORT_S = 30.0


def deadline_s(estimate: float, timeout: float) -> float:
    """Seconds a worker has for a task the core estimates at ``estimate`` seconds, whose
    rings wait ``timeout`` seconds for a token: the one rule of every fleet task's deadline."""
    return DEADLINE_FACTOR * estimate + timeout + DEADLINE_MARGIN_S


def submit_pinned(
    client: Any, fn: Any, args: tuple[Any, ...], worker_address: str, seconds: float
) -> tuple[Any, tuple[float, float]]:
    """``fn(*args, seconds)`` on its designated worker alone (never another, never retried: a
    point is measured where it was asked), and when the client stops waiting for its word:
    ``seconds`` and ``REPORT_S`` more, as (monotonic time, seconds)."""
    future = client.submit(
        fn, *args, seconds,
        workers=[worker_address], allow_other_workers=False, pure=False, retries=0,
    )  # fmt: skip
    return future, (time.monotonic() + seconds + REPORT_S, seconds)


def point_deadline_s(point: grids.GridPoint) -> float:
    """Seconds a worker has for ``point`` (``deadline_s``)."""
    estimate = _core.ring_estimate(point.procs, **point.kwargs)
    return deadline_s(estimate, _core.ring_config(point.procs, **point.kwargs)["timeout"])


def late(w: dict[str, Any], what: str, seconds: float) -> str:
    """Why a task past its deadline failed, naming its worker and ``what`` it measured."""
    return (
        f"worker {said(repr(w['worker']))} ({said(w['worker_address'])}, host {said(w['host'])}) "
        f"did not return {what} within its deadline of {seconds:.0f} s "
        f"({DEADLINE_FACTOR:g} x the core's estimate of it, plus its timeout and "
        f"{DEADLINE_MARGIN_S:g} s for the lock and start-up) and {REPORT_S:g} s more; it was "
        "cancelled, and that worker's other points were not measured"
    )


def lost_scheduler(address: str, error: BaseException, measured: int, out: PathLike | None) -> str:
    """A scheduler lost mid-sweep, in one line saying what is safe."""
    why = f"{type(error).__name__}: {error}".rstrip(": ")
    if out is None:
        kept = f"{measured} points were measured and are lost (give out= to keep them)"
    else:
        kept = (
            f"the {measured} points measured before are in {out}; rerun with the same out "
            "to measure only what is missing"
        )
    return f"lost the Dask scheduler at {address} mid-sweep ({why}); {kept}"


def unfinished(
    unmeasured: dict[str, list[str]],
    failed: dict[str, str],
    designated: dict[str, dict[str, Any]],
    finished: int,
    out: PathLike | None,
    stuck: Collection[str] = (),
) -> str:
    """An unfinished fleet sweep, in one message: every worker lost (or ``stuck`` past a
    point's deadline) with the points it did not measure, every point that failed."""
    by_name = {said(w["worker"]): w for w in designated.values()}
    parts = []
    for worker, points in sorted(unmeasured.items()):
        w = by_name[worker]
        how = "ran a point past its deadline" if worker in stuck else "was lost"
        parts.append(
            f"worker {said(repr(w['worker']))} ({said(w['worker_address'])}, host "
            f"{said(w['host'])}, machine {said(w['machine'])}) {how}; "
            f"{len(points)} points not measured there: "
            + "; ".join(points[:SHOWN])
            + (f"; and {len(points) - SHOWN} more" if len(points) > SHOWN else "")
        )
    for what, error in sorted(failed.items()):
        parts.append(f"{what} failed: {error}")
    where = f" are in {out}; rerun with the same out to measure only what is missing" if out else ""
    return f"fleet sweep incomplete: {' | '.join(parts)}. The {finished} finished points{where}."


def workers_now(client: Any) -> set[str]:
    """The addresses of the workers the scheduler has now."""
    # Not client.scheduler_info(): since distributed 2025 the client's periodic refresh can
    # replace its cached copy with one listing no workers between the fetch and the return.
    return set(client.sync(client.scheduler.identity)["workers"])


def wind_down(running: Iterable[Any], bar: Any) -> None:
    """Cancels what is still queued on the cluster (after an interrupt or a lost scheduler,
    nothing may stay there) and closes the progress bar."""
    for future in running:
        try:
            future.cancel()
        except Exception:  # noqa: BLE001 - the connection may be what failed
            pass
    if bar is not None:
        bar.close()
