"""The result classes: numpy arrays from the core, plus the run's metadata. Their fields are
declared in ``ctxbench.schema.RECORDS``; their JSON record is ``ctxbench.record``'s, their files
``ctxbench.files``'.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Union

import numpy as np

from . import files
from .files import PathLike, read_records
from .record import decode

if TYPE_CHECKING:
    import pandas as pd

    from ._core import PingpongDict, RingDict


@dataclass(frozen=True, eq=False)
class RingResult:
    """One ring measurement: one entry per process count in ``procs``.

    All times are microseconds. ``latency_us`` is the median net time per switch (raw per-hop
    time minus the hot-cache overhead of the same repetition), ``min_us`` the lowest;
    ``samples_us`` holds every net sample, shape (repetitions, len(procs)); in precision mode
    (``repetitions`` is None) points stop after different numbers of repetitions
    (``repetitions_made``), and a point's column is NaN below its last repetition.
    ``stopped`` says, per point, why measuring ended: "repetitions" (the fixed count),
    "precision" (the 95 % interval of the median within ± ``precision`` × median),
    "max_repetitions" or "time_cap" (``max_time`` seconds of measuring).

    Each field is declared, with its shape and range, in ``ctxbench.schema.RING``.
    """

    kind: ClassVar[str] = "ring"
    # BEGIN written by `python -m ctxbench._codegen` from schema.RECORDS; edit there
    engine: str
    transport: str
    placement: str
    size_kb: int
    repetitions: int | None
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
    phase_s: dict[str, Any]
    switches_per_hop: np.ndarray
    switch_source: list[str]
    counted_us: np.ndarray
    involuntary_switches: np.ndarray
    migrations: np.ndarray
    hardware: dict[str, Any]
    counters_unavailable_reason: str | None
    warnings: list[str]
    hop_percentiles_us: dict[str, Any] | None
    hop_histogram: dict[str, Any] | None
    tsc_cycles_per_switch: np.ndarray | None
    tsc: dict[str, Any]
    precision: float | None = None
    max_time: float | None = None
    stopped: list[str] = field(default_factory=list)
    repetitions_made: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    max_repetitions: int | None = None
    cpu: int | None = None
    timeout: float | None = None
    record_hops: bool | None = None
    one_cpu: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    metadata: dict[str, Any] = field(default_factory=dict)
    # END written by `python -m ctxbench._codegen`

    @classmethod
    def from_core(cls, raw: RingDict, metadata: dict[str, Any]) -> RingResult:
        return cls(**raw, metadata=metadata)

    def stop_line(self) -> str:
        """How each point stopped and what its phases cost, in one line."""
        if not self.stopped:
            return "how the points stopped was not recorded"
        parts = []
        for j, p in enumerate(self.procs.tolist()):
            half = (self.stats["ci_high"][j] - self.stats["ci_low"][j]) / 2
            rel = half / abs(self.latency_us[j]) if self.latency_us[j] else float("inf")
            parts.append(
                f"{p}: {self.stopped[j]} after {int(self.repetitions_made[j])} reps, "
                f"±{rel:.1%}, {sum(float(v[j]) for v in self.phase_s.values()):.2f} s"
            )
        return "; ".join(parts)

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

    def save(self, path: PathLike, *, hostname: bool = True) -> None:
        """Write to .json, .csv, .parquet or .xgraph by suffix; see ``ctxbench.files``.
        ``hostname=False`` writes ``metadata.HOSTNAME_WITHHELD`` instead of this machine's."""
        files.save([self], path, hostname=hostname)

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

    kind: ClassVar[str] = "pingpong"
    # BEGIN written by `python -m ctxbench._codegen` from schema.RECORDS; edit there
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
    # END written by `python -m ctxbench._codegen`

    @classmethod
    def from_core(cls, raw: PingpongDict, metadata: dict[str, Any]) -> PingpongResult:
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


Result = Union[RingResult, PingpongResult]
# The one list of result kinds: the "kind" of a record names its class.
KINDS: dict[str, type[Result]] = {cls.kind: cls for cls in (RingResult, PingpongResult)}


def from_record(rec: dict[str, Any]) -> Result:
    """The result object of one record; entries its class does not know are dropped."""
    cls = KINDS[rec["kind"]]
    fields = decode(rec)
    known = [f.name for f in dataclasses.fields(cls)]
    return cls(**{name: fields[name] for name in known if name in fields})


def load_results(path: PathLike) -> list[Result]:
    """The result objects of a ctxbench JSON file, with numpy arrays restored."""
    out = []
    for i, rec in enumerate(read_records(path)):
        try:
            out.append(from_record(rec))
        except TypeError as e:
            raise ValueError(f"{path}: result {i}: {e}") from None
    return out
