"""``ctxbench.matrix``: the wake-up cost between every pair of CPUs, on the machine's
topology. Defaults and wrapping; the cells are chosen, ordered and measured in the core."""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from . import _core, _history, store
from ._exclusive import measuring
from ._host_plan import cells_asked, starting
from ._progress import check, progress_bar
from .api import result_metadata
from .files import PathLike, check_writable, format_of, save, suffixes
from .result import MatrixResult

if TYPE_CHECKING:
    import pandas as pd


def _reporter(progress: bool | str) -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """The callback the core calls after each cell, and what closes its bar."""
    bars: list[Any] = []

    def report(done: int, total: int) -> None:
        if not bars:
            bar = progress_bar(progress, total, "ctxbench matrix", unit="cell")
            if bar is None:
                return
            bars.append(bar)
        bars[0].update(done - bars[0].n)

    def close() -> None:
        for bar in bars:
            bar.close()

    check(progress)  # now, so that a bad value fails before the first cell
    return (report if progress is not False else None), close


def matrix(
    cpus: Sequence[int] | None = None,
    *,
    # BEGIN written by `python -m ctxbench._codegen` from _core.PARAMETERS; edit src/request
    engine: str = "thread",
    transport: str = "futex",
    size_kb: int = 0,
    stride_bytes: int = 8,
    preset: str = "default",
    repetitions: int | None = None,
    precision: float | None = None,
    max_time: float | None = None,
    max_repetitions: int = 400,
    warmup: int = 1,
    min_time: float | None = None,
    timeout: float = 10.0,
    record_hops: bool = False,
    counters: str = "evidence",
    policy: str | None = None,
    priority: int | None = None,
    nice: int | None = None,
    full: bool = False,
    passes: int = 1,
    memory_node: str | int | None = None,
    # END written by `python -m ctxbench._codegen`
    classes: bool | int | None = None,
    progress: bool | str = True,
    out: PathLike | None = None,
    hostname: bool = True,
    scheduler: str | None = None,
    client: Any = None,
) -> MatrixResult | pd.DataFrame:
    """Measure the wake-up cost between CPUs: for each ordered pair (waker i, wakee j) of
    ``cpus`` (default: every CPU this process may use), a ring of two participants pinned
    i→j; the diagonal has both on one CPU.

    A cell's ``latency_us`` is the ring's median net time per switch, (round trip ÷ 2) −
    overhead: the mean of the i→j and the j→i wake-up, so cells (i, j) and (j, i) measure the
    same pair of directions with the timing participant on either side. ``record_hops=True``
    adds the i→j direction alone (``wake_us``: wake-to-run percentiles of the hops into j),
    after checking that the two CPUs' clocks agree well enough to subtract their stamps.

    Each cell is measured as ``ring`` measures a point, with the same ``preset`` and
    ``counters``: until the 95 % interval of its median is within ± ``precision``, or
    ``max_time`` seconds or ``max_repetitions`` (the preset's precision and time unless
    given); repetitions of ``min_time`` seconds, or exactly ``repetitions``. Cells run in an
    order that spreads the host's drift over every class (never row by row); ``passes=2``
    measures every cell twice, the second pass backwards.

    Which cells: by default every ordered pair where that fits the time budget
    (``_core.TIME_BUDGET_S``, each cell at its cap), else a sample of each class of CPU pairs
    — the pair's ``relation`` ("same-cpu", "smt-sibling", "shared-l2", "shared-llc",
    "same-package", "cross-package") and NUMA distance — as many per class as the budget
    holds and never fewer than ``_core.MATRIX_MIN_PER_CLASS``, so that every class's figure
    has an interval: a big machine, where every pair costs N² cells, in minutes.
    ``full=True`` (or ``classes=False``) measures every pair whatever it takes;
    ``classes=True`` 8 cells per class, ``classes=k`` k; the cells are chosen
    deterministically and spread over the machine. ``ctxbench.matrix_plan`` says what a
    matrix would measure and take, before anything runs; a run planned past
    ``_core.LONG_RUN_S`` says so on stderr as it starts.

    ``policy``, ``priority`` and ``nice``: every cell's tasks under that scheduling policy,
    as for ``ring`` (not "deadline": the kernel refuses it for pinned tasks).

    ``memory_node``: on a machine with several NUMA nodes each cell's memory is bound to the
    waker's node by default (``"wakee"``, or a node id, to choose), and where a probe page
    landed is recorded (``memory_node_seen``); on one node nothing is placed unless asked.

    ``engine`` is "thread" or "process"; ``transport`` any that wakes a task on another CPU
    (not "yield", which only the diagonal can use). ``progress``: a bar with an ETA when
    someone watches (see ``ctxbench.sweep``). ``out``: also write the result there (.json,
    .csv or .parquet; checked before the first cell), ``hostname=False`` withholding this
    machine's name. With ``scheduler``/``client``, every machine of a Dask cluster measures
    its own matrix and one tidy frame comes back (``ctxbench.fleet.matrix``). Returns a
    :class:`MatrixResult` (``.to_frame()``, ``.summary()``, ``.save()``;
    ``ctxbench.plot.matrix`` draws it).
    """
    if out is not None:
        _check_out(out)
    args = {
        "engine": engine,
        "transport": transport,
        "size_kb": size_kb,
        "stride_bytes": stride_bytes,
        "repetitions": repetitions,
        "preset": preset,
        "precision": precision,
        "max_time": max_time,
        "max_repetitions": max_repetitions,
        "warmup": warmup,
        "min_time": min_time,
        "timeout": timeout,
        "counters": counters,
        "record_hops": record_hops,
        **cells_asked(classes, full),
        "passes": passes,
        "memory_node": memory_node,
        **{
            k: v
            for k, v in (("policy", policy), ("priority", priority), ("nice", nice))
            if v is not None
        },
    }
    if scheduler is not None or client is not None:
        from . import fleet

        if not hostname:
            raise ValueError("hostname: a fleet matrix names each machine by its hostname")
        return fleet.matrix(
            cpus, args, progress=progress, scheduler=scheduler, client=client, out=out
        )
    result = measure(cpus, args, progress)
    if out is not None:
        save(result, out, hostname=hostname)
    return result


