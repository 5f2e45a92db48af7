"""A sweep's grid and its out file, one module for local sweeps (``ctxbench.sweep``) and fleet
sweeps (``ctxbench.fleet``).

* **The grid** is engines × transports × placements × sizes_kb × procs, each point one call of
  ``ring``. All of it is checked before anything is measured, as ``ring`` checks its arguments
  (``_core.ring_config``): a bad engine × transport pair or a typo fails at once, not after
  an hour of measuring.
* **A point's key** is everything that changes its number: what was asked (every field
  ``schema.RING`` declares ``config=True``, defaults filled in as the core fills them), its
  procs, and the machine (``metadata.machine_identity``: a kernel instance, so a resumed sweep
  measures again after a reboot or on another machine).
* **The out file** is any format of ``files.FORMATS`` that holds records (JSON) or a table
  (CSV, Parquet): the points already in it are not measured again, and each new point is
  written as it arrives (the whole file rewritten atomically, keeping its mode; a JSON
  file's records are encoded once, then copied). While a
  sweep runs, the out file is its alone: a second sweep naming it is refused, because two
  sweeps measuring on one machine at once disturb each other's numbers, and a merge would
  hide that (``.<name>.lock`` beside the file, held with ``flock``, removed at the end; a
  lock that is not this user's own regular file is refused, never written through). SIGTERM
  and SIGHUP end a sweep as Ctrl-C does, the lock and a temporary file removed on the way.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import itertools
import math
import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import _core
from ._field import Field, show
from ._terminate import terminations_raise
from .files import (
    PARQUET,
    PathLike,
    check_writable,
    format_of,
    kind_of,
    read_records,
    record_text,
    records_frame,
    suffixes,
    write_record_texts,
    write_records,
)
from .frame import concat, require
from .record import check_arrived, withhold_hostname
from .schema import CONFIG, INTERFERENCE_ASKED, RING

if TYPE_CHECKING:
    import pandas as pd

Placement = Union[str, Sequence[int]]
# A point's identity: the machine, its procs, then what was asked (``schema.CONFIG``).
Key = tuple[Any, ...]


@dataclass(frozen=True)
class Axis:
    """One axis of a sweep's grid: its keyword (and the CLI's flag), its default (None: it
    must be given), the ring parameter each of its values sets, its type as a signature
    writes it, what its items are and the CLI's help."""

    name: str
    default: tuple[Any, ...] | None
    point: str
    annotation: str
    items: str
    flag: str
    help: str


# The grid's axes, in the order ``sweep``, ``fleet.sweep`` and ``ctxbench sweep`` name them
# (their signatures and flags are written from here: ``python -m ctxbench._codegen``).
AXES = (
    Axis("procs", None, "procs", "Sequence[int]", "process counts", "--procs", "process counts"),
    Axis("sizes_kb", (0,), "size_kb", "Sequence[int]", "sizes in KiB", "--sizes",
         "KiB each participant sums per hop (default 0)"),
    Axis("engines", ("process",), "engine", "Sequence[str]", "engine names", "--engines",
         "default: process"),
    Axis("transports", (None,), "transport", "Sequence[str | None]",
         "transport names (None: the default)", "--transports",
         "default: each engine's own (pipe; resume for fibers)"),
    Axis("placements", ("default",), "placement", "Sequence[Placement]", "placements",
         "--placements",
         f"{'|'.join(_core.PLACEMENTS)} or CPU list 0,1, one or more (default: default)"),
)  # fmt: skip


# What every sweep takes after the axes, before its own keywords, as its signature writes it
# (``sweep`` and ``fleet.sweep`` are written from here with the axes).
SWEEP_OPTIONS = (
    "repetitions: int | None = None",
    "out: PathLike | None = None",
    "progress: bool | str = True",
)


