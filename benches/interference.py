"""What a switch costs when its CPU is not idle: a ring of 2 pinned to one CPU (placement
single, hops recorded) against calibrated neighbours on that CPU.

    python benches/interference.py          # 3 rounds, the default policy
    python benches/interference.py -r 5 --policies other fifo

Arms, each once per round in a fresh random order (so that drift of the host hits all alike):
none; 1, 2, 3 hogs at duty 1.0 and at duty 0.5; a thrasher of 1024 and 8192 KiB; one
neighbour ring; with several ``--policies``, every arm under each (the ring's participants
under that policy, the neighbours under the caller's). Each arm is `ctxbench.ring([2],
placement="single", record_hops=True, preset="fast", policy=..., interference=...)`.
Prints, per arm and policy, the median over the rounds of the hops'
p50 and p99 (µs), the net µs per switch, and the neighbours' achieved duty (hogs: mean per
hog; the thrasher's and the ring's: CPU time over the span), with the load average beside.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics

os.environ["CTXBENCH_HISTORY"] = "off"

import ctxbench  # noqa: E402

ARMS: list[tuple[str, dict[str, float]]] = [
    ("none", {}),
    *((f"{n} hog{'s' * (n > 1)} x1.0", {"hogs": n}) for n in (1, 2, 3)),
    *((f"{n} hog{'s' * (n > 1)} x0.5", {"hogs": n, "duty": 0.5}) for n in (1, 2, 3)),
    ("thrash 1024 KiB", {"thrash_kb": 1024}),
    ("thrash 8192 KiB", {"thrash_kb": 8192}),
    ("1 ring", {"rings": 1}),
]


def achieved(i: dict | None) -> float:
    """The neighbours' achieved duty: mean per hog, else the thrasher's, else the rings'."""
    if not i:
        return float("nan")
    for key in ("hog_duty", "ring_duty"):
        if len(i[key][0]):
            return float(sum(i[key][0]) / len(i[key][0]))
    return float(i["thrash_duty"][0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("--policies", nargs="+", default=["other"])
    args = ap.parse_args()
    arms = [(name, asked, policy) for policy in args.policies for name, asked in ARMS]
    rows: dict[tuple[str, str], list[tuple[float, float, float, float]]] = {
        (name, policy): [] for name, _, policy in arms
    }
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for name, asked, policy in random.sample(arms, len(arms)):
            r = ctxbench.ring(
                [2],
                placement="single",
                record_hops=True,
                preset="fast",
                policy=policy,
                interference=asked or None,
            )
            p = r.hop_percentiles_us
            row = (p["p50"][0], p["p99"][0], r.latency_us[0], achieved(r.interference))
            rows[name, policy].append(row)
        loads.append(os.getloadavg()[0])
    print(f"load average (1 min) over the run: {min(loads):.2f} to {max(loads):.2f}\n")
    print("| policy | neighbours | hop p50 µs | hop p99 µs | net µs/switch | achieved duty |")
    print("|---|---|---|---|---|---|")
    for name, _, policy in arms:
        cols = [statistics.median(v) for v in zip(*rows[name, policy])]
        duty = "–" if cols[3] != cols[3] else f"{cols[3]:.2f}"
        print(f"| {policy} | {name} | {cols[0]:.1f} | {cols[1]:.1f} | {cols[2]:.2f} | {duty} |")


if __name__ == "__main__":
    main()
