"""The result classes: numpy arrays from the core, plus the run's metadata. Their fields are
declared in ``ctxbench.schema.RECORDS``; their JSON record is ``ctxbench.record``'s, their files
``ctxbench.files``'.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, Union

import numpy as np

from . import files, report, xgraph
from ._format import interval, reaches_zero, us
from .files import PathLike, read_records
from .record import decode

if TYPE_CHECKING:
    import pandas as pd

_R = TypeVar("_R", bound="_Kind")


class _Kind:
    """What every result class does alike: made from the core's record, framed, saved."""

    kind: ClassVar[str]

    @classmethod
    def from_core(cls: type[_R], raw: Mapping[str, Any], metadata: dict[str, Any]) -> _R:
        """The result of what the core returned: its record, arrays restored."""
        return from_record({"kind": cls.kind, **raw, "metadata": metadata})  # type: ignore[return-value]

    def to_frame(self) -> pd.DataFrame:
        """The tidy pandas frame, one row per sample: a ring's per (procs, repetition), a
        ping-pong's per repetition, a matrix's per (cell, repetition), an A/B run's per
        (round, side); see ``ctxbench.frame``."""
        from .frame import to_frame

        return to_frame(self)

    def save(self, path: PathLike, *, hostname: bool = True) -> None:
        """Write to .json, .csv or .parquet by suffix (a ring also to lat_ctx's .xgraph); see
        ``ctxbench.files``. ``hostname=False`` writes ``metadata.HOSTNAME_WITHHELD`` instead of
        this machine's name."""
        files.save([self], path, hostname=hostname)


@dataclass(frozen=True, eq=False)
class RingResult(_Kind):
    """One ring measurement: one entry per process count in ``procs``.

    All times are microseconds. ``latency_us`` is the median net time per switch (raw per-hop
    time minus the hot-cache overhead of the same repetition), ``min_us`` the lowest;
    ``samples_us`` holds every net sample, shape (repetitions, len(procs)); in precision mode
    (``repetitions`` is None) points stop after different numbers of repetitions
    (``repetitions_made``), and a point's column is NaN below its last repetition.
    ``stopped`` says, per point, why measuring ended: "repetitions" (the fixed count),
    "precision" (the 95 % interval of the median within ± ``precision`` × median),
    "run_spread" (the spread between runs on this machine alone keeps the interval wider, and
    measuring on would not narrow it), "max_repetitions" or "time_cap" (``max_time`` seconds
    of measuring).
    """

    kind: ClassVar[str] = "ring"
    # BEGIN written by `python -m ctxbench._codegen` from _core.RECORDS; edit src/record
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
    max_repetitions: int | None = None
    cpu: int | None = None
    timeout: float | None = None
    record_hops: bool | None = None
    stride_bytes: int | None = None
    cgroups: str | None = None
    cgroup_depth: int | None = None
    cgroup_weight: int | None = None
    counters: str | None = None
    policy: str | None = None
    priority: int | None = None
    nice: int | None = None
    dl_runtime_us: int | None = None
    dl_deadline_us: int | None = None
    dl_period_us: int | None = None
    point_id: list[str] = field(default_factory=list)
    interference: dict[str, Any] | None = None
    cpu_us_per_hop: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    cpu_user_us_per_hop: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    cpu_sys_us_per_hop: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    runq_wait_us_per_hop: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    stopped: list[str] = field(default_factory=list)
    repetitions_made: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    block: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    instance_blocks: list[np.ndarray] = field(default_factory=list)
    one_cpu: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    resident_kb: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    cgroup_hierarchy: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # END written by `python -m ctxbench._codegen`

    def stop_line(self) -> str:
        """How each point stopped, on what and at what cost, in one line; a point a cap
        ended says what would narrow it (``ctxbench.report.stop_line``)."""
        return report.stop_line(self)

    def to_xgraph(self, per_switch: bool = False) -> str:
        """lat_ctx's output: a title line with size and overhead, then "procs µs" pairs, µs
        per hop as lat_ctx's (``per_switch``: per context switch, the hop's figure divided by
        the switches it made, ``switches_per_hop``).

        Unlike lat_ctx, a point below the method's resolution (net <= 0) is printed, not
        dropped; ``below_resolution`` flags it.
        """
        figures = report.per_switch(self) if per_switch else self.latency_us.tolist()
        points = zip(self.procs.tolist(), figures)
        return xgraph.block(self.size_kb, self.overhead_us, points)

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
            f"ovr={us(self.overhead_us)} µs, µs/switch {{{points}}})"
        )


