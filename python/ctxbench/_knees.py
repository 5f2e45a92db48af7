"""Where the cost per switch bends: ``knees`` fits a curve's refill cost per KiB as a step
function of the working set, and names the cache each rising step leaves (or says where it
sits, and why a curve has none). See docs/guide/cache.md.

This module is the one home of statistics in Python; every other statistic (medians,
intervals, the stopping rule, the comparison of runs, the plan's arithmetic) is the core's.
It stays here because it is analysis of a finished frame, never part of measuring (it runs as
well on a file loaded a year later), and because its bootstrap draws numpy's generator
stream: the same ``seed`` gives the same intervals, which a port to Rust would change unless
it rebuilt numpy's seeding, PCG64 and bounded-integer draws. Nothing else in Python fits a
curve or resamples.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .frame import require

if TYPE_CHECKING:
    import pandas as pd

# The last level's name in `knees`, whatever its number.
LAST_LEVEL = "LLC"
# Bootstrap resamples per curve: the default, and the range ``knees`` accepts (fewer give no
# interval worth the name; 10,000 take about a minute a curve).
BOOTSTRAP = 400
BOOTSTRAPS = (10, 10_000)
# Repetitions per block: a cache sweep's round at one point, a precision-mode block elsewhere.
BLOCK = 4


def named_levels(kb: dict[str, int]) -> dict[str, int]:
    """{"L1d": .., "L2": .., "L3": ..} as {"L1d": .., "L2": .., "LLC": ..}: instruction
    caches left out, the highest level above 1 named ``LAST_LEVEL``."""
    data = {k: v for k, v in kb.items() if not k.endswith("i")}
    levels = [k for k in data if k[1:].isdigit() and int(k[1:]) > 1]
    last = max(levels, key=lambda k: int(k[1:]), default=None)
    return {(LAST_LEVEL if k == last else k): v for k, v in data.items()}


def knees(
    data: Any,
    caches: Mapping[str, int] | None = None,
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
    levels. Its 95 % interval comes from ``bootstrap`` resamples (``BOOTSTRAPS`` is the
    range) of the blocks (in a ``cache_sweep``, the rounds; resampled alike at every size,
    so that the pairing with size 0 stays), the steps kept. ``cache`` names the cache whose
    size is nearest the knee, within an octave (``L1d``, ``L2``, ``LLC``), from ``caches``
    or else the sizes the data recorded (``cache_*_kb`` columns, the CPU's) or the sweep's
    own; a knee it names none of has ``cache`` None and ``note`` saying where it sits.

    ``data``: a ``CacheSweep`` or a frame with ``procs``, ``size_kb`` and ``value``.
    Returns a frame with the curve's keys and ``working_set_kb``, ``working_set_low_kb``,
    ``working_set_high_kb``, ``size_kb`` (per participant), ``cache``, ``cache_kb``,
    ``before_us_per_kib``, ``after_us_per_kib`` (the two levels) and ``note``;
    ``attrs["no_knee"]`` lists each curve without a knee (its keys and ``reason``: the rise
    a knee would need against its noise). Deterministic for a given ``seed``.
    """
    pd = require("pandas", "knees")
    df = _frame(data)
    caches = _recorded_caches(data, df) if caches is None else _checked_caches(caches)
    _check_counts(bootstrap, seed)
    named = named_levels(caches or {})
    keys = [c for c in ("engine", "transport", "placement", "stride_bytes", "procs") if c in df]
    rng = np.random.default_rng(seed)
    rows, none = [], []
    for key, g in df.groupby(keys, sort=True):
        label = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        found, reason = _curve_knees(_curve(g), bootstrap, rng)
        if not found:
            none.append({**label, "reason": reason})
        for knee in found:
            cache, cache_kb = _nearest_cache(knee["working_set_kb"], named)
            rows.append({
                **label,
                **knee,
                "size_kb": knee["working_set_kb"] / label["procs"],
                "cache": cache,
                "cache_kb": cache_kb,
                "note": "" if cache else _unmatched(knee["working_set_kb"], named),
            })  # fmt: skip
    columns = [*keys, "working_set_kb", "working_set_low_kb", "working_set_high_kb",
               "size_kb", "cache", "cache_kb", "before_us_per_kib", "after_us_per_kib",
               "note"]  # fmt: skip
    out = pd.DataFrame(rows, columns=columns)
    # None where no cache matches, never NaN (pandas 3 reads a column of str and None as
    # strings with NaN, which prints as a cache named "nan").
    out["cache"] = pd.Series([r["cache"] for r in rows], index=out.index, dtype=object)
    out.attrs["no_knee"] = none
    return out


