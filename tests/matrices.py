"""Matrix frames of machines we cannot run on: any number of packages, LLCs, cores and SMT
threads, numbered as Linux numbers an Intel server's CPUs (first threads of every core,
then their siblings), with a made-up wake-up cost per relation class. For the figure's tests,
and for the gallery's big machine:

    python tests/matrices.py tests/data/matrix-synthetic.csv

writes the frame of a 2-package, 4-core-per-package, SMT2 machine (16 CPUs) there.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

# µs per switch of a cell of each class: the order of magnitude a 2-socket server shows.
LEVEL = {
    "same-cpu": 2.0,
    "smt-sibling": 2.6,
    "shared-l2": 4.0,
    "shared-llc": 5.5,
    "same-package": 8.0,
    "cross-package": 14.0,
}


def places(packages: int, llcs: int, cores: int, smt: int) -> dict[int, dict[str, int]]:
    """CPU id -> package, LLC, core (machine-wide ids), SMT thread and topology rank, for
    ``packages`` × ``llcs`` LLCs a package × ``cores`` cores an LLC × ``smt`` threads."""
    per_thread = packages * llcs * cores
    out = {}
    for rank in range(per_thread * smt):
        core, thread = divmod(rank, smt)
        llc = core // cores
        out[thread * per_thread + core] = {
            "package": llc // llcs,
            "llc": llc,
            "core": core,
            "thread": thread,
            "rank": rank,
        }
    return out


def relation(a: dict[str, int], b: dict[str, int], cpu_a: int, cpu_b: int) -> str:
    if cpu_a == cpu_b:
        return "same-cpu"
    for what, name in (("core", "smt-sibling"), ("llc", "shared-llc"), ("package", "same-package")):
        if a[what] == b[what]:
            return name
    return "cross-package"


def frame(
    packages: int = 1,
    llcs: int = 1,
    cores: int = 2,
    smt: int = 1,
    *,
    host: str | None = None,
    machine: str | None = None,
    scale: float = 1.0,
    every: int = 1,
    seed: int = 0,
) -> pd.DataFrame:
    """The tidy frame ``ctxbench.matrix`` would give on such a machine, one row per cell:
    each cell the class's level × ``scale`` with 5 % noise; NUMA distances 10/21 where there
    are several packages (a node each); ``every``: keep one cell in that many (class mode's
    gaps); ``host``/``machine`` as a fleet run names them."""
    where = places(packages, llcs, cores, smt)
    cpus = sorted(where)
    pairs = [(a, b) for a in cpus for b in cpus][::every]
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in pairs:
        pa, pb = where[a], where[b]
        rel = relation(pa, pb, a, b)
        latency = LEVEL[rel] * scale * float(rng.lognormal(0, 0.05))
        row: dict[str, Any] = {
            "benchmark": "matrix",
            "engine": "thread",
            "transport": "futex",
            "placement": f"[{a}, {b}]",
            "size_kb": 0,
            "parallel": 1,
            "procs": 2,
            "repetition": 0,
            "value": round(latency, 3),
            "unit": "us",
            "latency_us": round(latency, 3),
            "ci_low": round(latency * 0.98, 3),
            "ci_high": round(latency * 1.02, 3),
            "below_resolution": False,
            "cpu_from": a,
            "cpu_to": b,
            "relation": rel,
            "numa_distance": (10 if pa["package"] == pb["package"] else 21) if packages > 1 else -1,
            "pass_index": 0,
        }
        for end, p in (("from", pa), ("to", pb)):
            for what in ("package", "llc", "core", "rank"):
                row[f"{what}_{end}"] = p[what]
        rows.append(row)
    df = pd.DataFrame(rows)
    if host is not None:
        df = df.assign(host=host, machine=machine or host)
    return df


def fleet(sizes: list[tuple[int, int, int, int]], hosts: list[str]) -> pd.DataFrame:
    """One frame of several machines, as ``ctxbench.matrix(scheduler=...)`` returns it: the
    i-th of ``hosts`` has topology ``sizes[i % len(sizes)]`` and is a little slower than the
    one before."""
    frames = [
        frame(*sizes[i % len(sizes)], host=h, machine=f"m{i:02d}", scale=1 + 0.06 * i, seed=i)
        for i, h in enumerate(hosts)
    ]
    return pd.concat(frames, ignore_index=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUT.csv")
    frame(packages=2, llcs=1, cores=4, smt=2, seed=1).to_csv(Path(sys.argv[1]), index=False)
