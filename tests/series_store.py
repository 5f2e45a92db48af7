"""An in-memory stand-in of the results store's reading API (``ctxbench.store``: ``series``,
``points``, ``machines``) over the store's own ``Run``, for the tests that judge planted runs
against a series; and tidy frames of synthetic runs to judge."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ctxbench.store import Run

MACHINE = "m0"
POINT = {"benchmark": "ring", "engine": "process", "transport": "pipe", "placement": "single",
         "size_kb": 0, "parallel": 1}  # fmt: skip


def point_id(procs: int) -> str:
    return f"engine=process parallel=1 placement=single procs={procs} size_kb=0 transport=pipe"


class Store:
    """Runs kept in a list; ``series`` answers as the store's does (oldest first)."""

    def __init__(self) -> None:
        self.runs: list[Run] = []
        self.asked: list[dict[str, Any]] = []

    def add(self, pid: str, value_us: float, *, t: float, load: float | None = 0.0,
            labels: dict[str, str] | None = None, machine: str = MACHINE) -> None:  # fmt: skip
        self.runs.append(Run(len(self.runs) + 1, t, pid, machine, value_us, math.log(value_us),
                             0.005, (), load, None, dict(labels or {}), None))  # fmt: skip

    def keep(self, result: Any, labels: dict[str, str] | None = None) -> int:
        """A ring result's points as runs, stamped with its date (whole seconds, as the
        store's are)."""
        date = pd.Timestamp(result.metadata.get("date", 0), tz="UTC").timestamp()
        se = result.stats["se"]
        kept = 0
        for i, pid in enumerate(result.point_id):
            value = float(result.latency_us[i])
            if not value > 0:
                continue  # as the store: a figure at or below 0 is no run of a series
            kept += 1
            rel = float(se[i]) / value
            self.runs.append(Run(len(self.runs) + 1, date, pid, MACHINE, value, math.log(value),
                                 rel, (), None, None, dict(labels or {}), None))  # fmt: skip
        return kept

    def points(self, *, machine: str | None = None,
               labels: dict[str, str] | None = None) -> list[tuple[str, str]]:  # fmt: skip
        def has(r: Run) -> bool:
            return all(r.labels.get(k) == v for k, v in (labels or {}).items())

        return sorted({(r.point_id, r.machine) for r in self.runs
                       if machine in (None, r.machine) and has(r)})  # fmt: skip

    def series(self, point_id: str, *, machine: str, labels: dict[str, str] | None = None,
               newest: int | None = None) -> list[Run]:  # fmt: skip
        self.asked.append({"point_id": point_id, "machine": machine, "labels": labels})
        out = [r for r in self.runs if r.point_id == point_id and r.machine == machine]
        out = [r for r in out if all(r.labels.get(k) == v for k, v in (labels or {}).items())]
        out.sort(key=lambda r: (r.time, r.run_id))
        return out[-newest:] if newest else out

    def machines(self) -> list[str]:
        return sorted({r.machine for r in self.runs})

    def runs_of(self, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """As the store's ``runs``: each run's row and labels, oldest first."""
        out = [{"run_id": r.run_id, "time": r.time, "machine": r.machine, "kernel": None,
                "labels": dict(r.labels)} for r in sorted(self.runs, key=lambda r: r.time)
               if all(r.labels.get(k) == v for k, v in (labels or {}).items())]  # fmt: skip
        return out


def frame(figures: dict[int, float], *, t: float = 1e9, load: float = 0.0, test: str | None = None,
          run: str = "new", rel_se: float | None = None) -> pd.DataFrame:  # fmt: skip
    """A tidy frame of one run: per procs count, its figure (three samples around it) and,
    with ``rel_se``, its standard error (that share of the figure)."""
    date = pd.Timestamp(t, unit="s", tz="UTC").strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = []
    for procs, us in figures.items():
        for rep, v in enumerate((us * 0.999, us, us * 1.001)):
            rows.append({**POINT, "procs": procs, "repetition": rep, "value": v, "unit": "us",
                         "latency_us": us, "point_id": point_id(procs), "run_id": run,
                         "date": date, "runnable_per_cpu": load, "machine": f"{MACHINE}-b",
                         **({"test": test} if test else {}),
                         **({"se": us * rel_se} if rel_se is not None else {})})  # fmt: skip
    return pd.DataFrame(rows)
