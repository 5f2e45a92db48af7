//! Every parameter of every measurement, declared once: its name, what kind of value it
//! takes and in which range, its default, which measurements take it, its command-line
//! flags and one line of help. `Request` checks what a caller gives against it; the Python
//! binding converts by its kinds; the stub, the API's signatures and the CLI's flags are
//! written or checked from it (`_core.PARAMETERS`, `python -m ctxbench._codegen`).

use super::Preset;
use crate::config::{self, Limit};
use crate::engine::{Engine, TransportKind};
use crate::observer::Observer;
use crate::sched;
use crate::workload::DEFAULT_STRIDE_BYTES;

/// A measurement a caller can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Door {
    Ring,
    Pingpong,
    Matrix,
    Cache,
    Ab,
}

impl Door {
    pub const ALL: [Door; 5] = [
        Door::Ring,
        Door::Pingpong,
        Door::Matrix,
        Door::Cache,
        Door::Ab,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Door::Ring => "ring",
            Door::Pingpong => "pingpong",
            Door::Matrix => "matrix",
            Door::Cache => "cache_sweep",
            Door::Ab => "ab",
        }
    }
}

/// What values a parameter takes. A bare kind is required to be given or defaulted; the
/// `Opt` kinds also take None.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Participant counts: an int or a sequence of ints, each in `config::PROCS`.
    Counts,
    /// A count in its range.
    Count(Limit<u64>),
    /// Bytes between the words a participant sums (`workload::check_stride`'s rule).
    Stride,
    OptCount(Limit<u64>),
    /// A signed int in its range, or None.
    OptInt(Limit<i64>),
    /// A real number in its range.
    Real(Limit<f64>),
    OptReal(Limit<f64>),
    Switch,
    /// One of the names.
    Choice(Names),
    OptChoice(Names),
    /// A placement policy's name, or a list of CPU ids.
    Placement,
    /// A CPU id, or None.
    Cpu,
    /// A list of CPU ids, or None (every CPU allowed).
    Cpus,
    /// Sizes in KiB: a sequence of ints in `config::SIZE_KB`.
    Sizes,
    /// None, a node id, or a name of `matrix::Memory`.
    Memory,
    /// Earlier runs of each point (`stats::EarlierRun`s), or None: not a flag of the CLI.
    History,
    /// Neighbours on the measured CPUs as key=number pairs (`interference::KEYS`), or None.
    Interference,
}

/// The names a choice takes, each list read from its own home.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Names {
    Engines,
    Transports,
    Presets,
    Counters,
    Policies,
    Cgroups,
}

impl Names {
    pub fn names(self) -> Vec<&'static str> {
        match self {
            Names::Engines => Engine::ALL.iter().map(|e| e.name()).collect(),
            Names::Transports => TransportKind::ALL.iter().map(|t| t.name()).collect(),
            Names::Presets => Preset::ALL.iter().map(|p| p.name()).collect(),
            Names::Counters => Observer::NAMES.to_vec(),
            Names::Policies => sched::Policy::NAMES.to_vec(),
            Names::Cgroups => crate::cgroups::NAMES.to_vec(),
        }
    }
}

/// A parameter's default: a value, or one a preset or another parameter decides
/// (`Derived`, with the words that say how).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fallback {
    None,
    Int(i64),
    Real(f64),
    Switch(bool),
    Name(&'static str),
    Derived(&'static str),
}

#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub default: Fallback,
    pub doors: &'static [Door],
    /// The command line's flags, the first the one help shows; none: positional.
    pub flags: &'static [&'static str],
    pub help: &'static str,
}

const MEASURING: &[Door] = &[Door::Ring, Door::Pingpong, Door::Matrix, Door::Cache];
const RINGS: &[Door] = &[Door::Ring, Door::Pingpong, Door::Matrix];
/// Measurements whose participants may run unpinned (SCHED_DEADLINE needs it).
const TIMED_ALONE: &[Door] = &[Door::Ring, Door::Pingpong];
const ARRAYS: &[Door] = &[Door::Ring, Door::Matrix, Door::Cache];
const PLACED: &[Door] = &[Door::Ring, Door::Pingpong, Door::Cache];
const CGROUPED: &[Door] = &[Door::Ring, Door::Pingpong];

const ENGINES: Names = Names::Engines;
const TRANSPORTS: Names = Names::Transports;
const PRESETS: Names = Names::Presets;
const COUNTERS: Names = Names::Counters;
const POLICIES: Names = Names::Policies;
const CGROUPS: Names = Names::Cgroups;

