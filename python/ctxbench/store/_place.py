"""Where the results store lives, and its file opened only where nothing in the way can make
ctxbench write another file or read one that is not the store's.

The file is ``--store PATH`` (the CLI sets ``$CTXBENCH_STORE``), else ``$CTXBENCH_STORE``
(``off`` and the like: no store; ``~`` expanded as a shell would), else
``$XDG_DATA_HOME/ctxbench/store.sqlite3`` (an absolute ``$XDG_DATA_HOME``, as the XDG spec
asks), else ``~/.local/share/ctxbench/store.sqlite3``; the default's directory is created
(mode 0700) where missing, a named one never is.

The rules are the run history's and the result files' (``_safe_path``, one home): nothing on
the way is a link another user planted, and the store's directory is this user's own, which
no other user may write (sticky or not: in ``/tmp`` anyone could put a link at the name of
the store's journal, ``-wal`` or ``-shm``, before SQLite creates it). The store and its
companions are this user's regular files, never links. A store refused is a ``StoreRefused``
naming the path and why.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .._exclusive import not_own_directory
from .._format import plain
from .._history_file import _home
from .._safe_path import why_unsafe_to_write

ENV = "CTXBENCH_STORE"
OFF = ("off", "0", "no", "false", "none")
NAME = "store.sqlite3"
# The files SQLite keeps beside the store (WAL mode: the log and the shared-memory index;
# the rollback journal while it migrates from an older mode).
COMPANIONS = ("-wal", "-shm", "-journal")


class StoreRefused(OSError):
    """The store at a path is not usable: the message names the path and why."""


def is_off(text: str) -> bool:
    return text.strip().lower() in OFF


def default_path() -> Path | None:
    """The store's file (see the module); None when ``$CTXBENCH_STORE`` turns it off.
    ``StoreRefused`` when it names no usable path or there is no home to put it in."""
    where = os.environ.get(ENV)
    if where is not None:
        return None if is_off(where) else named(where)
    xdg = os.environ.get("XDG_DATA_HOME", "")
    if os.path.isabs(xdg):
        return _printable(Path(xdg) / "ctxbench" / NAME)
    try:
        home = _home()
    except OSError as e:
        raise StoreRefused(errno.ENOENT, f"no store: {e.strerror}") from None
    return _printable(Path(home) / ".local" / "share" / "ctxbench" / NAME)


def named(where: str | os.PathLike[str]) -> Path:
    """The store a user named (``--store``, ``$CTXBENCH_STORE``): ``~`` expanded, a relative
    path taken from the working directory now (so that it does not move later)."""
    text = os.path.expanduser(os.fspath(where))
    if not text.strip():
        raise StoreRefused(errno.EINVAL, f"${ENV}: an empty path (off turns the store off)")
    return _printable(Path(os.path.abspath(text)))


def is_default(path: Path) -> bool:
    """Whether ``path`` is the store no one named (its directory is created where missing)."""
    return os.environ.get(ENV) is None


def _printable(path: Path) -> Path:
    if not str(path).isprintable():
        raise StoreRefused(
            errno.EINVAL, f"{plain(path)}: a path with control characters (shown escaped)"
        )
    return path


def _refuse(path: Path, why: str, code: int = errno.EACCES) -> StoreRefused:
    return StoreRefused(code, f"results store {plain(path)}: {why}")


def check(path: Path, create: bool) -> bool:
    """Checks the store's place as the module says; whether its file exists. With
    ``create``, makes the default store's directory where missing (never a named one's)."""
    directory = path.parent
    if create and is_default(path):
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as e:
            raise _refuse(path, f"its directory cannot be made ({e.strerror})", e.errno) from None
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        if not create:
            return False
        raise _refuse(path, f"no directory {plain(directory)} (one named is not made)") from None
    except OSError as e:
        raise _refuse(path, f"{plain(directory)}: {e.strerror}", e.errno) from None
    if stat.S_ISLNK(st.st_mode):  # whose link it is: why_unsafe_to_write; where it leads:
        st = os.stat(directory)
    why = not_own_directory(st, closed=0o022)
    if why is None and st.st_mode & 0o022:
        why = f"mode {stat.S_IMODE(st.st_mode):04o} lets other users write in it (sticky or not)"
    if why is not None:
        raise _refuse(path, f"its directory {plain(directory)} is not this user's own: {why}")
    try:
        why = why_unsafe_to_write(path)
    except OSError as e:
        raise _refuse(path, e.strerror or str(e), e.errno or errno.EIO) from None
    if why is not None:
        raise _refuse(path, why)
    for suffix in COMPANIONS:
        _check_file(Path(f"{path}{suffix}"), path)
    return _check_file(path, path)


def _check_file(path: Path, store: Path) -> bool:
    """Whether ``path`` exists: a regular file of this user's with one link, or nothing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    why = (
        "a symbolic link" if stat.S_ISLNK(st.st_mode)
        else "not a regular file" if not stat.S_ISREG(st.st_mode)
        else f"owned by uid {st.st_uid}" if st.st_uid != os.geteuid()
        else f"{st.st_nlink} hard links" if st.st_nlink != 1
        else None
    )  # fmt: skip
    if why is not None:
        where = "" if path == store else f" ({plain(path.name)} beside it)"
        raise _refuse(store, f"{why}{where}: refused, never followed or written")
    return True


def create_file(path: Path) -> None:
    """A new, empty store file only this user may read or write (SQLite gives its
    companions the same mode); nothing when one is there."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        os.close(os.open(path, flags, 0o600))
    except FileExistsError:
        pass
    except OSError as e:
        raise _refuse(path, f"cannot be created ({e.strerror})", e.errno) from None
