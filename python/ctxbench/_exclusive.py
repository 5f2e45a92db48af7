"""One measurement at a time per kernel: two rings measured at once (threads of one process,
pytest-xdist workers, two notebooks, two fleet sweeps sharing a cluster) share the CPUs and
both read high without a word. Every measuring call holds this lock while the core runs.

The lock is an ``flock`` on a file in a directory only this user can enter (``/run/user/UID``
when the login session has one, else ``/tmp/ctxbench-UID``, created 0700 and refused when it
is anyone else's or a symlink), so another user can neither hold it nor break it by
replacing the file. The kernel drops the lock of a process that dies. Waiting is bounded
(``PATIENCE``; ``patience(0)``, the CLI's ``--no-wait``, fails at once) and never silent:
after ``QUIET`` seconds the waiter says who holds the lock and how long it has waited (on
stderr, or where ``report.saying`` sends it; the words are ``ctxbench.report``'s). Other users'
measurements are not excluded: on a shared host that is the administrator's scheduling.

The lock is this kernel's: ``metadata.machine_identity()["kernel"]``, the boot id's hash
(``$CTXBENCH_BOOT_ID`` replaces the boot id: the fleet's way of faking several machines on
one).
"""

from __future__ import annotations

import contextvars
import errno
import fcntl
import os
import stat
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import report
from .metadata import machine_identity

# Seconds a measurement waits for another to finish before it gives up, naming the holder.
PATIENCE = 600.0
# Seconds a waiter waits before it says whom it waits for.
QUIET = 1.0
# Between tries: short, so that a waiter gets in between the points of a running sweep.
_POLL = (0.001, 0.02)
# The patience of measurements that name none (``patience`` sets it for a block).
_patience: contextvars.ContextVar[float] = contextvars.ContextVar("patience", default=PATIENCE)


class MachineBusy(TimeoutError):
    """Another measurement held the kernel's lock for longer than the patience given."""


def kernel_id() -> str:
    """The kernel the lock is for (``metadata.machine_identity``)."""
    return machine_identity()["kernel"]


def not_own_directory(st: os.stat_result, closed: int = 0o077) -> str | None:
    """Why a directory whose status is ``st`` (``lstat`` or ``fstat``) is not this user's
    own, or None: not a directory (a symlink's own status is not one), another user's, or a
    mode that grants other users any of the ``closed`` bits. In a sticky directory others'
    write permission is left aside: they can add entries but not remove or replace ours."""
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory (or a symlink)"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}"
    granted = st.st_mode & closed
    if st.st_mode & stat.S_ISVTX:
        granted &= ~0o022
    if granted:
        return f"mode {stat.S_IMODE(st.st_mode):04o} lets others in"
    return None


def _private(path: Path) -> str | None:
    """Why ``path`` is not a directory only this user can use, or None."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return str(e)
    return not_own_directory(st)


def lock_dir() -> Path:
    """This user's private directory for the lock; OSError naming why there is none."""
    uid = os.geteuid()
    run = Path(f"/run/user/{uid}")
    if _private(run) is None:
        candidate = run / "ctxbench"
    else:
        candidate = Path(f"/tmp/ctxbench-{uid}")
    try:
        os.mkdir(candidate, 0o700)
    except FileExistsError:
        pass
    why = _private(candidate)
    if why is not None:
        raise OSError(errno.EACCES, f"{candidate} is not this user's private directory: {why}")
    return candidate


def _holder(fd: int) -> str:
    """Who holds the lock, from what its holder wrote and /proc (``report.holder``)."""
    try:
        text = os.pread(fd, 200, 0).decode(errors="replace").split()
        pid, since = int(text[0]), float(text[1])
    except (OSError, ValueError, IndexError):
        return report.holder(None)
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rpartition(")")[2].split()[0]
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read(4096).decode(errors="replace").split("\0")
    except (OSError, IndexError):
        return report.holder(pid, since=since)
    command = " ".join([os.path.basename(argv[0]), *argv[1:]]).strip()
    return report.holder(pid, command, state, since)


@dataclass
class Wait:
    """How long a measurement waited for the lock, and for whom (``seconds`` 0: not)."""

    seconds: float = 0.0
    holder: str = ""

    def __str__(self) -> str:
        return report.waited(self.holder, self.seconds) if self.seconds else ""


@contextmanager
def patience(seconds: float | None) -> Iterator[None]:
    """Measurements in the block wait at most ``seconds`` for the lock (0: not at all, a
    ``MachineBusy`` naming the holder at once); None leaves the patience as it is."""
    if seconds is None:
        yield
        return
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
        raise ValueError(f"patience: must be seconds >= 0, got {seconds!r}")
    token = _patience.set(float(seconds))
    try:
        yield
    finally:
        _patience.reset(token)


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _acquire(fd: int, gate: int, patience: float, path: Path) -> Wait:
    """Takes the lock on ``fd``, waiting at most ``patience`` seconds. A waiter first takes
    the gate and holds it while it waits, so that a holder which releases and takes the
    lock again at once (a sweep between points) lets the waiter in first. After ``QUIET``
    seconds it says whom it waits for (to ``report.current()``): to a live terminal every
    second, elsewhere at 1, 2, 4, 8, ... seconds."""
    start = time.monotonic()
    pause = _POLL[0]
    gated = False
    wait = Wait()
    next_word = QUIET
    to = report.current()
    try:
        while True:
            gated = gated or _try(gate)
            if gated and _try(fd):
                if wait.holder:
                    wait.seconds = time.monotonic() - start
                    to.wait(report.Line("wait", str(wait)), True)
                return wait
            waited = time.monotonic() - start
            if waited >= patience:
                raise MachineBusy(errno.ETIMEDOUT, report.busy(_holder(fd), path, patience))
            if waited >= next_word:
                wait.holder = _holder(fd)
                to.wait(report.Line("wait", report.waiting(wait.holder, waited)), False)
                next_word = waited + 1.0 if to.live else 2 * next_word
            time.sleep(min(pause, max(0.0, next_word - waited)))  # Ctrl-C raises here
            pause = min(2 * pause, _POLL[1])
    finally:
        if gated:
            fcntl.flock(gate, fcntl.LOCK_UN)


# Measurements of this process that hold the lock now, per thread: a measuring call made
# while this thread already holds it (a callback, a nested sweep) must not wait for itself.
_held = threading.local()


@contextmanager
def measuring(patience: float | None = None) -> Iterator[Wait]:
    """Holds this kernel's measuring lock for the block (see the module's docstring),
    waiting at most ``patience`` seconds for it (None: what ``patience()`` set, else
    ``PATIENCE``). Yields how long it waited, and for whom."""
    if getattr(_held, "depth", 0):
        _held.depth += 1
        try:
            yield Wait()
        finally:
            _held.depth -= 1
        return
    try:
        directory = lock_dir()
        path = directory / f"kernel-{kernel_id()}.lock"
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, 0o600)
    except OSError as e:
        warnings.warn(
            f"ctxbench: measuring without the machine lock ({e}); another measurement at "
            "the same time would make both read high",
            UserWarning,
            stacklevel=3,
        )
        yield Wait()
        return
    gate = -1
    try:
        gate = os.open(directory / f"kernel-{kernel_id()}.gate", flags, 0o600)
        wait = _acquire(fd, gate, _patience.get() if patience is None else patience, path)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {time.time():.0f}\n".encode(), 0)
        _held.depth = 1
        try:
            yield wait
        finally:
            _held.depth = 0
    finally:
        if gate >= 0:
            os.close(gate)
        os.close(fd)  # releases the lock
