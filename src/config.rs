//! What a run is — engine, transport, placement, sizes, repetitions — as the core measures
//! it (`Config`, resolved from a `request::Request`), and the one home of every limit on
//! them: the request's parameter table names these `Limit`s, so a range is written once.

use crate::cgroups::Cgroups;
use crate::engine::{self, Engine, TransportKind};
use crate::error::{Error, Limit, Result};
use crate::observer::Observer;
use crate::placement::Placement;
use crate::sched::{self, Sched};
use crate::stats::RunLevel;
use crate::stop::{Stop, BLOCK_REPETITIONS, MIN_BLOCKS};
use crate::workload::Shape;

/// lmbench3 allows 2048; beyond this a ring is a fork bomb, not a benchmark. Also the limit
/// on procs × parallel.
pub const PROCS: Limit<u64> = Limit::between("procs", 2, 100_000);
pub use crate::workload::SIZE_KB;
/// A cache sweep's streaming read: one array of the workload's, so at most a participant's.
pub const STREAM_KB: Limit<u64> =
    Limit::between("stream_kb", 1, crate::workload::MAX_SIZE_KB as u64);
/// Bytes per cache line, for the refill rate of a cache sweep, and the line assumed where
/// the CPUs' is not known.
pub const LINE_BYTES: Limit<u64> = Limit::between("line_bytes", 8, 4096);
pub const DEFAULT_LINE_BYTES: usize = 64;
pub const REPETITIONS: Limit<u64> = Limit::between("repetitions", 1, 10_000);
/// Precision mode's cap on repetitions: at least the blocks an interval needs.
pub const MAX_REPETITIONS: Limit<u64> = Limit::between(
    "max_repetitions",
    (BLOCK_REPETITIONS * MIN_BLOCKS) as u64,
    REPETITIONS.hi,
);
pub const WARMUP: Limit<u64> = Limit::between("warmup", 0, 1_000);
pub const PARALLEL: Limit<u64> = Limit::between("parallel", 1, 1_024);
/// Round trips of a ping-pong run.
pub const LOOPS: Limit<u64> = Limit::between("loops", 1, 10_000_000_000);
/// The CPU matrix: cells per relation class, and passes over the cells.
pub const PER_CLASS: Limit<u64> = Limit::between("per_class", 1, 100_000);
pub const PASSES: Limit<u64> = Limit::between("passes", 1, 1_000);
/// A cache sweep's rounds: the interval's blocks (fewer than 2 has no interval).
pub const ROUNDS: Limit<u64> = Limit::between("rounds", 2, 1_000);
/// Seconds per timed repetition.
pub const MIN_TIME: Limit<f64> = Limit::above("min_time", 0.0, 60.0).in_unit(" seconds");
/// Seconds without progress before a ring counts as hung.
pub const TIMEOUT: Limit<f64> = Limit::between("timeout", 0.1, 3600.0).in_unit(" seconds");
/// Precision mode: the relative half-width of the interval asked for.
pub const PRECISION: Limit<f64> =
    Limit::above("precision", 0.0, 0.5).in_unit(" (a fraction of the median)");
/// Precision mode: seconds of measuring per point.
pub const MAX_TIME: Limit<f64> = Limit::above("max_time", 0.0, 3600.0).in_unit(" seconds");
pub const MAX_PROCS: usize = PROCS.hi as usize;
/// Process counts one run may name: far beyond any sweep, and a bound on reading a
/// caller's iterator.
pub const MAX_POINTS: usize = 10_000;

pub const DEFAULT_TIMEOUT: f64 = 10.0;

#[derive(Debug, Clone)]
pub struct Config {
    pub engine: Engine,
    pub transport: TransportKind,
    pub procs: Vec<usize>,
    pub size_kb: usize,
    /// Bytes between two words each participant sums (`workload::Shape`).
    pub stride_bytes: usize,
    /// When a point has measured enough.
    pub stop: Stop,
    pub warmup: usize,
    pub parallel: usize,
    pub placement: Placement,
    /// Seconds each timed repetition should last.
    pub min_time: f64,
    /// Seconds without progress after which a ring counts as hung.
    pub timeout: f64,
    pub plan: Plan,
    /// Record every hop's wake-to-run latency during the timed repetitions.
    pub record_hops: bool,
    /// What earlier runs of each point on this machine showed of the spread between runs,
    /// one entry per count in `procs` (empty: nothing known). Widens the interval and stops
    /// a point that measuring longer could not make more precise (`stop::decide`).
    pub run_levels: Vec<Option<RunLevel>>,
    /// Who watches the timed windows (perf counters stay out of them by default).
    pub observer: Observer,
    /// The scheduling policy of every participant and driver; None: as they inherit it.
    pub sched: Option<Sched>,
    /// The cgroups every participant is placed in, if any.
    pub cgroups: Option<Cgroups>,
    /// Neighbours started on the measured CPUs before each ring instance, if any.
    pub interference: Option<crate::interference::Interference>,
}

