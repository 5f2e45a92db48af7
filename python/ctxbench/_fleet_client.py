"""The client's side of a fleet's connection: the address checked before anything else, the
scheduler probed before Dask connects (its own handshake waits forever on a peer that accepts
and says nothing), the connection bounded in time, and a client closed quietly. One error
type for every fleet run that could not run or did not measure everything."""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from ._format import plain
from .frame import require

if TYPE_CHECKING:
    import pandas as pd

INSTALL = "'ctxbench[fleet]'"


class FleetError(RuntimeError):
    """A fleet sweep that could not run, or did not measure every point.

    ``unmeasured`` maps a lost worker's name to the points it did not measure; ``failed`` maps
    "worker: point" to the error of a point that raised; ``frame`` is the tidy frame of what
    was measured (None when nothing ran). Every finished point is in ``out``. The message
    holds what workers and peers said (names, hosts, versions, errors), which they control:
    its control characters are escaped (``_format.plain``), so that printing it cannot move
    the cursor, retitle the terminal or hide a line.
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
