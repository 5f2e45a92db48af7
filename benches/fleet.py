"""Does measuring through a Dask fleet change the number? One pinned point, three ways,
interleaved A B C A B C ...:

  local      `ctxbench ring` in a fresh process and session: the plain local run a user
             makes from a terminal (a session of its own, as a fleet point has: with the
             kernel's autogroup scheduling, a ring sharing its session's share of the CPU
             with other busy processes reads up to twice as high)
  in-bench   ctxbench.ring in this process, which has imported distributed and holds a client
             (a bigger forking parent: its rings read a few percent higher here)
  fleet      ctxbench.sweep(..., scheduler=...) on a local one-worker fleet: the worker runs
             the point in a fresh child process and session, its own threads kept off the
             measured CPU meanwhile (what fleet runs do)
  in-worker  the same ring called directly in the worker's task thread, next to its event
             loop and heartbeats (what fleet runs avoid)

    python benches/fleet.py                 # 15 rounds, about 2 minutes
    python benches/fleet.py --rounds 3      # a smoke run

Prints each arm's median µs per switch over the rounds and its ratio to local; the fleet arm
should agree with local within 5 %.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import ctxbench

# Every listener on 127.0.0.1: the HTTP servers (/health, /metrics) listen on every address
# unless --dashboard-address says where, whatever --host says.
LOCAL = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]


def start(tmp: Path) -> list[subprocess.Popen[bytes]]:
    """A scheduler and one worker on 127.0.0.1, each in its own process group."""
    file = tmp / "scheduler.json"
    common = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "dask", "scheduler", *LOCAL, "--port", "0"]
            + ["--no-dashboard", "--scheduler-file", str(file)],
            start_new_session=True,
            **common,
        )
    ]
    deadline = time.monotonic() + 60
    while not file.exists():
        assert time.monotonic() < deadline, "scheduler did not start"
        time.sleep(0.05)
    time.sleep(0.1)
    procs.append(
        subprocess.Popen(
            [sys.executable, "-m", "dask", "worker", "--scheduler-file", str(file), *LOCAL]
            + ["--nthreads", "1", "--name", "bench", "--no-dashboard"],
            start_new_session=True,
            **common,
        )
    )
    return procs


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in reversed(procs):
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def in_worker(point: dict[str, Any]) -> float:
    import ctxbench

    kwargs = dict(point)
    return float(ctxbench.ring(kwargs.pop("procs"), **kwargs).latency_us[0])


def plain_local(point: dict[str, Any]) -> float:
    """µs per switch of `ctxbench ring --json` run as its own process."""
    cmd = [sys.executable, "-m", "ctxbench", "ring", "--json", "--placement", "single",
           "-s", str(point["size_kb"]), "-N", str(point["repetitions"]),
           "--min-time", str(point["min_time"]), *map(str, point["procs"])]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, check=True, start_new_session=True)
    out = run.stdout
    return float(json.loads(out)["results"][0]["latency_us"][0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--size-kb", type=int, default=0)
    ap.add_argument("--repetitions", type=int, default=11)
    # A fixed count of repetitions (-N), so that mode's default length of one.
    ap.add_argument("--min-time", type=float, default=ctxbench.FIXED_MIN_TIME)
    args = ap.parse_args()
    import distributed

    point = {
        "procs": [args.procs],
        "size_kb": args.size_kb,
        "placement": "single",
        "repetitions": args.repetitions,
        "min_time": args.min_time,
    }
    with tempfile.TemporaryDirectory() as tmp:
        procs = start(Path(tmp))
        try:
            address = json.loads((Path(tmp) / "scheduler.json").read_text())["address"]
            with distributed.Client(address, set_as_default=False) as client:
                client.wait_for_workers(1, timeout=60)
            arms: dict[str, list[float]] = {
                "local": [],
                "fleet": [],
                "in-worker": [],
                "in-bench": [],
            }
            for i in range(args.rounds):
                arms["local"].append(plain_local(point))
                arms["in-bench"].append(float(ctxbench.ring(**point).latency_us[0]))
                df = ctxbench.sweep(
                    procs=point["procs"],
                    sizes_kb=[args.size_kb],
                    placements=["single"],
                    repetitions=args.repetitions,
                    min_time=args.min_time,
                    progress=False,
                    scheduler=address,
                )
                arms["fleet"].append(float(df["latency_us"].iloc[0]))
                with distributed.Client(address, set_as_default=False) as client:
                    arms["in-worker"].append(client.submit(in_worker, point, pure=False).result())
                print(
                    f"round {i + 1:2d}: "
                    + "  ".join(f"{k} {v[-1]:.3f}" for k, v in arms.items())
                    + " µs",
                    flush=True,
                )
        finally:
            stop(procs)
    local = statistics.median(arms["local"])
    print(
        f"\nprocess/pipe, procs={args.procs}, size={args.size_kb}k, placement=single, "
        f"{args.repetitions} repetitions x {args.min_time} s, {args.rounds} interleaved rounds"
    )
    for name, values in arms.items():
        med = statistics.median(values)
        q1, _, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else (med, med, med)
        print(
            f"{name:>9}: median {med:.3f} µs/switch (IQR {q1:.3f}-{q3:.3f})  "
            f"ratio to local {med / local:.3f}"
        )
    ratio = statistics.median(arms["fleet"]) / local
    verdict = "within" if abs(ratio - 1) <= 0.05 else "NOT within"
    print(f"fleet/local = {ratio:.3f}: {verdict} 5 %")
    # Each round's pair saw the same moment of the machine: the paired ratios cancel drift.
    paired = statistics.median(f / b for f, b in zip(arms["fleet"], arms["local"]) if b > 0)
    print(f"median of the rounds' fleet/local ratios: {paired:.3f}")


if __name__ == "__main__":
    main()
