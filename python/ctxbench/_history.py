"""What earlier runs on this machine showed: each point's figure and its run's own error, so
that the next run's interval can hold the spread between runs that no single run can see (the
run level of the variance model; ``_core.ring(history=...)`` turns it into
``stats.sd_run`` with ``stats::run_level``).

Where: see ``_history_file`` (``$CTXBENCH_HISTORY``; ``off`` keeps and reads nothing). One
file per machine and build, named by a hash of the hostname, CPU model, kernel and ctxbench
version; each line is one point of one run: when, which point (a hash of what changes its
figure, and those settings in words), the ln of its figure, its relative standard error, and
the conditions it ran in (other tasks runnable per CPU just before it, the hypervisor's steal
over it). A run reads the last ``WINDOW`` runs of each point from the last ``MAX_AGE_S``
seconds that ran in conditions comparable to its own (``comparable``).

History only ever sharpens what a run says of itself: a history that cannot be used, or a
line in it that is not one of ours (each field's type and range are checked), means no
history or no such line, with one warning naming the file and why, never an error.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from . import _core
from . import _history_file as _file
from ._history_file import ENV as ENV
from ._history_file import NoHistory
from .metadata import runnable_per_cpu

WINDOW = 30
MAX_AGE_S = 24 * 3600.0
# A line stamped later than now by more than this (a clock set back, or a line not ours) is
# not one of ours: it would never age out.
FUTURE_S = 300.0
# Runs are comparable when the other tasks runnable per CPU just before each differ by at
# most this (two CPU-bound processes on two CPUs: 1.0), and, where both are known, their
# steal shares by at most STEAL_TOLERANCE.
LOAD_TOLERANCE = 0.25
STEAL_TOLERANCE = 0.05
# The steal share before a run is read over the window since this process last looked,
# when that window is this long: shorter is a few clock ticks, longer is another time.
STEAL_WINDOW_S = (0.1, 600.0)
MAX_LINE = 512
MAX_LABEL = 200

History = tuple[list[float], list[float], list[float]]
Point = tuple[str, str]


class Run(NamedTuple):
    """One line: when (s since the epoch), which point (id, and in words), ln figure,
    relative standard error, other tasks runnable per CPU before it, steal share over it."""

    t: float
    p: str
    y: float
    s: float
    w: str | None = None
    l: float | None = None  # noqa: E741
    st: float | None = None


# The range of each numeric field ("t" also: not in the future).
_RANGES = {
    "t": (0.0, math.inf),
    "y": (-30.0, 30.0),  # ln of µs: 1e-13 to 1e13
    "s": (1e-6, 1.0),
    "l": (0.0, 1e4),
    "st": (0.0, 1.0),
}


@dataclass(frozen=True)
class Conditions:
    """What else the machine did when a run started: other tasks runnable per CPU
    (``load``), the hypervisor's share of the CPUs just before (``steal``; None where not
    known), and the CPU times then, for the steal over the run."""

    load: float | None = None
    steal: float | None = None
    cpu_times: tuple[int, int] | None = None


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:16]


def file_path(metadata: dict[str, Any]) -> Path | None:
    """This machine's and build's history file; None when turned off, NoHistory when it has
    no place."""
    where = _file.directory()
    if where is None:
        return None
    machine = _digest(
        *(metadata.get(k) for k in ("hostname", "cpu_model", "kernel", "ctxbench_version"))
    )
    return where / _file.name(machine)


def point(identity: str) -> Point:
    """A point's history id and, for ``ctxbench history``, its settings in words, from its
    canonical identity (the core's ``point_id``: ``key=value`` pairs sorted by key). The id
    is the digest of those pairs, as it was before the core wrote them."""
    pairs = _PAIR.split(identity)
    words = " ".join(p for p in pairs if not p.endswith(("=None", "=False")))
    label = words if len(words) <= MAX_LABEL else words[: MAX_LABEL - 3] + "..."
    return _digest(*pairs), label


# Where one pair of an identity ends: a space before the next ``key=`` (a CPU list such as
# ``placement=[0, 1]`` holds spaces of its own).
_PAIR = re.compile(r" (?=[a-z_]+=)")


# --- the conditions a run starts in -------------------------------------------------------


def _cpu_times() -> tuple[int, int] | None:
    """(steal, total) clock ticks of all CPUs since boot, from /proc/stat."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline(1024).split()
        values = [int(v) for v in fields[1:9]]
    except (OSError, ValueError):
        return None
    return (values[7], sum(values)) if fields[:1] == [b"cpu"] and len(values) == 8 else None


def _steal(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The steal share between two ``_cpu_times``; None over too few ticks to tell."""
    if before is None or after is None or after[1] - before[1] < 20:
        return None
    return min(1.0, max(0.0, (after[0] - before[0]) / (after[1] - before[1])))


# When this process last read the CPU times: the window the steal before a run is read over.
_last_look: tuple[float, tuple[int, int] | None] = (time.monotonic(), _cpu_times())


def conditions() -> Conditions:
    """The conditions now, just before a run."""
    global _last_look
    when, times = time.monotonic(), _cpu_times()
    since, before = _last_look
    low, high = STEAL_WINDOW_S
    steal = _steal(before, times) if low <= when - since <= high else None
    _last_look = (when, times)
    return Conditions(load=runnable_per_cpu(), steal=steal, cpu_times=times)


def comparable(run: Run, now: Conditions) -> bool:
    """Whether an earlier run ran in conditions like ``now``: both with a known load (or
    neither), LOAD_TOLERANCE apart at most, and steal shares STEAL_TOLERANCE apart at most
    where both are known."""
    if (run.l is None) != (now.load is None):
        return False
    if run.l is not None and now.load is not None and abs(run.l - now.load) > LOAD_TOLERANCE:
        return False
    return run.st is None or now.steal is None or abs(run.st - now.steal) <= STEAL_TOLERANCE


# --- reading and checking lines -----------------------------------------------------------


def _refuse_constant(name: str) -> None:
    raise ValueError(name)


def _parse(line: bytes, now: float) -> Run | str:
    """The run a line holds, or why it is not one of ours."""
    if len(line) > MAX_LINE:
        return f"longer than {MAX_LINE} bytes"
    try:
        rec = json.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError:
        return "not UTF-8"
    except (ValueError, RecursionError):
        return "not JSON"
    if not isinstance(rec, dict):
        return "not a JSON object"
    unknown = sorted(set(rec) - set(Run._fields))
    if unknown:
        return f"unknown field {unknown[0][:20]!r}"
    for key, (low, high) in _RANGES.items():
        if key not in rec and key in ("t", "y", "s"):
            return f"field {key!r} missing"
        v = rec.get(key)
        if v is None and key in ("l", "st"):
            continue
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not low <= v <= high:
            return f"field {key!r}: {str(v)[:24]} is not a number in [{low:g}, {high:g}]"
    if rec["t"] > now + FUTURE_S:
        return "field 't': in the future"
    p, w = rec.get("p"), rec.get("w")
    if not (isinstance(p, str) and len(p) == 16 and all(c in "0123456789abcdef" for c in p)):
        return "field 'p': not a point id"
    if w is not None and not (isinstance(w, str) and len(w) <= MAX_LABEL and w.isprintable()):
        return "field 'w': not a point's settings"
    load, steal = (None if rec.get(k) is None else float(rec[k]) for k in ("l", "st"))
    return Run(float(rec["t"]), p, float(rec["y"]), float(rec["s"]), w, load, steal)


# Files found with lines not ours: warned of once, and rewritten without them at the next
# write of this process.
_damaged: set[Path] = set()
_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        warnings.warn(f"ctxbench: run history {message}", UserWarning, stacklevel=3)


def _read(fd: int, path: Path, now: float) -> list[tuple[Run, bytes]]:
    """Every run in the file's newest lines, with its line; lines not ours skipped, with one
    warning naming the first and how many."""
    lines, cut = _file.newest(fd)
    if cut and len(lines[0]) <= MAX_LINE:
        lines[0] = b""  # the end of a line the bounded read began inside of: an older run
    runs, bad = [], []
    for n, line in enumerate(lines, 1):
        if not line:
            continue
        run = _parse(line, now)
        if isinstance(run, Run):
            runs.append((run, line))
        else:
            bad.append((n, run))
    if bad:
        _damaged.add(path)
        where = f"line {bad[0][0]}" + (f" of its newest {_file.MAX_BYTES >> 20} MiB" if cut else "")
        _warn_once(
            f"{path}: {where}: {bad[0][1]}; {len(bad)} line(s) not ctxbench's skipped (left "
            "out when this run writes the file)"
        )
    return runs


T = TypeVar("T")


def _with_file(metadata: dict[str, Any], write: bool, use: Callable[[Path, int], T]) -> T | None:
    """``use(path, fd)`` of the history file, open and locked (exclusively to write); None
    when off, absent (reading) or not usable, the last with one warning naming it and why."""
    try:
        path = file_path(metadata)
        if path is None:
            return None
        with _file.opened(path, write) as fd:
            return None if fd is None else use(path, fd)
    except OSError as e:
        _warn_once(f"not used: {e.strerror if isinstance(e, NoHistory) else e}")
        return None


# --- the interface ------------------------------------------------------------------------


def earlier(
    metadata: dict[str, Any], points: Sequence[str], now: Conditions
) -> list[History | None]:
    """For each point id, the ln figures, relative errors and ages (s) of its latest earlier
    runs on this machine in conditions comparable to ``now`` (None: none known)."""
    t = time.time()
    runs = _with_file(metadata, False, lambda path, fd: _read(fd, path, t)) or []
    out: list[History | None] = []
    for p in points:
        alike = [r for r, _ in runs if r.p == p and t - r.t <= MAX_AGE_S and comparable(r, now)]
        mine = alike[-WINDOW:]
        ages = [max(0.0, t - r.t) for r in mine]
        out.append(([r.y for r in mine], [r.s for r in mine], ages) if mine else None)
    return out


def remember(
    metadata: dict[str, Any],
    points: Sequence[Point],
    figures: Sequence[float],
    errors: Sequence[float],
    at: Conditions,
) -> None:
    """Keep this run's figure and own standard error of every point that has both (a
    relative error above 1 tells nothing of the spread between runs; below 1e-6 is kept as
    1e-6), with the conditions it started ``at`` and the steal over it."""
    t = time.time()
    steal = _steal(at.cpu_times, _cpu_times())
    lines = []
    for (p, label), x, e in zip(points, figures, errors):
        if not (x > 0 and math.isfinite(x) and math.isfinite(e) and 0 < e <= x):
            continue
        rec = {"t": t, "p": p, "w": label, "y": math.log(x), "s": max(e / x, 1e-6)}
        rec.update({k: v for k, v in (("l", at.load), ("st", steal)) if v is not None})
        lines.append(json.dumps(rec).encode())
    if lines:
        _with_file(metadata, True, lambda path, fd: _write(fd, path, lines, t))


def _write(fd: int, path: Path, lines: list[bytes], now: float) -> None:
    """Appends ``lines``; or, where the file holds lines not ours or would pass MAX_BYTES,
    rewrites it with its newest runs of the last MAX_AGE_S (KEEP_BYTES at most) first."""
    if path not in _damaged and os.fstat(fd).st_size + sum(map(len, lines)) <= _file.MAX_BYTES:
        _file.append(fd, lines)
        return
    kept: list[bytes] = []
    size = 0
    for run, line in reversed(_read(fd, path, now)):
        if now - run.t > MAX_AGE_S:
            continue
        size += len(line) + 1
        if size > _file.KEEP_BYTES:
            break
        kept.append(line)
    _file.rewrite(fd, kept[::-1] + lines)
    _damaged.discard(path)


# --- what `ctxbench history` and `ctxbench info` show -------------------------------------


@dataclass(frozen=True)
class PointRuns:
    """One point's runs of the last MAX_AGE_S: how many, how many comparable to now, the
    run level a run now would use (None below ``_core.MIN_RUNS`` runs) and the ages (s) of
    the newest and oldest."""

    label: str
    runs: int
    comparable: int
    sd: float | None
    newest_s: float
    oldest_s: float


@dataclass(frozen=True)
class Summary:
    """The history file (None: off or no place; ``why`` says which) and its points."""

    path: Path | None
    why: str | None
    points: list[PointRuns]


def summary(metadata: dict[str, Any], now: Conditions) -> Summary:
    """What the history holds for a run starting in conditions ``now``."""
    try:
        path = file_path(metadata)
        if path is None:
            return Summary(None, f"off (${ENV}={os.environ.get(ENV)})", [])
        t = time.time()
        with _file.opened(path, False) as fd:
            runs = [] if fd is None else [r for r, _ in _read(fd, path, t)]
    except OSError as e:
        return Summary(None, e.strerror if isinstance(e, NoHistory) else str(e), [])
    by_point: dict[str, list[Run]] = {}
    for r in runs:
        if t - r.t <= MAX_AGE_S:
            by_point.setdefault(r.p, []).append(r)
    points = []
    for p, rs in by_point.items():
        alike = [r for r in rs if comparable(r, now)][-WINDOW:]
        level = _core.run_level(
            [r.y for r in alike], [r.s for r in alike], [max(0.0, t - r.t) for r in alike]
        )
        label = next((r.w for r in reversed(rs) if r.w), f"(point {p})")
        ages = [max(0.0, t - r.t) for r in rs]
        sd = None if level is None else level["sd"]
        points.append(PointRuns(label, len(rs), len(alike), sd, min(ages), max(ages)))
    return Summary(path, None, sorted(points, key=lambda x: x.label))


def clear(metadata: dict[str, Any]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Removes every history file of this user in the history's directory (every build's);
    the paths removed, and those left with why. NoHistory when the directory is not usable."""
    path = file_path(metadata)
    return ([], []) if path is None else _file.remove_all(path.parent)


def headline(s: Summary) -> str:
    """Where the history is, what it holds and how to turn it off, in one line."""
    if s.path is None:
        return f"none: {s.why}" if s.why and not s.why.startswith("off") else str(s.why)
    runs = sum(p.runs for p in s.points)
    return (
        f"{s.path}: {runs} runs of {len(s.points)} points in the last {MAX_AGE_S / 3600:g} h "
        f"(${ENV}=off turns it off)"
    )
