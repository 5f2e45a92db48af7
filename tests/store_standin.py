"""A stand-in of the results store's reading API (``series``, ``points``, ``machines``,
``matrices``, ``records``, ``keep``'s effect) over the store's own ``Run``, in memory, for the
tests of ``changes`` and ``publish`` that give the runs themselves. Tests only."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ctxbench.store import Run


@dataclass
class StandinStore:
    runs: list[Run] = field(default_factory=list)
    # Matrix runs: (the store's ``matrices`` row, its record).
    kept_matrices: list[tuple[dict[str, Any], dict[str, Any] | None]] = field(default_factory=list)

    def add(
        self, point_id: str, machine: str, value_us: float, labels: dict[str, str] | None = None
    ) -> Run:
        run = Run(
            run_id=len(self.runs) + 1,
            time=1_796_000_000.0 + 60.0 * len(self.runs),
            point_id=point_id,
            machine=machine,
            value_us=value_us,
            ln_value=math.log(value_us),
            rel_se=0.01,
            instances_us=(value_us,),
            load=0.5,
            steal=None,
            labels=dict(labels or {}),
            switches_per_hop=1.0,
        )
        self.runs.append(run)
        return run

    @staticmethod
    def _has(run: Run, labels: dict[str, str] | None) -> bool:
        return StandinStore._has_labels(run.labels, labels)

    def series(
        self,
        point_id: str,
        *,
        machine: str,
        labels: dict[str, str] | None = None,
        newest: int | None = None,
    ) -> list[Run]:
        found = [
            r
            for r in self.runs
            if r.point_id == point_id and r.machine == machine and self._has(r, labels)
        ]
        return found[-newest:] if newest else found

    def points(
        self, *, machine: str | None = None, labels: dict[str, str] | None = None
    ) -> list[tuple[str, str]]:
        seen = {
            (r.point_id, r.machine)
            for r in self.runs
            if (machine is None or r.machine == machine) and self._has(r, labels)
        }
        return sorted(seen)

    def machines(self) -> list[str]:
        return sorted({r.machine for r in self.runs})

    def matrices(
        self, *, machine: str | None = None, labels: dict[str, str] | None = None
    ) -> list[dict[str, Any]]:
        return [
            row
            for row, _ in self.kept_matrices
            if machine in (None, row["machine"]) and self._has_labels(row["labels"], labels)
        ]

    def records(self, run_ids: list[int]) -> list[dict[str, Any] | None]:
        by_id = {row["run_id"]: rec for row, rec in self.kept_matrices}
        return [by_id.get(i) for i in run_ids]

    @staticmethod
    def _has_labels(have: dict[str, str], labels: dict[str, str] | None) -> bool:
        return all(have.get(k) == v for k, v in (labels or {}).items())

    def close(self) -> None:
        """As the store's: nothing to release here."""
