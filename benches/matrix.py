"""What a matrix cell costs, and what a whole matrix costs here. Rounds alternate three arms:

  cell     ctxbench.matrix() over this machine's CPUs (every pair, default settings): each
           cell's own wall time (``elapsed_s``: its clock check, memory placement and ring),
           its interval half-width and how it stopped
  ring     the peer: ctxbench.ring([2]) pinned to the same pair, thread/futex, at ring's own
           defaults (precision mode, ±2 %) -- what measuring a pair costs without the matrix
  classes  ctxbench.matrix(classes=True) end to end

    python benches/matrix.py                # 10 rounds, about half a minute on 2 CPUs
    python benches/matrix.py --rounds 3     # a smoke run

Goal (issue 18): a cell to ±2 % in <= 60 ms median on a quiet pinned pair. The bench prints,
per class of pair, the median cell time, the share of cells that reached ±2 % and the median
half-width; the peer's time and half-width beside; and both modes' wall time with what they
extrapolate to on N CPUs (full: N² cells; classes: a few per class). Run it on a quiet
machine: `uptime` is printed before and after, because a busy one makes cells stop at the time
cap instead of the precision.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections import defaultdict

import ctxbench

CELL = {"engine": "thread", "transport": "futex", "progress": False}


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def half_width(low: float, high: float, median: float) -> float:
    return (high - low) / 2 / abs(median) if median else float("inf")


def cell_round(stats: dict[str, dict[str, list[float]]]) -> float:
    t = time.perf_counter()
    r = ctxbench.matrix(**CELL)
    wall = time.perf_counter() - t
    for i, rel in enumerate(r.relation):
        s = stats[rel]
        s["seconds"].append(float(r.elapsed_s[i]))
        s["precise"].append(float(r.stopped[i] == "precision"))
        s["half"].append(half_width(r.ci_low[i], r.ci_high[i], r.latency_us[i]))
        s["us"].append(float(r.latency_us[i]))
    return wall


def ring_round(pair: list[int], peer: dict[str, list[float]]) -> None:
    t = time.perf_counter()
    r = ctxbench.ring([2], engine="thread", transport="futex", placement=pair)
    peer["seconds"].append(time.perf_counter() - t)
    peer["half"].append(half_width(r.stats["ci_low"][0], r.stats["ci_high"][0], r.latency_us[0]))
    peer["precise"].append(float(r.stopped[0] == "precision"))
    peer["us"].append(float(r.latency_us[0]))


def classes_round() -> tuple[float, int]:
    t = time.perf_counter()
    r = ctxbench.matrix(classes=True, **CELL)
    return time.perf_counter() - t, len(r.cpu_from)


def show(name: str, s: dict[str, list[float]]) -> str:
    med = statistics.median
    return (
        f"  {name:<14} {med(s['seconds']) * 1000:7.1f} ms  "
        f"{100 * sum(s['precise']) / len(s['precise']):5.0f} % at ±2 %   "
        f"±{100 * med(s['half']):4.1f} %   {med(s['us']):8.2f} µs/switch  (n={len(s['seconds'])})"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=10)
    args = p.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    pair = [cpus[0], cpus[-1]]
    print(f"before: {uptime()}")
    print(f"CPUs {cpus}; peer pair {pair}; {args.rounds} rounds, arms alternating")
    stats: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    peer: dict[str, list[float]] = defaultdict(list)
    full_s: list[float] = []
    class_s: list[float] = []
    class_cells = 0
    for _ in range(args.rounds):
        full_s.append(cell_round(stats))
        ring_round(pair, peer)
        wall, class_cells = classes_round()
        class_s.append(wall)
    print(f"after:  {uptime()}")
    print("\nper cell (median wall time incl. clock check and start-up; share stopped by ")
    print("precision; median interval half-width; median µs per switch):")
    for rel in ctxbench._core.RELATIONS:
        if rel in stats:
            print(show(rel, stats[rel]))
    print(show("ring (peer)", peer))
    every = [x for s in stats.values() for x in s["seconds"]]
    cell_ms = statistics.median(every) * 1000
    print(
        f"\nall cells: median {cell_ms:.1f} ms (goal <= 60 ms); peer/cell time ratio "
        f"{statistics.median(peer['seconds']) * 1000 / cell_ms:.2f}"
    )
    n = len(cpus)
    full, classes = statistics.median(full_s), statistics.median(class_s)
    print(f"full matrix:  {n * n} cells in {full:.2f} s (median of {len(full_s)})")
    print(f"class mode:   {class_cells} cells in {classes:.2f} s")
    for big in (64, 256):
        print(
            f"  extrapolated to {big} CPUs: full {big * big * cell_ms / 1000 / 60:.0f} min; "
            f"classes ~{6 * ctxbench._core.MATRIX_PER_CLASS * cell_ms / 1000:.0f} s "
            f"(at most 6 relations x {ctxbench._core.MATRIX_PER_CLASS} cells, more with NUMA "
            "distances)"
        )


if __name__ == "__main__":
    main()
