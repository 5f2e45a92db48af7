//! Every parameter of every measurement, declared once: its name, what kind of value it
//! takes and in which range, its default, which measurements take it, its command-line
//! flags and one line of help. `Request` checks what a caller gives against it; the Python
//! binding converts by its kinds; the stub, the API's signatures and the CLI's flags are
//! written or checked from it (`_core.PARAMETERS`, `python -m ctxbench._codegen`).

use super::Preset;
use crate::config;
use crate::engine::{Engine, TransportKind};
use crate::error::Limit;
use crate::observer::Observer;
use crate::sched;
use crate::workload::DEFAULT_STRIDE_BYTES;
use serde::ser::{Serialize, SerializeStruct, SerializeTuple, Serializer};

/// A measurement a caller can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Door {
    Ring,
    Pingpong,
    Matrix,
    Cache,
    Ab,
    /// What telling a change takes on this machine (`ctxbench.plan`): parameters only, the
    /// points a ring's.
    Plan,
}

impl Door {
    pub const ALL: [Door; 6] = [
        Door::Ring,
        Door::Pingpong,
        Door::Matrix,
        Door::Cache,
        Door::Ab,
        Door::Plan,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Door::Ring => "ring",
            Door::Pingpong => "pingpong",
            Door::Matrix => "matrix",
            Door::Cache => "cache_sweep",
            Door::Ab => "ab",
            Door::Plan => "plan",
        }
    }

    /// The door an A/B side (`side`: "a" or "b") of kind `kind` measures by: a ring or a
    /// ping-pong.
    pub fn of_ab_side(side: &'static str, kind: &str) -> crate::error::Result<Door> {
        match kind {
            "ring" => Ok(Door::Ring),
            "pingpong" => Ok(Door::Pingpong),
            other => Err(crate::error::Error::invalid(
                side,
                format!("an A/B side is \"ring\" or \"pingpong\", got {other:?}"),
            )),
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
    /// Neighbours on the measured CPUs as key=number pairs (`interference::keys`), or None.
    Interference,
}

impl Kind {
    /// A kind's name for the stub and the CLI: how a value of it is typed.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Counts => "counts",
            Kind::Count(_) => "count",
            Kind::Stride => "count",
            Kind::OptCount(_) => "count?",
            Kind::OptInt(_) => "int?",
            Kind::Real(_) => "real",
            Kind::OptReal(_) => "real?",
            Kind::Switch => "switch",
            Kind::Choice(_) => "choice",
            Kind::OptChoice(_) => "choice?",
            Kind::Placement => "placement",
            Kind::Cpu => "cpu",
            Kind::Cpus => "cpus",
            Kind::Sizes => "sizes",
            Kind::Memory => "memory",
            Kind::History => "history",
            Kind::Interference => "interference",
        }
    }

    /// The most items a list of this kind holds: a front door reads one more, for the
    /// request to refuse by name, and never more (an endless iterator ends there).
    pub fn most_items(self) -> usize {
        match self {
            Kind::Cpus => crate::sys::MAX_CPUS,
            Kind::Placement => config::MAX_PROCS,
            _ => config::MAX_POINTS,
        }
    }

    /// What the items of a list of this kind are, for the error that refuses too many.
    pub fn items(self) -> &'static str {
        match self {
            Kind::Cpus => "CPU ids, each CPU once at most",
            Kind::Placement => "CPU ids, one per participant at most",
            Kind::Sizes => "sizes",
            _ => "process counts",
        }
    }

    /// The error for an int too wide for 64 bits given to `name`: its limit's, where the
    /// kind has one.
    pub fn out_of_range(self, name: &'static str, text: String) -> crate::error::Error {
        match self {
            Kind::Count(l) | Kind::OptCount(l) => l.outside(text),
            Kind::OptInt(l) => l.outside(text),
            Kind::Counts => config::PROCS.outside(text),
            Kind::Sizes => config::SIZE_KB.outside(text),
            Kind::Stride => crate::workload::stride_outside(text),
            Kind::Cpu | Kind::Cpus | Kind::Placement => crate::placement::cpu_outside(name, text),
            _ => crate::error::Error::invalid(name, format!("{text} is out of range")),
        }
    }
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
    /// Counts (a cache sweep's ring sizes).
    Ints(&'static [i64]),
    Derived(&'static str),
}

impl Fallback {
    /// The default as a caller would give it; None where there is none or a rule decides.
    pub fn value(self) -> Option<super::Value> {
        use super::Value;
        Some(match self {
            Fallback::Int(i) => Value::Int(i),
            Fallback::Real(x) => Value::Real(x),
            Fallback::Switch(b) => Value::Switch(b),
            Fallback::Name(n) => Value::Name(n.into()),
            Fallback::Ints(v) => Value::Ints(v.to_vec()),
            Fallback::None | Fallback::Derived(_) => return None,
        })
    }
}

/// Items said as a tuple (Python's, through the binding): a declaration's lists are fixed.
pub struct Tuple<'a, T>(pub &'a [T]);

