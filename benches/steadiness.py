"""Time to a steady number: whole pinned sweeps of ctxbench and of the C ring, alternated.

    python benches/steadiness.py                    # procs 2 4 8 16 20, 0 KB, 8 rounds
    python benches/steadiness.py -s 16 -r 12        # another size, more rounds
    python benches/steadiness.py --ctxbench-args '--precision 0.03'

Each round runs one sweep of each side, in alternating order (A B, then B A, ...), pinned to
one CPU: `ctxbench lat-ctx --placement single -s KB PROCS... --json` (one process, as a user
runs it) and `benches/ctxring.c -1 -T 0.005 -s KB P` once per ring size, one after the other
as lmbench's `lat_ctx` runs its list (11 repetitions of 5 ms: lmbench's own time per point).
Printed per point: each side's median per-switch figure over the rounds and its run-to-run
CV; for ctxbench how each run stopped, the mean half-width of its 95 % interval, and how
often the next run's figure fell inside this run's interval (the interval's honesty). Then
each side's mean wall time per sweep, and ctxbench's time inside the core (what a notebook
that already imported it waits).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from reference import build, ctxbench_cmd, cv  # noqa: E402


def sweep_ours(size: int, procs: list[int], extra: list[str]) -> tuple[dict, float]:
    """The --json result of one `ctxbench lat-ctx` sweep, and its wall time."""
    cmd = ctxbench_cmd() + ["lat-ctx", "--placement", "single", "-s", str(size), *extra]
    t = time.monotonic()
    out = subprocess.run(cmd + ["--json", *map(str, procs)], capture_output=True, text=True)
    wall = time.monotonic() - t
    if out.returncode != 0:
        sys.exit(f"steadiness.py: ctxbench failed:\n{out.stderr}")
    return json.loads(out.stdout)["results"][0], wall


def sweep_ref(exe: Path, size: int, procs: list[int]) -> tuple[list[float], float]:
    """Per-switch µs of each point of one C-ring sweep, and its wall time."""
    values = []
    t = time.monotonic()
    for n in procs:
        cmd = [str(exe), "-1", "-T", "0.005", "-s", str(size), str(n)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        values.append(float(dict(kv.split("=") for kv in out.split())["per_switch_us"]))
    return values, time.monotonic() - t


def core_seconds(result: dict) -> float:
    return sum(sum(v) for v in result["phase_s"].values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-s", "--size", type=int, default=0, help="KiB per participant (0)")
    ap.add_argument("-p", "--procs", type=int, nargs="+", default=[2, 4, 8, 16, 20])
    ap.add_argument("-r", "--rounds", type=int, default=8, help="sweeps per side (8)")
    ap.add_argument("--ctxbench-args", default="", help="extra lat-ctx flags")
    args = ap.parse_args()
    extra = args.ctxbench_args.split()
    ours: list[dict] = []
    ref: list[list[float]] = []
    wall_ours, wall_ref = [], []
    with tempfile.TemporaryDirectory(prefix="ctxring-") as tmp:
        exe = build(Path(tmp))
        for k in range(args.rounds):
            for side in (0, 1) if k % 2 == 0 else (1, 0):
                if side == 0:
                    result, wall = sweep_ours(args.size, args.procs, extra)
                    ours.append(result)
                    wall_ours.append(wall)
                else:
                    values, wall = sweep_ref(exe, args.size, args.procs)
                    ref.append(values)
                    wall_ref.append(wall)
    print(f"# {args.rounds} alternated rounds, pinned, {args.size} KB, ctxbench {' '.join(extra)}")
    print("| procs | ctxbench µs | CV | C ring µs | CV | ratio | ± (mean) | next run inside "
          "| stopped |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for j, n in enumerate(args.procs):
        a = [r["latency_us"][j] for r in ours]
        b = [v[j] for v in ref]
        low = [r["stats"]["ci_low"][j] for r in ours]
        high = [r["stats"]["ci_high"][j] for r in ours]
        half = statistics.fmean((h - lo) / 2 / m for h, lo, m in zip(high, low, a))
        inside = sum(low[i] <= a[i + 1] <= high[i] for i in range(len(a) - 1))
        stopped = Counter(r["stopped"][j] for r in ours)
        how = ", ".join(f"{k} {v}" for k, v in stopped.most_common())
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"| {n} | {ma:.3f} | {cv(a)} | {mb:.3f} | {cv(b)} | {ma / mb:.3f} "
              f"| {half * 100:.1f} % | {inside}/{len(a) - 1} | {how} |")  # fmt: skip
    core = statistics.fmean(map(core_seconds, ours))
    print(f"\nwall per sweep: ctxbench {statistics.fmean(wall_ours):.2f} s "
          f"(in the core {core:.2f} s), C ring {statistics.fmean(wall_ref):.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
