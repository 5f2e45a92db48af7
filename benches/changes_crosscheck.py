"""Does ctxbench's E-Divisive (src/changes) find what MongoDB's signal-processing-algorithms
finds? Both scan the same series of ln figures; the bench prints, per kind of series, how
often each finds the change where it is, how often it calls one where none is, and how many
series the two agree on (the same change points, ± 1 run).

    pip install signal-processing-algorithms    # in a venv of your own: not a ctxbench dependency
    python benches/changes_crosscheck.py                   # 60 series, seeded
    python benches/changes_crosscheck.py --series FILE     # series saved by benches/changes.py

Series (seeded, modelled on runs of a pinned 2-process ring on a loaded 2-vCPU guest: a run
level of 3 % and, in a third of the runs, a slow mode 35 % away): 40 runs each, 15 with a
shift at run 20 (x1.08), 15 with one of x1.25, 15 A/A, 15 A/A whose runs fall into two modes.
A FILE holds {"series": [{"key", "kind", "ln_values"}]}. The library has no minimum segment
and no correction across series: it runs at `pvalue=level` per series, and a change point of
ours within 1 run of one of its counts as the same.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import time
from pathlib import Path

os.environ.setdefault("CTXBENCH_HISTORY", "off")

from ctxbench import _core  # noqa: E402

KINDS = (("shift x1.08", 1.08, False), ("shift x1.25", 1.25, False))
KINDS_AA = (("A/A", 1.0, False), ("A/A two modes", 1.0, True))


def synthetic(per_kind: int, runs: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for kind, factor, modes in KINDS + KINDS_AA:
        for i in range(per_kind):
            xs = []
            for r in range(runs):
                x = math.log(2.0) + rng.gauss(0.0, 0.03)
                if modes and rng.random() < 0.3:
                    x += math.log(1.35)
                if r >= runs // 2:
                    x += math.log(factor)
                xs.append(x)
            out.append({"key": f"{kind} {i}", "kind": kind, "ln_values": xs})
    return out


def ours(series: list[dict], level: float) -> list[list[int]]:
    scans = _core.change_points([(s["key"], s["ln_values"]) for s in series], level=level)
    return [[c["index"] for c in scan["changes"]] for scan in scans]


def library(series: list[dict], level: float, permutations: int) -> list[list[int]]:
    from signal_processing_algorithms.energy_statistics import energy_statistics

    found = []
    for i, s in enumerate(series):
        # The library draws from numpy's global generator: seeded per series here.
        import numpy as np

        np.random.seed(i)
        found.append(
            sorted(
                energy_statistics.e_divisive(
                    s["ln_values"], pvalue=level, permutations=permutations
                )
            )
        )
    return found


def at_mid(found: list[int], runs: int) -> bool:
    return any(abs(x - runs // 2) <= 1 for x in found)


def same(a: list[int], b: list[int]) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= 1 for x, y in zip(a, b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--series", type=Path, help="a JSON file of series (benches/changes.py)")
    ap.add_argument("--per-kind", type=int, default=15)
    ap.add_argument("--level", type=float, default=0.05)
    ap.add_argument("--permutations", type=int, default=199)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.series:
        series = json.loads(args.series.read_text())["series"]
    else:
        series = synthetic(args.per_kind, 40, args.seed)
    t0 = time.perf_counter()
    a = ours(series, args.level)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    b = library(series, args.level, args.permutations)
    t_lib = time.perf_counter() - t0
    print(f"load (1-min) {os.getloadavg()[0]:.2f}; {len(series)} series; level {args.level}")
    print(f"ours: Holm across the scan, min 5 runs a side, {t_ours:.2f} s")
    print(f"signal-processing-algorithms: {args.permutations} permutations a test, {t_lib:.2f} s")
    print(
        f"{'kind':<16} {'n':>3} {'ours at mid±1':>14} {'lib at mid±1':>13} "
        f"{'ours any':>9} {'lib any':>8} {'agree':>6}"
    )
    agree_all = 0
    for kind in dict.fromkeys(s["kind"] for s in series):
        rows = [i for i, s in enumerate(series) if s["kind"] == kind]
        agree = sum(same(a[i], b[i]) for i in rows)
        agree_all += agree
        n = {i: len(series[i]["ln_values"]) for i in rows}
        mid_a = sum(at_mid(a[i], n[i]) for i in rows)
        mid_b = sum(at_mid(b[i], n[i]) for i in rows)
        any_a, any_b = sum(bool(a[i]) for i in rows), sum(bool(b[i]) for i in rows)
        print(f"{kind:<16} {len(rows):>3} {mid_a:>14} {mid_b:>13} {any_a:>9} {any_b:>8} {agree:>6}")
    print(f"agree on {agree_all} of {len(series)} series (the same change points, ± 1 run)")


if __name__ == "__main__":
    main()
