"""How often a run judged against its series is called wrongly, and how often a real change is
called: the A/A exit rate of ``compare NEW`` against a filling series, and the power at known
ratios.

    python benches/series_verdicts.py              # ~5 min of measuring on a quiet machine
    python benches/series_verdicts.py --quick      # a smoke run, rough figures
    python benches/series_verdicts.py --runs 60 --power-runs 30

Measured for real, each run a default precision-mode ``ctxbench.ring`` (``history=False``)
pinned to one CPU (``placement="single"``):

- A/A: ``--runs`` back-to-back runs of ``procs 2 4 8 16`` (the issue's sweep). The store
  fills as it goes: run i is judged against the newest 30 runs before it whose load was within
  the history's tolerance of its own, as ``compare NEW`` reads the store (then against all 30
  before it, loads aside), the four points one family (``_core.judge_series``), from the
  ``MIN_SERIES``-th run on.
  Printed: the share of runs where ``compare`` would exit 1 (any point "slower") and where
  any point was called (slower or faster), with the binomial 95 % upper bound of each.
- Power: ``--power-runs`` runs each of pipe, futex and thread rings of 2 (pinned), in a
  fresh random order each round; each pair's true ratio is first established from all its
  runs pooled (the ratio of medians of run figures). Then ``--draws`` times: 10 runs of the
  faster side drawn as the series, one other run of the slower side judged against it (one
  point, one family). Printed: the share called slower, and called "no change".

Every figure is printed with the load averages before and after measuring: on a machine
other processes use, runs spread more and fall into modes more often than on a quiet one.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

import numpy as np

import ctxbench
from ctxbench import _core

SWEEP = (2, 4, 8, 16)
PINNED = {"placement": "single"}
CONFIGS = {"pipe": {}, "futex": {"transport": "futex"}, "thread": {"engine": "thread"}}
PAIRS = (("futex", "pipe"), ("pipe", "thread"))


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def figures(result: Any) -> list[float]:
    """A run's figure of each point (µs per switch, its median), as the store keeps it."""
    return [float(v) for v in result.latency_us]


def rel_se(result: Any) -> list[float]:
    return [float(s) / float(v) for s, v in zip(result.stats["se"], result.latency_us)]


def upper95(k: int, n: int) -> float:
    """Clopper–Pearson's one-sided 95 % upper bound of a share k / n."""
    from statistics import NormalDist

    if n == 0:
        return math.nan
    if k == n:
        return 1.0
    # Wilson's bound: close to Clopper-Pearson's here, and needs no beta quantile.
    z = NormalDist().inv_cdf(0.95)
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre + half) / (1 + z * z / n)


def aa(runs: int, max_time: float | None) -> None:
    """The A/A exit rate against a filling series."""
    asked = {**PINNED, **({"max_time": max_time} if max_time else {})}
    print(f"A/A: {runs} runs of ring {' '.join(map(str, SWEEP))} pinned; {load()}")
    made = [ctxbench.ring(list(SWEEP), history=False, **asked) for _ in range(runs)]
    values = [figures(r) for r in made]
    errors = [rel_se(r) for r in made]
    loads = [r.metadata.get("runnable_per_cpu") for r in made]
    for comparable in (True, False):
        judge_all(values, errors, loads, comparable)
    spread = [np.std(np.log([v[p] for v in values if v[p] > 0]), ddof=1) for p in range(len(SWEEP))]
    print("  spread of run figures (ln sd) per procs: "
          + ", ".join(f"{n}: {s:.3f}" for n, s in zip(SWEEP, spread)))  # fmt: skip
    print(f"  after: {load()}")