def axes_of(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The axes among a sweep's ``arguments`` (its ``locals()``), by name."""
    return {a.name: arguments[a.name] for a in AXES}


# What ``ring`` takes that the grid sets itself.
_GRID_ARGUMENTS = (*(a.point for a in AXES), "repetitions")


@dataclass(frozen=True)
class GridPoint:
    """One point of a grid: ``ring(procs, **kwargs)``, and what its result will record of
    what was asked (``config``)."""

    procs: list[int]
    kwargs: dict[str, Any]
    config: dict[str, Any]

    def key(self, machine: str | None) -> Key:
        """The point's key when measured on ``machine``."""
        return point_key({**self.config, "procs": self.procs}, machine)

    def label(self) -> str:
        c = self.config
        return (
            f"{c['engine']}/{c['transport']} {c['placement']} size={c['size_kb']}k "
            f"P={c['parallel']} procs={','.join(map(str, self.procs))}"
        )


def listed(name: str, value: Any, what: str, *, once: bool = False) -> list[Any]:
    """An argument that lists things in order, as a list. A str is one name, not a list of
    one-letter names (``engines="process"`` would be engines "p", "r", ...), an int one
    count, bytes are text (``bytearray(b"\\x02")`` is no list of counts), and a dict or set
    has no order: each is a ``TypeError`` saying what to write. An endless iterator is read
    to ``_core.MAX_POINTS`` items and refused, as the core refuses it, instead of filling
    memory where Ctrl-C cannot stop it. ``once``: an item listed twice is a ``ValueError``
    (a grid axis: the same points measured twice, or once and reported twice)."""
    unordered = isinstance(value, (AbstractSet, Mapping))
    text = isinstance(value, (str, bytes, bytearray, memoryview))
    if text or unordered or not isinstance(value, Iterable):
        write = f"sorted({value!r})" if unordered else f"[{value!r}]"
        if isinstance(value, (bytes, bytearray, memoryview)):
            write = f"{list(bytes(value))!r} if you mean those numbers"
        raise TypeError(
            f"{name}: expected a sequence of {what}, got {type(value).__name__} {value!r} "
            f"(write {name}={write})"
        )
    items = list(itertools.islice(value, _core.MAX_POINTS + 1))
    if len(items) > _core.MAX_POINTS:
        raise ValueError(f"{name}: lists more than {_core.MAX_POINTS} {what}")
    if once:
        _once(name, items, what)
    return items


def _once(name: str, items: list[Any], what: str) -> None:
    """Each of ``items`` once, or a ``ValueError`` naming the first one listed twice."""
    seen: dict[Any, int] = {}
    for i, item in enumerate(items):
        try:
            key = item if isinstance(item, str) else tuple(item)
        except TypeError:  # not a sequence: a number, None
            key = item
        try:
            first = seen.setdefault(key, i)
        except TypeError:  # unhashable: the core refuses it, naming its type
            continue
        if first != i:
            raise ValueError(
                f"{name}: {item!r} is listed twice (items {first} and {i}); name each of "
                f"the {what} once"
            )


def _plain(value: Any) -> Any:
    """A placement as JSON holds it: a name, or a list of ints (numpy ints too)."""
    return value if isinstance(value, str) else [int(c) for c in value]


def grid(
    axes: Mapping[str, Any],
    repetitions: int | None,
    ring_kwargs: Mapping[str, Any],
    *,
    here: bool = True,
) -> list[GridPoint]:
    """Every point of the grid, in the order a sweep measures them, each combination of
    engine, transport, placement and size checked as ``ring`` would check it (for every
    procs at once): a ``ValueError`` or ``TypeError`` names the combination and the
    parameter. ``here``: on this machine too (its CPUs, its memory: ``_core.ring_check``);
    else as on any machine (``_core.ring_config``), for a grid that runs elsewhere."""
    check = _core.ring_check if here else _core.ring_config
    clash = sorted(set(ring_kwargs) & set(_GRID_ARGUMENTS))
    if clash:
        raise TypeError(f"{clash[0]}: a sweep sets it from its grid (procs=, engines=, ...)")
    procs, sizes_kb, engines, transports, placements = (
        listed(a.name, axes[a.name], a.items, once=True) for a in AXES
    )
    points = []
    for engine in engines:
        for transport in transports:
            for placement in placements:
                for size_kb in sizes_kb:
                    kwargs = {
                        **ring_kwargs,
                        "engine": engine,
                        "transport": transport,
                        "placement": placement,
                        "size_kb": size_kb,
                        "repetitions": repetitions,
                    }
                    try:
                        config = dict(check(procs, **kwargs))
                    except (ValueError, TypeError) as e:
                        where = f"engine {engine!r}, transport {transport!r}, placement "
                        where += f"{placement!r}, size_kb {size_kb!r}"
                        raise type(e)(f"sweep grid, {where}: {e}") from None
                    # The core named the defaults; the arguments travel (to a fleet) as JSON.
                    kwargs.update(transport=config["transport"], placement=_plain(placement))
                    kwargs["size_kb"] = int(size_kb)
                    points += [GridPoint([int(p)], dict(kwargs), config) for p in procs]
    return points


def check_here(points: Sequence[GridPoint]) -> str | None:
    """What ``ring`` would refuse of these points on this machine, as one line naming the
    point (None: nothing): how a fleet checks its grid on each machine before measuring."""
    for point in points:
        try:
            _core.ring_check(point.procs, **point.kwargs)
        except (ValueError, TypeError, MemoryError, OSError) as e:
            return f"{point.label()}: {e}"
    return None


# --- a point's key -----------------------------------------------------------------------------


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _normal(value: Any, spec: Field) -> Any:
    """A value of the key as a record holds it, whether it came from JSON, a table read back
    (ints as floats beside empty cells, bools as text) or the core."""
    if _missing(value):
        return None
    if spec.type == "int":
        return int(value)
    if spec.type == "float":
        return float(f"{float(value):.12g}")  # as written to and read back from a CSV
    if spec.type == "bool":
        return value if isinstance(value, bool) else str(value) in ("True", "true", "1")
    return str(value)


def point_key(values: Mapping[str, Any], machine: str | None) -> Key:
    """The key of the point whose ``procs`` and configuration ``values`` holds (a record, a
    table row, a ``GridPoint``'s), measured on ``machine``."""
    procs = np.atleast_1d(values.get("procs")).tolist()  # a table row has one, a record a list
    return (
        machine,
        tuple(int(p) for p in procs),
        *(_normal(values.get(name), RING[name]) for name in CONFIG),
        interference_key(values),
    )


def interference_key(values: Mapping[str, Any]) -> tuple[float, ...] | None:
    """Of a point's key, the neighbours asked, as the core resolved them: a record's or a
    configuration's ``interference`` (null where none), or a table row's ``interference_*``
    columns (empty where none)."""
    asked = values.get("interference")
    if not isinstance(asked, Mapping):
        asked = {k: values.get(f"interference_{k}") for k in INTERFERENCE_ASKED}
    if all(_missing(asked.get(k)) for k in INTERFERENCE_ASKED):
        return None
    return tuple(float(f"{float(asked.get(k) or 0):.12g}") for k in INTERFERENCE_ASKED)


def arrived(rec: Any, point: GridPoint, machine: str) -> dict[str, Any]:
    """The record a fleet worker sent back for ``point`` on ``machine``, checked before it
    goes near the out file: a ring record as a file's is checked (``record.check_arrived``:
    its size, NaN or infinity anywhere, every declared field) and of this very point (what
    was asked, its procs, the machine). A ``ValueError`` names the field."""
    check_arrived(rec, "ring")
    metadata = rec.get("metadata") or {}
    names = ("metadata.machine", "procs", *CONFIG, "interference")
    got = point_key(rec, metadata.get("machine"))
    for name, want, have in zip(names, point.key(machine), got):
        if have != want:
            raise ValueError(f"{name}: {show(have)}, but the point asked was {show(want)}")
    return rec


def record_key(rec: Mapping[str, Any]) -> Key | None:
    """The key of a ring record (None for other kinds: they are no sweep's points)."""
    if rec.get("kind") != "ring":
        return None
    metadata = rec.get("metadata") or {}
    return point_key(rec, metadata.get("machine"))


# --- the out file ------------------------------------------------------------------------------


def _lock_path(path: Path) -> Path:
    # Beside the path itself, in the directory the out file is written in: an out file that
    # is a link is refused (``files.write_atomically``), never written through.
    return path.with_name(f".{path.name}.lock")


def _not_ours(st: os.stat_result | None) -> str | None:
    """Why a lock file (its ``st``; None: a symbolic link) is not one this sweep may write,
    or None. In a directory others can write, a link planted there would have the sweep
    write its pid through it into whatever it names."""
    if st is None or not stat.S_ISREG(st.st_mode):
        return f"{kind_of(st.st_mode if st else stat.S_IFLNK)}, not a regular file"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if st.st_nlink != 1:
        return f"a file with {st.st_nlink} links (another name shares it)"
    return None


def _refused(lock: Path, why: str) -> OSError:
    return OSError(
        errno.EPERM,
        f"refusing the sweep's lock: {why}; a lock is this user's own regular file, never "
        "written through a link (remove it if no sweep of yours is running)",
        os.fspath(lock),
    )


def _lock(path: Path) -> int:
    """Hold ``.<name>.lock`` beside ``path`` (an open descriptor), or refuse naming the sweep
    that holds it, or naming the lock when it is not this user's own regular file."""
    lock = _lock_path(path)
    # O_NOFOLLOW: a symbolic link there is refused, never followed; O_NONBLOCK: a FIFO
    # does not hang the open.
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    while True:
        try:
            fd = os.open(lock, flags, 0o600)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise _refused(lock, _not_ours(None) or "") from None
            raise type(e)(e.errno, e.strerror, os.fspath(path)) from None
        why = _not_ours(os.fstat(fd))
        if why is not None:
            os.close(fd)
            raise _refused(lock, why)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise OSError(
                errno.EBUSY,
                f"another sweep (pid {holder}) is writing this out file: wait for it to end, "
                "or name another out",
                os.fspath(path),
            ) from None
        # A sweep that just ended removed the file we opened: lock the one there now.
        if _same(fd, lock):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)


