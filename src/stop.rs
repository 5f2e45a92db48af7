//! When a point has measured enough. The one home of the stopping policy: lmbench's fixed
//! repetitions, or precision mode's ring instances measured until the interval of the
//! variance model (`stats`) is as narrow as asked or a cap comes first.

use crate::error::{Error, Result};
use crate::stats::{self, Layout, RunLevel};

/// When a point has measured enough. The measuring loop reads what it needs through the
/// methods below; only `run::run` tells the two apart, once, to pick its loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// lmbench's way: exactly this many timed repetitions, each followed by an overhead
    /// repetition of its own (each a block of one).
    Fixed(usize),
    /// Precision mode: measure until the rule says so.
    Precise(Precision),
}

/// Precision mode's rule. Fresh ring instances (new participants, new pages, new places in
/// the scheduler) of blocks of `BLOCK_REPETITIONS` repetitions, one overhead repetition per
/// block, taken round-robin over the points, until the point's next-run interval
/// (`stats::Estimate::next_run_interval`) lies within ± `target` × its figure — after at
/// least `MIN_INSTANCES` instances and `MIN_BLOCKS` blocks — or, where earlier runs showed a
/// run level (`stats::RunLevel`) that alone keeps the interval wider than that, until
/// measuring longer could narrow it by little (`RUN_DOMINANCE`), or one more block would
/// pass `max_repetitions`, or the next instance would end more than halfway past `max_time`
/// seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    pub target: f64,
    pub max_repetitions: usize,
    pub max_time: f64,
}

/// Repetitions per block in precision mode (one overhead repetition per block).
pub const BLOCK_REPETITIONS: usize = 4;
/// Fewest and most blocks per ring instance in precision mode: more where starting and
/// stopping an instance costs more (many participants, a large forking parent), so that
/// measuring stays most of the time spent.
pub const INSTANCE_BLOCKS: (usize, usize) = (2, 8);
/// Blocks and instances before an interval may stop a point: with fewer, the levels above
/// the blocks are not seen at all.
pub const MIN_BLOCKS: usize = 4;
pub const MIN_INSTANCES: usize = 2;
/// The relative half-width asked for by default.
pub const DEFAULT_PRECISION: f64 = 0.02;
/// Seconds of measuring after which a point stops whatever its interval.
pub const DEFAULT_MAX_TIME: f64 = 0.2;
pub const DEFAULT_MAX_REPETITIONS: usize = 400;
/// Seconds per timed repetition in precision mode: short, because instances and blocks, not
/// long repetitions, average the machine's drift out.
pub const PRECISION_MIN_TIME: f64 = 0.002;
/// Seconds per timed repetition with a fixed count: long enough that a repetition holds
/// thousands of trips; short enough that lmbench's 11 take about a second.
pub const FIXED_MIN_TIME: f64 = 0.05;
/// The confidence of every interval a point reports and stops on.
pub const CONFIDENCE: f64 = 0.95;
/// A point whose run level alone keeps its interval wider than the precision asked stops
/// once its within-run standard error is at most this fraction of the run level's:
/// measuring on could then narrow its interval by a fifth at most (√(1 + 0.75²) = 1.25).
const RUN_DOMINANCE: f64 = 0.75;

impl Stop {
    /// Seconds per repetition when the caller names none.
    pub fn default_min_time(&self) -> f64 {
        match self {
            Stop::Fixed(_) => FIXED_MIN_TIME,
            Stop::Precise(_) => PRECISION_MIN_TIME,
        }
    }

    /// The fixed count, if it is one.
    pub fn fixed(&self) -> Option<usize> {
        match *self {
            Stop::Fixed(n) => Some(n),
            Stop::Precise(_) => None,
        }
    }

    /// The precision mode's rule, if it is one.
    pub fn rule(&self) -> Option<&Precision> {
        match self {
            Stop::Fixed(_) => None,
            Stop::Precise(rule) => Some(rule),
        }
    }

