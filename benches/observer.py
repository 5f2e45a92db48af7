"""Does the observer move the number? ctxbench's default against the same build with
perf_event_open refused, with perf counters through the timed repetitions, and the C ring.

    python benches/observer.py                   # 2 8 16 procs x 0 64 KB, 12 rounds
    python benches/observer.py --quick           # 2 8 procs x 0 KB, 4 rounds
    python benches/observer.py -r 20 -p 2 4 -s 0

Arms, each a fresh process per run, all pinned to one CPU:
  default   `ctxbench lat-ctx --placement single -s KB PROCS...`
  refused   the same with LD_PRELOAD of benches/noperf.c: perf_event_open fails (EACCES),
            so no perf event exists at all (what an unprivileged user gets)
  timed     the same with `--counters timed`: perf counters on every participant through the
            timed repetitions (the observer on the timed path)
  C ring    benches/ctxring.c (`ctxring -1 -s KB PROCS`): lmbench's algorithm in plain C
Every round runs every arm once, in a fresh random order (RMIT), so that drift of the host
hits all arms alike. Per point: each arm's median over the rounds, and each arm's ratio to
`refused` with a 95 % interval from the rounds' paired log ratios (Student's t); then the
ratios pooled over the points (the mean of the points' log ratios, its interval from their
spread). The run history is off for every run (CTXBENCH_HISTORY=off).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
ARMS = ("default", "refused", "timed", "C ring")
# Student's t at 97.5 % for 1..30 degrees of freedom; the normal beyond.
T975 = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14,
        2.13, 2.12, 2.11, 2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05, 2.05,
        2.05, 2.04]  # fmt: skip


def t975(df: int) -> float:
    return T975[df - 1] if 1 <= df <= len(T975) else 1.96


def build(tmp: Path) -> tuple[Path, Path]:
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        sys.exit(f"observer.py: no C compiler ({cc}); set CC")
    ring, shim = tmp / "ctxring", tmp / "noperf.so"
    subprocess.run([cc, "-O2", "-o", str(ring), str(HERE / "ctxring.c")], check=True)
    subprocess.run(
        [cc, "-O2", "-shared", "-fPIC", "-o", str(shim), str(HERE / "noperf.c"), "-ldl"],
        check=True,
    )
    return ring, shim


def ctxbench(size: int, procs: list[int], env: dict[str, str], extra: list[str]) -> list[float]:
    exe = shutil.which("ctxbench")
    cmd = [exe] if exe else [sys.executable, "-m", "ctxbench"]
    cmd += ["lat-ctx", "--placement", "single", "-s", str(size), *extra, *map(str, procs)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    found = dict(re.findall(r"^(\d+) (-?[\d.]+)$", out, re.M))
    return [float(found[str(p)]) for p in procs]


def c_ring(exe: Path, size: int, procs: list[int]) -> list[float]:
    out = []
    for p in procs:
        text = subprocess.run(
            [str(exe), "-1", "-s", str(size), str(p)], capture_output=True, text=True, check=True
        ).stdout
        out.append(float(dict(kv.split("=") for kv in text.split())["per_switch_us"]))
    return out


def interval(logs: list[float]) -> tuple[float, float, float]:
    """exp of the mean log ratio and its 95 % interval."""
    m = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(m), math.nan, math.nan
    h = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-p", "--procs", type=int, nargs="+", help="ring sizes (2 8 16)")
    ap.add_argument("-s", "--sizes", type=int, nargs="+", help="KiB per participant (0 64)")
    ap.add_argument("-r", "--rounds", type=int, help="rounds, every arm once each (12)")
    ap.add_argument("--quick", action="store_true", help="2 8 procs x 0 KB, 4 rounds")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    procs = args.procs or ([2, 8] if args.quick else [2, 8, 16])
    sizes = args.sizes or ([0] if args.quick else [0, 64])
    rounds = args.rounds or (4 if args.quick else 12)
    rng = random.Random(args.seed)
    base = {**os.environ, "CTXBENCH_HISTORY": "off"}
    with tempfile.TemporaryDirectory(prefix="observer-") as tmp:
        ring, shim = build(Path(tmp))
        run = {
            "default": lambda s: ctxbench(s, procs, base, []),
            "refused": lambda s: ctxbench(s, procs, {**base, "LD_PRELOAD": str(shim)}, []),
            "timed": lambda s: ctxbench(s, procs, base, ["--counters", "timed"]),
            "C ring": lambda s: c_ring(ring, s, procs),
        }
        # figures[arm][(size, procs)] = one value per round
        figures = {arm: {(s, p): [] for s in sizes for p in procs} for arm in ARMS}
        for r in range(rounds):
            for size in sizes:
                for arm in rng.sample(ARMS, len(ARMS)):
                    for p, v in zip(procs, run[arm](size)):
                        figures[arm][(size, p)].append(v)
            print(f"# round {r + 1}/{rounds} done, load {os.getloadavg()[0]:.2f}",
                  file=sys.stderr, flush=True)  # fmt: skip
    u, load = os.uname(), os.getloadavg()[0]
    print(f"# observer: {rounds} rounds, RMIT, pinned, {os.cpu_count()} CPUs, "
          f"{u.sysname} {u.release}, load {load:.2f} at the end\n")  # fmt: skip
    others = [a for a in ARMS if a != "refused"]
    head = " | ".join(f"{a} ÷ refused [95 %]" for a in others)
    print(f"| KB | procs | {' | '.join(f'{a} µs' for a in ARMS)} | {head} |")
    print("|---:|---:|" + "---:|" * (len(ARMS) + len(others)))
    pooled = {a: [] for a in others}
    for (size, p), ref in figures["refused"].items():
        cells = [f"{statistics.median(figures[a][(size, p)]):.3f}" for a in ARMS]
        for a in others:
            logs = [math.log(x / y) for x, y in zip(figures[a][(size, p)], ref)]
            pooled[a].append(statistics.fmean(logs))
            ratio, low, high = interval(logs)
            cells.append(f"{ratio:.3f} [{low:.3f}, {high:.3f}]")
        print(f"| {size} | {p} | " + " | ".join(cells) + " |")
    print()
    for a in others:
        ratio, low, high = interval(pooled[a])
        print(f"pooled {a} ÷ refused over {len(pooled[a])} points: {ratio:.3f} "
              f"[{low:.3f}, {high:.3f}]")  # fmt: skip


if __name__ == "__main__":
    main()