def _same(fd: int, lock: Path) -> bool:
    """Whether ``lock`` is still the file ``fd`` holds (not a link to it: lstat)."""
    try:
        return os.path.samestat(os.fstat(fd), os.lstat(lock))
    except FileNotFoundError:
        return False


class OutFile:
    """A sweep's out file: the points already in it, and each new one written as it arrives.
    ``OutFile.open(None)`` keeps the points in memory only. Use it as a context manager: the
    file is this sweep's until it is closed."""

    def __init__(self, path: Path | None, holds: str, hostname: bool) -> None:
        self.path, self.holds, self.hostname = path, holds, hostname
        # This sweep made the file, and has added nothing to it yet.
        self._made_empty = False
        # Whatever the file holds, in order (records, or each point's rows), and by key.
        self._entries: list[Any] = []
        self._index: dict[Key, int] = {}
        # Each record's text in the file: a rewrite copies them instead of encoding them all.
        self._texts: list[bytes] = []
        self._lock: int | None = None
        self._restore_signals: Callable[[], None] = lambda: None

    @classmethod
    def open(cls, path: PathLike | None, *, hostname: bool = True) -> OutFile:
        """Check ``path`` (its format, that it can be written), hold it, and read the points
        already in it; everything that can fail fails here, before anything is measured."""
        if path is None:
            return cls(None, "records", hostname)
        path = Path(path)
        fmt = format_of(path)
        if fmt.holds not in ("records", "table"):
            usable = ", ".join(suffixes("records", "table"))
            raise ValueError(
                f"{path}: a sweep resumes from its out file, and {fmt.name} keeps too little "
                f"for that; use {usable} (ctxbench.files.save, or a result's .save(), writes "
                f"results to {fmt.name})"
            )
        if fmt.holds == "table":
            require("pandas", f"a {fmt.name} out file")
        if fmt is PARQUET:
            require("pyarrow", "a Parquet out file", install="pyarrow")
        check_writable(path)
        out = cls(path, fmt.holds, hostname)
        out._lock = _lock(path)
        out._restore_signals = terminations_raise()
        try:
            if path.exists():
                out._read()
            else:
                out._write()  # the out file exists from the start, empty
                out._made_empty = True
        except BaseException:
            out.close()
            raise
        return out

    def _read(self) -> None:
        assert self.path is not None
        if self.holds == "records":
            records = read_records(self.path)
            if not self.hostname:
                withheld = [withhold_hostname(rec) for rec in records]
                if withheld != records:
                    records = withheld
                    write_records(records, self.path)
            for rec in records:
                self._append(record_key(rec), rec)
            self._texts = [record_text(rec) for rec in records]
            return
        df = format_of(self.path).read(self.path)
        rows: dict[Any, list[int]] = {}
        have = set(df.columns)
        for i, row in enumerate(df.to_dict("records")):
            # A row without the key's columns (a table from elsewhere) is kept, never matched.
            key = point_key(row, row.get("machine")) if {"procs", *CONFIG} <= have else ("?", i)
            rows.setdefault(key, []).append(i)
        for key, index in rows.items():
            self._append(key, df.iloc[index])

    def _append(self, key: Key | None, entry: Any) -> None:
        if key is not None:
            self._index.setdefault(key, len(self._entries))
        self._entries.append(entry)

    def __enter__(self) -> OutFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        # A sweep that failed before its first point (a cluster that is no scheduler, Ctrl-C)
        # leaves no empty file behind.
        if kind is not None and self._made_empty and self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
        self.close()

    def close(self) -> None:
        """Let other sweeps have the file."""
        if self._lock is None or self.path is None:
            return
        lock = _lock_path(self.path)
        try:
            if _same(self._lock, lock):
                os.unlink(lock)
        except OSError:
            pass
        os.close(self._lock)
        self._lock = None
        self._restore_signals()

    def done(self, key: Key) -> bool:
        return key in self._index

    def frame(self, key: Key) -> pd.DataFrame:
        """The tidy frame of a finished point."""
        entry = self._entries[self._index[key]]
        return records_frame([entry]) if self.holds == "records" else entry

    def add(self, key: Key, rec: dict[str, Any]) -> None:
        """A finished point (its record): kept, and on disk before this returns. With
        ``hostname=False`` every field naming the host is withheld first (a fleet's record
        comes with the worker's host, name and address)."""
        if not self.hostname:
            rec = withhold_hostname(rec)
        self._made_empty = False
        self._append(key, rec if self.holds == "records" else records_frame([rec]))
        if self.holds == "records" and self.path is not None:
            self._texts.append(record_text(rec))
        self._write()

    def _write(self) -> None:
        if self.path is None:
            return
        if self.holds == "records":
            write_record_texts(self._texts, self.path)
        else:
            format_of(self.path).write(concat(self._entries), self.path, self.hostname)

    def __len__(self) -> int:
        return len(self._entries)
