"""How often the verdicts are right under this machine's real noise: false alarms and power.

    python benches/verdicts.py                 # ~2 min of measuring, then the resampling
    python benches/verdicts.py --quick         # a few seconds: a smoke run, rough figures
    python benches/verdicts.py --runs 40 --pool 90 --draws 400 --budget 60

One configuration, measured for real: a ring of 2 processes pinned to one CPU (``ring
--procs 2 --placement single``). Its A/A data are then resampled, one side multiplied by a
known ratio (1.0: A/A, every slower/faster a false alarm; 1.05, 1.1, 1.2, 2.0: a real
change), and each draw is judged as a user's would be:

- the default compare gate: two default runs (``ctxbench.ring`` in precision mode), drawn
  from ``--runs`` real ones, compared by ``ctxbench.compare`` at ``--threshold``: one run a
  side, as the pytest gate and ``ctxbench compare`` see them;
- ``ctxbench ab``: rounds drawn with replacement from a pool of real A/A rounds
  (``ctxbench.ab`` of the configuration against itself, ``--pool`` seconds of them), B
  multiplied by the ratio, read by the core's own stopping rule (``_core.ab_replay``: the
  confidence sequence after every round, stop when it decides or the next round would end
  past ``--budget`` seconds at the pace so far).

Printed: per procedure and ratio the share of draws called slower, faster, no change and
inconclusive, the number of draws, and for ab the median rounds and seconds a draw took;
then the machine's load (``os.getloadavg``) before and after measuring. Resampling keeps the
real spread of figures and round ratios but not their order (drift over minutes is lost).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

import ctxbench
from ctxbench import _core
from ctxbench._table_schema import POINT_KEY

SIDE = {"measure": "ring", "procs": 2, "placement": "single"}
RATIOS = (1.0, 1.05, 1.1, 1.2, 2.0)
# Known real differences: pairs of configurations (A, B) whose ratio B/A the bench first
# establishes from all its runs of each, pooled. On this machine kind, pinned, 2 processes:
# about 1.05 (eventfd against pipe), 1.1 (pipe against futex), 1.25 (thread against
# process) and 2 (a thread ring at 0 KB against a process ring summing 256 KB).
CONFIGS = {
    "pipe": {},
    "eventfd": {"transport": "eventfd"},
    "futex": {"transport": "futex"},
    "thread": {"engine": "thread"},
    "256 KB": {"size_kb": 256},
}
PAIRS = (
    ("pipe", "pipe"),
    ("eventfd", "pipe"),
    ("pipe", "futex"),
    ("thread", "pipe"),
    ("thread", "256 KB"),
)
WORDS = _core.CHANGES


def load() -> str:
    """The load averages and the CPUs, as a page states them."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def default_runs(n: int) -> list[Any]:
    """``n`` default runs of the configuration, each its tidy frame."""
    asked = {k: v for k, v in SIDE.items() if k != "measure"}
    return [ctxbench.ring(history=False, **asked).to_frame() for _ in range(n)]


