"""The public measuring functions: signatures that mirror the core's parameter table
(``_core.PARAMETERS``; checked by the tests), the run history and the machine's lock around
one core call each, and the result wrapping. The core decides every default and mode."""

from __future__ import annotations

import inspect
import operator
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from . import _core, _history, metadata, store
from ._exclusive import measuring
from .result import PingpongResult, RingResult


def result_metadata() -> dict[str, object]:
    """The machine's metadata now, as every result records it (and ``ctxbench info`` prints)."""
    from ._topology import core_types_here

    return metadata.collect(
        version=_core.__version__,
        extra={"compiler": _core.COMPILER or None, "core_types": core_types_here()},
    )


def ring(
    procs: int | Sequence[int],
    *,
    # BEGIN written by `python -m ctxbench._codegen` from _core.PARAMETERS; edit src/request
    engine: str = "process",
    transport: str | None = None,
    size_kb: int = 0,
    stride_bytes: int = 8,
    preset: str = "default",
    repetitions: int | None = None,
    precision: float | None = None,
    max_time: float | None = None,
    max_repetitions: int = 400,
    warmup: int = 1,
    parallel: int = 1,
    placement: str | Sequence[int] | None = "default",
    cpu: int | None = None,
    min_time: float | None = None,
    timeout: float = 10.0,
    record_hops: bool = False,
    counters: str = "evidence",
    policy: str | None = None,
    priority: int | None = None,
    nice: int | None = None,
    dl_runtime_us: int | None = None,
    dl_deadline_us: int | None = None,
    dl_period_us: int | None = None,
    cgroups: str | None = None,
    cgroup_depth: int = 1,
    cgroup_weight: int | None = None,
    interference: Mapping[str, float] | None = None,
    # END written by `python -m ctxbench._codegen`
    history: bool = True,
) -> RingResult:
    """Pass a token round rings of ``procs`` participants and report µs per switch.

    ``engine`` is who switches, one of ``ctxbench._core.ENGINES``: ``"process"`` (forked, as
    lat_ctx), ``"thread"`` (OS threads of this process) or ``"fiber"`` (user-space coroutines
    on one thread; one hop is a resume and a suspend through participant 0, invisible to the
    kernel). ``transport`` is how the token travels, one of ``_core.TRANSPORTS[engine]``; None
    is the engine's first (pipe for processes and threads, resume for fibers). The core
    rejects a combination it cannot run (``"yield"`` needs placement ``"single"``) with a
    ``ValueError`` that lists the valid ones. ``placement``: ``"default"`` (the scheduler
    decides), ``"single"`` (every participant on ``cpu``, else the first allowed: lmbench's
    ``LMBENCH_SCHED=SINGLE``), ``"spread"``, ``"balanced"``, or a list of CPU ids.
    ``parallel`` runs that many independent rings at once.

    Per switch = trip time / procs - overhead, where the overhead (the same hop and the same
    work, in one thread with hot caches) is measured in repetitions interleaved with the ring's.

    When to stop: by default each point measures blocks of short repetitions until the 95 %
    interval of its median (blocks, ring instances and, from ``history``, runs) lies within
    ± ``precision`` × median, or the spread between runs alone keeps it wider, or
    ``max_repetitions`` or ``max_time`` seconds of measuring are reached (``result.stopped``
    says which). ``preset`` names the precision and time cap used where these are None, the
    same for every measurement: ``"fast"`` (±5 %, 0.1 s), ``"default"`` (±2 %, 0.2 s),
    ``"rigorous"`` (±1 %, 2 s). ``repetitions=N`` makes exactly N instead, each followed by
    its own overhead repetition: lmbench's way (lat_ctx makes 11), after ``warmup`` untimed
    ones. ``min_time`` is the length of one timed repetition in seconds (None:
    ``ctxbench.PRECISION_MIN_TIME`` in precision mode, ``ctxbench.FIXED_MIN_TIME`` with a
    fixed count); ``timeout`` the seconds without progress after which a ring counts as hung
    and is killed. ``record_hops=True`` records every hop's wake-to-run latency.

    ``history``: no single run can see how much the next one will differ (the machine's
    drift over seconds to hours); earlier runs of the same points on this machine can. With
    ``history=True`` each point's interval holds that spread (``stats["sd_run"]``, from the
    last runs kept by ``ctxbench._history``), a point whose interval it dominates stops early
    (``"run_spread"``), and this run is kept for the next.

    ``stride_bytes`` is how each participant reads its ``size_kb`` array: 8 sums every word
    (lmbench3's ``bread``), 64 one word per cache line (the cost is then the lines brought
    in, not the adds); a power of two from 8 to 4096. ``result.resident_kb`` proves the
    working set: per point, the smallest KiB of any participant's array found resident and
    its own after measuring; below ``size_kb`` the result warns (zero page, swapped, shared).

    ``counters`` is who watches the timed repetitions, one of ``_core.COUNTERS``.
    ``"evidence"``: the kernel's own accounting of every participant, read at the edges of
    the timed windows (``switches_per_hop``, ``migrations``: ``switch_source`` "kernel"), and
    perf's hardware counters, where the CPU exposes them, in one untimed repetition per point
    after all timed ones. ``"off"``: no perf event at all. ``"timed"``: perf counters
    attached through the timed repetitions, to see what they cost: while a perf event is on
    any task, the kernel slows every context switch (several per cent here), and for a second
    after it closes, so no timed repetition starts within that second.

    ``policy`` is the scheduling policy of every participant and of the drivers, one of
    ``_core.POLICIES``: ``"other"``, ``"batch"`` (with ``nice``), ``"idle"``, ``"fifo"``,
    ``"rr"`` (with ``priority``, 1 to 99, default 1) or ``"deadline"`` (with
    ``dl_runtime_us``, ``dl_deadline_us``, ``dl_period_us``); None leaves every task as it
    inherits the caller's, and ``nice`` alone is policy other. Applied to each participant
    before the first token and to the drivers while they drive; refused before anything
    starts where a limit forbids it (``PermissionError`` naming it) and never run under
    another: ``result.policy``, ``priority`` and ``nice`` are what every task read back.

    ``cgroups`` places every participant, before it is released, in cgroups made for the
    point in the hierarchy with the cpu controller (``result.cgroup_hierarchy`` says which):
    ``"same"`` all in one group, ``"split"`` each in its own, so that every hop crosses
    groups; each leaf ``cgroup_depth`` groups below ctxbench's own, every group made with
    ``cgroup_weight`` (``cpu.weight``; v1: ``cpu.shares``) where given. They are removed when
    the point ends. Where none can be made (not root, read-only, no cpu controller) the
    ``OSError`` names the path and the cause.

    ``interference`` starts neighbours on the CPUs the participants are pinned to (every CPU
    this process may use where the scheduler places them) before each ring instance, and
    kills them after it: ``{"hogs": N, "duty": d, "thrash_kb": K, "rings": M, "queued": Q}``,
    any of them, N CPU-bound hogs each spinning ``duty`` of every 10 ms period, a thrasher
    writing a K KiB buffer line by line, M rings of two processes bouncing a byte over pipes,
    Q spinners under SCHED_IDLE that lengthen the run queue while taking almost no CPU (with
    ``policy="fifo"``, none: Gooch's run-queue-length axis). What they achieved (CPU time
    and, for queued tasks, run-queue wait over the span the rings were driven, the thrasher's
    resident KiB) is ``result.interference``, beside what was asked; with ``record_hops`` the
    hop percentiles are the figure to read (``result.hop_percentiles_us``).

    Every parameter's range and default is the core's (``ctxbench._core.PARAMETERS``).
    """
    asked = {k: v for k, v in locals().items() if k not in ("procs", "history")}
    meta = result_metadata()
    kept = _Kept(meta) if _switch("history", history) else None
    with measuring():
        raw = _core.ring(procs, history=kept, **asked)
    result = RingResult.from_core(raw, meta)
    if kept is not None:
        kept.keep(result)
    for message in result.warnings:
        warnings.warn(f"ctxbench: {message}", UserWarning, stacklevel=2)
    return result