impl<T: Serialize> Serialize for Tuple<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut items = s.serialize_tuple(self.0.len())?;
        for item in self.0 {
            items.serialize_element(item)?;
        }
        items.end()
    }
}

/// A default as `_core.PARAMETERS` says it: the value, or None where none or derived.
impl Serialize for Fallback {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match *self {
            Fallback::None | Fallback::Derived(_) => s.serialize_none(),
            Fallback::Int(i) => s.serialize_i64(i),
            Fallback::Real(x) => s.serialize_f64(x),
            Fallback::Switch(b) => s.serialize_bool(b),
            Fallback::Name(n) => s.serialize_str(n),
            Fallback::Ints(v) => Tuple(v).serialize(s),
        }
    }
}

/// A parameter as `_core.PARAMETERS` lists it: name, kind in words, what it expects,
/// default (None where none, or where derived: then `derived` says how), range, choices,
/// the measurements that take it, its flags and help. The stub, the API's signatures and the
/// CLI's flags are written or checked from it.
impl Serialize for Param {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let derived = match self.default {
            Fallback::Derived(how) => Some(how),
            _ => None,
        };
        let (lo, hi) = match self.kind {
            Kind::Count(l) | Kind::OptCount(l) => (Some(l.lo as f64), Some(l.hi as f64)),
            Kind::OptInt(l) => (Some(l.lo as f64), Some(l.hi as f64)),
            Kind::Real(l) | Kind::OptReal(l) => (Some(l.lo), Some(l.hi)),
            _ => (None, None),
        };
        let choices = match self.kind {
            Kind::Choice(n) | Kind::OptChoice(n) => Some(n.names()),
            _ => None,
        };
        let doors: Vec<&str> = self.doors.iter().map(|d| d.name()).collect();
        let mut row = s.serialize_struct("Param", 11)?;
        row.serialize_field("name", self.name)?;
        row.serialize_field("kind", self.kind.name())?;
        row.serialize_field("expected", &super::expected(self.kind))?;
        row.serialize_field("default", &self.default)?;
        row.serialize_field("derived", &derived)?;
        row.serialize_field("lo", &lo)?;
        row.serialize_field("hi", &hi)?;
        row.serialize_field("choices", &choices.as_deref().map(Tuple))?;
        row.serialize_field("doors", &Tuple(&doors))?;
        row.serialize_field("flags", &Tuple(self.flags))?;
        row.serialize_field("help", self.help)?;
        row.end()
    }
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

use crate::ab::{BUDGET, DEFAULT_BUDGET_S, DEFAULT_THRESHOLD, SEED, THRESHOLD};
pub use crate::config::{DEFAULT_LINE_BYTES, LINE_BYTES};
use crate::verdict::{DEFAULT_DETECT, DEFAULT_POWER, DETECT, PILOT, POWER};

/// A row: name, kind, default, doors, flags (none: positional), help.
macro_rules! params {
    ($($name:literal, $kind:expr, $default:expr, $doors:expr, [$($flag:literal),*],
       $help:literal;)*) => {
        &[$(Param {
            name: $name,
            kind: $kind,
            default: $default,
            doors: $doors,
            flags: &[$($flag),*],
            help: $help,
        }),*]
    };
}