def judge_all(values: list, errors: list, loads: list, comparable: bool) -> None:
    """Each run from the 5th on judged against the runs before it (newest 30): only those
    whose load was within the history's tolerance of its own (``comparable``: as
    ``compare NEW`` reads the store), or all of them."""
    from ctxbench._history import LOAD_TOLERANCE

    exits = calls = judged = short = skipped = 0
    for i in range(_core.MIN_SERIES, len(values)):
        before = [
            j
            for j in range(i)
            if not comparable
            or loads[i] is None
            or loads[j] is None
            or abs(loads[i] - loads[j]) <= LOAD_TOLERANCE
        ][-_core.SERIES_WINDOW :]
        points = []
        for p in range(len(SWEEP)):
            # As the store keeps them: figures at or below 0 (below resolution) are no run.
            kept = [(values[j][p], errors[j][p]) for j in before if values[j][p] > 0]
            if values[i][p] <= 0:
                skipped += 1
                continue
            points.append(([v for v, _ in kept], [max(e, 1e-6) for _, e in kept], [values[i][p]]))
        out = _core.judge_series(points, _core.DEFAULT_PRECISION)
        words = [j["verdict"] for j in out]
        exits += "slower" in words
        calls += "slower" in words or "faster" in words
        short += sum(j["why"] == "short series" for j in out)
        judged += 1
    print(
        f"  {'comparable loads (±' + str(LOAD_TOLERANCE) + ')' if comparable else 'all runs'}:"
        f" judged {judged} runs: compare would exit 1 in {exits} ({exits / judged:.1%}, 95 % "
        f"upper bound {upper95(exits, judged):.1%}); any call in {calls} ({calls / judged:.1%},"
        f" upper bound {upper95(calls, judged):.1%}); {short} points short of a series; "
        f"{skipped} new points at or below 0 µs not judged"
    )


def power(runs: int, draws: int, rng: np.random.Generator, max_time: float | None) -> None:
    """Power at the pairs' established ratios."""
    asked = {**PINNED, **({"max_time": max_time} if max_time else {})}
    print(f"power: {runs} runs each of {', '.join(CONFIGS)} (ring of 2, pinned); {load()}")
    made: dict[str, list[float]] = {name: [] for name in CONFIGS}
    for _ in range(runs):
        for name in rng.permutation(list(CONFIGS)):
            r = ctxbench.ring([2], history=False, **asked, **CONFIGS[str(name)])
            made[str(name)] += figures(r)
    for fast, slow in PAIRS:
        a, b = np.array(made[fast]), np.array(made[slow])
        a, b = a[a > 0], b[b > 0]
        ratio = float(np.median(b) / np.median(a))
        slower = same = known = 0
        for _ in range(draws):
            base = rng.choice(a, size=min(10, len(a)), replace=False)
            new = [float(rng.choice(b))]
            out = _core.judge_series([(base.tolist(), [], new)], _core.DEFAULT_PRECISION)[0]
            slower += out["verdict"] == "slower"
            same += out["verdict"] == "no change"
            known += out["why"] == "known mode"
        print(
            f"  {slow} vs {fast}: pooled ratio {ratio:.3f} ({len(a)} and {len(b)} runs); one "
            f"run against 10: called slower in {slower / draws:.1%} of {draws} draws, "
            f"'no change' in {same / draws:.1%} (of which 'known mode' {known / draws:.1%})"
        )
    print(f"  after: {load()}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=40, help="A/A runs (default 40)")
    p.add_argument("--power-runs", type=int, default=20, help="runs per configuration")
    p.add_argument("--draws", type=int, default=400, help="power draws per pair")
    p.add_argument("--quick", action="store_true", help="a smoke run: short runs, few draws")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    max_time = 0.05 if args.quick else None
    if args.quick:
        args.runs, args.power_runs, args.draws = 8, 6, 50
    print(f"ctxbench {ctxbench.__version__}; FAMILY_ALPHA {_core.FAMILY_ALPHA}, "
          f"MIN_SERIES {_core.MIN_SERIES}, SERIES_WINDOW {_core.SERIES_WINDOW}")  # fmt: skip
    aa(args.runs, max_time)
    power(args.power_runs, args.draws, rng, max_time)
    return 0


if __name__ == "__main__":
    sys.exit(main())
