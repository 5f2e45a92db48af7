"""What earlier runs on this machine showed: each point's figure and its run's own error, so
that the next run's interval can hold the spread between runs that no single run can see (the
run level of the variance model; ``_core.ring(history=...)`` turns it into
``stats.sd_run`` with ``stats::run_level``).

Where: the results store (``ctxbench.store``), one home: a run's figures are kept there as
one row set per run (by measuring, ``ctxbench.save``, the CLI, the plugin, the fleet), and
this module reads them back as the history of this machine, kernel release and ctxbench
build: for each point (a hash of what changes its figure, and those settings in words) the
ln of its figure, its relative standard error, and the conditions it ran in (other tasks
runnable per CPU just before it, the hypervisor's steal over it). A run reads the last
``WINDOW`` runs of each point from the last ``MAX_AGE_S`` seconds that ran in conditions
comparable to its own (``comparable``). ``$CTXBENCH_HISTORY=off`` reads none;
``$CTXBENCH_STORE=off`` keeps and reads none. The history files of earlier versions
(``_history_file``) are imported with ``ctxbench store import``.

History only ever sharpens what a run says of itself: a store that cannot be used means no
history, with one warning naming it and why, never an error.
"""

from __future__ import annotations

import math
import os
import secrets
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from . import _core, store
from .metadata import LOAD_TOLERANCE, runnable_per_cpu
from .store._rows import FUTURE_S as FUTURE_S
from .store._rows import MAX_LABEL as MAX_LABEL
from .store._rows import point as point

ENV = "CTXBENCH_HISTORY"
OFF = ("off", "0", "no", "false", "")

WINDOW = 30
MAX_AGE_S = 24 * 3600.0
# Runs are comparable when the other tasks runnable per CPU just before each differ by at
# most LOAD_TOLERANCE (metadata's, beside the load it bounds), and, where both are known,
# their steal shares by at most STEAL_TOLERANCE.
STEAL_TOLERANCE = 0.05
# The steal share before a run is read over the window since this process last looked,
# when that window is this long: shorter is a few clock ticks, longer is another time.
STEAL_WINDOW_S = (0.1, 600.0)

History = tuple[list[float], list[float], list[float]]
Point = tuple[str, str]


class Run(NamedTuple):
    """One run of one point: when (s since the epoch), which point (id, and in words), ln
    figure, relative standard error, other tasks runnable per CPU before it, steal share over it."""

    t: float
    p: str
    y: float
    s: float
    w: str | None = None
    l: float | None = None  # noqa: E741
    st: float | None = None


@dataclass(frozen=True)
class Conditions:
    """What else the machine did when a run started: other tasks runnable per CPU
    (``load``), the hypervisor's share of the CPUs just before (``steal``; None where not
    known), and the CPU times then, for the steal over the run."""

    load: float | None = None
    steal: float | None = None
    cpu_times: tuple[int, int] | None = None


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


def steal_since(at: Conditions) -> float | None:
    """The steal share since the conditions ``at`` were read (over a run)."""
    return _steal(at.cpu_times, _cpu_times())


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


# --- the store's rows, as the history reads them -----------------------------------------


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        warnings.warn(f"ctxbench: run history {message}", UserWarning, stacklevel=3)


_warned: set[str] = set()


def _run(row: tuple[Any, ...]) -> Run:
    """A run as the store reads it (``Store.earlier``)."""
    key, t, words, y, s, load, steal = row
    return Run(t, key, y, s, words, load, steal)


def is_on() -> bool:
    """Whether measuring reads earlier runs ($CTXBENCH_HISTORY=off: none)."""
    return os.environ.get(ENV, "on").strip().lower() not in OFF


