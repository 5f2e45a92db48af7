"""How much of a switch is the cache: ``cache_sweep`` measures the ring over a log-spaced grid
of sizes, round-robin in the core, and splits each point's cost into direct (size 0) and
indirect (net(size) − net(0), the refill after the switch) with the refill bandwidth beside
the machine's streaming-read bandwidth; ``knees`` finds the working sets where the cost per
switch bends and names the cache each one leaves. See docs/guide/cache.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import _core
from ._exclusive import measuring
from ._knees import knees as knees  # ctxbench.cache.knees, as before it had its module
from ._knees import named_levels
from ._progress import Steps
from .api import result_metadata
from .files import PathLike, check_writable, format_of, save
from .frame import concat, require
from .grid import listed
from .result import RingResult

if TYPE_CHECKING:
    import pandas as pd

Placement = Union[str, Sequence[int]]

# Used when sysfs has no cache information: 4 KiB to 64 MiB per participant, every octave.
DEFAULT_GRID_KB: tuple[int, ...] = (0, *(2**k for k in range(2, 17)))
# Working sets reach at least this many times the largest cache the participants can use.
REACH = 4
# Smallest non-zero size of an automatic grid, and its points per octave.
FIRST_KB = 4
PER_OCTAVE = 2
# The streaming read sums at least this much (or REACH x the largest cache).
MIN_STREAM_KB = 64 * 1024
# How a refill can read faster than the streaming read (the core's words, beside its rule).
REFILL_ABOVE_STREAM: str = _core.REFILL_ABOVE_STREAM


@dataclass(frozen=True)
class Caches:
    """What the participants' CPUs can cache: KiB per level (summed over the distinct
    instances those CPUs use, e.g. one L2 per core), the line size, and where it came from."""

    kb: dict[str, int]
    line_bytes: int = 64
    source: str = "ctxbench.topology()"

    @property
    def largest_kb(self) -> int:
        return max(self.kb.values(), default=0)

    def named(self) -> dict[str, int]:
        """Data and unified levels by the names ``knees`` reports: L1d, L2, ..., LLC last."""
        return named_levels(self.kb)


def _caches(cpus: Sequence[int]) -> Caches | None:
    """What the CPUs ``cpus`` can cache, from ``ctxbench.topology()``: each level's size summed
    over the distinct instances those CPUs use. The line size, which the topology does not
    hold, from sysfs (``cpu0/cache/index0/coherency_line_size``; 64 where absent). None where
    sysfs says nothing of caches."""
    from ._topology import topology

    wanted = set(cpus)
    kb: dict[str, int] = {}
    for cache in topology().caches:
        if cache["size_kb"] is not None and wanted & {int(c) for c in cache["cpus"]}:
            kb[cache["name"]] = kb.get(cache["name"], 0) + int(cache["size_kb"])
    if not kb:
        return None
    line = Path("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size")
    try:
        return Caches(kb, int(line.read_text()))
    except (OSError, ValueError):
        return Caches(kb)


def auto_sizes(procs: Sequence[int], caches: Caches | None) -> list[int]:
    """0, then sizes per participant from ``FIRST_KB`` on, ``PER_OCTAVE`` per octave, until
    the smallest ring's working set (procs × size) is at least ``REACH`` × the largest cache;
    ``DEFAULT_GRID_KB`` without cache information."""
    if caches is None or caches.largest_kb == 0:
        return list(DEFAULT_GRID_KB)
    top = REACH * caches.largest_kb / min(procs)
    octaves = max(1, math.ceil(math.log2(top / FIRST_KB)))
    steps = range(octaves * PER_OCTAVE + 1)
    return [0, *sorted({round(FIRST_KB * 2 ** (k / PER_OCTAVE)) for k in steps})]


@dataclass(frozen=True, eq=False)
class CacheSweep:
    """A ``cache_sweep``: one ring result per size and the split of every point's cost.

    ``table`` has one row per (procs, size_kb): ``working_set_kb`` (procs × size),
    ``latency_us`` and its interval, ``direct_us`` (the same procs at size 0),
    ``indirect_us`` = net(size) − net(0) with its 95 % interval from the paired rounds,
    ``refill_kib_per_us`` (KiB brought back per µs of indirect cost) with its interval,
    ``refill_note`` (the core's: "" for a plain figure; "below resolution" where the
    indirect cost's interval reaches zero and "nothing to refill" at size 0, both with the
    rate NaN; "above streaming read" where the rate exceeds the streaming read, which no
    refill from memory can: ``REFILL_ABOVE_STREAM`` says how it happens),
    ``stream_kib_per_us`` (the median of the streaming reads timed in the rounds of that
    ring size), ``resident_kb``. ``frame()`` is the tidy frame of every repetition, what
    ``knees`` and ``plot.sizes`` read.
    """

    results: list[RingResult]
    table: pd.DataFrame
    stream_kib_per_us: np.ndarray
    caches: Caches | None
    note: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def frame(self) -> pd.DataFrame:
        return concat(self.results)


def cache_sweep(
    procs: int | Sequence[int] = (2, 8),
    sizes_kb: Sequence[int] | str = "auto",
    *,
    engine: str = "process",
    transport: str | None = None,
    stride_bytes: int = 8,
    rounds: int = _core.DEFAULT_ROUNDS,
    placement: Placement = "single",
    cpu: int | None = None,
    min_time: float | None = None,
    timeout: float = _core.DEFAULT_TIMEOUT,
    line_bytes: int | None = None,
    stream_kb: int | None = None,
    progress: bool | str = True,
    out: PathLike | None = None,
    hostname: bool = True,
) -> CacheSweep:
    """Measure rings of each ``procs`` at every size of ``sizes_kb`` ("auto": ``auto_sizes``
    from the caches of the CPUs ``placement`` allows, up to a working set of 4 × the
    largest, for each ring size) in ``rounds`` rounds, round-robin: each round measures one block of
    every size and times a streaming read of the same workload over ``stream_kb`` KiB
    (default max(64 MiB, 4 × the largest cache)); refills count lines of ``line_bytes``
    (default: the CPUs' line, from sysfs). Size 0 is added when missing. Pinned to one CPU
    by default (``placement="single"``), as lmbench's Figure 2 and Li et al. measure.
    ``progress`` as in ``ctxbench.sweep``, one step per round of each ring size; where no
    bar shows (stderr not a terminal, outside Jupyter) ``progress=True`` prints a line per
    round on stderr.

    Each ring size and each size is named once (twice is a ``ValueError`` naming it, as for
    a sweep's axes). Every ring size is checked before the first is measured, as ``ring``
    checks a point (its placement, its memory, the tasks it starts against the process
    limits). With ``out`` (any format of ``ctxbench.files.FORMATS``, checked first), the
    results of each ring size are written there as it finishes: a failure later keeps them
    (``hostname=False`` as for ``save``).
    """
    pd = require("pandas", "cache_sweep")
    if isinstance(sizes_kb, str) and sizes_kb != "auto":
        raise ValueError(f'sizes_kb: expected "auto" or a sequence of ints, got {sizes_kb!r}')
    counts = (
        [procs] if isinstance(procs, int) else listed("procs", procs, "process counts", once=True)
    )
    if not counts:
        raise ValueError("procs: must name at least one process count")
    sizes = (
        [] if isinstance(sizes_kb, str) else listed("sizes_kb", sizes_kb, "sizes in KiB", once=True)
    )
    caches = _caches(_core.placement_cpus(placement, cpu, max(counts)))
    note = None
    if isinstance(sizes_kb, str) and caches is None:
        note = (
            "sysfs has no cache sizes for these CPUs: sizes_kb='auto' uses the default grid "
            f"{list(DEFAULT_GRID_KB)} KiB"
        )
    grids = {
        p: auto_sizes([p], caches) if isinstance(sizes_kb, str) else sorted({0, *sizes})
        for p in counts
    }
    if out is not None:
        format_of(out)
        check_writable(out)
    for p in counts:  # every ring size, before any is measured
        _core.ring_check([p], engine=engine, transport=transport, size_kb=max(grids[p]),
                         stride_bytes=stride_bytes, placement=placement, cpu=cpu,
                         repetitions=_core.BLOCK_REPETITIONS, min_time=min_time,
                         timeout=timeout)  # fmt: skip
    if stream_kb is None:
        stream_kb = max(MIN_STREAM_KB, REACH * (caches.largest_kb if caches else 0))
    if line_bytes is None and caches is not None:
        line_bytes = caches.line_bytes
    meta = result_metadata()
    results, tables, stream = [], [], []
    steps = Steps(progress, rounds * len(counts), "ctxbench sweep of sizes", "round")
    # One ring size at a time: each has its own grid, and size 0 to pair every round with.
    # The one needing the most memory first: the core refuses a grid that cannot fit before
    # forking, so a sweep that cannot fit fails before anything is measured.
    for p in sorted(counts, key=lambda p: -p * max(grids[p])):
        with measuring():
            raw = _core.cache_sweep(
                [p],
                grids[p],
                engine=engine,
                transport=transport,
                stride_bytes=stride_bytes,
                rounds=rounds,
                placement=placement,
                cpu=cpu,
                min_time=min_time,
                timeout=timeout,
                line_bytes=line_bytes,
                stream_kb=stream_kb,
                progress=lambda done, of, p=p: steps.step(f"{p} procs, {len(grids[p])} sizes"),
            )
        ours = [RingResult.from_core(r, meta) for r in raw["results"]]
        results += ours
        if out is not None:
            save(sorted(results, key=_order), out, hostname=hostname)
        # Each ring size's rows beside the streaming read the core checked its refills against.
        tables.append((ours, raw["indirect"], float(np.median(raw["stream_kib_per_us"]))))
        stream += list(raw["stream_kib_per_us"])
    steps.close()
    results.sort(key=_order)
    tables.sort(key=lambda t: int(t[0][0].procs[0]))
    table = pd.concat([_table(pd, *t) for t in tables], ignore_index=True)
    return CacheSweep(
        results=results,
        table=table,
        stream_kib_per_us=np.asarray(stream),
        caches=caches,
        note=note,
        metadata=meta,
    )


def _order(r: RingResult) -> tuple[int, int]:
    return int(r.procs[0]), r.size_kb


def _table(pd: Any, results: list[RingResult], split: Any, stream: float) -> pd.DataFrame:
    """One row per (procs, size) of one core sweep; see ``CacheSweep``."""
    zero = next(j for j, r in enumerate(results) if r.size_kb == 0)
    rows = []
    for j, r in enumerate(results):
        for k, p in enumerate(r.procs.tolist()):
            rows.append({
                "procs": p,
                "size_kb": r.size_kb,
                "stride_bytes": r.stride_bytes,
                "working_set_kb": p * r.size_kb,
                "latency_us": float(r.latency_us[k]),
                "ci_low": float(r.stats["ci_low"][k]),
                "ci_high": float(r.stats["ci_high"][k]),
                "direct_us": float(results[zero].latency_us[k]),
                "indirect_us": float(split["us"][j][k]),
                "indirect_low_us": float(split["low_us"][j][k]),
                "indirect_high_us": float(split["high_us"][j][k]),
                "refill_kib_per_us": float(split["refill_kib_per_us"][j][k]),
                "refill_low": float(split["refill_low"][j][k]),
                "refill_high": float(split["refill_high"][j][k]),
                "refill_note": str(split["refill_note"][j][k]),
                "stream_kib_per_us": stream,
                "resident_kb": int(r.resident_kb[k]),
            })  # fmt: skip
    return pd.DataFrame(rows)
