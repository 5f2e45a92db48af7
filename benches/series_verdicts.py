"""How often a run judged against its series is called wrongly, and how often a real change is
called: the A/A exit rate of ``compare NEW`` against a filling series, and the power at known
ratios.

    python benches/series_verdicts.py              # ~5 min of measuring on a quiet machine
    python benches/series_verdicts.py --quick      # a smoke run, rough figures
    python benches/series_verdicts.py --runs 60 --power-runs 30
    python benches/series_verdicts.py --cli --runs 105  # A/A through `sweep` + `compare NEW`
    python benches/series_verdicts.py --calls          # and each A/A call with its series
    python benches/series_verdicts.py --save-runs aa.json    # keep the A/A runs ...
    python benches/series_verdicts.py --replay aa.json       # ... and judge them again

Measured for real, each run a default precision-mode ``ctxbench.ring`` (``history=False``)
pinned to one CPU (``placement="single"``):

- A/A: ``--runs`` back-to-back runs of ``procs 2 4 8 16`` (the issue's sweep). The store
  fills as it goes: run i is judged against the newest 30 runs before it whose load was within
  the history's tolerance of its own, as ``compare NEW`` reads the store (then against all 30
  before it, loads aside), the four points one family (``_core.judge_series``), from the
  ``MIN_SERIES``-th run on.
  Printed: the share of runs where ``compare`` would exit 1 (any point "slower") and where
  any point was called (slower or faster), with the binomial 95 % upper bound of each.
- Tails: each A/A run from the 31st on, each point alone, judged against the 30 runs before
  it; its distance from the series' level in the series' spreads (|z|). Printed: how often
  |z| exceeds 3, 4 and 5, beside what a t of the degrees of freedom the judge used (the core's
  ``RUN_LEVEL_DF``) and of the series' own (29) give: the evidence for the judge's tails.
- Power: ``--power-runs`` runs each of the ``CONFIGS`` (rings of 2, pinned), in a fresh
  random order each round; each pair's true ratio is first established from all its runs
  pooled (the ratio of medians of run figures), which also says which side is slower. Then
  ``--draws`` times: 10 runs of the faster side drawn as the series, one other run of the
  slower side judged against it (one point, one family), and again with 2 and 4 new runs.
  Printed: the share called slower, and called "no change".

Every figure is printed with the load averages before and after measuring: on a machine
other processes use, runs spread more and fall into modes more often than on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import ctxbench
from ctxbench import _core

SWEEP = (2, 4, 8, 16)
PINNED = {"placement": "single"}
# Pairs from about 1.05x to 1.25x apart on a quiet Intel Xeon KVM guest (2026-12-06): a
# transport, a working set of 16 KB, the engine. Their ratio here is measured, not assumed.
CONFIGS = {
    "pipe": {},
    "eventfd": {"transport": "eventfd"},
    "size_kb=16": {"size_kb": 16},
    "futex": {"transport": "futex"},
    "thread": {"engine": "thread"},
    "socket": {"transport": "socket"},
}
# New runs judged at once: one (a CI job's one run), or K (``--ctxbench-runs K``), whose mean's
# prediction interval narrows as √(1/K + 1/n).
NEW_RUNS = (1, 2, 4)
CALLS = False  # --calls: print each call of the A/A (which point, its ratio and series)
PAIRS = (
    ("eventfd", "pipe"),
    ("pipe", "size_kb=16"),
    ("pipe", "futex"),
    ("thread", "pipe"),
    ("pipe", "socket"),
)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def figures(result: Any) -> list[float]:
    """A run's figure of each point (µs per switch, its median), as the store keeps it."""
    return [float(v) for v in result.latency_us]


def rel_se(result: Any) -> list[float]:
    return [float(s) / float(v) for s, v in zip(result.stats["se"], result.latency_us)]


def upper95(k: int, n: int) -> float:
    """The one-sided 95 % upper bound of a share k / n (Wilson's score bound)."""
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


