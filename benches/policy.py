"""Scheduling policies side by side: a ring of 2, 8 and 16 processes on one CPU under each
policy, in alternated rounds (every policy once per round, the order rotated), so that the
host's drift falls on all of them alike. Prints per policy and ring size the median over
rounds of each round's median µs per switch, the smallest and largest round, and the load
before and after.

    python benches/policy.py                      # other, batch, idle, fifo; 5 rounds
    python benches/policy.py --rounds 9 --policies other fifo
"""

from __future__ import annotations

import argparse
import os
import statistics

import ctxbench


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--procs", type=int, nargs="+", default=[2, 8, 16])
    ap.add_argument("--policies", nargs="+", default=["other", "batch", "idle", "fifo"])
    ap.add_argument("--max-time", type=float, default=0.2, help="seconds per point and round")
    args = ap.parse_args()
    os.environ.setdefault("CTXBENCH_HISTORY", "off")
    print("load before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    seen: dict[str, list[list[float]]] = {p: [] for p in args.policies}
    asked = {"fifo": {"priority": 10}, "rr": {"priority": 10}}
    for k in range(args.rounds):
        order = args.policies[k % len(args.policies) :] + args.policies[: k % len(args.policies)]
        for policy in order:
            r = ctxbench.ring(
                args.procs,
                placement="single",
                policy=policy,
                max_time=args.max_time,
                history=False,
                **asked.get(policy, {}),
            )
            assert r.policy == policy
            seen[policy].append([float(x) for x in r.latency_us])
    print("load after: ", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"\nµs per switch, median of {args.rounds} rounds [smallest round, largest round]")
    print("policy   " + "".join(f"{p:>24}" for p in args.procs))
    for policy, rounds in seen.items():
        cells = []
        for j in range(len(args.procs)):
            values = [r[j] for r in rounds]
            cells.append(
                f"{statistics.median(values):8.2f} [{min(values):5.2f}, {max(values):5.2f}]"
            )
        print(f"{policy:<9}" + "".join(f"{c:>24}" for c in cells))


if __name__ == "__main__":
    main()
