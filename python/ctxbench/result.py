"""The result of a ring measurement: numpy arrays from the core, plus the run's metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class RingResult:
    """One ring measurement: one entry per process count in ``procs``.

    All times are microseconds. ``latency_us`` is the median net time per switch (raw per-hop
    time minus the hot-cache overhead of the same repetition), ``min_us`` the lowest;
    ``samples_us`` holds every net sample, shape (repetitions, len(procs)).
    """

    engine: str
    transport: str
    placement: str
    size_kb: int
    repetitions: int
    warmup: int
    parallel: int
    min_time: float
    procs: np.ndarray
    latency_us: np.ndarray
    min_us: np.ndarray
    samples_us: np.ndarray
    raw_us: np.ndarray
    raw_samples_us: np.ndarray
    overhead_us: float
    overhead_point_us: np.ndarray
    overhead_samples_us: np.ndarray
    ring_us: np.ndarray
    below_resolution: np.ndarray
    stats: dict[str, Any]
    cpus: list[np.ndarray]
    trips: np.ndarray
    overhead_rounds: np.ndarray
    work_verified: np.ndarray
    phase_s: dict[str, np.ndarray]
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_core(cls, raw: dict[str, Any], metadata: dict[str, Any]) -> RingResult:
        return cls(**raw, metadata=metadata)

    def to_xgraph(self) -> str:
        """lat_ctx's output: a title line with size and overhead, then "procs µs" pairs.

        Unlike lat_ctx, a point below the method's resolution (net <= 0) is printed, not
        dropped; ``below_resolution`` flags it.
        """
        lines = [f'"size={self.size_kb}k ovr={self.overhead_us:.2f}']
        lines += [f"{p} {v:.2f}" for p, v in zip(self.procs.tolist(), self.latency_us.tolist())]
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        points = ", ".join(
            f"{p}: {v:.2f}" + ("*" if low else "")
            for p, v, low in zip(
                self.procs.tolist(), self.latency_us.tolist(), self.below_resolution.tolist()
            )
        )
        return (
            f"RingResult({self.engine}/{self.transport}, size={self.size_kb}k, "
            f"placement={self.placement}, parallel={self.parallel}, "
            f"ovr={self.overhead_us:.2f} µs, µs/switch {{{points}}})"
        )