def aa(runs: int, max_time: float | None, save: Path | None, replay: Path | None) -> None:
    """The A/A exit rate against a filling series (its runs measured, or replayed from a file
    ``--save-runs`` wrote: the same runs judged again by another build of the judge)."""
    if replay:
        kept = json.loads(replay.read_text())
        values, errors, loads = kept["values"], kept["errors"], kept["loads"]
        print(f"A/A: {len(values)} runs replayed from {replay} (measured {kept['when']})")
    else:
        asked = {**PINNED, **({"max_time": max_time} if max_time else {})}
        print(f"A/A: {runs} runs of ring {' '.join(map(str, SWEEP))} pinned; {load()}")
        made = [ctxbench.ring(list(SWEEP), history=False, **asked) for _ in range(runs)]
        values = [figures(r) for r in made]
        errors = [rel_se(r) for r in made]
        loads = [r.metadata.get("runnable_per_cpu") for r in made]
    if save:
        when = f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {load()}"
        kept = {"when": when, "values": values, "errors": errors, "loads": loads}
        save.write_text(json.dumps(kept))
    for comparable in (True, False):
        judge_all(values, errors, loads, comparable)
    spread = [np.std(np.log([v[p] for v in values if v[p] > 0]), ddof=1) for p in range(len(SWEEP))]
    print("  spread of run figures (ln sd) per procs: "
          + ", ".join(f"{n}: {s:.3f}" for n, s in zip(SWEEP, spread)))  # fmt: skip
    tails(values)
    print(f"  after: {load()}")


def aa_cli(runs: int) -> None:
    """The A/A exit rate of the default path itself: each run a ``ctxbench sweep`` process
    that keeps it in a store of the bench's own, each from the 6th on judged by ``ctxbench
    compare NEW`` (a process too) against the runs before it. Runs in separate processes vary
    more than runs in one (each its own memory layout): this is what a CI job sees."""
    import subprocess
    import tempfile

    cmd = [sys.executable, "-m", "ctxbench"]
    sweep = ["sweep", "--procs", *map(str, SWEEP), "--placements", "single", "--no-progress"]
    print(f"A/A through the CLI: {runs} runs of `{' '.join(sweep[:-1])}`; {load()}")
    codes: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = ["--store", str(Path(tmp) / "store.sqlite3")]
        for i in range(runs):
            out = str(Path(tmp) / f"run{i}.json")
            subprocess.run([*cmd, *sweep, "--out", out, *store], check=True, capture_output=True)
            if i >= _core.MIN_SERIES:
                done = subprocess.run([*cmd, "compare", out, *store], capture_output=True)
                codes.append(done.returncode)
                said = done.stdout.decode().splitlines() if CALLS and done.returncode == 1 else []
                for line in (line for line in said if "slower" in line):
                    print(f"    run {i}: {line.strip()}")
    exits = sum(c == 1 for c in codes)
    print(f"  judged {len(codes)} runs: `ctxbench compare NEW` exited 1 in {exits} "
          f"({exits / len(codes):.1%}, 95 % upper bound {upper95(exits, len(codes)):.1%}); "
          f"other exit codes: {sorted(c for c in codes if c not in (0, 1))}")  # fmt: skip
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
            base, base_se = [v for v, _ in kept], [max(e, 1e-6) for _, e in kept]
            points.append((base, base_se, [values[i][p]], [max(errors[i][p], 1e-6)]))
        out = _core.judge_series(points, _core.DEFAULT_PRECISION)
        words = [j["verdict"] for j in out]
        for n, j in zip(SWEEP, out) if CALLS and comparable else ():
            if j["verdict"] in ("slower", "faster"):
                print(f"    run {i} procs {n}: {j['verdict']} {j['ratio']:.3f} [{j['low']:.3f}, "
                      f"{j['high']:.3f}] against {j['runs']} runs of ln sd {j['sd']:.4f}, "
                      f"{j['modes']} mode(s), {j['set_aside']} set aside")  # fmt: skip
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


def tails(values: list) -> None:
    """How far each run lies from its series' level, in the series' spreads, against t."""
    window = _core.SERIES_WINDOW
    z, judged_df = [], math.nan
    for i in range(window, len(values)):
        for p in range(len(SWEEP)):
            base = [values[j][p] for j in range(i - window, i) if values[j][p] > 0]
            if values[i][p] <= 0 or len(base) < _core.MIN_SERIES:
                continue
            j = _core.judge_series([(base, [], [values[i][p]], [])], _core.DEFAULT_PRECISION)[0]
            if math.isfinite(j["sd"]) and j["sd"] > 0:
                z.append(abs(math.log(j["ratio"])) / (j["sd"] * math.sqrt(1 + 1 / len(base))))
                judged_df = j["df"]
    if not z:
        print("  tails: too few runs (needs more than the series window)")
        return
    beyond = (3.0, 4.0, 5.0)
    seen = ", ".join(f">{b:g}: {np.mean(np.array(z) > b):.1%}" for b in beyond)
    print(f"  tails: |z| of {len(z)} runs against their {window} before: {seen}")
    for df in (judged_df, window - 1.0):
        print(f"    t{df:g}: " + ", ".join(f">{b:g}: {t_beyond(b, df):.2%}" for b in beyond))


