"""Typed stub of the native module built from src/python.rs (checked by mypy.stubtest)."""

from collections.abc import Sequence
from typing import Literal, TypedDict, type_check_only

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ring",
    "pingpong",
    "workload_checksum",
    "mann_whitney",
    "fiber_baseline_ns",
    "default_transport",
    "ring_config",
    "ring_check",
    "DEFAULT_MIN_TIME_REPETITIONS",
    "DEFAULT_MIN_TIME_PRECISION",
    "DEFAULT_TIMEOUT",
    "DEFAULT_PRECISION",
    "DEFAULT_MAX_TIME",
    "DEFAULT_MAX_REPETITIONS",
    "MAX_PROCS",
    "ENGINES",
    "TRANSPORTS",
    "PLACEMENTS",
    "__version__",
    "COMPILER",
]

DEFAULT_MIN_TIME_REPETITIONS: float
DEFAULT_MIN_TIME_PRECISION: float
DEFAULT_TIMEOUT: float
DEFAULT_PRECISION: float
DEFAULT_MAX_TIME: float
DEFAULT_MAX_REPETITIONS: int
MAX_PROCS: int
ENGINES: tuple[str, ...]
TRANSPORTS: dict[str, tuple[str, ...]]
PLACEMENTS: tuple[str, ...]
COMPILER: str
__version__: str

_Floats = NDArray[np.float64]
_Ints = NDArray[np.int64]

# BEGIN written by `python -m ctxbench._codegen` from schema.RECORDS; edit there
@type_check_only
class StatsDict(TypedDict):
    min: _Floats
    median: _Floats
    mean: _Floats
    max: _Floats
    ci_low: _Floats
    ci_high: _Floats
    stdev: _Floats
    cv: _Floats
    outliers: _Ints
    clusters: _Ints
    verdict: list[Literal["stable", "noisy", "unstable", "bimodal"]]

@type_check_only
class PhasesDict(TypedDict):
    calibration: _Floats
    warmup: _Floats
    measure: _Floats
    setup_teardown: _Floats

@type_check_only
class HardwareDict(TypedDict):
    cycles_per_switch: _Floats | None
    instructions_per_switch: _Floats | None
    unavailable_reason: str | None

_HopPercentilesDict = TypedDict(
    "_HopPercentilesDict",
    {"p50": _Floats, "p90": _Floats, "p99": _Floats, "p99.9": _Floats, "max": _Floats},
)

@type_check_only
class HopHistogramDict(TypedDict):
    edges_us: _Floats
    counts: NDArray[np.uint64]

@type_check_only
class TscDict(TypedDict):
    ghz: float | None
    read_cost_cycles: float | None
    unavailable_reason: str | None

@type_check_only
class RingDict(TypedDict):
    """What `ring` returns: the fields of `ctxbench.RingResult` but `metadata`."""

    engine: str
    transport: str
    placement: str
    size_kb: int
    repetitions: int | None
    warmup: int
    parallel: int
    min_time: float
    procs: _Ints
    latency_us: _Floats
    min_us: _Floats
    samples_us: _Floats
    raw_us: _Floats
    raw_samples_us: _Floats
    overhead_us: float
    overhead_point_us: _Floats
    overhead_samples_us: _Floats
    ring_us: _Floats
    below_resolution: NDArray[np.bool_]
    stats: StatsDict
    cpus: list[_Ints]
    trips: _Ints
    overhead_rounds: _Ints
    work_verified: NDArray[np.bool_]
    phase_s: PhasesDict
    switches_per_hop: _Floats
    switch_source: list[Literal["perf", "rusage"]]
    counted_us: _Floats
    involuntary_switches: _Ints
    migrations: _Ints
    hardware: HardwareDict
    counters_unavailable_reason: str | None
    warnings: list[str]
    hop_percentiles_us: _HopPercentilesDict | None
    hop_histogram: HopHistogramDict | None
    tsc_cycles_per_switch: _Floats | None
    tsc: TscDict
    precision: float | None
    max_time: float | None
    stopped: list[Literal["repetitions", "precision", "max_repetitions", "time_cap"]]
    repetitions_made: _Ints
    max_repetitions: int | None
    cpu: int | None
    timeout: float
    record_hops: bool
    one_cpu: NDArray[np.bool_]

@type_check_only
class RingConfigDict(TypedDict):
    """What `ring_config` returns: what a `ring` records of what was asked."""

    engine: str
    transport: str
    placement: str
    size_kb: int
    repetitions: int | None
    warmup: int
    parallel: int
    min_time: float
    precision: float | None
    max_time: float | None
    max_repetitions: int | None
    cpu: int | None
    timeout: float
    record_hops: bool

@type_check_only
class PingpongDict(TypedDict):
    """What `pingpong` returns: the fields of `ctxbench.PingpongResult` but `metadata`."""

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
    tsc: TscDict
    cpus: _Ints

# END written by `python -m ctxbench._codegen`

def ring(
    procs: Sequence[int],
    *,
    engine: str = "process",
    transport: str | None = None,
    size_kb: int = 0,
    repetitions: int | None = None,
    precision: float = ...,
    max_time: float = ...,
    max_repetitions: int = ...,
    warmup: int = 1,
    parallel: int = 1,
    placement: str | Sequence[int] | None = None,
    cpu: int | None = None,
    min_time: float | None = None,
    timeout: float = ...,
    record_hops: bool = False,
) -> RingDict: ...
def pingpong(
    loops: int = 1_000_000,
    *,
    threads: bool = False,
    transport: str = "pipe",
    placement: str | Sequence[int] | None = None,
    cpu: int | None = None,
    timeout: float = 10.0,
) -> PingpongDict: ...
def workload_checksum(size_kb: int) -> int: ...
def mann_whitney(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]: ...
def fiber_baseline_ns(pairs: int) -> float: ...
def default_transport(engine: str) -> str: ...
def ring_config(
    procs: Sequence[int],
    *,
    engine: str = "process",
    transport: str | None = None,
    size_kb: int = 0,
    repetitions: int | None = None,
    precision: float = ...,
    max_time: float = ...,
    max_repetitions: int = ...,
    warmup: int = 1,
    parallel: int = 1,
    placement: str | Sequence[int] | None = None,
    cpu: int | None = None,
    min_time: float | None = None,
    timeout: float = ...,
    record_hops: bool = False,
) -> RingConfigDict: ...
def ring_check(
    procs: Sequence[int],
    *,
    engine: str = "process",
    transport: str | None = None,
    size_kb: int = 0,
    repetitions: int | None = None,
    precision: float = ...,
    max_time: float = ...,
    max_repetitions: int = ...,
    warmup: int = 1,
    parallel: int = 1,
    placement: str | Sequence[int] | None = None,
    cpu: int | None = None,
    min_time: float | None = None,
    timeout: float = ...,
    record_hops: bool = False,
) -> RingConfigDict: ...
