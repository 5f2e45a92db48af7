"""What a ctxbench file must hold, declared once per kind and format (``ctxbench._field`` checks
every declaration): the JSON record of every result kind (``RECORDS``), the tidy table that
CSV and Parquet files hold (``_table_schema``, its columns repeating these declarations) and
lmbench's xgraph text (``XGRAPH``). ``RECORDS`` is also the one list of each result's fields:
the result classes and the stub of what the core returns are written from it (``python -m
ctxbench._codegen``). The loaders turn a ``_field.Bad`` into a ``ValueError`` naming the file
and where in it (record, line or row).

Net figures (``latency_us``, ``samples_us``, ``value`` ...) may be negative: a switch below the
method's resolution gives a net time <= 0, and ``below_resolution`` says so (``FLAG``). Raw
times, overheads and counts cannot be negative. No number may be NaN or infinite unless its
field says so: NaN is a hop percentile of a point without hops, +inf a CV whose mean is 0.

What is not declared passes unchecked and is kept: entries a newer ctxbench adds to a record,
columns a user adds to a table, the metadata beyond the columns the table repeats.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from . import _core
from ._core import AB_STOPS, CHANGES, ENGINES, RELATIONS
from ._field import Dim, Field


def _float(*shape: Dim, **kw: Any) -> Field:
    return Field("float", shape, **kw)


def _int(*shape: Dim, **kw: Any) -> Field:
    return Field("int", shape, **kw)


P = "points"  # len(procs)
R = "repetitions"

TSC = Field(
    "dict",
    name="TscDict",
    fields={
        "ghz": _float(min=0, nullable=True),
        "read_cost_cycles": _float(min=0, nullable=True),
        "unavailable_reason": Field("str", nullable=True),
    },
)
# The metadata is free-form (collected, or added by the pytest plugin); only what the table
# repeats (``frame.METADATA_COLUMNS``) has a type.
METADATA = Field(
    "dict",
    nullable=True,
    required=False,
    fields={
        **{
            k: Field("str", nullable=True, required=False)
            for k in ("kernel", "cpu_model", "ctxbench_version", "date", "hostname", "test")
        },
        "hypervisor": Field("bool", nullable=True, required=False),
    },
)
HOP_PERCENTILES = ("p50", "p90", "p99", "p99.9", "max")
# The variance model's levels, innermost first (``ctxbench._core.estimate``).
LEVELS = ("repetition", "block", "instance", "run")
STOPPED = ("repetitions", "precision", "max_repetitions", "time_cap", "run_spread")
VERDICTS = ("stable", "noisy", "unstable", "bimodal", "throttled")
PHASES = ("calibration", "warmup", "measure", "setup_teardown", "observer_wait")
# Phases a file from before them lacks.
_LATER_PHASES = ("observer_wait",)
# Who watched the timed windows (``ctxbench._core.COUNTERS``); files from before lack it.
COUNTERS = Field("str", required=False, config=True, literals=("evidence", "off", "timed"))
# Where the participants were placed (``_core.CGROUPS``); files from before lack them.
CGROUPS = {
    "cgroups": Field("str", required=False, config=True, literals=("none", "same", "split")),
    "cgroup_depth": _int(min=1, nullable=True, required=False, config=True),
    "cgroup_weight": _int(min=1, nullable=True, required=False, config=True),
}
CGROUP_HIERARCHY = Field("str", nullable=True, required=False)


def _sched(config: bool) -> dict[str, Field]:
    """The scheduling policy every task of a run had, read back (``ctxbench._core.POLICIES``);
    deadline's runtime, deadline and period in µs, null under the other policies. Files from
    before lack them."""
    dl = _int(min=0, nullable=True, required=False, config=config)
    return {
        "policy": Field("str", required=False, config=config, literals=_core.POLICIES),
        "priority": _int(min=0, required=False, config=config),
        "nice": _int(min=-20, required=False, config=config),
        "dl_runtime_us": dl,
        "dl_deadline_us": dl,
        "dl_period_us": dl,
    }


# The fields of each result kind, in the order its class and its record hold them: every
# required field before the optional ones, ``metadata`` last. One declaration per field: the
# class (``result.RingResult``), the stub of what the core returns (``_core.pyi``), the
# record's check and the table's column follow from it (``python -m ctxbench._codegen``).
RING: dict[str, Field] = {
    "engine": Field("str", choices=ENGINES, config=True),
    "transport": Field("str", config=True),
    "placement": Field("str", config=True),
    "size_kb": _int(min=0, config=True),
    "repetitions": _int(min=1, nullable=True, config=True),  # null: precision mode
    "warmup": _int(min=0, config=True),
    "parallel": _int(min=1, config=True),
    "min_time": _float(min=0, config=True),
    "procs": _int(P, min=2),
    "latency_us": _float(P),
    "min_us": _float(P),
    # (repetition, point); a point that stopped early (precision mode) has null below its
    # last repetition.
    "samples_us": _float(R, P, holes=True),
    "raw_us": _float(P, min=0),
    "raw_samples_us": _float(R, P, min=0, holes=True),
    "overhead_us": _float(min=0),
    "overhead_point_us": _float(P, min=0),
    "overhead_samples_us": _float(R, P, min=0, holes=True),
    "ring_us": _float(P, "parallel"),
    "below_resolution": Field("bool", (P,)),
    "stats": Field(
        "dict",
        name="StatsDict",
        fields={
            **{k: _float(P) for k in ("min", "median", "mean", "max")},
            # NaN: no interval (a point with one unit to go on).
            **{k: _float(P, nan=True, holes=True) for k in ("ci_low", "ci_high")},
            "stdev": _float(P, min=0),
            "cv": _float(P, min=0, inf=True),
            "outliers": _int(P, min=0),
            "clusters": _int(P, min=1),
            "verdict": Field("str", (P,), literals=VERDICTS),
            # The variance model (files from before it lack these).
            **{
                k: _float(P, min=0, nan=True, holes=True, required=False)
                for k in ("se", "se_within", "sd_run")
            },
            "runs_seen": _float(P, min=0, required=False),
            "df": _float(P, min=0, required=False),
            "level": Field("str", (P,), choices=LEVELS, required=False),
            **{
                f"sd_{level}": _float(P, min=0, nan=True, holes=True, required=False)
                for level in LEVELS[:3]
            },
            "instances": _int(P, min=1, required=False),
        },
    ),
    "cpus": _int(P, "parallel", None, min=-1, ragged=True),  # [point][ring][participant]
    "trips": _int(P, min=0),
    "overhead_rounds": _int(P, min=0),
    "work_verified": Field("bool", (P,)),
    "phase_s": Field(
        "dict",
        name="PhasesDict",
        fields={k: _float(P, min=0, required=k not in _LATER_PHASES) for k in PHASES},
    ),
    "switches_per_hop": _float(P, min=0, column=True),
    "switch_source": Field("str", (P,), literals=("kernel", "perf", "rusage")),
    # NaN (null in files): no evidence repetition (no hardware counters, or counters="off").
    "counted_us": _float(P, min=0, nan=True, holes=True),
    "involuntary_switches": _int(P, min=0, column=True),
    "migrations": _int(P, min=-1, column=True),  # -1: counters unavailable
    "hardware": Field(
        "dict",
        name="HardwareDict",
        fields={
            "cycles_per_switch": _float(P, min=0, nullable=True),
            "instructions_per_switch": _float(P, min=0, nullable=True),
            # Issue 19; files from before it lack them.
            "cache_misses_per_switch": _float(P, min=0, nullable=True, required=False),
            "dtlb_misses_per_switch": _float(P, min=0, nullable=True, required=False),
            "unavailable_reason": Field("str", nullable=True),
        },
    ),
    "counters_unavailable_reason": Field("str", nullable=True),
    "warnings": Field("str", (None,)),
    "hop_percentiles_us": Field(
        "dict",
        nullable=True,
        name="_HopPercentilesDict",
        # A point without hops has none: NaN in files written before NaN became null.
        fields={k: _float(P, min=0, nan=True, holes=True) for k in HOP_PERCENTILES},
    ),
    "hop_histogram": Field(
        "dict",
        nullable=True,
        name="HopHistogramDict",
        fields={"edges_us": _float(None, min=0), "counts": _int(P, None, min=0, unsigned=True)},
    ),
    "tsc_cycles_per_switch": _float(P, nullable=True),  # net: may be negative
    "tsc": TSC,
    # Added later: files from before lack them, and a record leaves out the unset ones.
    # Precision mode: null with a fixed number of repetitions.
    "precision": _float(min=0, nullable=True, required=False, config=True),
    "max_time": _float(min=0, nullable=True, required=False, config=True),
    "stopped": Field("str", (P,), required=False, literals=STOPPED, column=True),
    "repetitions_made": _int(P, min=0, required=False, column=True),
    # Repetitions per block and blocks per ring instance.
    "block": _int(P, min=1, required=False),
    "instance_blocks": _int(P, None, min=0, required=False, ragged=True),
    "max_repetitions": _int(min=1, nullable=True, required=False, config=True),
    # The CPU given to placement "single" (null: the first allowed one, or another placement).
    "cpu": _int(min=0, nullable=True, required=False, config=True),
    "timeout": _float(min=0, required=False, config=True),
    "record_hops": Field("bool", required=False, config=True),
    # Every participant of the point ran on one CPU: a pinned one, the same one in a CPU
    # list, or the only one the caller may use. Blocking hops then cost at least one switch.
    "one_cpu": Field("bool", (P,), required=False),
    # The working set (files from before it lack these).
    "stride_bytes": _int(min=8, nullable=True, required=False, config=True),
    "resident_kb": _int(P, min=-1, required=False, column=True),
    # CPU time and run-queue wait per hop, from the kernel's accounting; NaN (null in files)
    # where it was not read. Files from before them lack them.
    **{
        k: _float(P, min=0, nan=True, holes=True, column=True, required=False)
        for k in (
            "cpu_us_per_hop",
            "cpu_user_us_per_hop",
            "cpu_sys_us_per_hop",
            "runq_wait_us_per_hop",
        )
    },
    # The cgroups the participants were placed in; None: the caller's (files from before
    # them lack these).
    **CGROUPS,
    "cgroup_hierarchy": CGROUP_HIERARCHY,
    "counters": COUNTERS,
    **_sched(config=True),
    # The neighbours asked (``interference=``) and what they achieved per point; null where
    # none ran (files from before it lack it).
    # Each point's canonical identity (``key=value`` pairs, the core's): what the run
    # history, a sweep's out file and a store key a point by. Files from before lack it.
    "point_id": Field("str", (P,), required=False, config=True, column=True),
    "interference": Field(
        "dict",
        nullable=True,
        required=False,
        name="InterferenceDict",
        fields={
            **{k: _int(min=0) for k in ("hogs", "thrash_kb", "rings")},
            # Files from before queued tasks lack these.
            "queued": _int(min=0, required=False),
            "duty": _float(min=0),
            "span_s": _float(P, min=0, nan=True, holes=True),
            "hog_duty": _float(P, None, min=0, nan=True, holes=True, ragged=True),
            "thrash_duty": _float(P, min=0, nan=True, holes=True),
            "thrash_resident_kb": _int(P, min=-1),
            "ring_duty": _float(P, None, min=0, nan=True, holes=True, ragged=True),
            "queued_duty": _float(
                P, None, min=0, nan=True, holes=True, ragged=True, required=False
            ),
            "queued_runnable": _int(P, min=-1, required=False),
        },
    ),
    "metadata": METADATA,
}

PINGPONG: dict[str, Field] = {
    "loops": _int(min=1),
    "threads": Field("bool"),
    "engine": Field("str", choices=ENGINES),
    "transport": Field("str"),
    "placement": Field("str"),
    "elapsed_s": _float(min=0),
    "usecs_per_op": _float(min=0),
    "ops_per_sec": _float(min=0),
    "usecs_per_switch": _float(min=0),
    "cycles_per_switch": _float(min=0, nullable=True),
    "tsc": TSC,
    "cpus": _int(2, min=-1),
    # Measured until precise, as a ring point (files from before, and perf's fixed loop's
    # older records, lack these).
    "repetitions": _int(min=1, nullable=True, required=False),
    "precision": _float(min=0, nullable=True, required=False),
    "max_time": _float(min=0, nullable=True, required=False),
    "min_time": _float(min=0, required=False),
    "samples_us": _float(None, min=0, required=False),
    "stats": Field("dict", required=False, name="StatsDict"),  # as a ring's, of one point
    "stopped": Field("str", required=False, literals=STOPPED),
    "block": _int(min=1, required=False),
    "instance_blocks": _int(None, min=0, required=False),
    "phase_s": Field(
        "dict",
        required=False,
        name="PhasesDict",
        fields={k: _float(1, min=0, required=k not in _LATER_PHASES) for k in PHASES},
    ),
    "counters": replace(COUNTERS, config=False),
    **_sched(config=False),
    **{k: replace(spec, config=False) for k, spec in CGROUPS.items()},
    "cgroup_hierarchy": CGROUP_HIERARCHY,
    "metadata": METADATA,
}

C = "cells"  # len(cpu_from)
# Of the machine's topology a matrix record keeps, what its table and plot read.
MATRIX_TOPOLOGY = Field(
    "dict",
    stub="TopologyDict",  # the core gives all of ``topology()``'s; the record keeps these
    fields={
        **{k: _int(None, min=-1) for k in ("cpus", "package", "core", "llc", "node")},
        "order": _int(None, min=0),
        "notes": Field("str", (None,)),
    },
)
WAKE_PERCENTILES = ("p50", "p90", "p99", "p99.9")

MATRIX: dict[str, Field] = {
    "engine": Field("str", choices=ENGINES),
    "transport": Field("str"),
    "size_kb": _int(min=0),
    "repetitions": _int(min=1, nullable=True),  # null: precision mode
    "precision": _float(min=0, nullable=True),
    "max_time": _float(min=0, nullable=True),
    "warmup": _int(min=0),
    "min_time": _float(min=0),
    "record_hops": Field("bool"),
    "per_class": _int(min=1, nullable=True),  # null: every pair
    "passes": _int(min=1),
    "memory_node": Field("str"),
    "cpus": _int(None, min=0),
    "started_unix_s": _float(min=0),
    "topology": MATRIX_TOPOLOGY,
    "cpu_from": _int(C, min=0),
    "cpu_to": _int(C, min=0),
    "relation": Field("str", (C,), choices=RELATIONS),
    "numa_distance": _int(C, min=-1),  # -1: one node, or unknown
    "pass_index": _int(C, min=0),
    "started_s": _float(C, min=0),
    "elapsed_s": _float(C, min=0),
    "latency_us": _float(C),
    "min_us": _float(C),
    # NaN: no interval (a cell with one unit to go on).
    "ci_low": _float(C, nan=True, holes=True),
    "ci_high": _float(C, nan=True, holes=True),
    "cv": _float(C, min=0, inf=True),
    "verdict": Field("str", (C,)),
    "stopped": Field("str", (C,)),
    "repetitions_made": _int(C, min=0),
    "samples_us": _float(R, C, holes=True),
    "raw_samples_us": _float(R, C, min=0, holes=True),
    "overhead_samples_us": _float(R, C, min=0, holes=True),
    "below_resolution": Field("bool", (C,)),
    "switches_per_hop": _float(C, min=0),
    "migrations": _int(C, min=-1),
    "work_verified": Field("bool", (C,)),
    "cpus_seen": _int(C, 2, min=-1),
    "memory_node_asked": _int(C, min=-1),  # -1: not placed
    "memory_node_seen": _int(C, min=-1),
    # NaN (null): not checked (no hops); +inf: the clocks allowed no bound.
    "clock_offset_bound_ns": _float(C, min=0, nan=True, inf=True, holes=True),
    "clock_untrusted": Field("bool", (C,)),
    "wake_us": Field(
        "dict",
        nullable=True,
        name="_WakeDict",
        fields={k: _float(C, min=0, nan=True, holes=True) for k in WAKE_PERCENTILES},
    ),
    "warnings": Field("str", (None,)),
    "block": _int(C, min=1, required=False),
    "instance_blocks": _int(C, None, min=0, required=False, ragged=True),
    **_sched(config=False),
    "metadata": METADATA,
}

# One side of an A/B run as asked: what it measures, its participant count, its ring's
# parameters (a ring's ``config`` fields).
AB_SIDE = Field(
    "dict",
    name="AbSideDict",
    fields={
        "measure": Field("str", choices=("ring", "pingpong")),
        "procs": _int(min=2),
        **{
            name: replace(RING[name], config=False, required=True)
            for name in (
                "engine",
                "transport",
                "placement",
                "cpu",
                "size_kb",
                "stride_bytes",
                "repetitions",
                "precision",
                "max_time",
                "max_repetitions",
                "warmup",
                "parallel",
                "min_time",
                "timeout",
                "record_hops",
                "counters",
            )
        },
    },
)
ROUNDS = "rounds"
# The words of a comparison (``_core.CHANGES``) and why an A/B run stopped (``AB_STOPS``).
CHANGE = 'Literal["slower", "faster", "no change", "inconclusive"]'
AB_STOPPED = AB_STOPS

AB: dict[str, Field] = {
    "a": AB_SIDE,
    "b": AB_SIDE,
    "budget_s": _float(min=0),
    "threshold": _float(min=0),
    "seed": _int(min=0),
    # Each round's figures (µs per switch: net, may be <= 0 below resolution), which side
    # ran first, and when it ended (seconds since the start).
    "a_us": _float(ROUNDS),
    "b_us": _float(ROUNDS),
    "a_first": Field("bool", (ROUNDS,)),
    "end_s": _float(ROUNDS, min=0),
    # B / A with its anytime-valid 95 % interval: NaN (null) before a round has a ratio,
    # bounds 0 and +inf while too few rounds bound it.
    "ratio": _float(min=0, nan=True, holes=True),
    "ratio_low": _float(min=0, nan=True, holes=True),
    "ratio_high": _float(min=0, nan=True, inf=True, holes=True),
    "verdict": Field("str", choices=CHANGES, stub=CHANGE),
    "decided": Field("bool"),
    "stopped": Field("str", choices=AB_STOPPED, stub="str"),
    "elapsed_s": _float(min=0),
    # How many times the rounds an undecided run would take; NaN (null) otherwise.
    "data_factor": _float(min=0, nan=True, holes=True),
    "metadata": METADATA,
}

# The record of each result kind (``result.KINDS``).
RECORDS: dict[str, dict[str, Field]] = {
    "ring": RING,
    "pingpong": PINGPONG,
    "matrix": MATRIX,
    "ab": AB,
}


# What the caller asked of a ring (``config=True``), in declaration order, one value each
# (a point's canonical ``point_id`` is one per point).
CONFIG: tuple[str, ...] = tuple(
    name for name, spec in RING.items() if spec.config and not spec.shape
)
# The neighbours asked (``interference=``), as the core resolves every key of them.
INTERFERENCE_ASKED: tuple[str, ...] = _core.INTERFERENCE_KEYS

# lmbench's lat_ctx text: a title '"size=<KiB>k ovr=<µs>' and lines '<procs> <µs per switch>'.
XGRAPH: dict[str, Field] = {
    "size": _int(min=0),
    "ovr": _float(min=0),
    "procs": _int(min=2),
    "µs": _float(),
}
