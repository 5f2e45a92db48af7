"""How much of a switch is the cache: ``cache_sweep`` measures the ring over a log-spaced grid
of sizes, round-robin in the core, and splits each point's cost into direct (size 0) and
indirect (net(size) − net(0), the refill after the switch) with the refill bandwidth beside
the machine's streaming-read bandwidth; ``knees`` finds the working sets where the cost per
switch bends and names the cache each one leaves. See docs/guide/cache.md.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
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

# How a refill can read faster than the streaming read (the core's words, beside its rule).
REFILL_ABOVE_STREAM: str = _core.REFILL_ABOVE_STREAM
# What a sweep asks of its rings: those of its parameters that a ring takes too (the rest are
# its own: the grid, the rounds, the streaming read and the line).
_RING_ASKED = {p["name"] for p in _core.PARAMETERS if "ring" in p["doors"]} - {"procs"}


@dataclass(frozen=True)
class Caches:
    """What the participants' CPUs can cache: KiB per level (each CPU the placement uses
    counts its share of a cache, size ÷ the CPUs sharing it), the line size, and the sysfs
    tree it came from. The core's (``_core.cache_plan``)."""

    kb: dict[str, int]
    line_bytes: int = 64
    source: str = "/sys"

    @property
    def largest_kb(self) -> int:
        return max(self.kb.values(), default=0)

    def named(self) -> dict[str, int]:
        """Data and unified levels by the names ``knees`` reports: L1d, L2, ..., LLC last."""
        return named_levels(self.kb)


@dataclass(frozen=True, eq=False)
class CacheSweep:
    """A ``cache_sweep``: one ring result per size and the split of every point's cost.

    ``table`` has one row per (procs, size_kb): ``working_set_kb`` (procs × size),
    ``latency_us`` and its interval, ``direct_us`` (the same procs at size 0),
    ``indirect_us`` = net(size) − net(0) with its 95 % interval from the paired rounds,
    ``refill_kib_per_us`` (KiB brought back per µs of indirect cost) with its interval,
    ``refill_note`` (the core's: "" for a plain figure; "below resolution" where the
    indirect cost's interval reaches zero and "nothing to refill" at size 0, both with the
    rate NaN; "above streaming read" where the working set is past the largest cache share
    and the rate still exceeds the streaming read, which no refill from memory can:
    ``REFILL_ABOVE_STREAM`` says how it happens; nearer, where a refill from a cache is
    faster as a rule, a rate is not set against it),
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
    # BEGIN written by `python -m ctxbench._codegen` from _core.PARAMETERS: positional
    procs: int | Sequence[int] = (2, 8),
    # END written by `python -m ctxbench._codegen`
    sizes_kb: Sequence[int] | str = "auto",
    *,
    # BEGIN written by `python -m ctxbench._codegen` from _core.PARAMETERS; edit src/request
    engine: str = "process",
    transport: str | None = None,
    stride_bytes: int = 8,
    placement: str | Sequence[int] | None = "single",
    cpu: int | None = None,
    min_time: float | None = None,
    timeout: float = 10.0,
    rounds: int = 5,
    line_bytes: int | None = None,
    stream_kb: int | None = None,
    # END written by `python -m ctxbench._codegen`
    progress: bool | str = True,
    out: PathLike | None = None,
    hostname: bool = True,
) -> CacheSweep:
    """Measure rings of each ``procs`` at every size of ``sizes_kb`` in ``rounds`` rounds,
    round-robin: each round measures one block of every size and times a streaming read of
    the same workload over ``stream_kb`` KiB; refills count lines of ``line_bytes``. Size 0
    is added when missing. The defaults are the core's, from the host's sysfs
    (``CTXBENCH_SYSFS``, else ``/sys``) and bounded (``_core.cache_plan``): "auto" sizes
    reach a working set of 4 × the largest cache share the CPUs of ``placement`` can use
    (a cache shared by k CPUs counts a k-th per CPU), per ring size; the streaming read is
    max(64 MiB, 4 × that share); the line is the CPUs' (64 where sysfs gives none usable);
    each within the core's limits, half the memory this process can still get and a time
    budget, and ``sweep.note`` says what bounded one. Pinned to one CPU
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
    ring = {k: v for k, v in locals().items() if k in _RING_ASKED}
    pd = require("pandas", "cache_sweep")
    if isinstance(sizes_kb, str) and sizes_kb != "auto":
        raise ValueError(f'sizes_kb: expected "auto" or a sequence of ints, got {sizes_kb!r}')
    counts = (
        [procs] if isinstance(procs, int) else listed("procs", procs, "process counts", once=True)
    )
    sizes = (
        [] if isinstance(sizes_kb, str) else listed("sizes_kb", sizes_kb, "sizes in KiB", once=True)
    )
    # The grids, the streaming read and the line: the core's, from the host and its budgets.
    named = None if isinstance(sizes_kb, str) else sizes
    plan = _core.cache_plan(
        counts, named, rounds=rounds, line_bytes=line_bytes, stream_kb=stream_kb, **ring
    )
    caches = Caches(plan["caches"], plan["line_bytes"], plan["sysfs"]) if plan["caches"] else None
    note = "; ".join(plan["notes"]) or None
    grids = dict(zip(counts, plan["sizes_kb"]))
    if out is not None:
        format_of(out)
        check_writable(out)
    if progress is not False and plan["estimated_s"] > _core.LONG_RUN_S:
        from ._host_plan import sizes_starting

        print(f"ctxbench sizes: {sizes_starting(plan)}", file=sys.stderr)
    for p in counts:  # every ring size, before any is measured
        _core.ring_check([p], size_kb=max(grids[p]), repetitions=_core.BLOCK_REPETITIONS, **ring)
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
                rounds=rounds,
                line_bytes=plan["line_bytes"],
                stream_kb=plan["stream_kb"],
                progress=lambda done, of, p=p: steps.step(f"{p} procs, {len(grids[p])} sizes"),
                **ring,
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
