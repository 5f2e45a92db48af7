"""Typed stub of the native module built from src/python.rs (checked by mypy.stubtest)."""

from collections.abc import Callable, Sequence
from typing import Literal, TypedDict, type_check_only

import numpy as np
from numpy.typing import NDArray
from typing_extensions import NotRequired

__all__ = [
    "ring",
    "pingpong",
    "workload_checksum",
    "estimate",
    "runs_estimate",
    "compare_estimates",
    "run_level",
    "runs_to_detect",
    "rounds_to_detect",
    "fiber_baseline_ns",
    "default_transport",
    "placement_name",
    "ring_config",
    "ring_check",
    "topology",
    "matrix",
    "RELATIONS",
    "MATRIX_CELL_MIN_TIME",
    "MATRIX_CELL_MAX_TIME",
    "MATRIX_PER_CLASS",
    "cache_sweep",
    "DEFAULT_ROUNDS",
    "REFILL_ABOVE_STREAM",
    "FIXED_MIN_TIME",
    "PRECISION_MIN_TIME",
    "CONFIDENCE",
    "BLOCK_REPETITIONS",
    "DEFAULT_TIMEOUT",
    "DEFAULT_PRECISION",
    "DEFAULT_MAX_TIME",
    "DEFAULT_MAX_REPETITIONS",
    "MAX_POINTS",
    "MIN_RUNS",
    "MAX_PROCS",
    "MAX_CPUS",
    "ENGINES",
    "TRANSPORTS",
    "PLACEMENTS",
    "COUNTERS",
    "CHANGES",
    "__version__",
    "COMPILER",
]

FIXED_MIN_TIME: float
PRECISION_MIN_TIME: float
CONFIDENCE: float
BLOCK_REPETITIONS: int
DEFAULT_TIMEOUT: float
DEFAULT_PRECISION: float
DEFAULT_MAX_TIME: float
DEFAULT_MAX_REPETITIONS: int
MAX_POINTS: int
MIN_RUNS: int
MAX_PROCS: int
MAX_CPUS: int
DEFAULT_ROUNDS: int
REFILL_ABOVE_STREAM: str
ENGINES: tuple[str, ...]
TRANSPORTS: dict[str, tuple[str, ...]]
PLACEMENTS: tuple[str, ...]
COUNTERS: tuple[str, ...]
CHANGES: tuple[str, ...]
COMPILER: str
__version__: str
RELATIONS: tuple[str, ...]
MATRIX_CELL_MIN_TIME: float
MATRIX_CELL_MAX_TIME: float
MATRIX_PER_CLASS: int

_Floats = NDArray[np.float64]
_Ints = NDArray[np.int64]
# One point's earlier runs: ln figures, relative standard errors, ages in seconds.
_History = tuple[Sequence[float], Sequence[float], Sequence[float]]

@type_check_only
class RunLevelDict(TypedDict):
    """The run level of a point's earlier runs: relative sd, effective runs it rests on."""

    sd: float
    runs_seen: float

@type_check_only
class EstimateDict(TypedDict):
    """A figure and its uncertainty under the variance model."""

    center: float
    se: float
    df: float
    level: _Level

@type_check_only
class ComparisonDict(TypedDict):
    """`new / base`: the word, why, the ratio with its 95 % interval, its 90 % equivalence
    interval, the p-value of no difference, and what would decide an inconclusive one."""

    verdict: Literal["slower", "faster", "no change", "inconclusive"]
    why: Literal["decided", "one instance", "below resolution", "too wide", "at threshold"]
    ratio: float
    low: float
    high: float
    equivalent_low: float
    equivalent_high: float
    p_value: float
    df: float
    half_width: float
    needed_half_width: float
    data_factor: float

# BEGIN written by `python -m ctxbench._codegen` from schema.RECORDS; edit there
_Engine = Literal["process", "thread", "fiber"]
_Verdict = Literal["stable", "noisy", "unstable", "bimodal"]
_Level = Literal["repetition", "block", "instance", "run"]
_SwitchSource = Literal["kernel", "perf", "rusage"]
_Stopped = Literal["repetitions", "precision", "max_repetitions", "time_cap", "run_spread"]
_Counters = Literal["evidence", "off", "timed"]
_Relation = Literal[
    "same-cpu", "smt-sibling", "shared-l2", "shared-llc", "same-package", "cross-package"
]

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
    verdict: list[_Verdict]
    se: _Floats
    se_within: _Floats
    sd_run: _Floats
    runs_seen: _Floats
    df: _Floats
    level: list[_Level]
    sd_repetition: _Floats
    sd_block: _Floats
    sd_instance: _Floats
    instances: _Ints

