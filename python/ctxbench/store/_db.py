"""The store's SQLite file opened, recognised and brought to this schema, and every statement
run so that concurrent writers (CI jobs, fleet workers, notebooks) wait for each other rather
than fail: WAL mode (readers never wait for a writer), a busy timeout, write transactions
taken with ``BEGIN IMMEDIATE`` (so that no reader's transaction has to be upgraded, which
SQLite refuses at once rather than waits for), and a retry of what still meets a lock until
``PATIENCE_S`` have passed. A file not recognised is refused naming it, never written."""

from __future__ import annotations

import contextlib
import errno
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from .._format import plain
from . import _place, _schema

# Seconds a statement waits for another writer's lock, and a transaction retries in all.
BUSY_MS = 5_000
PATIENCE_S = 120.0

T = TypeVar("T")


def _busy(e: sqlite3.OperationalError) -> bool:
    text = str(e).lower()
    return "locked" in text or "busy" in text


def _damaged(path: Path, e: sqlite3.Error) -> _place.StoreRefused:
    if getattr(e, "sqlite_errorcode", None) == sqlite3.SQLITE_NOTADB:
        return _place.StoreRefused(
            errno.EINVAL,
            f"results store {plain(path)}: not usable (not an SQLite database, or a damaged "
            "one): refused, never written; name another file with --store or "
            f"${_place.ENV}",
        )
    return _place.StoreRefused(
        errno.EIO,
        f"results store {plain(path)}: not usable ({e}); move it aside (a copy keeps what "
        "can be read: sqlite3 FILE .recover), and a new store starts there",
    )


def retrying(path: Path, work: Callable[[], T]) -> T:
    """``work()``, again after a pause while another process holds the store's lock, for
    PATIENCE_S in all; then, or on any other SQLite error, a ``StoreRefused`` naming it."""
    deadline = time.monotonic() + PATIENCE_S
    pause = 0.005
    while True:
        try:
            return work()
        except sqlite3.OperationalError as e:
            if not _busy(e):
                raise _damaged(path, e) from None
            if time.monotonic() >= deadline:
                raise _place.StoreRefused(
                    errno.EBUSY,
                    f"results store {plain(path)}: held by another writer for {PATIENCE_S:g} s",
                ) from None
            time.sleep(pause * (1 + random.random()))
            pause = min(pause * 2, 0.2)
        except sqlite3.DatabaseError as e:
            raise _damaged(path, e) from None


@contextlib.contextmanager
def transaction(db: sqlite3.Connection, write: bool) -> Iterator[sqlite3.Connection]:
    """One transaction: ``BEGIN IMMEDIATE`` to write (the lock taken first, or waited for),
    a deferred one to read; rolled back on any error."""
    db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _recognise(path: Path, db: sqlite3.Connection) -> int:
    """The schema version of the store, checking that it is ours: ``application_id`` ours,
    or an empty database (a new store); a newer schema than this ctxbench knows refused."""
    app = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if app != _schema.APPLICATION_ID:
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app != 0 or version != 0 or tables:
            raise _place.StoreRefused(
                errno.EINVAL,
                f"results store {plain(path)}: an SQLite database that is not a ctxbench "
                f"store (application_id {app:#x}, {tables} tables): refused, never written",
            )
    if version > _schema.VERSION:
        raise _place.StoreRefused(
            errno.EINVAL,
            f"results store {plain(path)}: schema {version} is newer than this ctxbench's "
            f"({_schema.VERSION}): written by a later version; upgrade ctxbench to use it",
        )
    return int(version)


def connect(path: Path, create: bool) -> sqlite3.Connection | None:
    """The store at ``path`` open, recognised and at this schema (migrated in one write
    transaction where older); None when there is none and ``create`` is false."""
    exists = _place.check(path, create)
    if not exists:
        if not create:
            return None
        _place.create_file(path)
    # No file of the store is opened here but by SQLite: closing any other descriptor of
    # it would drop every POSIX lock this process holds on it, a kept connection's
    # included, and another process could then reset the write-ahead log under it.
    try:
        db = sqlite3.connect(
            f"file:{quote(str(path))}?mode=rw",
            uri=True,
            timeout=BUSY_MS / 1000,
            isolation_level=None,
        )
    except sqlite3.Error as e:
        raise _damaged(path, e) from None
    try:
        retrying(path, lambda: _prepare(path, db))
    except BaseException:
        db.close()
        raise
    return db


def _prepare(path: Path, db: sqlite3.Connection) -> None:
    db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    # One read transaction: its three reads are one snapshot. Read one by one, a store that
    # another process was creating meanwhile read as application_id 0 with its tables made
    # (4 concurrent writers beside two CPU hogs), a foreign file, refused.
    with transaction(db, write=False):
        version = _recognise(path, db)
    if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at each checkpoint, never torn
    if version < _schema.VERSION:
        with transaction(db, write=True):
            # Read again under the write lock: another process may have migrated meanwhile.
            have = _recognise(path, db)
            if have < _schema.VERSION:
                _schema.migrate(db, have)
