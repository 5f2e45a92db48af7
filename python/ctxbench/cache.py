"""How much of a switch is the cache: ``cache_sweep`` measures the ring over a log-spaced grid
of sizes, round-robin in the core, and splits each point's cost into direct (size 0) and
indirect (net(size) − net(0), the refill after the switch) with the refill bandwidth beside
the machine's streaming-read bandwidth; ``knees`` finds the working sets where the cost per
switch bends and names the cache each one leaves. See docs/guide/cache.md.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import _core
from ._exclusive import measuring
from ._progress import progress_bar
from .api import result_metadata
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
# The last level's name in `knees`, whatever its number.
LAST_LEVEL = "LLC"
BOOTSTRAP = 400
# How a refill can read faster than the streaming read (the core's words, beside its rule).
REFILL_ABOVE_STREAM: str = _core.REFILL_ABOVE_STREAM
# Repetitions per block: a cache sweep's round at one point, a precision-mode block elsewhere.
BLOCK = 4


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


def named_levels(kb: dict[str, int]) -> dict[str, int]:
    """{"L1d": .., "L2": .., "L3": ..} as {"L1d": .., "L2": .., "LLC": ..}: instruction
    caches left out, the highest level above 1 named ``LAST_LEVEL``."""
    data = {k: v for k, v in kb.items() if not k.endswith("i")}
    levels = [k for k in data if k[1:].isdigit() and int(k[1:]) > 1]
    last = max(levels, key=lambda k: int(k[1:]), default=None)
    return {(LAST_LEVEL if k == last else k): v for k, v in data.items()}


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


def _cpus(placement: Placement, cpu: int | None) -> list[int]:
    """The CPUs the participants may run on: one for "single" (the lowest allowed, or
    ``cpu``), the named ones for a list, else every allowed CPU."""
    allowed = sorted(os.sched_getaffinity(0))
    if isinstance(placement, str):
        if placement == "single":
            return [cpu if cpu is not None else allowed[0]]
        return allowed
    return sorted(set(placement))


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
    progress: bool | str = True,
) -> CacheSweep:
    """Measure rings of each ``procs`` at every size of ``sizes_kb`` ("auto": ``auto_sizes``
    from the caches of the CPUs ``placement`` allows, up to a working set of 4 × the largest,
    for each ring size) in ``rounds`` rounds, round-robin: each round measures one block of
    every size and times a streaming read of the same workload over max(64 MiB, 4 × the
    largest cache). Size 0 is added when missing. Pinned to one CPU by default
    (``placement="single"``), as lmbench's Figure 2 and Li et al. measure. ``progress`` as
    in ``ctxbench.sweep`` (one step per ring size).
    """
    pd = require("pandas", "cache_sweep")
    if isinstance(sizes_kb, str) and sizes_kb != "auto":
        raise ValueError(f'sizes_kb: expected "auto" or a sequence of ints, got {sizes_kb!r}')
    counts = [procs] if isinstance(procs, int) else listed("procs", procs, "process counts")
    if not counts:
        raise ValueError("procs: must name at least one process count")
    sizes = [] if isinstance(sizes_kb, str) else listed("sizes_kb", sizes_kb, "sizes in KiB")
    caches = _caches(_cpus(placement, cpu))
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
    largest = caches.largest_kb if caches else 0
    stream_kb = max(MIN_STREAM_KB, REACH * largest)
    meta = result_metadata()
    results, tables, stream = [], [], []
    bar = progress_bar(progress, len(counts), "ctxbench sweep of sizes")
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
                line_bytes=caches.line_bytes if caches else 64,
                stream_kb=stream_kb,
            )
        ours = [RingResult.from_core(r, meta) for r in raw["results"]]
        results += ours
        # Each ring size's rows beside the streaming read the core checked its refills against.
        tables.append((ours, raw["indirect"], float(np.median(raw["stream_kib_per_us"]))))
        stream += list(raw["stream_kib_per_us"])
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    results.sort(key=lambda r: (int(r.procs[0]), r.size_kb))
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


def knees(
    data: CacheSweep | pd.DataFrame,
    caches: dict[str, int] | None = None,
    *,
    bootstrap: int = BOOTSTRAP,
    seed: int = 0,
) -> pd.DataFrame:
    """The working sets (procs × size_kb) where the cost per switch bends, per curve.

    For each curve (one ``procs``, engine, transport, placement) the cost of refilling one
    KiB, z = (net(size) − net(0)) / size, is fitted as a step function of log2(working set)
    (optimal partitioning, each point weighted by 1 / its bootstrap variance, a penalty of
    3 ln n per step): below a cache z is about 0, past it about 1 / the next level's
    bandwidth. Each rising step is a knee, placed where z crosses halfway between the two
    levels. Its 95 % interval comes from a bootstrap over the blocks (in a ``cache_sweep``,
    the rounds; resampled alike at every size, so that the pairing with size 0 stays), the
    steps kept. ``cache`` names the cache whose size is nearest the knee, within an octave
    (``L1d``, ``L2``, ``LLC``; None if none is), from ``caches`` or else the sizes the data
    recorded (``cache_*_kb`` columns, the CPU's) or the sweep's own.

    Returns a frame with the curve's keys and ``working_set_kb``, ``working_set_low_kb``,
    ``working_set_high_kb``, ``size_kb`` (per participant), ``cache``, ``cache_kb``,
    ``before_us_per_kib`` and ``after_us_per_kib`` (the two levels). Deterministic for a
    given ``seed``.
    """
    pd = require("pandas", "knees")
    df = data.frame() if isinstance(data, CacheSweep) else data
    missing = {"procs", "size_kb", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"knees: the frame lacks column(s) {sorted(missing)}")
    if caches is None:
        caches = _recorded_caches(data, df)
    named = named_levels(caches or {})
    keys = [c for c in ("engine", "transport", "placement", "stride_bytes", "procs") if c in df]
    rng = np.random.default_rng(seed)
    rows = []
    for key, g in df.groupby(keys, sort=True):
        curve = _curve(g)
        for knee in _curve_knees(curve, bootstrap, rng):
            label = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
            cache, cache_kb = _nearest_cache(knee["working_set_kb"], named)
            rows.append({
                **label,
                **knee,
                "size_kb": knee["working_set_kb"] / label["procs"],
                "cache": cache,
                "cache_kb": cache_kb,
            })  # fmt: skip
    columns = [*keys, "working_set_kb", "working_set_low_kb", "working_set_high_kb",
               "size_kb", "cache", "cache_kb", "before_us_per_kib", "after_us_per_kib"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _recorded_caches(data: Any, df: pd.DataFrame) -> dict[str, int] | None:
    if isinstance(data, CacheSweep) and data.caches is not None:
        return data.caches.kb
    cols = [c for c in df.columns if c.startswith("cache_") and c.endswith("_kb")]
    found = {c[len("cache_") : -len("_kb")]: df[c].dropna() for c in cols}
    return {k: int(v.iloc[0]) for k, v in found.items() if len(v)} or None


def _curve(g: pd.DataFrame) -> dict[str, Any]:
    """Per size: its block medians (round order). Needs size 0."""
    sizes = sorted(int(s) for s in g["size_kb"].unique())
    if 0 not in sizes or len(sizes) < 3:
        raise ValueError(
            "knees: each curve needs size 0 (the direct cost) and at least two other sizes; "
            f"procs={int(g['procs'].iloc[0])} has sizes {sizes}"
        )
    blocks = {}
    for size, h in g.groupby("size_kb"):
        h = h.sort_values("repetition") if "repetition" in h.columns else h
        v = h["value"].to_numpy(dtype=float)
        n = max(1, len(v) // BLOCK)
        blocks[int(size)] = np.array([np.median(c) for c in np.array_split(v, n)])
    width = min(len(b) for b in blocks.values())
    return {"sizes": np.array(sizes), "blocks": np.array([blocks[s][:width] for s in sizes]),
            "procs": int(g["procs"].iloc[0])}  # fmt: skip


def _per_kib(curve: dict[str, Any], rounds: np.ndarray) -> np.ndarray:
    """z = (net(size) − net(0)) / size for sizes > 0, from the blocks ``rounds`` picks."""
    m = np.median(curve["blocks"][:, rounds], axis=1)
    sizes = curve["sizes"]
    return (m[1:] - m[0]) / sizes[1:]


def _curve_knees(curve: dict[str, Any], bootstrap: int, rng: Any) -> list[dict[str, float]]:
    nblocks = curve["blocks"].shape[1]
    x = np.log2(curve["procs"] * curve["sizes"][1:].astype(float))
    z = _per_kib(curve, np.arange(nblocks))
    boots = np.array([_per_kib(curve, rng.integers(0, nblocks, nblocks)) for _ in range(bootstrap)])
    sd = boots.std(axis=0) if nblocks > 1 else np.zeros_like(z)
    sd = np.maximum(sd, 1e-3 * max(float(np.abs(z).max()), 1e-12))
    w = 1.0 / sd**2
    plateaus = _plateaus(z, w, _segments(z, w, 3.0 * math.log(len(z))))
    out = []
    for before, after in zip(plateaus, plateaus[1:]):
        here = _step(x, z, w, before, after)
        if here is None:
            continue
        spread = [k[0] for b in boots if (k := _step(x, b, w, before, after, rising=False))]
        lo, hi = np.percentile(spread or [here[0]], [2.5, 97.5])
        out.append({
            "working_set_kb": float(2 ** here[0]),
            "working_set_low_kb": float(2 ** min(lo, here[0])),
            "working_set_high_kb": float(2 ** max(hi, here[0])),
            "before_us_per_kib": here[1],
            "after_us_per_kib": here[2],
        })  # fmt: skip
    return out


# Two neighbouring levels closer than this (relative to the larger) are one plateau, and a
# run of at most TRANSITION points between a lower and a higher plateau is the bend between
# them, not a plateau of its own: a cache's knee is smooth over about an octave.
# Levels closer than MIN_RISE x the curve's highest level are one plateau too: wiggles of a
# near-zero cost below the first cache are not knees.
SAME_LEVEL = 0.25
MIN_RISE = 0.1
TRANSITION = 3


def _plateaus(z: np.ndarray, w: np.ndarray, starts: list[int]) -> list[tuple[int, int]]:
    """The segments as plateaus (start, end): levels within ``SAME_LEVEL`` merged, short
    monotone runs between two plateaus dropped as transitions."""
    segs = [(a, b) for a, b in zip(starts, [*starts[1:], len(z)])]

    def level(seg: tuple[int, int]) -> float:
        return float(np.average(z[seg[0] : seg[1]], weights=w[seg[0] : seg[1]]))

    scale = max(abs(level(seg)) for seg in segs) if segs else 0.0
    changed = True
    while changed and len(segs) > 1:
        changed = False
        for k in range(len(segs) - 1):
            x, y = level(segs[k]), level(segs[k + 1])
            if abs(y - x) <= max(SAME_LEVEL * max(abs(x), abs(y)), MIN_RISE * scale):
                segs[k : k + 2] = [(segs[k][0], segs[k + 1][1])]
                changed = True
                break
    keep = [segs[0]] if segs else []
    for k in range(1, len(segs) - 1):
        short = segs[k][1] - segs[k][0] <= TRANSITION
        lo, mid, hi = level(keep[-1]), level(segs[k]), level(segs[k + 1])
        if not (short and (lo < mid < hi or lo > mid > hi)):
            keep.append(segs[k])
    if len(segs) > 1:
        keep.append(segs[-1])
    return keep


def _segments(z: np.ndarray, w: np.ndarray, penalty: float) -> list[int]:
    """Start indices of the weighted least-squares step function with the lowest cost plus
    ``penalty`` per segment (optimal partitioning; n is a few dozen)."""
    n = len(z)
    cw, cwz, cwz2 = (np.concatenate(([0.0], np.cumsum(a))) for a in (w, w * z, w * z * z))

    def cost(i: int, j: int) -> float:  # segment z[i:j]
        sw, swz = cw[j] - cw[i], cwz[j] - cwz[i]
        return float(cwz2[j] - cwz2[i] - swz * swz / sw)

    best = [0.0] + [math.inf] * n
    start = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            c = best[i] + cost(i, j) + penalty
            if c < best[j]:
                best[j], start[j] = c, i
    starts, j = [], n
    while j > 0:
        starts.append(start[j])
        j = start[j]
    return starts[::-1]


def _step(
    x: np.ndarray,
    z: np.ndarray,
    w: np.ndarray,
    before: tuple[int, int],
    after: tuple[int, int],
    rising: bool = True,
) -> tuple[float, float, float] | None:
    """(log2 position, level before, level after) of the bend between two plateaus: where z
    first crosses halfway between their weighted levels, interpolated in log2; None for a
    falling step when ``rising``."""
    (a, b), (c, d) = before, after
    low = float(np.average(z[a:b], weights=w[a:b]))
    high = float(np.average(z[c:d], weights=w[c:d]))
    if rising and high <= low:
        return None
    mid, sign = (low + high) / 2, (1.0 if high >= low else -1.0)
    for i in range(a, d - 1):
        u, v = sign * (z[i] - mid), sign * (z[i + 1] - mid)
        if u < 0 <= v:
            return float(x[i] + -u / (v - u) * (x[i + 1] - x[i])), low, high
    return float((x[b - 1] + x[c]) / 2), low, high


def _nearest_cache(ws_kb: float, named: dict[str, int]) -> tuple[str | None, int | None]:
    """The cache whose size is nearest ``ws_kb`` in octaves, if within one."""
    if not named:
        return None, None
    name = min(named, key=lambda k: abs(math.log2(ws_kb / named[k])))
    if abs(math.log2(ws_kb / named[name])) > 1.0:
        return None, None
    return name, named[name]