def t_beyond(x: float, df: float) -> float:
    """P(|T| > x) for Student's t of ``df`` degrees of freedom (Simpson's rule on [0, x])."""
    c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    steps = 2000
    h = x / steps
    pdf = [math.exp(c - (df + 1) / 2 * math.log1p((k * h) ** 2 / df)) for k in range(steps + 1)]
    inner = sum(pdf[k] * (4 if k % 2 else 2) for k in range(1, steps))
    return 1.0 - 2.0 * h / 3.0 * (pdf[0] + inner + pdf[-1])


def power(runs: int, draws: int, rng: np.random.Generator, max_time: float | None) -> None:
    """Power at the pairs' established ratios."""
    asked = {**PINNED, **({"max_time": max_time} if max_time else {})}
    print(f"power: {runs} runs each of {', '.join(CONFIGS)} (ring of 2, pinned); {load()}")
    made: dict[str, list[float]] = {name: [] for name in CONFIGS}
    for _ in range(runs):
        for name in rng.permutation(list(CONFIGS)):
            r = ctxbench.ring([2], history=False, **asked, **CONFIGS[str(name)])
            made[str(name)] += figures(r)
    for one, other in PAIRS:
        a, b = np.array(made[one]), np.array(made[other])
        a, b = a[a > 0], b[b > 0]
        ratio = float(np.median(b) / np.median(a))
        # Which side is slower is what the pooled runs establish on this machine, not what
        # another machine showed: the series is the faster side, the new run the slower.
        fast, slow = (one, other) if ratio >= 1 else (other, one)
        if ratio < 1:
            a, b, ratio = b, a, 1 / ratio
        sd = [float(np.std(np.log(x), ddof=1)) for x in (a, b)]
        print(f"  {slow} vs {fast}: pooled ratio {ratio:.3f} ({len(a)} and {len(b)} runs; run "
              f"spread, ln sd, {sd[0]:.3f} and {sd[1]:.3f})")  # fmt: skip
        for k in NEW_RUNS:
            slower, same, known = draws_judged(a, b, k, draws, rng)
            print(
                f"    {k} new run{'s' if k > 1 else ''} against 10: called slower in "
                f"{slower / draws:.1%} of {draws} draws, 'no change' in {same / draws:.1%} (of "
                f"which 'known mode' {known / draws:.1%})"
            )
    print(f"  after: {load()}")


def draws_judged(
    a: np.ndarray, b: np.ndarray, k: int, draws: int, rng: np.random.Generator
) -> tuple[int, int, int]:
    """``draws`` times: 10 runs of ``a`` as the series, ``k`` other runs of ``b`` judged as k
    new runs (``--ctxbench-runs K``); how many were called slower, "no change", known mode."""
    slower = same = known = 0
    for _ in range(draws):
        base = rng.choice(a, size=min(10, len(a)), replace=False)
        new = rng.choice(b, size=min(k, len(b)), replace=False).tolist()
        out = _core.judge_series([(base.tolist(), [], new, [])], _core.DEFAULT_PRECISION)[0]
        slower += out["verdict"] == "slower"
        same += out["verdict"] == "no change"
        known += out["why"] == "known mode"
    return slower, same, known


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=40, help="A/A runs (default 40)")
    p.add_argument("--power-runs", type=int, default=20, help="runs per configuration")
    p.add_argument("--draws", type=int, default=400, help="power draws per pair")
    p.add_argument("--quick", action="store_true", help="a smoke run: short runs, few draws")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cli", action="store_true", help="the A/A through the CLI only")
    p.add_argument("--calls", action="store_true", help="print each A/A call with its series")
    p.add_argument("--save-runs", type=Path, help="keep the A/A runs' figures in this JSON file")
    p.add_argument("--replay", type=Path, help="judge the A/A runs a --save-runs file kept")
    args = p.parse_args(argv)
    global CALLS
    CALLS = args.calls
    if args.cli:
        aa_cli(args.runs)
        return 0
    rng = np.random.default_rng(args.seed)
    max_time = 0.05 if args.quick else None
    if args.quick:
        args.runs, args.power_runs, args.draws = 8, 6, 50
    print(f"ctxbench {ctxbench.__version__}; FAMILY_ALPHA {_core.FAMILY_ALPHA}, "
          f"MIN_SERIES {_core.MIN_SERIES}, SERIES_WINDOW {_core.SERIES_WINDOW}")  # fmt: skip
    aa(args.runs, max_time, args.save_runs, args.replay)
    if args.replay:
        return 0
    power(args.power_runs, args.draws, rng, max_time)
    return 0


if __name__ == "__main__":
    sys.exit(main())