    /// An instance's blocks and repetitions per block, given the blocks precision mode gave
    /// it: a fixed count's every repetition is a block of its own.
    pub fn instance_shape(&self, blocks: usize) -> (usize, usize) {
        match *self {
            Stop::Fixed(n) => (n, 1),
            Stop::Precise(_) => (blocks, BLOCK_REPETITIONS),
        }
    }

    /// Whether an instance's blocks run back to back in one window, their overhead
    /// repetitions after them (precision mode), or each block in a window of its own with
    /// its overhead right after (lmbench's way).
    pub fn back_to_back(&self) -> bool {
        matches!(self, Stop::Precise(_))
    }

    /// How an instance that measured what it was given ended: a fixed count made it;
    /// precision mode's point is decided over its instances (`decide`).
    pub fn instance_stopped(&self) -> Stopped {
        match self {
            Stop::Fixed(_) => Stopped::Repetitions,
            Stop::Precise(_) => Stopped::Precision,
        }
    }

    /// Consecutive repetitions that form one block: the repetitions one overhead repetition
    /// stands for.
    pub fn block(&self) -> usize {
        match self {
            Stop::Fixed(_) => 1,
            Stop::Precise(_) => BLOCK_REPETITIONS,
        }
    }

    /// The precision the point is held to (the default for a fixed count, which asks none).
    pub fn target(&self) -> f64 {
        match *self {
            Stop::Fixed(_) => DEFAULT_PRECISION,
            Stop::Precise(rule) => rule.target,
        }
    }
}

/// How a point's measuring ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The fixed number of repetitions was made.
    Repetitions,
    /// The interval became as narrow as asked.
    Precision,
    /// The ceiling on repetitions came first.
    MaxRepetitions,
    /// The time cap came first.
    TimeCap,
    /// The spread between runs (the run level earlier runs showed) is most of the interval:
    /// measuring longer would not narrow it.
    RunSpread,
}