/// Seconds an A/B run measures at most by default, and its range.
pub const DEFAULT_BUDGET_S: f64 = 30.0;
pub const BUDGET: Limit<f64> = Limit::above("budget", 0.0, 86_400.0).in_unit(" seconds");
/// The practical threshold of an A/B verdict by default: a change within ±2 % is no change.
pub const DEFAULT_THRESHOLD: f64 = crate::stop::DEFAULT_PRECISION;
pub const THRESHOLD: Limit<f64> =
    Limit::between("threshold", 0.0, 0.99).in_unit(" (a fraction of the figure)");
pub const SEED: Limit<u64> = Limit::between("seed", 0, u64::MAX);
pub use crate::config::{DEFAULT_LINE_BYTES, LINE_BYTES};

macro_rules! param {
    ($name:literal, $kind:expr, $default:expr, $doors:expr, [$($flag:literal),*], $help:literal) => {
        Param {
            name: $name,
            kind: $kind,
            default: $default,
            doors: $doors,
            flags: &[$($flag),*],
            help: $help,
        }
    };
}

/// The table. A name may appear twice where two measurements default it differently.
pub const PARAMS: &[Param] = &[
    param!(
        "procs",
        Kind::Counts,
        Fallback::None,
        &[Door::Ring, Door::Cache],
        [],
        "participant counts, e.g. 2 4 8 16 20"
    ),
    param!(
        "loops",
        Kind::OptCount(config::LOOPS),
        Fallback::None,
        &[Door::Pingpong],
        ["-l", "--loops"],
        "perf's form: this many round trips timed as one run; default: until --precision"
    ),
    param!(
        "threads",
        Kind::Switch,
        Fallback::Switch(false),
        &[Door::Pingpong],
        ["-T", "--threaded"],
        "two threads of one process instead of two processes"
    ),
    param!(
        "cpus",
        Kind::Cpus,
        Fallback::None,
        &[Door::Matrix],
        ["--cpus"],
        "the CPUs to pair (default: every CPU this process may use)"
    ),
    param!(
        "sizes_kb",
        Kind::Sizes,
        Fallback::Derived("auto: from the CPU's caches"),
        &[Door::Cache],
        ["--sizes"],
        "KiB per participant to sweep, 0 included"
    ),
    param!(
        "engine",
        Kind::Choice(ENGINES),
        Fallback::Name("process"),
        &[Door::Ring, Door::Cache],
        ["--engine"],
        "who switches"
    ),
    param!(
        "engine",
        Kind::OptChoice(ENGINES),
        Fallback::Derived("thread with threads, else process"),
        &[Door::Pingpong],
        ["--engine"],
        "who switches"
    ),
    param!(
        "engine",
        Kind::Choice(ENGINES),
        Fallback::Name("thread"),
        &[Door::Matrix],
        ["--engine"],
        "who switches"
    ),
    param!(
        "transport",
        Kind::OptChoice(TRANSPORTS),
        Fallback::Derived("the engine's first"),
        PLACED,
        ["--transport"],
        "how the token travels"
    ),
    param!(
        "transport",
        Kind::Choice(TRANSPORTS),
        Fallback::Name("futex"),
        &[Door::Matrix],
        ["--transport"],
        "how the token travels"
    ),
    param!(
        "size_kb",
        Kind::Count(config::SIZE_KB),
        Fallback::Int(0),
        &[Door::Ring, Door::Matrix],
        ["-s"],
        "KiB of private data each participant sums per hop"
    ),
    param!(
        "stride_bytes",
        Kind::Stride,
        Fallback::Int(DEFAULT_STRIDE_BYTES as i64),
        ARRAYS,
        ["--stride"],
        "bytes between summed words: 8 every word (lmbench3), 64 one per line"
    ),
    param!(
        "preset",
        Kind::Choice(PRESETS),
        Fallback::Name("default"),
        RINGS,
        ["--preset"],
        "how long a point may measure and how precise it must be: fast, default, rigorous"
    ),
    param!(
        "repetitions",
        Kind::OptCount(config::REPETITIONS),
        Fallback::None,
        RINGS,
        ["-N"],
        "exactly N timed repetitions, as lmbench (lat_ctx: 11); default: until --precision"
    ),
    param!(
        "precision",
        Kind::OptReal(config::PRECISION),
        Fallback::Derived("the preset's"),
        RINGS,
        ["--precision"],
        "stop a point when the 95 % interval of its median is within +-this fraction"
    ),
    param!(
        "max_time",
        Kind::OptReal(config::MAX_TIME),
        Fallback::Derived("the preset's"),
        RINGS,
        ["--max-time"],
        "seconds of measuring per point at most"
    ),
    param!(
        "max_repetitions",
        Kind::Count(config::MAX_REPETITIONS),
        Fallback::Int(crate::stop::DEFAULT_MAX_REPETITIONS as i64),
        RINGS,
        ["--max-repetitions"],
        "repetitions per point at most"
    ),
    param!(
        "warmup",
        Kind::Count(config::WARMUP),
        Fallback::Int(1),
        &[Door::Ring, Door::Matrix],
        ["-W"],
        "warm-up repetitions before timing"
    ),
    param!(
        "parallel",
        Kind::Count(config::PARALLEL),
        Fallback::Int(1),
        &[Door::Ring],
        ["-P"],
        "independent rings at once"
    ),
    param!(
        "placement",
        Kind::Placement,
        Fallback::Name("default"),
        &[Door::Ring, Door::Pingpong],
        ["--placement"],
        "default, single, spread, balanced, or a CPU list 0,1"
    ),
    param!(
        "placement",
        Kind::Placement,
        Fallback::Name("single"),
        &[Door::Cache],
        ["--placement"],
        "default, single, spread, balanced, or a CPU list 0,1"
    ),
    param!(
        "cpu",
        Kind::Cpu,
        Fallback::None,
        PLACED,
        ["--cpu"],
        "the CPU for placement single (default: the first allowed)"
    ),
    param!(
        "min_time",
        Kind::OptReal(config::MIN_TIME),
        Fallback::Derived("0.002 until precise, 0.05 with a fixed count"),
        MEASURING,
        ["--min-time"],
        "seconds per timed repetition"
    ),
    param!(
        "timeout",
        Kind::Real(config::TIMEOUT),
        Fallback::Real(config::DEFAULT_TIMEOUT),
        MEASURING,
        ["--timeout"],
        "seconds without progress before a ring counts as hung"
    ),
    param!(
        "record_hops",
        Kind::Switch,
        Fallback::Switch(false),
        &[Door::Ring, Door::Matrix],
        ["--record-hops"],
        "record every hop's wake-to-run latency"
    ),
    param!(
        "counters",
        Kind::Choice(COUNTERS),
        Fallback::Name("evidence"),
        RINGS,
        ["--counters"],
        "who watches the timed repetitions: evidence, off, or timed (perf through them)"
    ),
    param!(
        "policy",
        Kind::OptChoice(POLICIES),
        Fallback::Derived("as inherited from the caller"),
        RINGS,
        ["--policy"],
        "scheduling policy of every participant and driver: other, batch, idle, fifo, rr, deadline"
    ),
    param!(
        "priority",
        Kind::OptCount(sched::ANY_PRIORITY),
        Fallback::Derived("1 for fifo and rr, else 0"),
        RINGS,
        ["--priority"],
        "static priority for policy fifo or rr, 1 to 99"
    ),
    param!(
        "nice",
        Kind::OptInt(sched::NICE),
        Fallback::Derived("0 where a policy is named, else inherited"),
        RINGS,
        ["--nice"],
        "nice for policy other, batch or idle (alone: policy other), -20 to 19"
    ),
    param!(
        "dl_runtime_us",
        Kind::OptCount(sched::DL_RUNTIME_US),
        Fallback::Derived("200 with policy deadline"),
        TIMED_ALONE,
        ["--dl-runtime"],
        "policy deadline: µs of CPU each task may use per period"
    ),
    param!(
        "dl_deadline_us",
        Kind::OptCount(sched::DL_DEADLINE_US),
        Fallback::Derived("the period"),
        TIMED_ALONE,
        ["--dl-deadline"],
        "policy deadline: µs after each period's start by which the runtime is due"
    ),
    param!(
        "dl_period_us",
        Kind::OptCount(sched::DL_PERIOD_US),
        Fallback::Derived("1000 with policy deadline"),
        TIMED_ALONE,
        ["--dl-period"],
        "policy deadline: µs of each period"
    ),
    param!(
        "cgroups",
        Kind::OptChoice(CGROUPS),
        Fallback::None,
        CGROUPED,
        ["--cgroups"],
        "participants in fresh cgroups with the cpu controller: same (one leaf) or split (one each)"
    ),
    param!(
        "cgroup_depth",
        Kind::Count(crate::cgroups::DEPTH),
        Fallback::Int(1),
        CGROUPED,
        ["--cgroup-depth"],
        "how many groups deep each leaf sits under ctxbench's own group"
    ),
    param!(
        "cgroup_weight",
        Kind::OptCount(crate::cgroups::WEIGHT),
        Fallback::None,
        CGROUPED,
        ["--cgroup-weight"],
        "cpu.weight of every group made (v1: cpu.shares = weight x 1024 / 100)"
    ),
    param!(
        "interference",
        Kind::Interference,
        Fallback::None,
        &[Door::Ring],
        ["--interference"],
        "neighbours on the measured CPUs: hogs=N,duty=X,thrash_kb=K,rings=M,queued=Q"
    ),
    param!(
        "history",
        Kind::History,
        Fallback::None,
        &[Door::Ring, Door::Pingpong],
        [],
        "earlier runs of each point on this machine"
    ),
    param!(
        "per_class",
        Kind::OptCount(config::PER_CLASS),
        Fallback::None,
        &[Door::Matrix],
        ["--per-class"],
        "cells per class of CPU pairs (default: every pair)"
    ),
    param!(
        "passes",
        Kind::Count(config::PASSES),
        Fallback::Int(1),
        &[Door::Matrix],
        ["--passes"],
        "passes over the cells, every other one backwards"
    ),
    param!(
        "memory_node",
        Kind::Memory,
        Fallback::Derived("the waker's node"),
        &[Door::Matrix],
        ["--memory-node"],
        "where a cell's shared memory lives: waker, wakee or a node id"
    ),
    param!(
        "rounds",
        Kind::Count(config::ROUNDS),
        Fallback::Int(crate::cache::DEFAULT_ROUNDS as i64),
        &[Door::Cache],
        ["--rounds"],
        "rounds over every size, one block each"
    ),
    param!(
        "line_bytes",
        Kind::OptCount(LINE_BYTES),
        Fallback::Derived("the CPUs' cache line from the host's sysfs, else 64"),
        &[Door::Cache],
        ["--line-bytes"],
        "bytes per cache line, for the refill rate"
    ),
    param!(
        "stream_kb",
        Kind::OptCount(config::STREAM_KB),
        Fallback::Derived("4 x the largest cache share, 64 MiB at least, within the memory budget"),
        &[Door::Cache],
        ["--stream-kb"],
        "KiB of the streaming read measured beside the rings"
    ),
    param!(
        "budget",
        Kind::Real(BUDGET),
        Fallback::Real(DEFAULT_BUDGET_S),
        &[Door::Ab],
        ["--budget"],
        "seconds to measure at most"
    ),
    param!(
        "threshold",
        Kind::Real(THRESHOLD),
        Fallback::Real(DEFAULT_THRESHOLD),
        &[Door::Ab],
        ["--threshold"],
        "a change within +-this fraction, shown to be, is no change"
    ),
    param!(
        "seed",
        Kind::OptCount(SEED),
        Fallback::Derived("from the clock"),
        &[Door::Ab],
        ["--seed"],
        "the seed of the sides' order in each round"
    ),
];

/// The parameters a measurement takes, in the table's order.
pub fn of(door: Door) -> impl Iterator<Item = &'static Param> {
    PARAMS.iter().filter(move |p| p.doors.contains(&door))
}

/// The parameter `name` of `door`, if it takes one.
pub fn find(door: Door, name: &str) -> Option<&'static Param> {
    of(door).find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_door_takes_each_name_once() {
        for door in Door::ALL {
            let names: Vec<&str> = of(door).map(|p| p.name).collect();
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{door:?}: {names:?}");
            assert!(!names.is_empty(), "{door:?}");
        }
    }

    #[test]
    fn every_choice_reads_its_names_from_their_home() {
        assert!(Names::Transports.names().contains(&"futex"));
        assert_eq!(Names::Engines.names(), ["process", "thread", "fiber"]);
        assert_eq!(Names::Presets.names(), ["fast", "default", "rigorous"]);
        assert_eq!(Names::Counters.names(), ["evidence", "off", "timed"]);
        assert_eq!(Names::Policies.names()[3], "fifo");
    }
}
