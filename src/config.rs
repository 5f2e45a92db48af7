//! What a run is — engine, transport, placement, sizes, repetitions — and the one home of
//! every limit on them. The Python binding converts its arguments with the same `Limit`s, so
//! a range is written once.

use crate::engine::{self, Engine, TransportKind};
use crate::error::{Error, Result};
use crate::placement::Placement;
use crate::stats::RunLevel;
use crate::stop::{Stop, BLOCK_REPETITIONS, MIN_BLOCKS};
use crate::workload::{Shape, DEFAULT_STRIDE_BYTES, MAX_SIZE_KB};

/// The allowed range of one integer parameter.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub param: &'static str,
    pub lo: u64,
    pub hi: u64,
}

impl Limit {
    /// `value` if it lies in the range, else an error naming the parameter and the range.
    pub fn check(&self, value: u64) -> Result<u64> {
        if (self.lo..=self.hi).contains(&value) {
            Ok(value)
        } else {
            Err(self.outside(value))
        }
    }

    /// The same for a signed value as a caller typed it (a negative one is outside too).
    pub fn count(&self, value: i64) -> Result<usize> {
        match u64::try_from(value) {
            Ok(v) => self.check(v).map(|v| v as usize),
            Err(_) => Err(self.outside(value)),
        }
    }

    fn outside(&self, value: impl std::fmt::Display) -> Error {
        Error::invalid(
            self.param,
            format!("must be between {} and {}, got {value}", self.lo, self.hi),
        )
    }
}

/// lmbench3 allows 2048; beyond this a ring is a fork bomb, not a benchmark. Also the limit
/// on procs × parallel.
pub const PROCS: Limit = Limit {
    param: "procs",
    lo: 2,
    hi: 100_000,
};
pub const SIZE_KB: Limit = Limit {
    param: "size_kb",
    lo: 0,
    hi: MAX_SIZE_KB as u64,
};
pub const REPETITIONS: Limit = Limit {
    param: "repetitions",
    lo: 1,
    hi: 10_000,
};
pub const WARMUP: Limit = Limit {
    param: "warmup",
    lo: 0,
    hi: 1_000,
};
pub const PARALLEL: Limit = Limit {
    param: "parallel",
    lo: 1,
    hi: 1_024,
};
/// Round trips of a ping-pong run.
pub const LOOPS: Limit = Limit {
    param: "loops",
    lo: 1,
    hi: 10_000_000_000,
};
/// Resume+suspend pairs of the bare-coroutine baseline the fiber engine is compared with.
pub const BASELINE_PAIRS: Limit = Limit {
    param: "pairs",
    lo: 1,
    hi: 1 << 40,
};
pub const MAX_PROCS: usize = PROCS.hi as usize;

/// Seconds per timed repetition: (lower bound exclusive, upper bound inclusive).
pub const MIN_TIME_S: (f64, f64) = (0.0, 60.0);
/// Seconds without progress before a ring counts as hung.
pub const TIMEOUT_S: (f64, f64) = (0.1, 3600.0);

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
}

/// Seconds of measuring per point in precision mode.
pub const MAX_TIME_S: (f64, f64) = (0.0, 3600.0);
/// Relative half-width: (lower bound exclusive, upper bound inclusive).
pub const PRECISION_RANGE: (f64, f64) = (0.0, 0.5);

