"""Does a run history seeded under load widen a quiet run's interval? (issue 25's goal: by no
more than 1.5x the interval of the same run without history.)

    python benches/history.py                  # 5 loaded runs, then 10 quiet rounds
    python benches/history.py --loaded 8 --rounds 12 --procs 2 8

1. Seed: two CPU-bound processes (`python -c 'while 1: pass'`) start; after a second,
   `--loaded` runs of `lat_ctx(procs, placement="single")` are made with the history on, in a
   fresh temporary results store (`$CTXBENCH_STORE`); the hogs are killed (the hog phase lasts a few
   seconds).
2. Quiet rounds, alternated: the same measurement with a fresh copy of the seeded history
   (so that quiet runs do not teach it a quiet level of their own), and without history.

Printed per point, over the rounds (medians, and the worst):
- same run: the half-width of each with-history run's interval over the half-width of the
  same samples' interval without a run level (`_core.estimate`): the widening alone;
- paired runs: the with-history run's half-width over the no-history run's of its round
  (two runs: their own noise is in it too);
- unmatched: the widening the same samples would get from every seeded run, comparable or
  not, through the robust estimator (`_core.run_level`); and from every seeded run through
  plain DerSimonian-Laird, the estimator before (what "3.9x" in the issue measured).
The load is printed beside: the 1-minute load average, and what the history read as the
conditions of each phase (other tasks runnable per CPU).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ctxbench
from ctxbench import _core, _history


def half_width(result: ctxbench.RingResult, j: int, run: tuple[float, float] | None) -> float:
    """Relative half-width of point j's next-run interval from its own samples, with the
    run level ``run`` = (sd, runs) or none."""
    n = int(result.repetitions_made[j])
    samples = result.samples_us[:n, j].tolist()
    e = _core.estimate(
        samples, int(result.block[j]), result.instance_blocks[j].tolist(), *run or (None, None)
    )
    return float(e["se"] / e["center"] * math.sqrt(2) * t975(e["df"]))


def t975(df: float) -> float:
    """Student's t at 0.975 (bisection on Simpson's integral of the density)."""
    c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def cdf(x: float, n: int = 2000) -> float:
        f = [math.exp(c - (df + 1) / 2 * math.log1p((x * k / n) ** 2 / df)) for k in range(n + 1)]
        return 0.5 + x / n / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    low, high = 0.0, 100.0
    for _ in range(50):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < 0.975 else (low, mid)
    return low


def dersimonian_laird(y: list[float], s: list[float]) -> tuple[float, float] | None:
    """The run level as it was estimated before: DL over every run, (sd, runs)."""
    if len(y) < 2:
        return None
    w = [1 / x / x for x in s]
    total = sum(w)
    mean = sum(a * b for a, b in zip(w, y)) / total
    q = sum(a * (b - mean) ** 2 for a, b in zip(w, y))
    tau2 = max(0.0, (q - (len(y) - 1)) / (total - sum(a * a for a in w) / total))
    return math.sqrt(tau2), float(len(y))


def seeded_runs(
    result: ctxbench.RingResult,
) -> list[tuple[list[float], list[float], list[float]] | None]:
    """Every run the seeded history holds of each point of ``result``, comparable or not."""
    ids = ctxbench.api.ring_points(list(map(int, result.procs)), placement="single")
    assert ids is not None
    everything = _history.Conditions()
    saved = _history.comparable
    _history.comparable = lambda run, now: True  # type: ignore[assignment]
    try:
        return _history.earlier(result.metadata, [p for p, _ in ids], everything)
    finally:
        _history.comparable = saved  # type: ignore[assignment]


def _use(where: Path) -> None:
    """Runs read and keep their history in a results store of their own in ``where``."""
    where.mkdir(mode=0o700, exist_ok=True)
    os.environ[_history.ENV] = "on"
    os.environ["CTXBENCH_STORE"] = str(where / "store.sqlite3")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loaded", type=int, default=5, help="runs seeded under the hogs")
    ap.add_argument("--rounds", type=int, default=10, help="quiet rounds")
    ap.add_argument("--procs", type=int, nargs="+", default=[2, 8])
    args = ap.parse_args()
    kw = {"placement": "single"}
    tmp = Path(tempfile.mkdtemp(prefix="ctxbench-history-bench-"))
    seeded = tmp / "seeded"
    try:
        _use(seeded)
        hogs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(2)]
        try:
            time.sleep(1.0)
            load_hogs = _history.conditions().load
            t = time.monotonic()
            for _ in range(args.loaded):
                ctxbench.lat_ctx(args.procs, **kw)
            print(
                f"seeded {args.loaded} runs under two hogs in {time.monotonic() - t:.1f} s; "
                f"runnable others per CPU {load_hogs:.2f}, loadavg {os.getloadavg()[0]:.2f}"
            )
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        time.sleep(2.0)
        ratios: dict[str, list[list[float]]] = {
            k: [[] for _ in args.procs] for k in ("same", "paired", "robust", "dl")
        }
        loads = []
        read: list[_history.Conditions] = []
        probe = _history.conditions
        _history.conditions = lambda: read.append(probe()) or read[-1]  # type: ignore[assignment]
        for k in range(args.rounds):
            scratch = tmp / f"round-{k}"
            shutil.copytree(seeded, scratch)
            _use(scratch)
            order = [True, False] if k % 2 == 0 else [False, True]
            runs = {h: ctxbench.lat_ctx(args.procs, history=h, **kw) for h in order}
            loads.append((read[-1].load or 0.0, os.getloadavg()[0]))
            with_h, without = runs[True], runs[False]
            every = seeded_runs(with_h)
            for j in range(len(args.procs)):
                sd, seen = with_h.stats["sd_run"][j], with_h.stats["runs_seen"][j]
                level = (float(sd), float(seen)) if seen > 0 else None
                alone = half_width(with_h, j, None)
                ratios["same"][j].append(half_width(with_h, j, level) / alone)
                ratios["paired"][j].append(
                    half_width(with_h, j, level) / half_width(without, j, None)
                )
                h = every[j]
                robust = _core.run_level(*h) if h else None
                ratios["robust"][j].append(
                    half_width(with_h, j, (robust["sd"], robust["runs_seen"]) if robust else None)
                    / alone
                )
                ratios["dl"][j].append(
                    half_width(with_h, j, dersimonian_laird(h[0], h[1]) if h else None) / alone
                )
            same = "  ".join(f"{r[-1]:5.2f}x" for r in ratios["same"])
            print(
                f"  round {k + 1}: the run read {loads[-1][0]:.2f} others runnable per CPU "
                f"(loadavg {loads[-1][1]:.2f}); same-run widening per point: {same}"
            )
        _history.conditions = probe  # type: ignore[assignment]
        quiet = np.array(loads)
        print(
            f"quiet rounds: {args.rounds}; runnable others per CPU median "
            f"{np.median(quiet[:, 0]):.2f} "
            f"(max {quiet[:, 0].max():.2f}), loadavg median {np.median(quiet[:, 1]):.2f}; a run "
            f"reading within {_history.LOAD_TOLERANCE} of {load_hogs:.2f} is as loaded as the seed"
        )
        print("widening of a quiet run's 95 % interval by the loaded history, median (max):")
        names = {
            "same": "same run, matched history (now)",
            "paired": "paired runs, matched (now)",
            "robust": "same run, every seeded run, robust",
            "dl": "same run, every seeded run, DL (before)",
        }
        for key, name in names.items():
            cells = "  ".join(
                f"{p:>2} procs {statistics.median(r):5.2f}x ({max(r):5.2f}x)"
                for p, r in zip(args.procs, ratios[key])
            )
            print(f"  {name:<40} {cells}")
        _use(seeded)
        from ctxbench.cli import main as cli

        cli(["history"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