@dataclass(frozen=True, eq=False)
class PingpongResult(_Kind):
    """Two participants bouncing a token, as ``perf bench sched pipe`` does.

    One op is one round trip (two switches): ``usecs_per_op`` and ``ops_per_sec`` are perf's
    figures; ``usecs_per_switch`` is half an op. Raw time: no overhead is subtracted.
    """

    kind: ClassVar[str] = "pingpong"
    # BEGIN written by `python -m ctxbench._codegen` from _core.RECORDS; edit src/record
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
    repetitions: int | None = None
    precision: float | None = None
    max_time: float | None = None
    min_time: float | None = None
    counters: str | None = None
    cgroups: str | None = None
    cgroup_depth: int | None = None
    cgroup_weight: int | None = None
    cgroup_hierarchy: str | None = None
    samples_us: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    stats: dict[str, Any] = field(default_factory=dict)
    stopped: str | None = None
    block: int | None = None
    instance_blocks: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    phase_s: dict[str, Any] = field(default_factory=dict)
    policy: str | None = None
    priority: int | None = None
    nice: int | None = None
    dl_runtime_us: int | None = None
    dl_deadline_us: int | None = None
    dl_period_us: int | None = None
    hop_percentiles_us: dict[str, Any] | None = None
    interference: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # END written by `python -m ctxbench._codegen`

    def to_perf(self) -> str:
        """The fields `perf bench sched pipe` prints, in its layout (measured until precise:
        the median repetition's figures, and their 95 % interval)."""
        between = {"thread": "threads", "fiber": "fibers"}.get(self.engine, "processes")
        text = ""
        if self.stats and np.isfinite(self.stats["ci_low"][0]):
            median, low, high = (float(self.stats[k][0]) for k in ("median", "ci_low", "ci_high"))
            spread = interval(median, low, high, lambda v: f"{v:.6f}")
            text = f"  {spread} 95% interval\n"
            if reaches_zero(low, high):  # the figures above are then perf's layout, no more
                text = f"  not known: its 95% interval [{low:.6f}, {high:.6f}] reaches 0\n"
        return (
            "# Running 'sched/pipe' benchmark:\n"
            f"# Executed {self.loops} {self.transport} operations between two {between}\n\n"
            f"     Total time: {self.elapsed_s:.3f} [sec]\n\n"
            f"{self.usecs_per_op:15.6f} usecs/op\n"
            + self._mean_line()
            + text
            + f"{int(self.ops_per_sec):15d} ops/sec\n"
            f"{self.usecs_per_switch:15.6f} usecs/switch\n"
            + (
                f"{self.cycles_per_switch:15.1f} TSC cycles/switch\n"
                if self.cycles_per_switch is not None
                else ""
            )
        )

    def _mean_line(self) -> str:
        """Beside neighbours, the mean round trip under the median one: perf's figure (total
        time / loops), which holds what the neighbours cost."""
        if not self.interference or not self.loops:
            return ""
        mean = self.elapsed_s * 1e6 / self.loops
        return f"{mean:15.6f} usecs/op mean beside neighbours (perf's: total time / loops)\n"

    def stop_line(self) -> str:
        """How measuring stopped, on what and at what cost, in one line
        (``ctxbench.report.stop_line``)."""
        return report.stop_line(self)

    def __repr__(self) -> str:
        return (
            f"PingpongResult({self.engine}/{self.transport}, placement={self.placement}, "
            f"loops={self.loops}, {self.usecs_per_op:.3f} µs/op, "
            f"{self.usecs_per_switch:.3f} µs/switch)"
        )