/// The table. A name may appear twice where two measurements default it differently.
#[rustfmt::skip]
pub const PARAMS: &[Param] = {
    use Door::*;
    use Fallback as F;
    use Kind::*;
    params! {
        "procs", Counts, F::None, &[Ring], [],
            "participant counts, e.g. 2 4 8 16 20";
        "procs", Counts, F::Ints(&[2, 8]), &[Cache], ["--procs"],
            "ring sizes: participant counts";
        "loops", OptCount(config::LOOPS), F::None, &[Pingpong], ["-l", "--loops"],
            "perf's form: this many round trips timed as one run; default: until --precision";
        "threads", Switch, F::Switch(false), &[Pingpong], ["-T", "--threaded"],
            "two threads of one process instead of two processes";
        "cpus", Cpus, F::None, &[Matrix], ["--cpus"],
            "the CPUs to pair (default: every CPU this process may use)";
        "sizes_kb", Sizes, F::Derived("auto: from the CPU's caches"), &[Cache], ["--sizes"],
            "KiB per participant to sweep, 0 included";
        "engine", Choice(ENGINES), F::Name("process"), &[Ring, Cache], ["--engine"],
            "who switches";
        "engine", OptChoice(ENGINES), F::Derived("thread with threads, else process"), &[Pingpong],
            ["--engine"], "who switches";
        "engine", Choice(ENGINES), F::Name("thread"), &[Matrix], ["--engine"],
            "who switches";
        "transport", OptChoice(TRANSPORTS), F::Derived("the engine's first"), PLACED,
            ["--transport"],
            "how the token travels";
        "transport", Choice(TRANSPORTS), F::Name("futex"), &[Matrix], ["--transport"],
            "how the token travels";
        "size_kb", Count(config::SIZE_KB), F::Int(0), &[Ring, Matrix], ["-s"],
            "KiB of private data each participant sums per hop";
        "stride_bytes", Stride, F::Int(DEFAULT_STRIDE_BYTES as i64), ARRAYS, ["--stride"],
            "bytes between summed words: 8 every word (lmbench3), 64 one per line";
        "preset", Choice(PRESETS), F::Name("default"), RINGS, ["--preset"],
            "how long a point may measure and how precise it must be: fast, default, rigorous";
        "repetitions", OptCount(config::REPETITIONS), F::None, RINGS, ["-N"],
            "exactly N timed repetitions, as lmbench (lat_ctx: 11); default: until --precision";
        "precision", OptReal(config::PRECISION), F::Derived("the preset's"), RINGS, ["--precision"],
            "stop a point when the 95 % interval of its median is within +-this fraction";
        "max_time", OptReal(config::MAX_TIME), F::Derived("the preset's"), RINGS, ["--max-time"],
            "seconds of measuring per point at most";
        "max_repetitions", Count(config::MAX_REPETITIONS),
            F::Int(crate::stop::DEFAULT_MAX_REPETITIONS as i64), RINGS, ["--max-repetitions"],
            "repetitions per point at most";
        "warmup", Count(config::WARMUP), F::Int(1), &[Ring, Matrix], ["-W"],
            "warm-up repetitions before timing";
        "parallel", Count(config::PARALLEL), F::Int(1), &[Ring], ["-P"],
            "independent rings at once";
        "placement", Placement, F::Name("default"), &[Ring, Pingpong], ["--placement"],
            "default, single, spread, balanced, or a CPU list 0,1";
        "placement", Placement, F::Name("single"), &[Cache], ["--placement"],
            "default, single, spread, balanced, or a CPU list 0,1";
        "cpu", Cpu, F::None, PLACED, ["--cpu"],
            "the CPU for placement single (default: the first allowed)";
        "min_time", OptReal(config::MIN_TIME),
            F::Derived("0.002 until precise, 0.05 with a fixed count"), MEASURING, ["--min-time"],
            "seconds per timed repetition";
        "timeout", Real(config::TIMEOUT), F::Real(config::DEFAULT_TIMEOUT), MEASURING,
            ["--timeout"],
            "seconds without progress before a ring counts as hung";
        "record_hops", Switch, F::Switch(false), &[Ring, Pingpong, Matrix], ["--record-hops"],
            "record every hop's wake-to-run latency";
        "counters", Choice(COUNTERS), F::Name("evidence"), RINGS, ["--counters"],
            "who watches the timed repetitions: evidence, off, or timed (perf through them)";
        "policy", OptChoice(POLICIES), F::Derived("as inherited from the caller"), RINGS,
            ["--policy"],
            "scheduling policy of every participant and driver: other, batch, idle, fifo, rr, \
             deadline";
        "priority", OptCount(sched::ANY_PRIORITY), F::Derived("1 for fifo and rr, else 0"), RINGS,
            ["--priority"], "static priority for policy fifo or rr, 1 to 99";
        "nice", OptInt(sched::NICE), F::Derived("0 where a policy is named, else inherited"), RINGS,
            ["--nice"], "nice for policy other or batch (alone: policy other), -20 to 19";
        "dl_runtime_us", OptCount(sched::DL_RUNTIME_US),
            F::Derived("200 with policy deadline"), TIMED_ALONE, ["--dl-runtime"],
            "policy deadline: µs of CPU each task may use per period";
        "dl_deadline_us", OptCount(sched::DL_DEADLINE_US), F::Derived("the period"), TIMED_ALONE,
            ["--dl-deadline"],
            "policy deadline: µs after each period's start by which the runtime is due";
        "dl_period_us", OptCount(sched::DL_PERIOD_US),
            F::Derived("1000 with policy deadline"), TIMED_ALONE, ["--dl-period"],
            "policy deadline: µs of each period";
        "cgroups", OptChoice(CGROUPS), F::None, CGROUPED, ["--cgroups"],
            "participants in fresh cgroups with the cpu controller: same (one leaf) or split \
             (one each)";
        "cgroup_depth", Count(crate::cgroups::DEPTH), F::Int(1), CGROUPED, ["--cgroup-depth"],
            "how many groups deep each leaf sits under ctxbench's own group";
        "cgroup_weight", OptCount(crate::cgroups::WEIGHT), F::None, CGROUPED, ["--cgroup-weight"],
            "cpu.weight of every group made (v1: cpu.shares = weight x 1024 / 100)";
        "interference", Interference, F::None, &[Ring, Pingpong], ["--interference"],
            "neighbours on the measured CPUs, as key=number pairs";
        "history", History, F::None, &[Ring, Pingpong], [],
            "earlier runs of each point on this machine";
        "per_class", OptCount(config::PER_CLASS), F::None, &[Matrix], ["--per-class"],
            "cells per class of CPU pairs (default: every pair within the time budget, else \
             as many per class as it holds)";
        "full", Switch, F::Switch(false), &[Matrix], ["--full"],
            "every ordered pair of CPUs, whatever it takes";
        "passes", Count(config::PASSES), F::Int(1), &[Matrix], ["--passes"],
            "passes over the cells, every other one backwards";
        "memory_node", Memory, F::Derived("the waker's node"), &[Matrix], ["--memory-node"],
            "where a cell's shared memory lives: waker, wakee or a node id";
        "rounds", Count(config::ROUNDS), F::Int(crate::cache::DEFAULT_ROUNDS as i64), &[Cache],
            ["--rounds"], "rounds over every size, one block each";
        "line_bytes", OptCount(LINE_BYTES),
            F::Derived("the CPUs' cache line from the host's sysfs, else 64"), &[Cache], ["--line-bytes"],
            "bytes per cache line, for the refill rate";
        "stream_kb", OptCount(config::STREAM_KB),
            F::Derived("4 x the largest cache share, 64 MiB at least, within the memory budget"),
            &[Cache], ["--stream-kb"],
            "KiB of the streaming read measured beside the rings";
        "budget", Real(BUDGET), F::Real(DEFAULT_BUDGET_S), &[Ab], ["--budget"],
            "seconds to measure at most";
        "threshold", Real(THRESHOLD), F::Real(DEFAULT_THRESHOLD), &[Ab], ["--threshold"],
            "a change within +-this fraction, shown to be, is no change";
        "seed", OptCount(SEED), F::Derived("from the clock"), &[Ab], ["--seed"],
            "the seed of the sides' order in each round";
        "detect", Real(DETECT), F::Real(DEFAULT_DETECT), &[Plan], ["--detect"],
            "the change to tell, e.g. 5%";
        "procs", Counts, F::Ints(&[2, 4, 8, 16, 20]), &[Plan], [],
            "participant counts (lat_ctx's classic sweep)";
        "pilot", Count(PILOT), F::Int(0), &[Plan], ["--pilot"],
            "first measure N runs of each point with too few in the history";
        "power", Real(POWER), F::Real(DEFAULT_POWER), &[Plan], ["--power"],
            "the probability of telling the change, e.g. 90%";
    }
};

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
}