def _frame(data: Any) -> pd.DataFrame:
    """The tidy frame of ``data``, its columns checked: TypeError or ValueError naming what
    is wrong."""
    df = data.frame() if callable(getattr(data, "frame", None)) else data
    if not hasattr(df, "columns") or not hasattr(df, "groupby"):
        raise TypeError(
            "data: expected a CacheSweep or a frame with procs, size_kb and value, got "
            f"{type(data).__name__}"
        )
    missing = {"procs", "size_kb", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"knees: the frame lacks column(s) {sorted(missing)}")
    for column, ok, what in (
        ("procs", lambda v: v >= 1, "counts >= 1"),
        ("size_kb", lambda v: v >= 0, "KiB >= 0"),
        ("value", np.isfinite, "finite µs"),
    ):
        values = np.asarray(df[column])
        try:
            good = np.asarray(ok(values.astype(float)), dtype=bool)
        except (TypeError, ValueError):
            good = np.zeros(len(values), dtype=bool)
        if not good.all():
            first = values[~good][0]
            raise ValueError(
                f"{column}: expected {what}; {int((~good).sum())} rows are not, the first {first!r}"
            )
    return df


def _checked_caches(caches: Any) -> dict[str, int]:
    if not isinstance(caches, Mapping):
        raise TypeError(
            f"caches: expected a dict of KiB per level like {{'L2': 1024}}, got "
            f"{type(caches).__name__}"
        )
    for name, kb in caches.items():
        if isinstance(kb, bool) or not isinstance(kb, (int, float)) or not kb > 0:
            raise ValueError(f"caches: {name!r} must be a size in KiB > 0, got {kb!r}")
    return {str(k): int(v) for k, v in caches.items()}


def _check_counts(bootstrap: Any, seed: Any) -> None:
    low, high = BOOTSTRAPS
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int):
        raise TypeError(f"bootstrap: expected an int, got {type(bootstrap).__name__}")
    if not low <= bootstrap <= high:
        raise ValueError(f"bootstrap: must be between {low} and {high:,}, got {bootstrap:,}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed: expected an int, got {type(seed).__name__}")


def _recorded_caches(data: Any, df: pd.DataFrame) -> dict[str, int] | None:
    # A sweep's own (a frame's columns are no sweep's, whatever they are called).
    recorded = None if hasattr(data, "columns") else getattr(data, "caches", None)
    if recorded is not None:
        return dict(recorded.kb)
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


def _curve_knees(
    curve: dict[str, Any], bootstrap: int, rng: Any
) -> tuple[list[dict[str, float]], str]:
    """The curve's knees, and why it has none when it has none."""
    nblocks = curve["blocks"].shape[1]
    x = np.log2(curve["procs"] * curve["sizes"][1:].astype(float))
    z = _per_kib(curve, np.arange(nblocks))
    boots = np.array([_per_kib(curve, rng.integers(0, nblocks, nblocks)) for _ in range(bootstrap)])
    sd = boots.std(axis=0) if nblocks > 1 else np.zeros_like(z)
    sd = np.maximum(sd, 1e-3 * max(float(np.abs(z).max()), 1e-12))
    w = 1.0 / sd**2
    penalty = 3.0 * math.log(len(z))
    plateaus = _plateaus(z, w, _segments(z, w, penalty))
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
    return out, ("" if out else _why_none(x, z, sd, penalty, len(plateaus) > 1))


def _why_none(x: np.ndarray, z: np.ndarray, sd: np.ndarray, penalty: float, steps: bool) -> str:
    """Why a curve has no knee: the rise a step would need against the noise, which a
    two-level fit of n points pays ``penalty`` for (a step of two equal halves is kept when
    its rise exceeds noise × √(4 penalty / n)), or a third of its level (``SAME_LEVEL``)."""
    span = f"{2 ** x[0]:,.0f}-{2 ** x[-1]:,.0f} KiB"
    if steps:
        return f"the cost per KiB only falls over {span}: no rise to call a knee"
    noise = float(np.median(sd))
    need = max(noise * math.sqrt(4 * penalty / len(z)), abs(float(np.median(z))) / 3)
    return (
        f"the cost per KiB stays level over {span} ({z.min():.3g} to {z.max():.3g} µs/KiB); "
        f"a knee needs a rise of about {need:.3g} µs/KiB against a noise of {noise:.3g} per size"
    )


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


def _unmatched(ws_kb: float, named: dict[str, int]) -> str:
    """Where a knee that matches no cache sits among the caches, in words."""
    if not named:
        return "no cache sizes known to match it against"
    levels = sorted(named.items(), key=lambda item: item[1])
    below = [f"{k} ({v:,} KiB)" for k, v in levels if v < ws_kb]
    above = [f"{k} ({v:,} KiB)" for k, v in levels if v >= ws_kb]
    where = (
        f"between {below[-1]} and {above[0]}"
        if below and above
        else (f"above every cache, the largest {below[-1]}" if below else f"below {above[0]}")
    )
    return f"no cache level within an octave: {where}"