/// The stopping rule's parameters, each in its range.
fn validate_stop(stop: &Stop) -> Result<()> {
    match *stop {
        Stop::Repetitions(n) => REPETITIONS.check(n as u64).map(drop),
        Stop::Precision {
            target,
            max_repetitions,
            max_time,
        } => {
            let (lo, hi) = PRECISION_RANGE;
            if !(target > lo && target <= hi) {
                return Err(Error::invalid(
                    "precision",
                    format!("must be > {lo} and <= {hi} (a fraction of the median), got {target}"),
                ));
            }
            let floor = (BLOCK_REPETITIONS * MIN_BLOCKS) as u64;
            Limit {
                param: "max_repetitions",
                lo: floor,
                ..REPETITIONS
            }
            .check(max_repetitions as u64)?;
            let (lo, hi) = MAX_TIME_S;
            if !(max_time > lo && max_time <= hi) {
                return Err(Error::invalid(
                    "max_time",
                    format!("must be > {lo} and <= {hi} seconds, got {max_time}"),
                ));
            }
            Ok(())
        }
    }
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

    /// lmbench's choices: forked processes, pipes, 11 repetitions after one warm-up.
    pub fn lat_ctx(procs: Vec<usize>) -> Self {
        Config {
            engine: Engine::Process,
            transport: TransportKind::Pipe,
            procs,
            size_kb: 0,
            stride_bytes: DEFAULT_STRIDE_BYTES,
            stop: Stop::Repetitions(11),
            warmup: 1,
            parallel: 1,
            placement: Placement::Default,
            min_time: crate::stop::FIXED_MIN_TIME,
            timeout: DEFAULT_TIMEOUT,
            plan: Plan::Calibrated { overhead: true },
            record_hops: false,
            run_levels: Vec::new(),
        }
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

    pub fn validate(&self) -> Result<()> {
        engine::check_combination(self.engine, self.transport)?;
        if self.procs.is_empty() {
            return Err(Error::invalid(
                "procs",
                "must name at least one process count",
            ));
        }
        for &p in &self.procs {
            PROCS.check(p as u64)?;
        }
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
        SIZE_KB.check(self.size_kb as u64)?;
        self.shape()?;
        validate_stop(&self.stop)?;
        WARMUP.check(self.warmup as u64)?;
        PARALLEL.check(self.parallel as u64)?;
        let max_procs = self.procs.iter().max().copied().unwrap_or(0);
        if max_procs.saturating_mul(self.parallel) > MAX_PROCS {
            return Err(Error::invalid(
                "parallel",
                format!("procs x parallel must be at most {MAX_PROCS}"),
            ));
        }
        let (lo, hi) = MIN_TIME_S;
        if !(self.min_time > lo && self.min_time <= hi) {
            return Err(Error::invalid(
                "min_time",
                format!("must be > {lo} and <= {hi} seconds, got {}", self.min_time),
            ));
        }
        let (lo, hi) = TIMEOUT_S;
        if !(self.timeout >= lo && self.timeout <= hi) {
            return Err(Error::invalid(
                "timeout",
                format!(
                    "must be between {lo} and {hi} seconds, got {}",
                    self.timeout
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
mod tests {
    use super::*;

    fn quick(procs: Vec<usize>) -> Config {
        Config {
            min_time: 0.005,
            stop: Stop::Repetitions(3),
            ..Config::lat_ctx(procs)
        }
    }

    #[test]
    fn bad_input_names_the_parameter() {
        let bad = |cfg: Config, param: &str| match cfg.validate() {
            Err(Error::Invalid { param: p, .. }) => assert_eq!(p, param),
            other => panic!("expected {param} error, got {other:?}"),
        };
        bad(quick(vec![]), "procs");
        bad(quick(vec![1]), "procs");
        bad(
            Config {
                stop: Stop::Repetitions(0),
                ..quick(vec![2])
            },
            "repetitions",
        );
        let precise = |target, max_repetitions, max_time| Config {
            stop: Stop::Precision {
                target,
                max_repetitions,
                max_time,
            },
            ..quick(vec![2])
        };
        bad(precise(0.0, 100, 1.0), "precision");
        bad(precise(f64::NAN, 100, 1.0), "precision");
        bad(precise(0.01, 15, 1.0), "max_repetitions");
        bad(precise(0.01, 100, 0.0), "max_time");
        assert!(precise(0.01, 100, 1.0).validate().is_ok());
        bad(
            Config {
                parallel: 0,
                ..quick(vec![2])
            },
            "parallel",
        );
        bad(
            Config {
                parallel: 1024,
                ..quick(vec![100_000])
            },
            "parallel",
        );
        bad(
            Config {
                min_time: 0.0,
                ..quick(vec![2])
            },
            "min_time",
        );
        bad(
            Config {
                timeout: f64::NAN,
                ..quick(vec![2])
            },
            "timeout",
        );
        bad(
            Config {
                size_kb: usize::MAX,
                ..quick(vec![2])
            },
            "size_kb",
        );
        bad(
            Config {
                engine: Engine::Fiber,
                ..quick(vec![2])
            },
            "transport",
        );
        assert!(quick(vec![2, 100_000]).validate().is_ok());
    }

    #[test]
    fn limits_name_the_range_and_reject_negatives() {
        assert_eq!(WARMUP.count(0).unwrap(), 0);
        assert_eq!(PROCS.count(100_000).unwrap(), 100_000);
        let e = SIZE_KB.count(-1).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("size_kb: must be between 0 and {MAX_SIZE_KB}, got -1")
        );
        assert!(PROCS.count(1).is_err());
        assert!(LOOPS.check(0).is_err());
    }
}