@type_check_only
class PhasesDict(TypedDict):
    calibration: _Floats
    warmup: _Floats
    measure: _Floats
    setup_teardown: _Floats
    observer_wait: _Floats

@type_check_only
class HardwareDict(TypedDict):
    cycles_per_switch: _Floats | None
    instructions_per_switch: _Floats | None
    cache_misses_per_switch: _Floats | None
    dtlb_misses_per_switch: _Floats | None
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

    engine: _Engine
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
    switch_source: list[_SwitchSource]
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
    stopped: list[_Stopped]
    repetitions_made: _Ints
    block: _Ints
    instance_blocks: list[_Ints]
    max_repetitions: int | None
    cpu: int | None
    timeout: float
    record_hops: bool
    one_cpu: NDArray[np.bool_]
    stride_bytes: int | None
    resident_kb: _Ints
    counters: _Counters

@type_check_only
class RingConfigDict(TypedDict):
    """What `ring_config` returns: what a `ring` records of what was asked."""

    engine: _Engine
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
    stride_bytes: int | None
    counters: _Counters

@type_check_only
class PingpongDict(TypedDict):
    """What `pingpong` returns: the fields of `ctxbench.PingpongResult` but `metadata`."""

    loops: int
    threads: bool
    engine: _Engine
    transport: str
    placement: str
    elapsed_s: float
    usecs_per_op: float
    ops_per_sec: float
    usecs_per_switch: float
    cycles_per_switch: float | None
    tsc: TscDict
    cpus: _Ints
    repetitions: int | None
    precision: float | None
    max_time: float | None
    min_time: float
    samples_us: _Floats
    stats: StatsDict
    stopped: _Stopped
    block: int
    instance_blocks: _Ints
    phase_s: PhasesDict
    counters: _Counters

_WakeDict = TypedDict(
    "_WakeDict",
    {"p50": _Floats, "p90": _Floats, "p99": _Floats, "p99.9": _Floats},
)

@type_check_only
class MatrixDict(TypedDict):
    """What `matrix` returns: the fields of `ctxbench.MatrixResult` but `metadata`."""

    engine: _Engine
    transport: str
    size_kb: int
    repetitions: int | None
    precision: float | None
    max_time: float | None
    warmup: int
    min_time: float
    record_hops: bool
    per_class: int | None
    passes: int
    memory_node: str
    cpus: _Ints
    started_unix_s: float
    topology: TopologyDict
    cpu_from: _Ints
    cpu_to: _Ints
    relation: list[_Relation]
    numa_distance: _Ints
    pass_index: _Ints
    started_s: _Floats
    elapsed_s: _Floats
    latency_us: _Floats
    min_us: _Floats
    ci_low: _Floats
    ci_high: _Floats
    cv: _Floats
    verdict: list[str]
    stopped: list[str]
    repetitions_made: _Ints
    samples_us: _Floats
    raw_samples_us: _Floats
    overhead_samples_us: _Floats
    below_resolution: NDArray[np.bool_]
    switches_per_hop: _Floats
    migrations: _Ints
    work_verified: NDArray[np.bool_]
    cpus_seen: _Ints
    memory_node_asked: _Ints
    memory_node_seen: _Ints
    clock_offset_bound_ns: _Floats
    clock_untrusted: NDArray[np.bool_]
    wake_us: _WakeDict | None
    warnings: list[str]
    block: _Ints
    instance_blocks: list[_Ints]

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
    history: Sequence[_History | None] | None = None,
    stride_bytes: int = ...,
    counters: str = "evidence",
) -> RingDict: ...
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
    history: Sequence[_History | None] | None = None,
    stride_bytes: int = ...,
    counters: str = "evidence",
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
    history: Sequence[_History | None] | None = None,
    stride_bytes: int = ...,
    counters: str = "evidence",
) -> RingConfigDict: ...