def _check_out(out: PathLike) -> None:
    """Fail before measuring on a file the result cannot be written to."""
    # lat_ctx's xgraph text holds ring curves only.
    if Path(out).suffix.lower() not in suffixes("records", "table"):
        raise ValueError(
            f"out: {out}: a matrix is written as {', '.join(suffixes('records', 'table'))}"
        )
    format_of(out)
    check_writable(out)


def measure(cpus: Sequence[int] | None, args: dict[str, Any], progress: bool | str) -> MatrixResult:
    """The matrix of ``_core.matrix(cpus, **args)`` on this machine, as a result, kept in the
    results store (``ctxbench.store``: its record, labels and machine) as a ring's run is."""
    meta = result_metadata()
    if progress is not False:
        # The live host the run measures, whatever CTXBENCH_SYSFS describes.
        plan = _core.matrix_plan(cpus, sysfs="/sys", **args)
        if plan["estimated_s"] > _core.LONG_RUN_S:
            print(f"ctxbench matrix: {starting(plan)}", file=sys.stderr)
    report, close = _reporter(progress)
    try:
        with measuring():
            now, started = _history.conditions(), time.time()
            raw = _core.matrix(cpus, progress=report, **args)
    finally:
        close()
    result = MatrixResult.from_core(raw, meta)
    store.keep_quietly(
        result, at=now, steal=_history.steal_since(now), started=started, source="measured"
    )
    for message in result.warnings:
        warnings.warn(f"ctxbench: {message}", UserWarning, stacklevel=3)
    return result
