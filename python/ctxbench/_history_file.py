"""Where the run history lives, and its file opened so that nothing in the way can make a
run touch another file, wait for ever, or read without bound.

The directory is ``$CTXBENCH_HISTORY`` (``off`` and the like: none; ``~`` expanded as a shell
would; an absolute path to a directory that exists: a place named there is never created),
else ``$XDG_CACHE_HOME/ctxbench`` (an absolute path, as the XDG spec asks), else
``.cache/ctxbench`` in the home directory (``$HOME`` when it names an existing directory
other than ``/``, else the password entry's), created where missing. It must be the
history's own: this user's directory, not a symlink, not writable by any other user (sticky
or not: ``/tmp`` and ``/dev/shm`` are everyone's), holding nothing but history files (``/``,
``/sys/fs/cgroup``, ``~/.ssh`` or a home directory are not a history's), its name printable
(a path with control characters is refused, and shown with them escaped). The file in it is
this user's own regular file with one link, opened without following a symlink and without
blocking (a FIFO), checked on the open descriptor. Anything else is ``NoHistory``, naming the
path and why.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import pwd
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from ._exclusive import not_own_directory
from ._format import plain

ENV = "CTXBENCH_HISTORY"
OFF = ("off", "0", "no", "false", "")
# A file is read from its newest this many bytes at most; past them it is cut back to the
# newest KEEP_BYTES of its lines at its next write, so that no run reads more.
MAX_BYTES = 4 << 20
KEEP_BYTES = MAX_BYTES // 2
# Seconds a run waits for another run's hold on the file before it goes without history.
PATIENCE_S = 2.0


def name(machine: str) -> str:
    """The history file of ``machine`` (a hash of the machine and build)."""
    return f"{_PREFIX}{machine}{_SUFFIX}"


_PREFIX, _SUFFIX = "runs-", ".jsonl"


class NoHistory(OSError):
    """There is no usable history here; the message names the path and why."""


def directory() -> Path | None:
    """The history's directory, None when ``$CTXBENCH_HISTORY`` turns it off; NoHistory
    when it names no place a history may be (see the module), or there is no home directory
    to put it in."""
    where = os.environ.get(ENV)
    if where is not None:
        if where.strip().lower() in OFF:
            return None
        path = os.path.expanduser(where)
        if not os.path.isabs(path):
            raise NoHistory(
                errno.EINVAL,
                f"${ENV}={plain(where)!r}: not an absolute path (a relative one would move "
                "with the working directory)",
            )
        return _printable(Path(path))
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return _printable(Path(xdg) / "ctxbench")
    return _printable(Path(_home()) / ".cache" / "ctxbench")


def _printable(path: Path) -> Path:
    if not str(path).isprintable():
        raise NoHistory(
            errno.EINVAL,
            f"{plain(path)}: a path with control characters (shown escaped): name another",
        )
    return path


def _chosen() -> bool:
    """Whether the directory is the one ``$CTXBENCH_HISTORY`` names (never created)."""
    return os.environ.get(ENV) is not None


def _home() -> str:
    """$HOME, else the password entry's home: an existing directory other than ``/`` (where
    a service without a home would otherwise leave ``/.cache``)."""
    try:
        entry = pwd.getpwuid(os.geteuid()).pw_dir
    except KeyError:
        entry = ""
    for home in (os.environ.get("HOME", ""), entry):
        if os.path.isabs(home) and os.path.realpath(home) != "/" and os.path.isdir(home):
            return home
    raise NoHistory(
        errno.ENOENT,
        f"no home directory ($HOME={os.environ.get('HOME')!r}, the password entry's "
        f"{entry!r}): set ${ENV} to a directory of yours, or to off",
    )


def _open_directory(path: Path, create: bool) -> int | None:
    """A descriptor of ``path`` checked as the module says; None when it does not exist and
    ``create`` is false (and the directory is not ``$CTXBENCH_HISTORY``'s)."""
    if create and not _chosen():
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as e:
            raise NoHistory(e.errno, f"{path}: cannot be created ({e.strerror})") from None
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        if _chosen():
            raise NoHistory(
                errno.ENOENT,
                f"${ENV}={path}: no such directory (one named there is not created: "
                f"mkdir -m 700 {path}, or leave ${ENV} unset for the default)",
            ) from None
        if create:
            raise
        return None
    except OSError as e:
        why = "a symlink" if path.is_symlink() else e.strerror
        raise NoHistory(e.errno, f"{path}: {why}") from None
    why = _not_the_historys(fd)
    if why is not None:
        os.close(fd)
        raise NoHistory(errno.EACCES, f"{path}: not a directory of the history's own: {why}")
    return fd


def _not_the_historys(fd: int) -> str | None:
    """Why the directory ``fd`` is no place for the history (see the module), or None."""
    st = os.fstat(fd)
    why = not_own_directory(st, closed=0o022)
    if why is None and st.st_mode & 0o022:
        why = f"mode {stat.S_IMODE(st.st_mode):04o} lets others write in it (sticky or not)"
    if why is not None:
        return why
    others = [n for n in os.listdir(fd) if not (n.startswith(_PREFIX) and n.endswith(_SUFFIX))]
    if others:
        shown = ", ".join(repr(plain(n)) for n in sorted(others)[:3])
        return (
            f"it holds {len(others)} {'entry' if len(others) == 1 else 'entries'} that "
            f"are no history files ({shown}"
            f"{', ...' if len(others) > 3 else ''}): name a directory of its own"
        )
    return None


def _open_file(directory_fd: int, path: Path, write: bool) -> int | None:
    """A descriptor of the history file ``path`` (in ``directory_fd``) checked as the module
    says, made 0600 when it is ours but open to others; None when it does not exist and
    ``write`` is false."""
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    flags |= os.O_RDWR | os.O_CREAT if write else os.O_RDONLY
    try:
        fd = os.open(path.name, flags, 0o600, dir_fd=directory_fd)
    except FileNotFoundError:
        return None
    except OSError as e:
        why = "a symlink" if e.errno == errno.ELOOP else e.strerror
        raise NoHistory(e.errno, f"{path}: {why}") from None
    st = os.fstat(fd)
    why = (
        "not a regular file" if not stat.S_ISREG(st.st_mode)
        else f"owned by uid {st.st_uid}" if st.st_uid != os.geteuid()
        else f"{st.st_nlink} hard links" if st.st_nlink != 1
        else None
    )  # fmt: skip
    if why is not None:
        os.close(fd)
        raise NoHistory(errno.EACCES, f"{path}: {why}")
    if stat.S_IMODE(st.st_mode) != 0o600:
        os.fchmod(fd, 0o600)
    return fd


def _lock(fd: int, path: Path, exclusive: bool) -> None:
    """Holds ``fd``'s flock, waiting at most PATIENCE_S for another run's hold on it."""
    deadline = time.monotonic() + PATIENCE_S
    while True:
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise NoHistory(
                    errno.EWOULDBLOCK, f"{path}: held by another run for {PATIENCE_S:g} s"
                ) from None
            time.sleep(0.01)


@contextlib.contextmanager
def opened(path: Path, write: bool) -> Iterator[int | None]:
    """The history file at ``path``, checked and locked (exclusively to write); None when
    reading and there is none yet."""
    directory_fd = _open_directory(path.parent, create=write)
    if directory_fd is None:
        yield None
        return
    fd = None
    try:
        fd = _open_file(directory_fd, path, write)
        if fd is not None:
            _lock(fd, path, exclusive=write)
        yield fd
    finally:
        if fd is not None:
            os.close(fd)
        os.close(directory_fd)


def newest(fd: int) -> tuple[list[bytes], bool]:
    """The file's lines (without their newlines) from its newest MAX_BYTES; and whether that
    cut a line, which is then its first, known to have been longer than what is left."""
    size = os.fstat(fd).st_size
    start = max(0, size - MAX_BYTES)
    chunks = []
    at = start
    while at < size:
        chunk = os.pread(fd, size - at, at)
        if not chunk:
            break
        chunks.append(chunk)
        at += len(chunk)
    lines = b"".join(chunks).split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the newline ending the last line
    return lines, start > 0


def rewrite(fd: int, lines: list[bytes]) -> None:
    """The file holds ``lines`` and nothing else."""
    os.ftruncate(fd, 0)
    _write_at(fd, b"".join(line + b"\n" for line in lines), 0)


def append(fd: int, lines: list[bytes]) -> None:
    _write_at(fd, b"".join(line + b"\n" for line in lines), os.fstat(fd).st_size)


def _write_at(fd: int, data: bytes, at: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, at)
        view, at = view[n:], at + n


def remove_all(path: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Removes every history file (``name``) of this user's in the directory ``path``,
    checked as the module says, whatever it is (a FIFO or a link at that name is no history
    either, and would stop the next run using one: the name goes, never what a link names);
    the paths removed, and those left with why (another user's, a directory)."""
    directory_fd = _open_directory(path, create=False)
    if directory_fd is None:
        return [], []
    removed, left = [], []
    try:
        for entry in sorted(os.listdir(directory_fd)):
            if not (entry.startswith(_PREFIX) and entry.endswith(_SUFFIX)):
                continue
            st = os.stat(entry, dir_fd=directory_fd, follow_symlinks=False)
            if st.st_uid != os.geteuid():
                left.append((path / entry, f"uid {st.st_uid}'s, not this user's"))
            elif stat.S_ISDIR(st.st_mode):
                left.append((path / entry, "a directory"))
            else:
                os.unlink(entry, dir_fd=directory_fd)
                removed.append(path / entry)
    finally:
        os.close(directory_fd)
    return removed, left
