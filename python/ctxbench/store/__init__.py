"""The results store: every run ctxbench measures or saves, kept as one row set in one SQLite
file (see ``_place`` for where, ``_schema`` for what, ``_db`` for how writers share it), so
that a baseline is a series of runs rather than one run::

    from ctxbench import store
    with store.open() as s:                       # None when the store is off
        runs = s.series(point_id, machine=store.machine_of(result))

Measuring (``ring``, ``pingpong`` with ``history=True``), ``ctxbench.save``, the CLI, the
pytest plugin and the fleet keep their runs here (``keep_quietly``); the run history
(``ctxbench._history``) reads its earlier runs from the same rows.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import _db, _place
from ._place import ENV, StoreRefused
from ._place import default_path as _default_path
from ._rows import RowSet, check_labels, machine_of, parse_label
from ._store import Run, Store

__all__ = [
    "ENV",
    "Run",
    "RowSet",
    "Store",
    "StoreRefused",
    "default_path",
    "keep_quietly",
    "kept_open",
    "machine_of",
    "open",
    "parse_label",
    "using",
]

# Labels the CLI's ``--label`` gives every run this process keeps (``using``).
_labels: dict[str, str] = {}
_warned: set[str] = set()


def default_path() -> Path | None:
    """The store's file: ``--store`` / ``$CTXBENCH_STORE`` / the XDG default
    (``~/.local/share/ctxbench/store.sqlite3``); None when turned off."""
    return _default_path()


def open(path: str | os.PathLike[str] | None = None, *, create: bool = True) -> Store | None:  # noqa: A001
    """The store at ``path`` (None: ``default_path()``; ``"off"``: none), opened, checked,
    and migrated where older. None when off, or (``create=False``) when there is none yet.
    ``StoreRefused`` (an ``OSError``) naming the path when it is not usable: a file that
    is not a ctxbench store, a damaged one, one of a newer schema, a link, a directory
    other users may write."""
    where = _where(path)
    if where is None:
        return None
    db = _db.connect(where, create)
    return None if db is None else Store(where, db)


# Stores this process keeps open (by path): the pid that opened each, the file's identity
# then, and the store. Opening and closing a store for each run would cost a WAL file made
# and checkpointed each time (40 ms here, where a JSON save takes 15); kept open, a run
# costs its transaction. A store is checked again at each use, and opened anew when the
# file at its path is another (replaced, removed) or this is a forked child.
_kept: dict[Path, tuple[int, tuple[object, ...], Store]] = {}
_forked: list[Store] = []  # a parent's connections: never used, never closed in a child


@contextlib.contextmanager
def kept_open(
    path: str | os.PathLike[str] | None = None, *, create: bool = True
) -> Iterator[Store | None]:
    """The store at ``path`` (as ``open``), kept open for this process's next runs (the
    caller never closes it), its files' identity taken again when the caller is done."""
    if threading.current_thread() is not threading.main_thread():
        # A connection serves the thread that made it (sqlite3's rule), and a thread that
        # ends would leave a kept one open: another thread's use opens and closes its own.
        s = open(path, create=create)
        try:
            yield s
        finally:
            if s is not None:
                s.close()
        return
    s = _kept_open(path, create)
    try:
        yield s
    finally:
        if s is not None and s.path in _kept:
            pid, _, kept = _kept[s.path]
            _kept[s.path] = (pid, _identity(s.path), kept)


def _kept_open(path: str | os.PathLike[str] | None, create: bool) -> Store | None:
    where = _where(path)
    if where is None:
        return None
    hit = _kept.pop(where, None)
    if hit is not None:
        pid, identity, s = hit
        if pid != os.getpid():
            _forked.append(s)
        else:
            try:
                now = _identity(where) if _place.check(where, create=False) else None
            except OSError:
                s.close()
                raise
            if now == identity:
                _kept[where] = hit
                return s
            s.close()
    s = open(where, create=create)
    if s is not None:
        _kept[where] = (os.getpid(), _identity(where), s)
    return s


def _identity(where: Path) -> tuple[object, ...]:
    """Which files the store and its write-ahead log are (a log removed or replaced under
    an open store is another store's)."""
    out: list[object] = []
    for path in (where, Path(f"{where}-wal")):
        try:
            st = os.stat(path)
            out.append((st.st_dev, st.st_ino))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


@atexit.register
def _close_kept() -> None:
    for pid, _, s in _kept.values():
        if pid == os.getpid():
            s.close()
    _kept.clear()


def _where(path: str | os.PathLike[str] | None) -> Path | None:
    if path is None:
        return _default_path()
    if _place.is_off(os.fspath(path)):
        return None
    return _place.named(path)


@contextlib.contextmanager
def using(path: str | os.PathLike[str] | None, labels: dict[str, str] | None) -> Iterator[None]:
    """Within it, runs are kept in the store at ``path`` (``$CTXBENCH_STORE`` for this
    process and its children; None: as before) with ``labels`` added: the CLI's
    ``--store`` and ``--label``."""
    global _labels
    before_env, before_labels = os.environ.get(ENV), _labels
    if path is not None:
        text = os.fspath(path)
        os.environ[ENV] = text if _place.is_off(text) else str(_place.named(text))
    _labels = {**_labels, **check_labels(labels)}
    try:
        yield
    finally:
        _labels = before_labels
        if before_env is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before_env


def session_labels() -> dict[str, str]:
    """The labels ``using`` gives every run kept now."""
    return dict(_labels)


def warn_once(message: str, stacklevel: int = 3) -> None:
    if message not in _warned:
        _warned.add(message)
        warnings.warn(f"ctxbench: {message}", UserWarning, stacklevel=stacklevel)


def keep_quietly(
    results: Any,
    *,
    path: str | os.PathLike[str] | None = None,
    labels: dict[str, str] | None = None,
    **how: Any,
) -> int:
    """Keeps ``results`` in the store (``path``: as ``open``), with the session's and
    ``labels``; the point rows added. A store that is off keeps nothing; one that cannot be
    used keeps nothing and says why once (a warning naming it): what measured or saved the
    results has done its work, and a store only adds to it."""
    if isinstance(results, (list, tuple)) and not results:
        return 0
    try:
        with kept_open(path) as s:
            return 0 if s is None else s.keep(results, {**_labels, **(labels or {})}, **how)
    except OSError as e:
        warn_once(f"run not kept: {e.strerror or e}")
        return 0