impl Stopped {
    /// Each one's name, in the enum's order.
    pub const NAMES: [&'static str; 5] = [
        "repetitions",
        "precision",
        "max_repetitions",
        "time_cap",
        "run_spread",
    ];

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Whether a point in precision mode has measured enough, given its net samples so far
/// (any unit; blocks of `BLOCK_REPETITIONS` in instances of `instance_blocks`), the run
/// level of earlier runs if known, and the seconds the point will have taken halfway
/// through its next instance. `None`: measure another instance.
pub fn decide(
    rule: &Precision,
    samples: &[f64],
    instance_blocks: &[usize],
    run: Option<&RunLevel>,
    halfway_s: f64,
) -> Option<Stopped> {
    let Precision {
        target,
        max_repetitions,
        max_time,
    } = *rule;
    let blocks: usize = instance_blocks.iter().sum();
    let enough = blocks >= MIN_BLOCKS && instance_blocks.len() >= MIN_INSTANCES;
    if enough && samples.iter().all(|x| x.is_finite()) {
        let layout = Layout {
            samples,
            block: BLOCK_REPETITIONS,
            instance_blocks,
        };
        let e = stats::estimate(&layout, run);
        if e.relative_half_width(CONFIDENCE) <= target {
            return Some(Stopped::Precision);
        }
        if let Some(run) = run {
            let t = stats::t_quantile(CONFIDENCE, e.uncertainty.df);
            let out_of_reach = t * std::f64::consts::SQRT_2 * run.sd > target;
            let within = stats::uncertainty(&layout).se;
            if out_of_reach && e.center > 0.0 && within <= RUN_DOMINANCE * run.sd * e.center {
                return Some(Stopped::RunSpread);
            }
        }
    }
    if samples.len() + BLOCK_REPETITIONS > max_repetitions {
        Some(Stopped::MaxRepetitions)
    } else if halfway_s >= max_time {
        Some(Stopped::TimeCap)
    } else {
        None
    }
}

/// Blocks for a point's next ring instance: enough that measuring takes at least twice what
/// starting, warming and stopping an instance took (`setup_s`, beside `block_s` per block),
/// within `INSTANCE_BLOCKS`; no more than the `left_s` seconds before the time cap allow,
/// nor than `left_blocks` before the ceiling on repetitions.
pub fn instance_blocks(setup_s: f64, block_s: f64, left_s: f64, left_blocks: usize) -> usize {
    let (lo, hi) = INSTANCE_BLOCKS;
    let blocks = if block_s > 0.0 {
        let wanted = (2.0 * setup_s / block_s).ceil();
        let affordable = (left_s / block_s).ceil().max(1.0);
        (wanted.min(affordable) as usize).clamp(lo, hi)
    } else {
        lo
    };
    blocks.min(left_blocks).max(1)
}

/// Blocks that still fit under `max_repetitions` after `made` blocks.
pub fn blocks_left(max_repetitions: usize, made: usize) -> usize {
    max_repetitions.saturating_sub(made * BLOCK_REPETITIONS) / BLOCK_REPETITIONS
}

/// How long a point may measure and how precise it must be, by name, the same for every
/// measurement (pyperf's `--fast` and `--rigorous`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// A quick look: ±5 %, 0.1 s per point.
    Fast,
    /// ±2 %, 0.2 s per point.
    Default,
    /// ±1 %, 2 s per point: for figures to publish, on a quiet machine.
    Rigorous,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::Fast, Preset::Default, Preset::Rigorous];

    /// The preset named `name`; a ValueError naming `preset` and the names where none is.
    pub fn parse(name: &str) -> Result<Self> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                let names = Preset::ALL.map(Preset::name);
                Error::invalid(
                    "preset",
                    format!("unknown preset {name:?}; expected one of {names:?}"),
                )
            })
    }

    pub fn name(self) -> &'static str {
        match self {
            Preset::Fast => "fast",
            Preset::Default => "default",
            Preset::Rigorous => "rigorous",
        }
    }

    /// The relative half-width a point's interval must reach.
    pub fn precision(self) -> f64 {
        match self {
            Preset::Fast => 0.05,
            Preset::Default => DEFAULT_PRECISION,
            Preset::Rigorous => 0.01,
        }
    }

    /// Seconds of measuring per point at most.
    pub fn max_time(self) -> f64 {
        match self {
            Preset::Fast => 0.1,
            Preset::Default => DEFAULT_MAX_TIME,
            Preset::Rigorous => 2.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn precise(target: f64, max_repetitions: usize, max_time: f64) -> Precision {
        Precision {
            target,
            max_repetitions,
            max_time,
        }
    }

    /// Samples of blocks at the given levels, every repetition of a block equal.
    fn blocks(levels: &[f64]) -> Vec<f64> {
        levels
            .iter()
            .flat_map(|&m| [m; BLOCK_REPETITIONS])
            .collect()
    }

    #[test]
    fn decide_waits_for_enough_instances_and_blocks_then_stops_on_the_interval() {
        let stop = precise(0.02, 400, 10.0);
        let steady = blocks(&[100.0, 100.1, 99.9, 100.0]);
        assert_eq!(
            decide(&stop, &steady, &[4], None, 0.0),
            None,
            "one instance"
        );
        assert_eq!(
            decide(&stop, &steady[..12], &[2, 1], None, 0.0),
            None,
            "three blocks"
        );
        assert_eq!(
            decide(&stop, &steady, &[2, 2], None, 0.0),
            Some(Stopped::Precision)
        );
        let drifting = blocks(&[90.0, 110.0, 100.0, 100.0]);
        assert_eq!(decide(&stop, &drifting, &[2, 2], None, 0.0), None);
        assert_eq!(
            decide(&precise(0.5, 400, 10.0), &drifting, &[2, 2], None, 0.0),
            Some(Stopped::Precision)
        );
    }

    #[test]
    fn decide_names_the_cap_that_came_first() {
        let noisy = blocks(&[50.0, 150.0, 50.0, 150.0]);
        let made = noisy.len();
        let shape = [2, 2];
        assert_eq!(
            decide(
                &precise(0.01, made + BLOCK_REPETITIONS - 1, 10.0),
                &noisy,
                &shape,
                None,
                0.0
            ),
            Some(Stopped::MaxRepetitions)
        );
        assert_eq!(
            decide(
                &precise(0.01, made + BLOCK_REPETITIONS, 10.0),
                &noisy,
                &shape,
                None,
                0.0
            ),
            None
        );
        assert_eq!(
            decide(&precise(0.01, 400, 0.5), &noisy, &shape, None, 0.6),
            Some(Stopped::TimeCap)
        );
        assert_eq!(
            decide(&precise(0.01, 400, 0.5), &noisy, &shape, None, 0.1),
            None
        );
        // A switch below the method's resolution never counts as precise.
        let below = blocks(&[-1.0; 4]);
        assert_eq!(
            decide(&precise(0.5, 400, 10.0), &below, &shape, None, 0.0),
            None
        );
    }

    #[test]
    fn instance_blocks_grow_with_the_cost_of_an_instance() {
        let (lo, hi) = INSTANCE_BLOCKS;
        // Cheap to start (2 participants): the fewest.
        assert_eq!(instance_blocks(0.004, 0.025, 1.0, 100), lo);
        // Starting costs 3 blocks' time: 6 blocks keep measuring at two thirds.
        assert_eq!(instance_blocks(0.075, 0.025, 1.0, 100), 6);
        assert_eq!(instance_blocks(10.0, 0.025, 100.0, 100), hi);
        // Near the time cap, no more than fits (but never fewer than the floor).
        assert_eq!(instance_blocks(0.075, 0.025, 0.08, 100), 4);
        assert_eq!(instance_blocks(0.075, 0.025, 0.0, 100), lo);
        assert_eq!(instance_blocks(0.01, 0.0, 1.0, 100), lo);
        // Near the ceiling on repetitions, what is left of it.
        assert_eq!(instance_blocks(0.075, 0.025, 1.0, 3), 3);
        assert_eq!(instance_blocks(0.075, 0.025, 1.0, 1), 1);
        assert_eq!(blocks_left(400, 99), 1);
        assert_eq!(blocks_left(400, 100), 0);
    }

    #[test]
    fn a_run_level_that_dominates_stops_a_point_early_and_one_that_does_not_waits() {
        let stop = precise(0.02, 400, 10.0);
        // Blocks within ±0.2 %: the run's own error is tiny.
        let samples = blocks(&[100.0, 100.2, 99.8, 100.1, 99.9, 100.0]);
        let shape = [2, 2, 2];
        let wide = RunLevel { sd: 0.05, df: 19.0 };
        assert_eq!(
            decide(&stop, &samples, &shape, Some(&wide), 0.0),
            Some(Stopped::RunSpread)
        );
        // A run level far below the run's own error changes nothing.
        let small = RunLevel {
            sd: 0.0001,
            df: 19.0,
        };
        assert_eq!(
            decide(&stop, &samples, &shape, Some(&small), 0.0),
            Some(Stopped::Precision)
        );
        // One that leaves the precision within reach does not stop a point that has not
        // reached it: the run measures on.
        let reachable = RunLevel {
            sd: 0.005,
            df: 19.0,
        };
        let wider = blocks(&[100.0, 103.0, 97.0, 102.0, 98.0, 100.0]);
        assert_eq!(decide(&stop, &wider, &shape, Some(&reachable), 0.0), None);
        let noisy = blocks(&[80.0, 120.0, 85.0, 115.0, 82.0, 118.0]);
        assert_eq!(decide(&stop, &noisy, &shape, Some(&wide), 0.0), None);
        assert_eq!(Stopped::RunSpread.as_str(), "run_spread");
    }

    #[test]
    fn a_point_that_stopped_on_precision_is_stable() {
        let stop = precise(0.02, 400, 10.0);
        let samples = blocks(&[100.0, 100.5, 99.5, 100.2, 99.8, 100.1]);
        let shape = [2, 2, 2];
        assert_eq!(
            decide(&stop, &samples, &shape, None, 0.0),
            Some(Stopped::Precision)
        );
        let e = stats::estimate(
            &Layout {
                samples: &samples,
                block: BLOCK_REPETITIONS,
                instance_blocks: &shape,
            },
            None,
        );
        assert_eq!(
            crate::verdict::verdict(&e, Stop::Precise(stop).target(), 1),
            crate::verdict::Verdict::Stable
        );
    }
}
