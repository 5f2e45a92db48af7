"""The public measuring functions: argument defaults and result wrapping, nothing more."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Union

from . import _core, metadata
from .result import PingpongResult, RingResult

Placement = Union[str, Sequence[int]]


def result_metadata() -> dict[str, object]:
    """The machine's metadata now, as every result records it (and ``ctxbench info`` prints)."""
    return metadata.collect(
        version=_core.__version__,
        extra={"compiler": _core.COMPILER or None},
    )


def ring(
    procs: int | Sequence[int],
    *,
    engine: str = "process",
    transport: str | None = None,
    size_kb: int = 0,
    repetitions: int | None = None,
    precision: float = _core.DEFAULT_PRECISION,
    max_time: float = _core.DEFAULT_MAX_TIME,
    max_repetitions: int = _core.DEFAULT_MAX_REPETITIONS,
    warmup: int = 1,
    parallel: int = 1,
    placement: Placement = "default",
    cpu: int | None = None,
    min_time: float | None = None,
    timeout: float = _core.DEFAULT_TIMEOUT,
    record_hops: bool = False,
    stride_bytes: int = 8,
) -> RingResult:
    """Pass a token round rings of ``procs`` participants and report µs per switch.

    ``engine`` is who switches, one of ``ctxbench._core.ENGINES``: ``"process"`` (forked, as
    lat_ctx), ``"thread"`` (OS threads of this process) or ``"fiber"`` (user-space coroutines
    on one thread; one hop is a resume and a suspend through participant 0, invisible to the
    kernel). ``transport`` is how the token travels, one of ``_core.TRANSPORTS[engine]``; None
    is the engine's first (pipe for processes and threads, resume for fibers). The core
    rejects a combination it cannot run (``"yield"`` needs placement ``"single"``) with a
    ``ValueError`` that lists the valid ones.

    Per switch = trip time / procs - overhead, where the overhead (the same hop and the same
    work, in one thread with hot caches) is measured in repetitions interleaved with the ring's.

    When to stop: by default each point measures blocks of short repetitions until the 95 %
    interval of its median, built from the spread between blocks, lies within ± ``precision``
    × median, or ``max_repetitions`` or ``max_time`` seconds of measuring are reached
    (``result.stopped`` says which). ``repetitions=N`` makes exactly N instead, each followed
    by its own overhead repetition: lmbench's way (lat_ctx makes 11). ``min_time`` is the
    length of one timed repetition in seconds (None: 0.005 in precision mode, 0.05 with a
    fixed count); ``timeout`` the seconds without progress after which a ring counts as hung
    and is killed.

    ``stride_bytes`` is how each participant reads its ``size_kb`` array: 8 sums every word
    (lmbench3's ``bread``), 64 one word per cache line (the cost is then the lines brought
    in, not the adds); a power of two from 8 to 4096. ``result.resident_kb`` proves the
    working set: per point, the smallest KiB of any participant's array found resident and
    its own after measuring; below ``size_kb`` the result warns (zero page, swapped, shared).
    """
    meta = result_metadata()
    raw = _core.ring(
        procs,
        engine=engine,
        transport=transport,
        size_kb=size_kb,
        repetitions=repetitions,
        precision=precision,
        max_time=max_time,
        max_repetitions=max_repetitions,
        warmup=warmup,
        parallel=parallel,
        placement=placement,
        cpu=cpu,
        min_time=min_time,
        timeout=timeout,
        record_hops=record_hops,
        stride_bytes=stride_bytes,
    )
    result = RingResult.from_core(raw, meta)
    for message in result.warnings:
        warnings.warn(f"ctxbench: {message}", UserWarning, stacklevel=2)
    return result


def lat_ctx(
    procs: int | Sequence[int],
    *,
    size_kb: int = 0,
    repetitions: int | None = None,
    precision: float = _core.DEFAULT_PRECISION,
    max_time: float = _core.DEFAULT_MAX_TIME,
    max_repetitions: int = _core.DEFAULT_MAX_REPETITIONS,
    warmup: int = 1,
    parallel: int = 1,
    placement: Placement = "default",
    cpu: int | None = None,
    min_time: float | None = None,
    timeout: float = _core.DEFAULT_TIMEOUT,
    record_hops: bool = False,
    stride_bytes: int = 8,
) -> RingResult:
    """lmbench's lat_ctx: forked processes in a ring of Unix pipes (``ring`` with defaults)."""
    return ring(
        procs,
        size_kb=size_kb,
        repetitions=repetitions,
        precision=precision,
        max_time=max_time,
        max_repetitions=max_repetitions,
        warmup=warmup,
        parallel=parallel,
        placement=placement,
        cpu=cpu,
        min_time=min_time,
        timeout=timeout,
        record_hops=record_hops,
        stride_bytes=stride_bytes,
    )


def pingpong(
    loops: int = 1_000_000,
    *,
    threads: bool = False,
    transport: str = "pipe",
    placement: Placement = "default",
    cpu: int | None = None,
    timeout: float = _core.DEFAULT_TIMEOUT,
) -> PingpongResult:
    """``perf bench sched pipe``: two processes (threads with ``threads=True``, perf's ``-T``)
    bounce a token ``loops`` times. One op is one round trip, i.e. two switches."""
    meta = result_metadata()
    raw = _core.pingpong(
        loops,
        threads=threads,
        transport=transport,
        placement=placement,
        cpu=cpu,
        timeout=timeout,
    )
    return PingpongResult.from_core(raw, meta)
