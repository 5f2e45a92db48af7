"""Whether a path is safe to write as the caller, and the directory to write it in: the one
rule of every file ctxbench writes or creates (results, tables, figures: ``files``; a store
that keeps files asks ``why_unsafe_to_write`` before it opens one).

ctxbench often runs as root, in results directories others share. A writer that follows
what a path names can be aimed at any file by whoever can write a directory on the way: a
link planted at the output's name, dangling or not, or at a directory on the way. So:

* The path itself is written, never what a link there names. A symbolic link at the path is
  refused, dangling or not, and so is anything there that is not this user's own regular
  file (a file of another user's is theirs to replace, not ours).
* The directories on the way are opened one at a time, each by a descriptor of the one
  before (``openat`` without following links), so that nothing renamed meanwhile redirects
  the write. A link on the way is followed only when it is this user's, root's or its
  directory owner's: the kernel's ``protected_symlinks`` rule, here in every directory, not
  only sticky ones. A directory every user may write without the sticky bit is refused:
  anyone could replace what is written there, or put a link in its place, after the fact, so
  nothing written there can be vouched for (``chmod +t`` makes it safe). A directory only a
  group may write (a team's) is accepted: its members are trusted with its files.
* The writer works in the directory so reached (``Entry.fd``): it creates its temporary file
  there with ``O_EXCL | O_NOFOLLOW`` and renames it over the name (``renameat``), which
  replaces the entry and never follows a link put there since the check.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Union

from ._format import plain

PathLike = Union[str, "os.PathLike[str]"]

# Links followed on the way at most, as the kernel's own limit (then ELOOP).
MAX_LINKS = 40
_DIRECTORY = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in words ("a FIFO"), by its ``st_mode``."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return _KINDS.get(stat.S_IFMT(mode), "not a file")


class UnsafePath(PermissionError):
    """Writing the path as this user is not safe: ``why``, and ``filename`` the path."""

    def __init__(self, path: PathLike, why: str) -> None:
        super().__init__(errno.EPERM, f"not written: {why}", os.fspath(path))
        self.why = why


@dataclass(frozen=True)
class Entry:
    """Where a path is written: its directory (an ``O_PATH`` descriptor, checked), its name
    in it, and the status of what is there now (None: nothing)."""

    fd: int
    name: str
    status: os.stat_result | None


def _open_to_everyone(st: os.stat_result, shown: str) -> str | None:
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        return (
            f"{plain(shown)} is a directory every user may write and not sticky (mode "
            f"{stat.S_IMODE(st.st_mode):04o}): anyone could replace what is written there "
            "or put a link in its place; chmod +t it, or write elsewhere"
        )
    return None


def _untrusted_link(link: os.stat_result, directory: os.stat_result, shown: str) -> str | None:
    owner = link.st_uid
    if owner in (os.geteuid(), 0, directory.st_uid):
        return None
    return (
        f"{plain(shown)} is a symbolic link of uid {owner}'s in a directory of uid "
        f"{directory.st_uid}'s: a link on the way is followed only when it is this user's, "
        "root's or the directory owner's"
    )


def _parts(text: str) -> list[str]:
    return [part for part in text.split("/") if part not in ("", ".")]


def _step(fd: int, part: str, here: str) -> int | str:
    """The directory ``part`` of the directory ``fd``, opened without following a link; or
    the target of the link ``part`` is, where one of its owners may follow it."""
    try:
        return os.open(part, _DIRECTORY, dir_fd=fd)
    except NotADirectoryError:
        st = os.stat(part, dir_fd=fd, follow_symlinks=False)
    if not stat.S_ISLNK(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), here)
    why = _untrusted_link(st, os.fstat(fd), here)
    if why is not None:
        raise UnsafePath(here, why)
    return os.readlink(part, dir_fd=fd)


def _open_directory(path: PathLike) -> int:
    """The directory ``path`` is in, opened one part at a time as the module says; a
    descriptor the caller closes. ``UnsafePath`` or the ``OSError`` met."""
    head = os.path.dirname(os.fspath(path))
    shown = "/" if head.startswith("/") else "."
    fd = os.open(shown, _DIRECTORY & ~os.O_NOFOLLOW)
    todo, links = _parts(head), 0
    try:
        while True:
            why = _open_to_everyone(os.fstat(fd), shown)
            if why is not None:
                raise UnsafePath(path, why)
            if not todo:
                return fd
            part = todo.pop(0)
            here = part if shown == "." else os.path.join(shown, part)
            step = _step(fd, part, here)
            if isinstance(step, int):
                os.close(fd)
                fd, shown = step, here
                continue
            links += 1
            if links > MAX_LINKS:
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), here)
            todo[:0] = _parts(step)
            if step.startswith("/"):
                os.close(fd)
                fd, shown = -1, "/"
                fd = os.open("/", _DIRECTORY)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise


def _checked_entry(path: PathLike, fd: int) -> Entry:
    name = os.path.basename(os.fspath(path))
    if name in ("", ".", ".."):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    try:
        st: os.stat_result | None = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        try:
            target = repr(plain(os.readlink(name, dir_fd=fd)))
        except OSError:  # replaced since: still no file of ours
            target = "somewhere"
        raise UnsafePath(
            path,
            f"a symbolic link (to {target}): a file is written at its own path, "
            "never through a link, which anyone who may write its directory could have put "
            "there; name the file itself",
        )
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_uid != os.geteuid():
        raise UnsafePath(
            path,
            f"a file of uid {st.st_uid}'s, not this user's (uid {os.geteuid()}): only a file "
            "of this user's own is replaced; remove it or name another file",
        )
    return Entry(fd, name, st)


@contextlib.contextmanager
def entry_to_write(path: PathLike) -> Iterator[Entry]:
    """Where ``path`` is written as this user (see the module): its directory open and
    checked, and what is there now, a regular file of this user's or nothing (or anything
    else that is not a link: the caller decides what it writes over). ``UnsafePath`` naming
    ``path`` and why; any other ``OSError`` names ``path`` too."""
    try:
        fd = _open_directory(path)
    except UnsafePath as e:
        raise UnsafePath(path, e.why) from None
    except OSError as e:
        raise type(e)(e.errno, e.strerror, os.fspath(path)) from None
    try:
        yield _checked_entry(path, fd)
    finally:
        os.close(fd)


def why_unsafe_to_write(path: PathLike) -> str | None:
    """Why writing (creating, or replacing) ``path`` as this user is not safe, or None: a
    link at the path or an unsafe one on the way, a file there of another user's or not a
    regular file, a directory on the way every user may write and not sticky. An ``OSError``
    for what looking meets (a directory on the way missing, no permission)."""
    try:
        with entry_to_write(path) as entry:
            if entry.status is not None and not stat.S_ISREG(entry.status.st_mode):
                return f"not a regular file ({kind_of(entry.status.st_mode)})"
    except UnsafePath as e:
        return e.why
    return None