def _machine(metadata: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """The machine, kernel release and build whose runs a run may learn from (what the
    history file per machine and build held before the store)."""
    kernel, version = metadata.get("kernel"), metadata.get("ctxbench_version")
    return store.machine_of({"metadata": metadata}), kernel, version


T = TypeVar("T")


def _with_store(use: Callable[[Any], T], create: bool = False) -> T | None:
    """``use(store)`` of the results store; None when it is off, absent (reading) or not
    usable, the last with one warning naming it and why."""
    try:
        with store.kept_open(create=create) as s:
            return None if s is None else use(s)
    except OSError as e:
        _warn_once(f"not used: {e.strerror or e}")
        return None


# --- the interface ------------------------------------------------------------------------


def earlier(
    metadata: dict[str, Any], points: Sequence[str], now: Conditions
) -> list[History | None]:
    """For each point id, the ln figures, relative errors and ages (s) of its latest earlier
    runs on this machine in conditions comparable to ``now`` (None: none known)."""
    t = time.time()
    machine, kernel, version = _machine(metadata)
    keys = sorted(set(points))
    found = (
        _with_store(lambda s: s.earlier(machine, kernel, version, keys, t - MAX_AGE_S))
        if is_on()
        else None
    ) or []
    runs: dict[str, list[Run]] = {}
    for row in found:
        run = _run(row)
        if run.t <= t + FUTURE_S:
            runs.setdefault(run.p, []).append(run)
    out: list[History | None] = []
    for p in points:
        alike = [r for r in runs.get(p, []) if t - r.t <= MAX_AGE_S and comparable(r, now)]
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
    """Keeps a run's figure and own standard error of every point that has both (a
    relative error above 1 tells nothing of the spread between runs; below 1e-6 is kept as
    1e-6), with the conditions it started ``at`` and the steal over it, as a run of the
    store with no result of its own (measuring keeps its result: ``store.keep_quietly``)."""
    t = time.time()
    steal = _steal(at.cpu_times, _cpu_times())
    machine, kernel, version = _machine(metadata)
    rows = []
    for (p, label), x, e in zip(points, figures, errors):
        if not (x > 0 and math.isfinite(x) and math.isfinite(e) and 0 < e <= x):
            continue
        rows.append({"point_id": label or f"(point {p})", "point_key": p, "value_us": x,
                     "ln_value": math.log(x), "rel_se": max(e / x, 1e-6)})  # fmt: skip
    if rows:
        run = {"run_key": secrets.token_hex(8), "time": t, "machine": machine, "kernel": kernel,
               "version": version, "kind": "history", "runnable_per_cpu": at.load,
               "steal": steal, "source": "history"}  # fmt: skip
        _with_store(lambda s: s.add([store.RowSet(run, rows)]), create=True)


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
        path = store.default_path()
    except OSError as e:
        return Summary(None, e.strerror or str(e), [])
    if path is None:
        return Summary(None, f"off (${store.ENV}={os.environ.get(store.ENV)})", [])
    if not is_on():
        return Summary(None, f"off (${ENV}={os.environ.get(ENV)})", [])
    t = time.time()
    machine, kernel, version = _machine(metadata)
    try:
        s = store.open(path, create=False)
        runs = (
            [] if s is None else list(map(_run, s.recent(machine, kernel, version, t - MAX_AGE_S)))
        )
        if s is not None:
            s.close()
    except OSError as e:
        return Summary(None, e.strerror or str(e), [])
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
        label = next((point(r.w)[1] for r in reversed(rs) if r.w), f"(point {p})")
        ages = [max(0.0, t - r.t) for r in rs]
        sd = None if level is None else level["sd"]
        points.append(PointRuns(label, len(rs), len(alike), sd, min(ages), max(ages)))
    return Summary(path, None, sorted(points, key=lambda x: x.label))


def clear(metadata: dict[str, Any]) -> tuple[Path | None, int]:
    """Removes from the store the runs of this machine, kernel and build of the last
    MAX_AGE_S, which are all a run learns from; the store and how many runs (a store that
    is off or absent: none). ``StoreRefused`` when it is not usable."""
    machine, kernel, version = _machine(metadata)
    s = store.open(create=False)
    if s is None:
        return store.default_path(), 0
    with s:
        return s.path, s.forget(machine, kernel, version, time.time() - MAX_AGE_S)


def headline(s: Summary) -> str:
    """Where the history is, what it holds and how to turn it off, in one line."""
    if s.path is None:
        return f"none: {s.why}" if s.why and not s.why.startswith("off") else str(s.why)
    runs = sum(p.runs for p in s.points)
    return (
        f"{s.path}: {runs} runs of {len(s.points)} points in the last {MAX_AGE_S / 3600:g} h "
        f"(${ENV}=off turns it off; the results store holds them)"
    )