/// How many trips a timed repetition makes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Plan {
    /// Calibrated so a repetition lasts `min_time`; with `overhead`, an overhead repetition
    /// after each block, subtracted (lat_ctx), without, raw times (a ping-pong, as perf's).
    Calibrated { overhead: bool },
    /// Exactly this many trips and no overhead measurement: `perf bench sched pipe`'s loop.
    Fixed(u64),
}

impl Config {
    /// The run level of the `j`-th count in `procs`, if earlier runs showed one.
    pub fn run_level(&self, j: usize) -> Option<&RunLevel> {
        self.run_levels.get(j).and_then(Option::as_ref)
    }

    /// Each participant's array, checked.
    pub fn shape(&self) -> Result<Shape> {
        let shape = Shape::new(self.size_kb, self.stride_bytes)?;
        #[cfg(test)]
        if NEVER_WRITTEN.get() {
            return Ok(shape.never_written());
        }
        Ok(shape)
    }

    /// The rules between a run's values, each value already in its range (the request
    /// parsed it, and `Shape::new` guards the working set's arithmetic where a run builds
    /// it): the engine and transport go together, one run level per count, procs x
    /// parallel, the policy and cgroups with the rest. Nothing here
    /// reads the host: `ring::check` does, before a run.
    pub fn validate(&self) -> Result<()> {
        engine::check_combination(self.engine, self.transport)?;
        self.check_run_levels()?;
        let max_procs = self.procs.iter().max().copied().unwrap_or(0);
        if max_procs.saturating_mul(self.parallel) > MAX_PROCS {
            return Err(Error::invalid(
                "parallel",
                format!("procs x parallel must be at most {MAX_PROCS}"),
            ));
        }
        if let Some(s) = &self.sched {
            sched::check_run(s, self.transport, &self.placement)?;
        }
        if let Some(cg) = &self.cgroups {
            crate::cgroups::check(cg, self.engine, self.parallel, max_procs)?;
        }
        Ok(())
    }
}

impl Config {
    /// The run levels known: none, or one per count in `procs`.
    pub fn check_run_levels(&self) -> Result<()> {
        if !self.run_levels.is_empty() && self.run_levels.len() != self.procs.len() {
            return Err(Error::invalid(
                "history",
                format!(
                    "must hold one entry per count in procs ({}), got {}",
                    self.procs.len(),
                    self.run_levels.len()
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
thread_local! {
    /// Test-only: rings started from this thread get arrays that are never written
    /// (`Shape::never_written`), to force the zero-page case end to end.
    pub static NEVER_WRITTEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
impl Config {
    /// Test-only: lmbench's ring (`Config::lat_ctx`) at 3 repetitions of 5 ms, what the
    /// core's tests measure with.
    pub fn quick(procs: Vec<usize>) -> Config {
        Config {
            min_time: 0.005,
            stop: Stop::Fixed(3),
            ..Config::lat_ctx(procs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules between values; each value's own range is the request's
    /// (`request::tests::every_range_is_checked_as_the_value_is_given`).
    #[test]
    fn bad_input_names_the_parameter() {
        let bad = |cfg: Config, param: &str| match cfg.validate() {
            Err(Error::Invalid { param: p, .. }) => assert_eq!(p, param),
            other => panic!("expected {param} error, got {other:?}"),
        };
        bad(
            Config {
                parallel: 1024,
                ..Config::quick(vec![100_000])
            },
            "parallel",
        );
        let huge = Config {
            size_kb: usize::MAX,
            ..Config::quick(vec![2])
        };
        assert!(huge
            .shape()
            .unwrap_err()
            .to_string()
            .starts_with("size_kb:"));
        bad(
            Config {
                engine: Engine::Fiber,
                ..Config::quick(vec![2])
            },
            "transport",
        );
        assert!(Config::quick(vec![2, 100_000]).validate().is_ok());
    }

    #[test]
    fn limits_name_the_range_and_reject_negatives() {
        assert_eq!(WARMUP.count(0).unwrap(), 0);
        assert_eq!(PROCS.count(100_000).unwrap(), 100_000);
        let e = SIZE_KB.count(-1).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("size_kb: must be between 0 and {}, got -1", SIZE_KB.hi)
        );
        assert!(PROCS.count(1).is_err());
        assert!(LOOPS.check(0).is_err());
        let message = |limit: Limit<f64>, x: f64| limit.check(x).unwrap_err().to_string();
        assert_eq!(
            message(MIN_TIME, 0.0),
            "min_time: must be > 0 and <= 60 seconds, got 0"
        );
        assert_eq!(
            message(TIMEOUT, 0.05),
            "timeout: must be between 0.1 and 3600 seconds, got 0.05"
        );
        assert!(message(PRECISION, f64::NAN).ends_with("(a fraction of the median), got NaN"));
        assert_eq!(MAX_TIME.check(3600.0).unwrap(), 3600.0);
        assert_eq!(TIMEOUT.check(0.1).unwrap(), 0.1);
    }
}