class _Kept:
    """The run history of one call: asked by the core, with the identities of the points
    it resolved, for their earlier runs; the new run kept in the results store afterwards
    (``ctxbench.store``), with the conditions it started in and the steal over it."""

    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.ids: list[str] = []
        self.now: _history.Conditions | None = None
        self.started = time.time()

    def __call__(self, ids: list[str]) -> list[_history.History | None] | None:
        self.ids = list(ids)
        self.now = _history.conditions()
        self.started = time.time()
        points = [_history.point(i)[0] for i in ids]
        return _history.earlier(self.meta, points, self.now)

    def keep(self, result: RingResult | PingpongResult) -> None:
        if self.ids and self.now is not None:
            steal = _history.steal_since(self.now)
            store.keep_quietly(
                result, ids=self.ids, at=self.now, steal=steal, started=self.started,
                source="measured",
            )  # fmt: skip


def lat_ctx(procs: int | Sequence[int], **kwargs: Any) -> RingResult:
    """lmbench's lat_ctx: forked processes in a ring of Unix pipes, ``ring`` with its engine
    and transport; every other keyword argument of ``ring``."""
    fixed = {"engine", "transport"} & set(kwargs)
    if fixed:
        raise TypeError(
            f"lat_ctx() measures processes over pipes; use ring() to name {', '.join(fixed)}"
        )
    return ring(procs, **kwargs)


