"""ctxbench's ping-pong against `perf bench sched pipe`, and what could make them differ.

    python benches/pingpong.py                # 24 rounds of 100000 round trips
    python benches/pingpong.py -r 40 -l 200000

Every round runs each side once, in an order that rotates round to round, pinned to one CPU:
`perf bench sched pipe` (the peer), `ctxbench pipe -l N` (perf's fixed loop), `ctxbench pipe`
(measured until precise), and benches/pipe_variants.c built here: perf's loop as is, with an
idle second thread in the parent (ctxbench's driver is a thread of a multi-threaded process),
and after writing 40 MB of heap before the fork (ctxbench forks from a ~35 MB Python
process). Printed per side: the median µs per round trip, and the median and quartiles of its
ratio to perf's figure of the same round (each round pairs the sides in the same seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("pipe_variants.c")


def sides(exe: Path, loops: str, cpu: str) -> dict[str, list[str]]:
    pin = ["taskset", "-c", cpu]
    ours = shutil.which("ctxbench")
    ctxbench = [ours] if ours else [sys.executable, "-m", "ctxbench"]
    return {
        "perf": [*pin, "perf", "bench", "sched", "pipe", "-l", loops],
        "ctxbench -l": [*ctxbench, "pipe", "-l", loops, "--placement", "single", "--json"],
        "ctxbench": [*ctxbench, "pipe", "--placement", "single", "--json"],
        "C loop": [*pin, str(exe), "-l", loops],
        "C, threaded parent": [*pin, str(exe), "-l", loops, "-t"],
        "C, 40 MB parent": [*pin, str(exe), "-l", loops, "-m", "40"],
    }


def usecs_per_op(cmd: list[str]) -> float:
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    if "--json" in cmd:
        return float(json.loads(out)["results"][0]["usecs_per_op"])
    return next(float(line.split()[0]) for line in out.splitlines() if "usecs/op" in line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-r", "--rounds", type=int, default=24)
    ap.add_argument("-l", "--loops", type=int, default=100_000)
    args = ap.parse_args()
    if shutil.which("perf") is None:
        sys.exit("pingpong.py: perf is not installed (Debian: linux-perf)")
    cpu = str(min(os.sched_getaffinity(0)))
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "pipe_variants"
        subprocess.run(["cc", "-O2", "-pthread", "-o", str(exe), str(SOURCE)], check=True)
        cmds = sides(exe, str(args.loops), cpu)
        names = list(cmds)
        got: dict[str, list[float]] = {n: [] for n in names}
        for k in range(args.rounds):
            for name in names[k % len(names) :] + names[: k % len(names)]:
                got[name].append(usecs_per_op(cmds[name]))
    print(f"# {args.rounds} rounds, {args.loops} round trips, pinned to CPU {cpu}")
    print("| side | median µs/op | ratio to perf (median) | quartiles |")
    print("|---|---:|---:|---|")
    for name in names:
        ratios = [a / b for a, b in zip(got[name], got["perf"])]
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        print(f"| {name} | {statistics.median(got[name]):.3f} | "
              f"{statistics.median(ratios):.3f} | {q1:.3f}-{q3:.3f} |")  # fmt: skip


if __name__ == "__main__":
    main()
