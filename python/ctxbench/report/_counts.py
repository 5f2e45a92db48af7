"""What a ring's or a ping-pong's printed figure counts, said beside it where that is not
plain: the context switches a hop made where not one (the figure is per hop, as lat_ctx's),
the hops' latency percentiles where they were recorded (a matrix cell's and a sweep point's
too, by the one formatter ``hops_said``), and under neighbours what they cost on average
and in the tail, which the median leaves out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .._format import us
from ._to import Line

# Switches per hop further than this from 1 are said beside the figure.
SWITCHES_APART = 0.05
# The hop percentiles said where hops were recorded, in the core's names.
SAID_PERCENTILES = ("p50", "p99", "p99.9", "max")


def hops_said(percentiles: Mapping[str, float], what: str = "hops") -> str | None:
    """The hop percentiles printed where hops were recorded (those of ``SAID_PERCENTILES``
    that were, and are numbers), or None where none were: "hops (wake to run) p50 1.49,
    p99 26.9, p99.9 26.9, max 27.1 µs"."""
    said = [(k, float(percentiles[k])) for k in SAID_PERCENTILES if k in percentiles]
    said = [(k, v) for k, v in said if math.isfinite(v)]
    if not said:
        return None
    return f"{what} (wake to run) " + ", ".join(f"{k} {us(v)}" for k, v in said) + " µs"


def figure_lines(measured: Any, at: str = "") -> list[Line]:
    """Each point's lines on what its figure counts (``at`` names the measurement); a
    matrix's: each cell's hops into its wakee, where recorded (its ``wake_us``; a cell's
    histogram keeps no maximum)."""
    kind = getattr(measured, "kind", None)
    if kind == "matrix":
        wake = getattr(measured, "wake_us", None) or {}
        cells = zip(measured.cpu_from.tolist(), measured.cpu_to.tolist())
        texts = [
            (f"{at}{a}->{b}", hops_said({k: v[i] for k, v in wake.items()}))
            for i, (a, b) in enumerate(cells)
        ]
        return [Line("note", f"{cell}: {text}") for cell, text in texts if text]
    if kind not in ("ring", "pingpong"):
        return []
    procs = measured.procs.tolist() if kind == "ring" else [2]
    out = []
    for j, p in enumerate(procs):
        name = f"{at}{p} procs" if kind == "ring" else f"{at}ping-pong"
        out += [Line("note", f"{name}: {text}") for text in _point(measured, j)]
    return out


def _point(r: Any, j: int) -> list[str]:
    said = []
    per_hop = _median(r, j)
    sph = _switches_per_hop(r, j)
    if math.isfinite(sph) and abs(sph - 1) > SWITCHES_APART and per_hop > 0:
        said.append(
            f"{sph:.2f} context switches per hop: the figure is µs per hop, as lat_ctx's; "
            f"per switch {us(per_hop / sph)} µs (--per-switch prints it)"
        )
    tail = _percentiles(r, j)
    hops = hops_said(dict(tail))
    if hops:
        said.append(hops)
    if getattr(r, "interference", None):
        said.append(_beside_neighbours(r, j, per_hop, dict(tail)))
    return said


def _beside_neighbours(r: Any, j: int, median: float, tail: dict[str, float]) -> str:
    """Under neighbours the median leaves out what they cost: the mean of the repetitions
    (perf's total time / loops) beside it, and the tail where hops were recorded."""
    samples = _samples(r, j)
    # A ping-pong's samples are round trips: two hops each.
    mean = float(samples.mean()) / (2 if r.kind == "pingpong" else 1) if samples.size else math.nan
    text = f"beside neighbours: median {us(median)} µs, mean {us(mean)} µs per hop"
    if "p99" in tail:
        return text + f", p99 hop {us(tail['p99'])} µs"
    return text + " (the tail: --record-hops)"


def per_switch(r: Any) -> list[float]:
    """Each point's figure per context switch rather than per hop (NaN where the switches
    were not counted)."""
    procs = r.procs.tolist() if r.kind == "ring" else [2]
    return [_median(r, j) / _switches_per_hop(r, j) for j in range(len(procs))]


def _median(r: Any, j: int) -> float:
    if r.kind == "ring":
        return float(r.latency_us[j])
    return float(r.usecs_per_switch)


def _samples(r: Any, j: int) -> Any:
    import numpy as np

    column = np.asarray(r.samples_us, dtype=float)
    column = column[:, j] if column.ndim == 2 else column
    return column[np.isfinite(column)]


def _switches_per_hop(r: Any, j: int) -> float:
    found = getattr(r, "switches_per_hop", None)
    if found is None or len(found) <= j:
        return math.nan
    # None counted (the counters read no switch of the point's tasks): not known, not 0.
    return float(found[j]) if found[j] > 0 else math.nan


def _percentiles(r: Any, j: int) -> list[tuple[str, float]]:
    found = getattr(r, "hop_percentiles_us", None) or {}
    return [(k, float(found[k][j])) for k in SAID_PERCENTILES if k in found]
