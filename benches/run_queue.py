"""The switch against run-queue length (Gooch 1998): a ring of 2 pinned to one CPU passing
its token over pipes or by sched_yield, with Q tasks queued on that CPU (`interference=
{"queued": Q}`: spinners under SCHED_IDLE, always runnable, so always on its run queue),
the ring under the default policy and under SCHED_FIFO (Gooch's setting: real-time
switchers, low-priority processes on the queue; a yield ring under FIFO is refused, as it
would starve its CPU, so FIFO passes its token over pipes only).

    python benches/run_queue.py            # 5 rounds, Q in 0 1 4 16 64
    python benches/run_queue.py -r 9 --queued 0 8 64

Every arm (transport × policy × Q) once per round in a fresh random order (RMIT: the host's
drift falls on every arm alike), each `ctxbench.ring([2], placement="single",
transport=..., policy=..., preset="fast", interference={"queued": Q})`. Prints per arm the
median over rounds of the net µs per switch, its smallest and largest round, and what the
queued tasks achieved (their mean CPU share over the span the ring was driven, and the
fewest of them still runnable at a span's end), with the load before and after.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics

os.environ["CTXBENCH_HISTORY"] = "off"

import ctxbench  # noqa: E402


def queued_shares(i: dict | None) -> tuple[float, float]:
    """The queued tasks' mean CPU share and how many were runnable (NaN: none queued)."""
    if not i or not len(i["queued_duty"][0]):
        return float("nan"), float("nan")
    duty = i["queued_duty"][0]
    return sum(duty) / len(duty), float(i["queued_runnable"][0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-r", "--rounds", type=int, default=5)
    ap.add_argument("--queued", type=int, nargs="+", default=[0, 1, 4, 16, 64])
    ap.add_argument("--transports", nargs="+", default=["pipe", "yield"])
    ap.add_argument("--policies", nargs="+", default=["other", "fifo"])
    args = ap.parse_args()
    arms = [
        (t, p, q)
        for t in args.transports
        for p in args.policies
        for q in args.queued
        if not (t == "yield" and p in ("fifo", "rr"))  # refused: it would starve the CPU
    ]
    seen: dict[tuple[str, str, int], list[tuple[float, float, float]]] = {a: [] for a in arms}
    print("load before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for _ in range(args.rounds):
        for transport, policy, q in random.sample(arms, len(arms)):
            r = ctxbench.ring(
                [2],
                placement="single",
                transport=transport,
                policy=policy,
                preset="fast",
                interference={"queued": q} if q else None,
            )
            seen[transport, policy, q].append((r.latency_us[0], *queued_shares(r.interference)))
    print("load after: ", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"\nnet µs per switch, median of {args.rounds} rounds [smallest, largest round]\n")
    print("| transport | policy | queued | µs/switch | rounds' range | queued CPU | runnable |")
    print("|---|---|---|---|---|---|---|")
    for arm in arms:
        us = [x[0] for x in seen[arm]]
        duty = statistics.median(x[1] for x in seen[arm])
        runnable = min(x[2] for x in seen[arm])
        shares = "– | –" if duty != duty else f"{duty:.4f} | {runnable:.0f} of {arm[2]}"
        print(
            f"| {arm[0]} | {arm[1]} | {arm[2]} | {statistics.median(us):.2f} "
            f"| {min(us):.2f}–{max(us):.2f} | {shares} |"
        )


if __name__ == "__main__":
    main()
