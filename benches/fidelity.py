"""Fidelity and speed of ctxbench, side by side with its peers, in one interleaved run.

    python benches/fidelity.py            # the full table (about 10 minutes on 2 CPUs)
    python benches/fidelity.py --quick    # a smoke run of every section

Every comparison alternates A B A B ... so that drift of the machine hits both sides alike,
and reports ratios, not absolute targets: the absolute numbers belong to this machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

import ctxbench
from ctxbench import _core


def perf_pipe(loops: int, threads: bool, pinned: bool) -> float | None:
    """µs per round trip from `perf bench sched pipe`, or None when perf is missing."""
    if shutil.which("perf") is None:
        return None
    cmd = ["perf", "bench", "sched", "pipe", "-l", str(loops)] + (["-T"] if threads else [])
    if pinned:
        cmd = ["taskset", "-c", str(min(os.sched_getaffinity(0)))] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    m = re.search(r"([\d.]+) usecs/op", out)
    return float(m.group(1)) if m else None


def ours_pipe(loops: int, threads: bool, pinned: bool) -> float:
    r = ctxbench.pingpong(loops, threads=threads, placement="single" if pinned else "default")
    return r.usecs_per_op


def pingpong_vs_perf(rounds: int, loops: int) -> list[tuple[str, str]]:
    rows = []
    for threads in (False, True):
        for pinned in (True, False):
            ours, peer = [], []
            for _ in range(rounds):
                ours.append(ours_pipe(loops, threads, pinned))
                p = perf_pipe(loops, threads, pinned)
                if p is None:
                    break
                peer.append(p)
            label = f"ping-pong {'threads' if threads else 'processes'}, " + (
                "pinned" if pinned else "unpinned"
            )
            if not peer:
                rows.append((label, "perf not installed: skipped"))
                continue
            a, b = statistics.median(ours), statistics.median(peer)
            rows.append((label, f"{a:.3f} vs {b:.3f} µs/op = {a / b:.2f}x perf"))
    return rows


def run_spread(runs: int, min_time: float | None) -> list[tuple[str, str]]:
    """CV of the reported median over whole runs, and how often the next run's median falls
    inside the previous run's confidence interval."""
    rows = []
    for placement in ("single", "default"):
        for size in (0, 64):
            medians, cis = [], []
            for _ in range(runs):
                r = ctxbench.lat_ctx([2, 16], size_kb=size, placement=placement,
                                     min_time=min_time)  # fmt: skip
                medians.append(r.latency_us)
                cis.append((r.stats["ci_low"], r.stats["ci_high"]))
            m = np.array(medians)
            cv = m.std(axis=0, ddof=1) / np.abs(m.mean(axis=0))
            inside = [((cis[k][0] <= m[k + 1]) & (m[k + 1] <= cis[k][1])) for k in range(runs - 1)]
            hit = np.mean(inside, axis=0)
            for j, procs in enumerate((2, 16)):
                rows.append((
                    f"lat_ctx {procs} procs, {size} KB, {placement}",
                    f"medians {np.round(m[:, j], 2).tolist()} µs, CV {cv[j]:.1%}, "
                    f"next run inside CI {hit[j]:.0%}",
                ))  # fmt: skip
    return rows


def engines(min_time: float | None) -> list[tuple[str, str]]:
    rows = []
    baseline = _core.fiber_baseline_ns(2_000_000)
    results = {}
    for engine in ("fiber", "thread", "process"):
        r = ctxbench.ring([2, 4, 16, 50], engine=engine, placement="single", min_time=min_time)
        results[engine] = r.latency_us * 1000
    for j, n in enumerate((2, 4, 16, 50)):
        f, t, p = (results[e][j] for e in ("fiber", "thread", "process"))
        rows.append((
            f"ring of {n}: fiber / thread / process (ns per switch)",
            f"{f:.1f} / {t:.0f} / {p:.0f}; process/fiber = {p / f:.0f}x",
        ))  # fmt: skip
    rows.append(("bare corosensei resume+suspend (ns)", f"{baseline:.1f}; fiber hop at 4 = "
                 f"{results['fiber'][1] / baseline:.2f}x of it"))  # fmt: skip
    rows.append(("Boost.Fiber yield on these VMs (ns)", "49 with 4 fibers, 26 with 50 (reference)"))
    return rows


def standard_sweep(min_time: float | None) -> list[tuple[str, str]]:
    kw = {} if min_time is None else {"min_time": min_time}
    t = time.monotonic()
    phases = {"calibration": 0.0, "warmup": 0.0, "measure": 0.0, "setup_teardown": 0.0}
    for size in (0, 16, 64):
        r = ctxbench.lat_ctx([2, 4, 8, 16, 20], size_kb=size, repetitions=11, **kw)
        for k in phases:
            phases[k] += float(r.phase_s[k].sum())
    wall = time.monotonic() - t
    split = ", ".join(f"{k} {v:.1f} s" for k, v in phases.items())
    return [("standard sweep (2 4 8 16 20 x 0 16 64 KB, 11 reps)", f"{wall:.1f} s: {split}")]


@contextmanager
def memory_watch() -> Iterator[Callable[[], float]]:
    """Peak drop of MemAvailable (MiB) while the block runs."""

    def available() -> int:
        with open("/proc/meminfo") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("MemAvailable"))

    start, low, done = available(), [available()], threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            low[0] = min(low[0], available())

    th = threading.Thread(target=sample)
    th.start()
    try:
        yield lambda: (start - low[0]) / 1024
    finally:
        done.set()
        th.join()


def scale() -> list[tuple[str, str]]:
    rows = []
    for engine, n in (("process", 1000), ("fiber", 10_000)):
        with memory_watch() as used:
            r = ctxbench.ring([n], engine=engine, placement="single", repetitions=3,
                              min_time=0.05)  # fmt: skip
        mem = used()
        rows.append((f"{n}-{engine} ring", f"{r.latency_us[0]:.3f} µs per switch, "
                     f"~{mem:.0f} MiB used"))  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a fast smoke run of every section")
    args = ap.parse_args()
    rounds, loops, runs, mt = (2, 20_000, 2, 0.01) if args.quick else (5, 200_000, 5, None)
    meta = ctxbench.lat_ctx([2], repetitions=1, min_time=0.001).metadata
    print(f"# ctxbench {ctxbench.__version__} fidelity on {meta['cpu_model']}, "
          f"{meta['cpu_count']} CPUs, kernel {meta['kernel']}, {meta['date']}\n")  # fmt: skip
    sections: list[tuple[str, Callable[[], list[tuple[str, str]]]]] = [
        ("vs perf bench sched pipe", lambda: pingpong_vs_perf(rounds, loops)),
        # None: precision mode's own default (PRECISION_MIN_TIME), as users get it.
        ("run-to-run spread", lambda: run_spread(runs, mt)),
        ("engines", lambda: engines(mt)),
        ("standard sweep", lambda: standard_sweep(mt)),
        ("scale", scale),
    ]
    print("| figure | value |\n|---|---|")
    for _, section in sections:
        for label, value in section():
            print(f"| {label} | {value} |", flush=True)


if __name__ == "__main__":
    main()