@type_check_only
class IndirectDict(TypedDict):
    """Per (size, procs), shape (len(sizes_kb), len(procs)): net(size) - net(0) in µs per
    switch with its 95 % interval from paired rounds, and KiB refilled per µs of it (NaN
    where ``refill_note`` says why there is no figure)."""

    us: _Floats
    low_us: _Floats
    high_us: _Floats
    refill_kib_per_us: _Floats
    refill_low: _Floats
    refill_high: _Floats
    refill_note: list[list[str]]

@type_check_only
class CacheSweepDict(TypedDict):
    """What `cache_sweep` returns: one `RingDict` per size, the cost split, the streaming
    read's KiB per µs in each round."""

    results: list[RingDict]
    indirect: IndirectDict
    stream_kb: int
    stream_kib_per_us: _Floats
    rounds: int
    line_bytes: int

def cache_sweep(
    procs: Sequence[int],
    sizes_kb: Sequence[int],
    *,
    engine: str = "process",
    transport: str | None = None,
    stride_bytes: int = ...,
    rounds: int = ...,
    placement: str | Sequence[int] | None = None,
    cpu: int | None = None,
    min_time: float | None = None,
    timeout: float = ...,
    line_bytes: int = 64,
    stream_kb: int = 0,
    progress: Callable[[int, int], object] | None = None,
) -> CacheSweepDict: ...
def pingpong(
    loops: int | None = None,
    *,
    threads: bool = False,
    engine: str | None = None,
    transport: str | None = None,
    placement: str | Sequence[int] | None = None,
    cpu: int | None = None,
    precision: float = ...,
    max_time: float = ...,
    max_repetitions: int = ...,
    min_time: float | None = None,
    timeout: float = ...,
    history: _History | None = None,
    counters: str = "evidence",
) -> PingpongDict: ...
def workload_checksum(size_kb: int, stride_bytes: int = ...) -> int: ...
def estimate(
    samples: Sequence[float],
    block: int,
    instance_blocks: Sequence[int],
    run_sd: float | None = None,
    runs_seen: float | None = None,
) -> EstimateDict: ...
def runs_estimate(figures: Sequence[float]) -> EstimateDict: ...
def compare_estimates(
    base: EstimateDict,
    base_replicated: bool,
    new: EstimateDict,
    new_replicated: bool,
    threshold: float,
) -> ComparisonDict: ...
def run_level(
    log_figures: Sequence[float], rel_se: Sequence[float], ages_s: Sequence[float]
) -> RunLevelDict | None: ...
def runs_to_detect(spread: float, detect: float, power: float = 0.8) -> int | None: ...
def rounds_to_detect(spread: float, detect: float, power: float = 0.8) -> int | None: ...
def fiber_baseline_ns(pairs: int) -> float: ...
def default_transport(engine: str) -> str: ...
def placement_name(placement: str | Sequence[int] | None = None, cpu: int | None = None) -> str: ...

@type_check_only
class CacheDict(TypedDict):
    name: str
    level: int
    type: Literal["Data", "Instruction", "Unified"]
    size_kb: int | None
    cpus: _Ints

@type_check_only
class TopologyDict(TypedDict):
    """What `topology` returns: per CPU of `cpus` (every present CPU), -1 where sysfs says
    nothing; `relations[a][b]` indexes `RELATIONS` (present only from `topology`)."""

    sysfs: str
    cpus: _Ints
    online: NDArray[np.bool_]
    allowed: NDArray[np.bool_]
    package: _Ints
    die: _Ints
    cluster: _Ints
    core: _Ints
    node: _Ints
    llc: _Ints
    smt_siblings: list[_Ints]
    cpu_caches: list[_Ints]
    caches: list[CacheDict]
    cache_share_kb: dict[str, _Floats]
    nodes: _Ints
    distances: _Ints
    order: _Ints
    cpuset: _Ints | None
    affinity: _Ints | None
    notes: list[str]
    relations: NotRequired[NDArray[np.uint8]]

def topology(sysfs: str = "/sys") -> TopologyDict: ...
def matrix(
    cpus: Sequence[int] | None = None,
    *,
    engine: str = "thread",
    transport: str = "futex",
    size_kb: int = 0,
    repetitions: int | None = None,
    precision: float = ...,
    max_time: float = ...,
    max_repetitions: int = ...,
    warmup: int = 1,
    min_time: float | None = None,
    timeout: float = ...,
    record_hops: bool = False,
    per_class: int | None = None,
    passes: int = 1,
    memory_node: str | int | None = ...,
    progress: Callable[[int, int], object] | None = None,
) -> MatrixDict: ...
