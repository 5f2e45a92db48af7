"""Are change points found where a series really moved, and only there? On real runs.

    python benches/changes.py                          # 10 + 10 series of 40 runs
    python benches/changes.py --after transport=futex --keep series.json
    python benches/changes.py --before size_kb=0 --after size_kb=64

Series are built as a store keeps them: one run after another of a ring of 2 pinned on one
CPU (`ctxbench.ring([2], placement="single", preset="fast")`, one call per run, fresh ring
instances each), the 20 series interleaved round by round in a fresh random order, so that
the host's drift hits all alike. 10 series change at run 20 (`--before` -> `--after`, under
the same label: a commit that changed it), 10 are A/A. Each series is then scanned as
`ctxbench changes` scans a store (`_core.change_points`: E-Divisive, Holm at 5 % across the
20 series). Printed: the change found at 20 +- 1 in how many of 10 (goal >= 9), A/A series
with no change point in how many of 10 (goal >= 9), each series' change points with their
size, the measured ratio of --after to --before from the pooled runs, the load, and the
wall time. `--keep FILE` writes the series for `benches/changes_crosscheck.py --series`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import time
from pathlib import Path

os.environ["CTXBENCH_HISTORY"] = "off"
# The series live in memory (and --keep): the user's store is left alone.
os.environ["CTXBENCH_STORE"] = "off"

import ctxbench  # noqa: E402
from ctxbench import _core  # noqa: E402


def setting(text: str) -> dict[str, object]:
    name, _, value = text.partition("=")
    return {name: int(value) if value.isdigit() else value}


def one_run(kwargs: dict[str, object]) -> float:
    """One run's net figure, µs per switch; as the store, a run whose net figure is not
    positive (the overhead subtracted exceeded it, under load) is measured again, and
    counted."""
    r = ctxbench.ring([2], placement="single", preset="fast", **kwargs)
    return float(r.latency_us[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--series", type=int, default=10, help="series of each kind")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--shift-at", type=int, default=20)
    ap.add_argument("--before", type=setting, default={"transport": "pipe"})
    ap.add_argument("--after", type=setting, default={"transport": "futex"})
    ap.add_argument("--keep", type=Path, help="write the series as JSON")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    kinds = ["shift"] * args.series + ["A/A"] * args.series
    values: list[list[float]] = [[] for _ in kinds]
    loads = [os.getloadavg()[0]]
    t0 = time.monotonic()
    unusable = 0
    for run in range(args.runs):
        order = list(range(len(kinds)))
        rng.shuffle(order)
        for i in order:
            after = kinds[i] == "shift" and run >= args.shift_at
            value = one_run(args.after if after else args.before)
            while value <= 0:  # the store keeps no such run: neither does a series here
                unusable += 1
                value = one_run(args.after if after else args.before)
            values[i].append(value)
        loads.append(os.getloadavg()[0])
        print(f"round {run + 1}/{args.runs}, load {loads[-1]:.2f}", flush=True)
        if args.keep:  # as it goes: a long run interrupted keeps what it measured
            args.keep.write_text(json.dumps({"values": values, "kinds": kinds}))
    wall = time.monotonic() - t0
    series = [
        {"key": f"{k} {i}", "kind": k, "ln_values": [math.log(v) for v in vs]}
        for i, (k, vs) in enumerate(zip(kinds, values))
    ]
    scans = _core.change_points([(s["key"], s["ln_values"]) for s in series])
    found = sum(
        any(abs(c["index"] - args.shift_at) <= 1 for c in scan["changes"])
        for scan, k in zip(scans, kinds)
        if k == "shift"
    )
    quiet = sum(not scan["changes"] for scan, k in zip(scans, kinds) if k == "A/A")
    before = [v for vs, k in zip(values, kinds) for v in vs[: args.shift_at]]
    after = [v for vs, k in zip(values, kinds) if k == "shift" for v in vs[args.shift_at :]]
    print(
        f"\n{len(kinds)} series of {args.runs} runs; {args.before} -> {args.after} at run "
        f"{args.shift_at}; wall {wall:.0f} s; load (1-min) min {min(loads):.2f} "
        f"median {statistics.median(loads):.2f} max {max(loads):.2f}"
    )
    print(
        f"pooled ratio after/before (medians): "
        f"{statistics.median(after) / statistics.median(before):.3f}"
    )
    for s, scan in zip(series, scans):
        cps = ", ".join(
            f"at {c['index']} x{c['ratio']:.3f} [{c['ratio_lo']:.3f}, {c['ratio_hi']:.3f}] "
            f"p={c['p']:.2g}"
            for c in scan["changes"]
        )
        print(f"  {s['key']:<9} {cps or 'no change point'}")
    print(f"shift found at {args.shift_at} +- 1: {found} of {args.series} (goal >= 9)")
    print(f"A/A with no change point: {quiet} of {args.series} (goal >= 9)")
    if args.keep:
        args.keep.write_text(json.dumps({"series": series}))


if __name__ == "__main__":
    main()
