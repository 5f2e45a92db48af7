"""What keeping a run in the results store costs, against saving the same result as JSON
(the peer, measured in the same run, alternating).

    python benches/store.py                  # 40 rounds of a 4-point ring result
    python benches/store.py --rounds 100 --procs 2 4 8 16 32

One result is measured first (`lat_ctx(procs, placement="single")`, its run not kept). Then
each round, in alternating order (reversed every other round): `store.keep_quietly` of a copy
under a new run id (the store kept open by the process, checked again, one write transaction
of the run's row set and record: what a process's later runs pay), the same with the store
opened and closed for the run (`store.open`, `keep`, close: a WAL made and checkpointed, what
one CLI run pays), and `ctxbench.save` of the same result to a JSON file with the store off.
Printed: the median and the 90th percentile of each (ms), the ratios of medians to the JSON
save, the store's size per run (checkpointed), and the load (`os.getloadavg`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import ctxbench
from ctxbench import store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--procs", type=int, nargs="+", default=[2, 4, 8, 16])
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ctxbench-store-bench-"))
    try:
        path = tmp / "store.sqlite3"
        r = ctxbench.lat_ctx(args.procs, placement="single", max_time=0.1, history=False)
        keep_ms, json_ms, fresh_ms = [], [], []

        def fresh(c: object) -> None:
            with store.open(tmp / "fresh.sqlite3") as s:  # type: ignore[union-attr]
                s.keep(c)

        for k in range(args.rounds):
            copy = dataclasses.replace(r, metadata={**r.metadata, "run_id": f"bench-{k}"})
            order = [
                (lambda c=copy: store.keep_quietly(c, path=path), keep_ms),
                (lambda c=copy: fresh(c), fresh_ms),
                (lambda c=copy, k=k: ctxbench.save(c, tmp / f"r{k}.json", store="off"), json_ms),
            ]
            for what, times in order if k % 2 == 0 else order[::-1]:
                t = time.perf_counter()
                what()
                times.append(1e3 * (time.perf_counter() - t))
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        load = os.getloadavg()
        size = path.stat().st_size / args.rounds
        named = (
            ("kept open", keep_ms),
            ("opened for the run", fresh_ms),
            ("save as JSON", json_ms),
        )
        for name, times in named:
            q90 = statistics.quantiles(times, n=10)[-1]
            print(f"{name:<19} median {statistics.median(times):7.2f} ms  p90 {q90:7.2f} ms")
        json_median = statistics.median(json_ms)
        print(
            f"keep / JSON save: {statistics.median(keep_ms) / json_median:.2f}x with the store "
            f"kept open (a process's later runs), {statistics.median(fresh_ms) / json_median:.2f}x"
            f" opened and closed for the run (a CLI run); medians of {args.rounds} alternating "
            f"rounds, {len(args.procs)} points a run; store {size / 1024:.1f} KiB per run, "
            f"JSON {(tmp / 'r0.json').stat().st_size / 1024:.1f} KiB; load average "
            f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
