"""The result of a ring measurement: numpy arrays from the core, plus the run's metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import os

    import pandas as pd


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
    # Evidence from the kernel (see the README, "Proof that the switches happened").
    switches_per_hop: np.ndarray
    switch_source: list[str]
    # Raw µs per hop of the extra repetition that ran with the counters attached.
    counted_us: np.ndarray
    involuntary_switches: np.ndarray
    migrations: np.ndarray
    hardware: dict[str, Any]
    counters_unavailable_reason: str | None
    warnings: list[str]
    # With record_hops=True: per-hop wake-to-run latency (µs), else None.
    hop_percentiles_us: dict[str, np.ndarray] | None
    hop_histogram: dict[str, np.ndarray] | None
    # Net TSC cycles per switch where the TSC is an invariant clock (x86_64), else None;
    # `tsc` has "ghz", "read_cost_cycles" and "unavailable_reason".
    tsc_cycles_per_switch: np.ndarray | None
    tsc: dict[str, Any]
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

    def to_frame(self) -> pd.DataFrame:
        """The tidy pandas frame: one row per (procs, repetition); see ``ctxbench.frame``."""
        from .frame import to_frame

        return to_frame(self)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write to .json, .csv, .parquet or .xgraph by suffix; see ``ctxbench.files``."""
        from .files import save

        save([self], path)

    def _repr_html_(self) -> str:
        from .frame import result_html

        return result_html(self)

    def __repr__(self) -> str:
        points = ", ".join(
            f"{p}: {v:.3g}" + ("*" if low else "")
            for p, v, low in zip(
                self.procs.tolist(), self.latency_us.tolist(), self.below_resolution.tolist()
            )
        )
        return (
            f"RingResult({self.engine}/{self.transport}, size={self.size_kb}k, "
            f"placement={self.placement}, parallel={self.parallel}, "
            f"ovr={self.overhead_us:.2f} µs, µs/switch {{{points}}})"
        )


@dataclass(frozen=True, eq=False)
class PingpongResult:
    """Two participants bouncing a token, as ``perf bench sched pipe`` does.

    One op is one round trip (two switches): ``usecs_per_op`` and ``ops_per_sec`` are perf's
    figures; ``usecs_per_switch`` is half an op. Raw time: no overhead is subtracted.
    """

    loops: int
    threads: bool
    engine: str
    transport: str
    placement: str
    elapsed_s: float
    usecs_per_op: float
    ops_per_sec: float
    usecs_per_switch: float
    cycles_per_switch: float | None
    tsc: dict[str, Any]
    cpus: np.ndarray
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_core(cls, raw: dict[str, Any], metadata: dict[str, Any]) -> PingpongResult:
        return cls(**raw, metadata=metadata)

    def to_perf(self) -> str:
        """The fields `perf bench sched pipe` prints, in its layout."""
        between = "threads" if self.threads else "processes"
        return (
            "# Running 'sched/pipe' benchmark:\n"
            f"# Executed {self.loops} {self.transport} operations between two {between}\n\n"
            f"     Total time: {self.elapsed_s:.3f} [sec]\n\n"
            f"{self.usecs_per_op:15.6f} usecs/op\n"
            f"{int(self.ops_per_sec):15d} ops/sec\n"
            f"{self.usecs_per_switch:15.6f} usecs/switch\n"
            + (
                f"{self.cycles_per_switch:15.1f} TSC cycles/switch\n"
                if self.cycles_per_switch is not None
                else ""
            )
        )

    def __repr__(self) -> str:
        return (
            f"PingpongResult({self.engine}/{self.transport}, placement={self.placement}, "
            f"loops={self.loops}, {self.usecs_per_op:.3f} µs/op, "
            f"{self.usecs_per_switch:.3f} µs/switch)"
        )