@dataclass(frozen=True, eq=False)
class MatrixResult(_Kind):
    """The CPU×CPU wake-up matrix (``ctxbench.matrix``): one entry per cell, in the order the
    cells were measured.

    A cell (``cpu_from`` i, ``cpu_to`` j) is a ring of two participants pinned i→j, the timing
    one on i. ``latency_us`` is its median net µs per switch: (round trip ÷ 2) − overhead, the
    mean of the i→j and the j→i wake-up, with ``ci_low``/``ci_high`` its 95 % interval and
    ``samples_us`` every repetition, shape (repetitions, cells). With ``record_hops``,
    ``wake_us`` holds the i→j direction alone: wake-to-run percentiles of the hops into j,
    whose stamps cross CPUs; ``clock_offset_bound_ns`` bounds the two clocks' offset
    (checked before the cell) and ``clock_untrusted`` flags cells where it exceeds the
    histogram's resolution. ``relation`` and ``numa_distance`` name the pair's class;
    ``started_s`` is when the cell started (seconds after ``started_unix_s``);
    ``memory_node_asked``/``memory_node_seen`` the NUMA placement and where a probe page
    landed (-1: not placed). ``topology`` is the machine's (``ctxbench.topology``).
    """

    kind: ClassVar[str] = "matrix"
    # BEGIN written by `python -m ctxbench._codegen` from _core.RECORDS; edit src/record
    engine: str
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
    cpus: np.ndarray
    started_unix_s: float
    cpu_from: np.ndarray
    cpu_to: np.ndarray
    relation: list[str]
    numa_distance: np.ndarray
    pass_index: np.ndarray
    started_s: np.ndarray
    elapsed_s: np.ndarray
    latency_us: np.ndarray
    min_us: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    cv: np.ndarray
    verdict: list[str]
    stopped: list[str]
    repetitions_made: np.ndarray
    samples_us: np.ndarray
    raw_samples_us: np.ndarray
    overhead_samples_us: np.ndarray
    below_resolution: np.ndarray
    switches_per_hop: np.ndarray
    migrations: np.ndarray
    work_verified: np.ndarray
    cpus_seen: np.ndarray
    memory_node_asked: np.ndarray
    memory_node_seen: np.ndarray
    clock_offset_bound_ns: np.ndarray
    clock_untrusted: np.ndarray
    wake_us: dict[str, Any] | None
    warnings: list[str]
    topology: dict[str, Any]
    block: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    instance_blocks: list[np.ndarray] = field(default_factory=list)
    policy: str | None = None
    priority: int | None = None
    nice: int | None = None
    dl_runtime_us: int | None = None
    dl_deadline_us: int | None = None
    dl_period_us: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # END written by `python -m ctxbench._codegen`

    def summary(self) -> pd.DataFrame:
        """Per relation class: cells, median and range of the cells' medians (µs)."""
        from ._matrix_table import class_summary

        return class_summary(self.to_frame())

    def __repr__(self) -> str:
        cells = len(self.cpu_from)
        mode = f"{self.per_class} per class" if self.per_class else "every pair"
        parts = []
        for rel in dict.fromkeys(self.relation):
            v = self.latency_us[np.asarray(self.relation) == rel]
            parts.append(f"{rel} {np.median(v):.3g}")
        return (
            f"MatrixResult({self.engine}/{self.transport}, {len(self.cpus)} CPUs, {cells} "
            f"cells ({mode}), median µs/switch {{{', '.join(parts)}}})"
        )


@dataclass(frozen=True, eq=False)
class AbResult(_Kind):
    """Two configurations measured against each other until the data decide
    (``ctxbench.ab``): one fresh ring instance per side each round, the two in a fresh
    random order (RMIT), B / A read after every round from an anytime-valid interval.

    ``a`` and ``b`` are the sides as asked (``measure``, ``procs`` and the ring's
    parameters); per round ``a_us``/``b_us`` the sides' figures (µs per switch, each the
    median of one ring instance), ``a_first`` whether A ran first, ``end_s`` when it ended.
    ``ratio`` is B / A (the geometric mean of the rounds' ratios) with its 95 % interval
    ``ratio_low``/``ratio_high``, valid however early the run stopped; ``verdict`` the word
    (``slower``/``faster``: the interval beyond 1 and the ratio beyond ± ``threshold``; ``no
    change``: the interval within ± ``threshold``; else ``inconclusive``), ``stopped`` why the
    rounds ended (``_core.AB_STOPS``) and ``data_factor`` how many times the rounds an
    undecided run would take if the ratio stayed.
    """

    kind: ClassVar[str] = "ab"
    # BEGIN written by `python -m ctxbench._codegen` from _core.RECORDS; edit src/record
    a: dict[str, Any]
    b: dict[str, Any]
    budget_s: float
    threshold: float
    seed: int
    a_us: np.ndarray
    b_us: np.ndarray
    a_first: np.ndarray
    end_s: np.ndarray
    ratio: float
    ratio_low: float
    ratio_high: float
    verdict: str
    decided: bool
    stopped: str
    elapsed_s: float
    data_factor: float
    a_switches_per_hop: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    b_switches_per_hop: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    metadata: dict[str, Any] = field(default_factory=dict)
    # END written by `python -m ctxbench._codegen`

    @property
    def rounds(self) -> int:
        """How many rounds were measured."""
        return len(self.a_us)

    def why(self) -> str:
        """The verdict's reason in words: what decided it, or what would
        (``ctxbench.report.ab_why``)."""
        return report.ab_why(self)

    def _repr_html_(self) -> str:
        return report.ab_html(self)

    def __repr__(self) -> str:
        return (
            f"AbResult({report.ab_side(self.a, self.b)} vs {report.ab_side(self.b, self.a)}: "
            f"{report.ab_verdict(self)})"
        )


Result = Union[RingResult, PingpongResult, MatrixResult, AbResult]
# The one list of result kinds: the "kind" of a record names its class.
KINDS: dict[str, type[Result]] = {
    cls.kind: cls for cls in (RingResult, PingpongResult, MatrixResult, AbResult)
}


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
