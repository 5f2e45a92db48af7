"""The io_uring and futex2 wake-up paths against eventfd and futex: ping-pong (µs per switch,
perf's field) and a 2-participant ring (net µs per hop, switches per hop), process engine, one
CPU (placement single) and two (spread), in alternated rounds: each round runs every
transport once, in an order rotated round by round, so that a change in the machine's load
falls on all of them alike.

    python benches/wakeups.py                # 3 rounds, about a minute on 2 CPUs
    python benches/wakeups.py --rounds 7 --engine thread

Prints per placement and transport the median over the rounds of each figure and its ratio to
eventfd, and the load average before and after (other work on the machine shifts every figure).
"""

from __future__ import annotations

import argparse
import os
import statistics

import ctxbench

TRANSPORTS = ["eventfd", "futex", "futex_waitv", "uring_futex", "msg_ring", "pipe", "uring_read"]


def one(transport: str, placement: str, engine: str) -> tuple[float, float, float]:
    """(ping-pong µs per switch, ring µs per hop, ring switches per hop) at 2 participants."""
    threads = engine == "thread"
    p = ctxbench.pingpong(threads=threads, transport=transport, placement=placement, max_time=0.3)
    r = ctxbench.ring(
        [2], engine=engine, transport=transport, placement=placement, max_time=0.3, history=False
    )
    return p.usecs_per_switch, float(r.stats["median"][0]), float(r.switches_per_hop[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--engine", choices=["process", "thread"], default="process")
    args = ap.parse_args()
    os.environ.setdefault("CTXBENCH_HISTORY", "off")
    print(f"load before: {os.getloadavg()[0]:.2f} (1-min average, {os.cpu_count()} CPUs)")
    for placement in ("single", "spread"):
        got: dict[str, list[tuple[float, float, float]]] = {t: [] for t in TRANSPORTS}
        for k in range(args.rounds):
            order = TRANSPORTS[k % len(TRANSPORTS) :] + TRANSPORTS[: k % len(TRANSPORTS)]
            for t in order:
                got[t].append(one(t, placement, args.engine))
        base = [statistics.median(v[j] for v in got["eventfd"]) for j in range(2)]
        print(f"\n{args.engine}, placement={placement}, {args.rounds} rounds (medians)")
        print(f"{'transport':12} {'pingpong µs/sw':>15} {'ratio':>6} {'ring µs/hop':>12} "
              f"{'ratio':>6} {'sw/hop':>7}")  # fmt: skip
        for t in TRANSPORTS:
            m = [statistics.median(v[j] for v in got[t]) for j in range(3)]
            print(f"{t:12} {m[0]:15.2f} {m[0] / base[0]:6.2f} {m[1]:12.2f} "
                  f"{m[1] / base[1]:6.2f} {m[2]:7.2f}")  # fmt: skip
    print(f"\nload after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
