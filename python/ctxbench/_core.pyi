"""Typed stub of the native module built from src/python/ (checked by mypy.stubtest)."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict, type_check_only

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ring",
    "pingpong",
    "pingpong_config",
    "workload_checksum",
    "estimate",
    "run_side",
    "runs_estimate",
    "compare_estimates",
    "judge_series",
    "judge_groups",
    "run_spread",
    "run_level",
    "runs_to_detect",
    "rounds_to_detect",
    "ab_replay",
    "fiber_baseline_ns",
    "placement_name",
    "placement_cpus",
    "ring_config",
    "ring_check",
    "ab",
    "topology",
    "cache_plan",
    "restrictions",
    "cpu_quota",
    "matrix_plan",
    "ring_estimate",
    "matrix",
    "RELATIONS",
    "MATRIX_PER_CLASS",
    "MATRIX_MIN_PER_CLASS",
    "TIME_BUDGET_S",
    "LONG_RUN_S",
    "cache_sweep",
    "DEFAULT_ROUNDS",
    "REFILL_ABOVE_STREAM",
    "FIXED_MIN_TIME",
    "PRECISION_MIN_TIME",
    "CONFIDENCE",
    "DEFAULT_POWER",
    "BLOCK_REPETITIONS",
    "DEFAULT_TIMEOUT",
    "DEFAULT_PRECISION",
    "ASSUMED_RUN_SD",
    "LOADED_RUNNABLE",
    "DEFAULT_MAX_TIME",
    "DEFAULT_MAX_REPETITIONS",
    "MAX_POINTS",
    "MIN_RUNS",
    "MIN_SERIES",
    "SERIES_WINDOW",
    "MIN_GROUP_RUNS",
    "FAMILY_ALPHA",
    "NOISY_CV",
    "MAX_PROCS",
    "MAX_CPUS",
    "ENGINES",
    "TRANSPORTS",
    "PLACEMENTS",
    "COUNTERS",
    "POLICIES",
    "INTERFERENCE_KEYS",
    "CHANGES",
    "AB_STOPS",
    "__version__",
    "COMPILER",
    "PARAMETERS",
    "RECORDS",
    "RETURNS",
    "PRESETS",
    "DOORS",
    # change points (src/changes)
    "change_points",
    "change_at",
]

FIXED_MIN_TIME: float
PRECISION_MIN_TIME: float
CONFIDENCE: float
DEFAULT_POWER: float
BLOCK_REPETITIONS: int
DEFAULT_TIMEOUT: float
DEFAULT_PRECISION: float
ASSUMED_RUN_SD: float
LOADED_RUNNABLE: float
DEFAULT_MAX_TIME: float
DEFAULT_MAX_REPETITIONS: int
MAX_POINTS: int
MIN_RUNS: int
MIN_SERIES: int
SERIES_WINDOW: int
MIN_GROUP_RUNS: int
FAMILY_ALPHA: float
NOISY_CV: float
MAX_PROCS: int
MAX_CPUS: int
DEFAULT_ROUNDS: int
REFILL_ABOVE_STREAM: str
ENGINES: tuple[str, ...]
TRANSPORTS: dict[str, tuple[str, ...]]
PLACEMENTS: tuple[str, ...]
COUNTERS: tuple[str, ...]
POLICIES: tuple[str, ...]
INTERFERENCE_KEYS: tuple[str, ...]
CHANGES: tuple[str, ...]
AB_STOPS: tuple[str, ...]
COMPILER: str
# One dict per parameter as src/request/params.rs declares it: name, kind, expected, default,
# derived, lo, hi, choices, doors, flags, help.
PARAMETERS: tuple[dict[str, Any], ...]
# Each result kind's fields as src/record/ declares them (``record!``), in order: name, type,
# shape, min, nullable, nan, inf, holes, choices, literals, required, ragged, unsigned,
# column, config, alias, fields (an object's, the same way, or None), doc.
RECORDS: dict[str, list[dict[str, Any]]]
# What the core returns besides a kind's record, by the stub's name of it, the same way.
RETURNS: dict[str, list[dict[str, Any]]]
# Each preset's figures by name: {"precision": fraction, "max_time": seconds}.
PRESETS: dict[str, dict[str, float]]
DOORS: tuple[str, ...]
__version__: str
RELATIONS: tuple[str, ...]
MATRIX_PER_CLASS: int
MATRIX_MIN_PER_CLASS: int
TIME_BUDGET_S: float
LONG_RUN_S: float

_Floats = NDArray[np.float64]
_Ints = NDArray[np.int64]
# One point's earlier runs: ln figures, relative standard errors, ages in seconds.
_History = tuple[Sequence[float], Sequence[float], Sequence[float]]
# Earlier runs of each point of a call, None where none are known.
_Histories = Sequence[_History | None]

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
class RunSideDict(EstimateDict):
    """One run as a side of a comparison: its estimate with a run level added."""

    replicated: bool
    loaded: bool
    run_level: Literal["earlier runs", "assumed", "unknown"]

@type_check_only
class ComparisonDict(TypedDict):
    """`new / base`: the word, why, the ratio with its 95 % interval, its 90 % equivalence
    interval, the p-value of no difference, and what would decide an inconclusive one."""

    verdict: Literal["slower", "faster", "no change", "inconclusive"]
    why: Literal[
        "decided", "one sample", "below resolution", "under load", "too wide", "at threshold"
    ]
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

# BEGIN written by `python -m ctxbench._codegen` from _core.RECORDS; edit src/record
_Engine = Literal["process", "thread", "fiber"]
_Cgroups = Literal["none", "same", "split"]
_Counters = Literal["evidence", "off", "timed"]
_Policy = Literal["other", "batch", "idle", "fifo", "rr", "deadline"]
_Level = Literal["repetition", "block", "instance", "run"]
_Verdict = Literal["stable", "noisy", "unstable", "bimodal", "throttled"]
_SwitchSource = Literal["kernel", "perf", "rusage"]
_Stopped = Literal["repetitions", "precision", "max_repetitions", "time_cap", "run_spread"]
_Relation = Literal[
    "same-cpu", "smt-sibling", "shared-l2", "shared-llc", "same-package", "cross-package"
]
_Measure = Literal["ring", "pingpong"]
_Change = Literal["slower", "faster", "no change", "inconclusive"]
_AbStopped = Literal[
    "decided", "budget", "below resolution", "max rounds", "no more rounds", "throttled"
]

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
    cgroups: _Cgroups
    cgroup_depth: int | None
    cgroup_weight: int | None
    counters: _Counters
    policy: _Policy
    priority: int
    nice: int
    dl_runtime_us: int | None
    dl_deadline_us: int | None
    dl_period_us: int | None
    point_id: list[str]

@type_check_only
class InterferenceDict(TypedDict):
    hogs: int
    duty: float
    thrash_kb: int
    rings: int
    queued: int
    span_s: list[float]
    hog_duty: list[list[float]]
    thrash_duty: list[float]
    thrash_resident_kb: list[int]
    ring_duty: list[list[float]]
    queued_duty: list[list[float]]
    queued_runnable: list[int]

@type_check_only
class StatsDict(TypedDict):
    min: list[float]
    median: list[float]
    mean: list[float]
    max: list[float]
    stdev: list[float]
    cv: list[float]
    ci_low: list[float]
    ci_high: list[float]
    se: list[float]
    se_within: list[float]
    df: list[float]
    level: list[_Level]
    sd_repetition: list[float]
    sd_block: list[float]
    sd_instance: list[float]
    sd_run: list[float]
    runs_seen: list[float]
    instances: list[int]
    outliers: list[int]
    clusters: list[int]
    verdict: list[_Verdict]

@type_check_only
class PhasesDict(TypedDict):
    calibration: list[float]
    warmup: list[float]
    measure: list[float]
    setup_teardown: list[float]
    observer_wait: list[float]

@type_check_only
class HardwareDict(TypedDict):
    cycles_per_switch: list[float] | None
    instructions_per_switch: list[float] | None
    cache_misses_per_switch: list[float] | None
    dtlb_misses_per_switch: list[float] | None
    unavailable_reason: str | None

_HopPercentilesDict = TypedDict(
    "_HopPercentilesDict",
    {
        "p50": list[float],
        "p90": list[float],
        "p99": list[float],
        "p99.9": list[float],
        "max": list[float],
    },
)

@type_check_only
class HopHistogramDict(TypedDict):
    edges_us: list[float]
    counts: list[list[int]]

@type_check_only
class TscDict(TypedDict):
    ghz: float | None
    read_cost_cycles: float | None
    unavailable_reason: str | None

@type_check_only
class RingDict(RingConfigDict):
    """What `ring` returns: the fields of `ctxbench.RingResult` but `metadata`."""

    interference: InterferenceDict | None
    procs: list[int]
    latency_us: list[float]
    min_us: list[float]
    samples_us: list[list[float]]
    raw_us: list[float]
    raw_samples_us: list[list[float]]
    overhead_us: float
    overhead_point_us: list[float]
    overhead_samples_us: list[list[float]]
    ring_us: list[list[float]]
    below_resolution: list[bool]
    stats: StatsDict
    cpus: list[list[list[int]]]
    trips: list[int]
    overhead_rounds: list[int]
    work_verified: list[bool]
    phase_s: PhasesDict
    switches_per_hop: list[float]
    switch_source: list[_SwitchSource]
    counted_us: list[float]
    involuntary_switches: list[int]
    migrations: list[int]
    cpu_us_per_hop: list[float]
    cpu_user_us_per_hop: list[float]
    cpu_sys_us_per_hop: list[float]
    runq_wait_us_per_hop: list[float]
    hardware: HardwareDict
    counters_unavailable_reason: str | None
    warnings: list[str]
    hop_percentiles_us: _HopPercentilesDict | None
    hop_histogram: HopHistogramDict | None
    tsc_cycles_per_switch: list[float] | None
    tsc: TscDict
    stopped: list[_Stopped]
    repetitions_made: list[int]
    block: list[int]
    instance_blocks: list[list[int]]
    one_cpu: list[bool]
    resident_kb: list[int]
    cgroup_hierarchy: str | None

@type_check_only
class PingpongDict(TypedDict):
    """What `pingpong` returns: the fields of `ctxbench.PingpongResult` but `metadata`."""

    loops: int
    threads: bool
    engine: _Engine
    transport: str
    placement: str
    repetitions: int | None
    precision: float | None
    max_time: float | None
    min_time: float
    counters: _Counters
    cgroups: _Cgroups
    cgroup_depth: int | None
    cgroup_weight: int | None
    cgroup_hierarchy: str | None
    elapsed_s: float
    usecs_per_op: float
    ops_per_sec: float
    usecs_per_switch: float
    cycles_per_switch: float | None
    tsc: TscDict
    cpus: list[int]
    samples_us: list[float]
    stats: StatsDict
    stopped: _Stopped
    block: int
    instance_blocks: list[int]
    phase_s: PhasesDict
    policy: _Policy
    priority: int
    nice: int
    dl_runtime_us: int | None
    dl_deadline_us: int | None
    dl_period_us: int | None
    hop_percentiles_us: _HopPercentilesDict | None
    interference: InterferenceDict | None

_WakeDict = TypedDict(
    "_WakeDict",
    {"p50": list[float], "p90": list[float], "p99": list[float], "p99.9": list[float]},
)

@type_check_only
class TopologyCacheDict(TypedDict):
    name: str
    level: int
    type: str
    size_kb: int | None
    cpus: list[int]

@type_check_only
class TopologyTableDict(TypedDict):
    sysfs: str
    cpus: list[int]
    online: list[bool]
    allowed: list[bool]
    package: list[int]
    die: list[int]
    cluster: list[int]
    core: list[int]
    node: list[int]
    llc: list[int]
    core_type: list[str]
    smt_siblings: list[list[int]]
    cpu_caches: list[list[int]]
    caches: list[TopologyCacheDict]
    cache_share_kb: dict[str, Any]
    nodes: list[int]
    distances: list[list[int]]
    order: list[int]
    cpuset: list[int] | None
    affinity: list[int] | None
    notes: list[str]
    relations: list[list[int]] | None

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
    cpus: list[int]
    started_unix_s: float
    cpu_from: list[int]
    cpu_to: list[int]
    relation: list[_Relation]
    numa_distance: list[int]
    pass_index: list[int]
    started_s: list[float]
    elapsed_s: list[float]
    latency_us: list[float]
    min_us: list[float]
    ci_low: list[float]
    ci_high: list[float]
    cv: list[float]
    verdict: list[str]
    stopped: list[str]
    repetitions_made: list[int]
    samples_us: list[list[float]]
    raw_samples_us: list[list[float]]
    overhead_samples_us: list[list[float]]
    below_resolution: list[bool]
    switches_per_hop: list[float]
    migrations: list[int]
    block: list[int]
    instance_blocks: list[list[int]]
    work_verified: list[bool]
    cpus_seen: list[list[int]]
    memory_node_asked: list[int]
    memory_node_seen: list[int]
    clock_offset_bound_ns: list[float]
    clock_untrusted: list[bool]
    wake_us: _WakeDict | None
    warnings: list[str]
    policy: _Policy
    priority: int
    nice: int
    dl_runtime_us: int | None
    dl_deadline_us: int | None
    dl_period_us: int | None
    topology: TopologyTableDict

@type_check_only
class InterferenceAskedDict(TypedDict):
    hogs: int
    duty: float
    thrash_kb: int
    rings: int
    queued: int

@type_check_only
class AbSideDict(RingConfigDict):
    measure: _Measure
    procs: int
    interference: InterferenceAskedDict | None

@type_check_only
class AbDict(TypedDict):
    """What `ab` returns: the fields of `ctxbench.AbResult` but `metadata`."""

    a: AbSideDict
    b: AbSideDict
    budget_s: float
    threshold: float
    seed: int
    a_us: list[float]
    b_us: list[float]
    a_first: list[bool]
    end_s: list[float]
    a_switches_per_hop: list[float]
    b_switches_per_hop: list[float]
    ratio: float
    ratio_low: float
    ratio_high: float
    verdict: _Change
    decided: bool
    stopped: _AbStopped
    elapsed_s: float
    data_factor: float

@type_check_only
class IndirectDict(TypedDict):
    us: list[list[float]]
    low_us: list[list[float]]
    high_us: list[list[float]]
    refill_kib_per_us: list[list[float]]
    refill_low: list[list[float]]
    refill_high: list[list[float]]
    refill_note: list[list[str]]

@type_check_only
class CacheSweepDict(TypedDict):
    """What `cache_sweep` returns."""

    results: list[RingDict]
    indirect: IndirectDict
    stream_kb: int
    stream_kib_per_us: list[float]
    rounds: int
    line_bytes: int

# END written by `python -m ctxbench._codegen`

# BEGIN written by `python -m ctxbench._codegen` from _core.PARAMETERS; edit src/request
def ring(
    procs: int | Sequence[int],
    *,
    engine: str = "process",
    transport: str | None = ...,
    size_kb: int = 0,
    stride_bytes: int = 8,
    preset: str = "default",
    repetitions: int | None = None,
    precision: float | None = ...,
    max_time: float | None = ...,
    max_repetitions: int = 400,
    warmup: int = 1,
    parallel: int = 1,
    placement: str | Sequence[int] | None = "default",
    cpu: int | None = None,
    min_time: float | None = ...,
    timeout: float = 10.0,
    record_hops: bool = False,
    counters: str = "evidence",
    policy: str | None = ...,
    priority: int | None = ...,
    nice: int | None = ...,
    dl_runtime_us: int | None = ...,
    dl_deadline_us: int | None = ...,
    dl_period_us: int | None = ...,
    cgroups: str | None = None,
    cgroup_depth: int = 1,
    cgroup_weight: int | None = None,
    interference: Mapping[str, float] | None = None,
    history: _Histories | Callable[[list[str]], _Histories] | None = None,
) -> RingDict: ...
def ring_config(
    procs: int | Sequence[int],
    *,
    engine: str = "process",
    transport: str | None = ...,
    size_kb: int = 0,
    stride_bytes: int = 8,
    preset: str = "default",
    repetitions: int | None = None,
    precision: float | None = ...,
    max_time: float | None = ...,
    max_repetitions: int = 400,
    warmup: int = 1,
    parallel: int = 1,
    placement: str | Sequence[int] | None = "default",
    cpu: int | None = None,
    min_time: float | None = ...,
    timeout: float = 10.0,
    record_hops: bool = False,
    counters: str = "evidence",
    policy: str | None = ...,
    priority: int | None = ...,
    nice: int | None = ...,
    dl_runtime_us: int | None = ...,
    dl_deadline_us: int | None = ...,
    dl_period_us: int | None = ...,
    cgroups: str | None = None,
    cgroup_depth: int = 1,
    cgroup_weight: int | None = None,
    interference: Mapping[str, float] | None = None,
    history: _Histories | Callable[[list[str]], _Histories] | None = None,
) -> RingConfigDict: ...
def ring_check(
    procs: int | Sequence[int],
    *,
    engine: str = "process",
    transport: str | None = ...,
    size_kb: int = 0,
    stride_bytes: int = 8,
    preset: str = "default",
    repetitions: int | None = None,
    precision: float | None = ...,
    max_time: float | None = ...,
    max_repetitions: int = 400,
    warmup: int = 1,
    parallel: int = 1,
    placement: str | Sequence[int] | None = "default",
    cpu: int | None = None,
    min_time: float | None = ...,
    timeout: float = 10.0,
    record_hops: bool = False,
    counters: str = "evidence",
    policy: str | None = ...,
    priority: int | None = ...,
    nice: int | None = ...,
    dl_runtime_us: int | None = ...,
    dl_deadline_us: int | None = ...,
    dl_period_us: int | None = ...,
    cgroups: str | None = None,
    cgroup_depth: int = 1,
    cgroup_weight: int | None = None,
    interference: Mapping[str, float] | None = None,
    history: _Histories | Callable[[list[str]], _Histories] | None = None,
) -> RingConfigDict: ...
def pingpong(
    loops: int | None = None,
    *,
    threads: bool = False,
    engine: str | None = ...,
    transport: str | None = ...,
    preset: str = "default",
    repetitions: int | None = None,
    precision: float | None = ...,
    max_time: float | None = ...,
    max_repetitions: int = 400,
    placement: str | Sequence[int] | None = "default",
    cpu: int | None = None,
    min_time: float | None = ...,
    timeout: float = 10.0,
    record_hops: bool = False,
    counters: str = "evidence",
    policy: str | None = ...,
    priority: int | None = ...,
    nice: int | None = ...,
    dl_runtime_us: int | None = ...,
    dl_deadline_us: int | None = ...,
    dl_period_us: int | None = ...,
    cgroups: str | None = None,
    cgroup_depth: int = 1,
    cgroup_weight: int | None = None,
    interference: Mapping[str, float] | None = None,
    history: _Histories | Callable[[list[str]], _Histories] | None = None,
) -> PingpongDict: ...
def pingpong_config(
    loops: int | None = None,
    *,
    threads: bool = False,
    engine: str | None = ...,
    transport: str | None = ...,
    preset: str = "default",
    repetitions: int | None = None,
    precision: float | None = ...,
    max_time: float | None = ...,
    max_repetitions: int = 400,
    placement: str | Sequence[int] | None = "default",
    cpu: int | None = None,
    min_time: float | None = ...,
    timeout: float = 10.0,
    record_hops: bool = False,
    counters: str = "evidence",
    policy: str | None = ...,
    priority: int | None = ...,
    nice: int | None = ...,
    dl_runtime_us: int | None = ...,
    dl_deadline_us: int | None = ...,
    dl_period_us: int | None = ...,
    cgroups: str | None = None,
    cgroup_depth: int = 1,
    cgroup_weight: int | None = None,
    interference: Mapping[str, float] | None = None,
    history: _Histories | Callable[[list[str]], _Histories] | None = None,
) -> RingConfigDict: ...
def cache_sweep(
    procs: int | Sequence[int],
    sizes_kb: Sequence[int] | str | None,
    *,
    engine: str = "process",
    transport: str | None = ...,
    stride_bytes: int = 8,
    placement: str | Sequence[int] | None = "single",
    cpu: int | None = None,
    min_time: float | None = ...,
    timeout: float = 10.0,
    rounds: int = 5,
    line_bytes: int | None = ...,
    stream_kb: int | None = ...,
    progress: Callable[[int, int], object] | None = None,
) -> CacheSweepDict: ...
def matrix(
    cpus: Sequence[int] | None = None,
    *,
    engine: str = "thread",
    transport: str = "futex",
    size_kb: int = 0,
    stride_bytes: int = 8,
    preset: str = "default",
    repetitions: int | None = None,
    precision: float | None = ...,
    max_time: float | None = ...,
    max_repetitions: int = 400,
    warmup: int = 1,
    min_time: float | None = ...,
    timeout: float = 10.0,
    record_hops: bool = False,
    counters: str = "evidence",
    policy: str | None = ...,
    priority: int | None = ...,
    nice: int | None = ...,
    per_class: int | None = None,
    full: bool = False,
    passes: int = 1,
    memory_node: str | int | None = ...,
    progress: Callable[[int, int], object] | None = None,
) -> MatrixDict: ...
def ab(
    a: tuple[str, Mapping[str, object]],
    b: tuple[str, Mapping[str, object]],
    *,
    budget: float = 30.0,
    threshold: float = 0.02,
    seed: int | None = ...,
    progress: Callable[[int, int], object] | None = None,
) -> AbDict: ...

# END written by `python -m ctxbench._codegen`

def workload_checksum(size_kb: int, stride_bytes: int | None = None) -> int: ...
def estimate(
    samples: Sequence[float],
    block: int,
    instance_blocks: Sequence[int],
    run_sd: float | None = None,
    runs_seen: float | None = None,
) -> EstimateDict: ...
def run_side(
    samples: Sequence[float],
    block: int,
    instance_blocks: Sequence[int],
    run_sd: float | None = None,
    runs_seen: float | None = None,
    runnable_per_cpu: float | None = None,
) -> RunSideDict: ...
def runs_estimate(figures: Sequence[float]) -> EstimateDict: ...
def compare_estimates(
    base: EstimateDict,
    base_replicated: bool,
    new: EstimateDict,
    new_replicated: bool,
    threshold: float,
) -> ComparisonDict: ...

@type_check_only
class SeriesJudgementDict(TypedDict):
    """One point's new runs against its series: the word, why, the level judged against and
    the new runs' (geometric means, µs), new / base with its prediction interval at
    ``confidence`` (Holm's level for the point) and its 90 % equivalence interval, the p-value
    and Holm's adjusted one, the runs read, the modes (of two runs or more), whether the new
    runs lie in a known mode other than the main one and that mode's level over the main
    one's, the runs set aside from the spread, the spread within modes (ln) with its degrees
    of freedom, and the new runs that would decide an inconclusive point."""

    verdict: Literal["slower", "faster", "no change", "inconclusive"]
    why: Literal[
        "decided",
        "one sample",
        "below resolution",
        "under load",
        "too wide",
        "at threshold",
        "short series",
        "known mode",
    ]
    base_us: float
    new_us: float
    ratio: float
    low: float
    high: float
    confidence: float
    equivalent_low: float
    equivalent_high: float
    p_value: float
    adjusted_p: float
    runs: int
    modes: int
    known_mode: bool
    mode_ratio: float
    set_aside: int
    sd: float
    df: float
    runs_to_decide: int | None

def judge_series(
    points: Sequence[tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]]],
    threshold: float,
    family_alpha: float = ...,
) -> list[SeriesJudgementDict]: ...

@type_check_only
class GroupJudgementDict(TypedDict):
    """One point's two groups of runs compared: the word, why, each group's geometric mean
    (µs), new / base with its interval at ``confidence`` (Holm's level for the point) and its
    90 % equivalence interval, the p-value and Holm's adjusted one, the runs a side, one
    run's spread (ln, pooled) and Welch's degrees of freedom (0: a side short of runs)."""

    verdict: Literal["slower", "faster", "no change", "inconclusive"]
    why: Literal["decided", "too wide", "short series"]
    base_us: float
    new_us: float
    ratio: float
    low: float
    high: float
    confidence: float
    equivalent_low: float
    equivalent_high: float
    p_value: float
    adjusted_p: float
    base_runs: int
    new_runs: int
    sd: float
    df: float

def judge_groups(
    points: Sequence[tuple[Sequence[float], Sequence[float]]],
    threshold: float,
    family_alpha: float = ...,
) -> list[GroupJudgementDict]: ...
def run_spread(groups: Sequence[Sequence[float]]) -> tuple[float, int] | None: ...
def run_level(
    log_figures: Sequence[float], rel_se: Sequence[float], ages_s: Sequence[float]
) -> RunLevelDict | None: ...
def runs_to_detect(spread: float, detect: float, power: float | None = None) -> int | None: ...
def rounds_to_detect(spread: float, detect: float, power: float | None = None) -> int | None: ...

@type_check_only
class AbReplayDict(TypedDict):
    """What `ab` would have said of rounds already measured: how many it read before it
    stopped, B / A with its anytime-valid interval, the word, and the seconds it took."""

    rounds: int
    ratio: float
    ratio_low: float
    ratio_high: float
    verdict: Literal["slower", "faster", "no change", "inconclusive"]
    decided: bool
    stopped: str
    elapsed_s: float
    data_factor: float

def ab_replay(
    a_us: Sequence[float],
    b_us: Sequence[float],
    end_s: Sequence[float],
    *,
    budget: float = ...,
    threshold: float = ...,
) -> AbReplayDict: ...
def fiber_baseline_ns(pairs: int) -> float: ...
def placement_name(placement: str | Sequence[int] | None = None, cpu: int | None = None) -> str: ...
def placement_cpus(
    placement: str | Sequence[int] | None = None,
    cpu: int | None = None,
    procs: int = 2,
    parallel: int = 1,
) -> list[int]: ...

@type_check_only
class TopologyDict(TopologyTableDict):
    """What `topology` returns: the table as a matrix record holds it (lists, which
    `ctxbench._topology.table` makes arrays), `relations[a][b]` indexing `RELATIONS` already
    an array."""

    relations: NDArray[np.uint8]  # type: ignore[misc]

def topology(sysfs: str | None = None) -> TopologyDict: ...

@type_check_only
class CachePlanDict(TypedDict):
    """What `cache_plan` returns: what a cache sweep would measure on the host (the sysfs
    tree it read, the CPUs the placement uses there, the per-CPU shares of their caches in
    KiB summed), the line and the streaming read it would use, one grid per ring size, the
    bytes it would hold at once, the seconds it is planned to take, and what bounded a
    default."""

    sysfs: str
    cpus: list[int]
    caches: dict[str, int]
    line_bytes: int
    stream_kb: int
    sizes_kb: list[list[int]]
    memory_bytes: int
    estimated_s: float
    notes: list[str]

def cache_plan(
    procs: int | Sequence[int], sizes_kb: Sequence[int] | None = None, **kwargs: object
) -> CachePlanDict: ...

@type_check_only
class MatrixClassPlanDict(TypedDict):
    """One class of a matrix's plan: its relation, NUMA distance (None on one node) and
    name, its ordered pairs among the CPUs, and the cells measured of them per pass."""

    relation: str
    numa_distance: int | None
    name: str
    pairs: int
    cells: int

@type_check_only
class MatrixPlanDict(TypedDict):
    """What `matrix_plan` returns: the cells a matrix would measure on the host (the sysfs
    tree it read, its CPUs, the cells per class, None for every pair), each class's, the
    cells in all and the full matrix's, the seconds a cell and the whole take at most (the
    full matrix's beside), the bytes one cell holds, and what bounded the default."""

    sysfs: str
    cpus: list[int]
    per_class: int | None
    classes: list[MatrixClassPlanDict]
    cells: int
    full_cells: int
    cell_s: float
    estimated_s: float
    full_estimated_s: float
    memory_bytes: int
    notes: list[str]

def matrix_plan(
    cpus: Sequence[int] | None = None, *, sysfs: str | None = None, **kwargs: object
) -> MatrixPlanDict: ...
def ring_estimate(procs: int | Sequence[int], **kwargs: object) -> float: ...

# Change points over time (src/changes, src/python/changes.rs).
@type_check_only
class ChangeDict(TypedDict):
    """One change point of a series: the index of the first run after it, its permutation
    p-value and the level it passed (Holm's for a series' first, the strictest after), the
    energy statistic,
    the runs in the segments before and after it, and its size after/before
    (Hodges-Lehmann) with its distribution-free interval at `confidence`."""

    index: int
    p: float
    level: float
    statistic: float
    runs_before: int
    runs_after: int
    ratio: float
    ratio_lo: float
    ratio_hi: float
    confidence: float

@type_check_only
class ScanDict(TypedDict):
    status: Literal["scanned", "too short"]
    runs: int
    level: float
    min_runs: int
    changes: list[ChangeDict]

@type_check_only
class ChangeAtDict(TypedDict):
    status: Literal["change", "none found", "too few runs"]
    change: ChangeDict | None
    changes: list[ChangeDict]
    runs_before: int
    runs_after: int

def change_points(
    series: Sequence[tuple[str, Sequence[float]]],
    level: float | None = None,
    min_runs: int | None = None,
    permutations: int | None = None,
    seed: int | None = None,
) -> list[ScanDict]: ...
def change_at(
    key: str,
    ln_values: Sequence[float],
    index: int,
    level: float | None = None,
    min_runs: int | None = None,
    permutations: int | None = None,
    seed: int | None = None,
) -> ChangeAtDict: ...

@type_check_only
class RestrictionDict(TypedDict):
    """One restriction of the host (`restrictions`): its name, what was read, what to do."""

    name: str
    detail: str
    hint: str

def restrictions(
    sysfs: str | None = None, proc: str | None = None, boot: str | None = None
) -> list[RestrictionDict]: ...
def cpu_quota(
    sysfs: str | None = None, proc: str | None = None, boot: str | None = None
) -> float | None: ...