def aa_rounds(seconds: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Real A/A rounds for about ``seconds``: each round's figures and its duration. A run
    stops when its interval decides (a false alarm at threshold 0); the next one goes on.
    B is then divided by the pool's geometric mean ratio, so that the rounds resampled from
    it are A/A exactly (a finite pool's own mean ratio is no more 1 than a run's is)."""
    a, b, took = [], [], []
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        left = max(1.0, seconds - (time.monotonic() - start))
        r = ctxbench.ab(SIDE, SIDE, budget=left, threshold=0.0)
        a += r.a_us.tolist()
        b += r.b_us.tolist()
        took += np.diff(np.concatenate([[0.0], r.end_s])).tolist()
    a_us, b_us = np.array(a), np.array(b)
    both = (a_us > 0) & (b_us > 0)
    return a_us, b_us / np.exp(np.mean(np.log(b_us[both] / a_us[both]))), np.array(took)


def real_runs(n: int, rng: Any) -> dict[str, list[Any]]:
    """``n`` default runs of every configuration of ``CONFIGS``, in a fresh random order each
    round (RMIT), so that the host's drift hits every configuration alike."""
    out: dict[str, list[Any]] = {name: [] for name in CONFIGS}
    for _ in range(n):
        for name in rng.permutation(list(CONFIGS)):
            asked = {k: v for k, v in SIDE.items() if k != "measure"}
            run = ctxbench.ring(history=False, **asked, **CONFIGS[name])
            out[str(name)].append(run.to_frame())
    return out


def figure(frame: Any) -> float:
    return float(frame["value"].median())


def pooled_ratio(a: list[Any], b: list[Any]) -> float:
    """B/A from all runs of each: the ratio of their geometric mean figures."""
    return float(
        np.exp(np.mean(np.log([figure(f) for f in b])) - np.mean(np.log([figure(f) for f in a])))
    )


def real_gate(
    a: list[Any], b: list[Any], draws: int, threshold: float, rng: Any
) -> tuple[list[str], list[str]]:
    """The compare gate on real pairs: one run of A against one run of B (two distinct runs
    where A and B are the same configuration), as a gate in CI compares them."""
    words, whys = [], []
    for _ in range(draws):
        if a is b:
            i, j = rng.choice(len(a), size=2, replace=False)
            base, new = a[i], a[j]
        else:
            base, new = a[rng.integers(len(a))], b[rng.integers(len(b))]
        # Named as the same point, as a gate sees a point whose code changed.
        new = new.assign(**{k: base[k].iloc[0] for k in POINT_KEY})
        table = ctxbench.compare(base, new, threshold=threshold)
        words.append(str(table["verdict"].iloc[0]))
        whys.append(str(table["why"].iloc[0]))
    return words, whys


def real_ab(a: str, b: str, draws: int, budget: float, threshold: float) -> list[Any]:
    """``ctxbench.ab`` of the real pair, ``draws`` times."""
    sides = [{**SIDE, **CONFIGS[name]} for name in (a, b)]
    return [ctxbench.ab(*sides, budget=budget, threshold=threshold) for _ in range(draws)]


def gate(
    frames: list[Any], ratio: float, draws: int, threshold: float, rng: Any
) -> tuple[list[str], list[str]]:
    """The compare gate's word, and why, for ``draws`` pairs of distinct runs, the new one
    scaled."""
    words, whys = [], []
    for _ in range(draws):
        i, j = rng.choice(len(frames), size=2, replace=False)
        new = frames[j].assign(value=frames[j]["value"] * ratio)
        table = ctxbench.compare(frames[i], new, threshold=threshold)
        words.append(str(table["verdict"].iloc[0]))
        whys.append(str(table["why"].iloc[0]))
    return words, whys


def undecided(words: list[str], whys: list[str]) -> str:
    """What kept the inconclusive draws undecided, each reason's share of them."""
    left = [w for word, w in zip(words, whys) if word == "inconclusive"]
    counts = {w: left.count(w) for w in dict.fromkeys(left)}
    return ", ".join(f"{w} {100 * n / len(left):.0f} %" for w, n in counts.items()) or "-"


def ab(
    pool: tuple[np.ndarray, np.ndarray, np.ndarray],
    ratio: float,
    draws: int,
    threshold: float,
    budget: float,
    rng: Any,
) -> list[dict[str, Any]]:
    """The stopping rule's outcome for ``draws`` sequences of rounds resampled from
    ``pool``, B scaled: enough rounds for the budget at the pool's slowest pace."""
    a, b, took = pool
    n = int(budget / max(took.min(), 1e-3)) + 2
    out = []
    for _ in range(draws):
        k = rng.integers(0, len(a), size=n)
        out.append(
            _core.ab_replay(
                a[k], b[k] * ratio, np.cumsum(took[k]), budget=budget, threshold=threshold
            )
        )
    return out


def row(name: str, ratio: float, words: list[str], extra: str = "") -> str:
    shares = " | ".join(f"{100 * words.count(w) / len(words):.0f} %" for w in WORDS)
    return f"| {name} | {ratio:g} | {shares} | {len(words)} |{extra}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smoke run: few runs and draws")
    p.add_argument("--runs", type=int, default=30, help="real default runs (default 30)")
    p.add_argument("--pool", type=float, default=60.0, help="seconds of real A/A rounds")
    p.add_argument("--draws", type=int, default=300, help="draws per ratio (default 300)")
    p.add_argument("--budget", type=float, default=60.0, help="ab's budget in seconds")
    p.add_argument("--threshold", type=float, default=_core.DEFAULT_PRECISION)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--real-runs", type=int, default=20, help="runs of each real configuration")
    p.add_argument("--real-ab", type=int, default=3, help="real ab runs per real pair")
    args = p.parse_args(argv)
    if args.quick:
        args.runs, args.pool, args.draws, args.real_runs, args.real_ab = 4, 3.0, 20, 3, 0
    rng = np.random.default_rng(args.seed)
    before = load()
    frames = default_runs(args.runs)
    pool = aa_rounds(args.pool)
    after = load()
    both = (pool[0] > 0) & (pool[1] > 0)
    spread = np.std(np.log(pool[1][both] / pool[0][both]), ddof=1)
    print(f"# {ctxbench.report.ab_side({**SIDE, **_side_defaults()})}")
    print(
        f"{args.runs} default runs; {len(pool[0])} A/A rounds ({pool[2].sum():.0f} s, "
        f"{np.median(pool[2]):.3f} s a round, sd of a round's ln ratio {spread:.3f}, "
        f"{np.sum(~both)} below resolution); "
        f"threshold ±{args.threshold:.0%}, ab budget {args.budget:g} s"
    )
    real = real_runs(args.real_runs, rng)
    after_real = load()
    print(f"measured under: {before} (before), {after} (after), {after_real} (after real)\n")
    print(f"Known real differences, {args.real_runs} default runs of each configuration:\n")
    print(f"| A | B | pooled B/A | {' | '.join(WORDS)} | draws | inconclusive: why |")
    print("|---|---|---|" + "---|" * len(WORDS) + "---|---|")
    for a_name, b_name in PAIRS:
        a, b = real[a_name], real[b_name]
        ratio = 1.0 if a is b else pooled_ratio(a, b)
        words, whys = real_gate(a, b, args.draws, args.threshold, rng)
        shares = " | ".join(f"{100 * words.count(w) / len(words):.0f} %" for w in WORDS)
        print(
            f"| {a_name} | {b_name} | {ratio:.3f} | {shares} | {len(words)} | "
            f"{undecided(words, whys)} |"
        )
    if args.real_ab:
        print(f"\nab on the real pairs, {args.real_ab} runs each, budget {args.budget:g} s:\n")
        print("| A | B | verdicts | ratio [95 %] | seconds |")
        print("|---|---|---|---|---|")
        for a_name, b_name in PAIRS:
            outs = real_ab(a_name, b_name, args.real_ab, args.budget, args.threshold)
            said = ", ".join(o.verdict for o in outs)
            ratios = "; ".join(
                f"{o.ratio:.3f} [{o.ratio_low:.3f}, {o.ratio_high:.3f}]" for o in outs
            )
            took = ", ".join(f"{o.elapsed_s:.1f}" for o in outs)
            print(f"| {a_name} | {b_name} | {said} | {ratios} | {took} |")
    print(f"\nresampled: one configuration, one side scaled ({load()} at the end)\n")
    head = " | ".join(WORDS)
    print(f"| procedure | true B/A | {head} | draws | inconclusive: why | ab: median rounds, s |")
    print("|---|---|" + "---|" * len(WORDS) + "---|---|---|")
    for ratio in RATIOS:
        words, whys = gate(frames, ratio, args.draws, args.threshold, rng)
        print(row("compare, 1 run a side", ratio, words, f" {undecided(words, whys)} | |"))
    for ratio in RATIOS:
        outs = ab(pool, ratio, args.draws, args.threshold, args.budget, rng)
        rounds = np.median([o["rounds"] for o in outs])
        seconds = np.median([o["elapsed_s"] for o in outs])
        words = [o["verdict"] for o in outs]
        why = undecided(words, [o["stopped"] for o in outs])
        extra = f" {why} | {rounds:.0f}, {seconds:.1f} |"
        print(row(f"ab, {args.budget:g} s budget", ratio, words, extra))
    return 0


def _side_defaults() -> dict[str, Any]:
    """What the configuration's side records beyond what was asked."""
    cfg = _core.ring_config(**{k: v for k, v in SIDE.items() if k != "measure"})
    return {"engine": cfg["engine"], "transport": cfg["transport"], "size_kb": cfg["size_kb"]}


if __name__ == "__main__":
    sys.exit(main())