lat_ctx.__signature__ = inspect.signature(ring).replace(  # type: ignore[attr-defined]
    parameters=[
        p for name, p in inspect.signature(ring).parameters.items()
        if name not in ("engine", "transport")
    ]
)  # fmt: skip


def ring_points(procs: object, **asked: Any) -> list[_history.Point] | None:
    """The run history's id and words of each point a ``ring(procs, **asked)`` measures, from
    the point's canonical identity, which the core resolves (``point_id``). None for
    ``procs`` that are no counts (the core names them)."""
    if not _counts(procs):
        return None
    return [_history.point(identity) for identity in _core.ring_config(procs, **asked)["point_id"]]


def _switch(name: str, value: object) -> bool:
    """A True/False argument (numpy's bool too); 1 or "yes" is a TypeError naming it, as the
    core's own switches (``record_hops``) are."""
    if not isinstance(value, bool) and type(value).__name__ not in ("bool", "bool_"):
        raise TypeError(f"{name}: expected True or False, got {type(value).__name__}")
    return bool(value)


def _counts(procs: object) -> bool:
    """Whether ``procs`` is an int or a sequence of ints; anything else is left for the core
    to name (and an iterator is never consumed here)."""
    if isinstance(procs, (str, bytes, bool)):
        return False
    counts = procs if isinstance(procs, Sequence) else [procs]
    try:
        [operator.index(p) for p in counts]
    except TypeError:
        return False
    return not any(isinstance(p, bool) for p in counts)


def pingpong(
    loops: int | None = None,
    *,
    # BEGIN written by `python -m ctxbench._codegen` from _core.PARAMETERS; edit src/request
    threads: bool = False,
    engine: str | None = None,
    transport: str | None = None,
    preset: str = "default",
    repetitions: int | None = None,
    precision: float | None = None,
    max_time: float | None = None,
    max_repetitions: int = 400,
    placement: str | Sequence[int] | None = "default",
    cpu: int | None = None,
    min_time: float | None = None,
    timeout: float = 10.0,
    record_hops: bool = False,
    counters: str = "evidence",
    policy: str | None = None,
    priority: int | None = None,
    nice: int | None = None,
    dl_runtime_us: int | None = None,
    dl_deadline_us: int | None = None,
    dl_period_us: int | None = None,
    cgroups: str | None = None,
    cgroup_depth: int = 1,
    cgroup_weight: int | None = None,
    interference: Mapping[str, float] | None = None,
    # END written by `python -m ctxbench._codegen`
    history: bool = True,
) -> PingpongResult:
    """``perf bench sched pipe``: two processes (threads with ``threads=True``, perf's ``-T``;
    or any ``engine``, ``"fiber"`` too) bounce a token over ``transport`` (None: the engine's
    first, pipe for processes and threads). One op is one round trip, i.e. two switches; raw
    time, nothing subtracted.

    By default measured as a ring point is: short repetitions in fresh ring instances until
    the 95 % interval of the figure lies within ± ``precision`` (or ``max_time`` seconds or
    ``max_repetitions``; the ``preset``'s where None), so that the result has an interval
    and compares (``ctxbench.compare``, the pytest gate). ``loops=N`` is perf's own form
    instead: N round trips timed as one run, one sample, no interval; ``repetitions=N`` N
    timed repetitions. ``placement``, ``cpu``, ``min_time``, ``timeout``, ``history``,
    ``counters``, the scheduling policy (``policy``, ``priority``, ``nice``, ``dl_*``) and
    the ``cgroups`` ones: as for ``ring``.
    """
    asked = {k: v for k, v in locals().items() if k not in ("loops", "history")}
    meta = result_metadata()
    kept = _Kept(meta) if _switch("history", history) and loops is None else None
    with measuring():
        raw = _core.pingpong(loops, history=kept, **asked)
    result = PingpongResult.from_core(raw, meta)
    if kept is not None:
        kept.keep(result)
    return result
