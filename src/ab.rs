//! A against B until the data decide: rounds of one fresh ring instance per side, the two
//! in a fresh random order each round (randomized multiple interleaved trials: Abedi & Brecht,
//! "Conducting repeatable experiments in highly variable cloud computing environments",
//! ICPE 2017), the log ratio B/A of each round's figures, and an anytime-valid interval for
//! their mean (`sequential`), read after every round: the run stops as soon as it says
//! slower, faster or no change (`verdict::change`), or when the time budget ends. Pairing the
//! two sides in a round cancels the host's drift over seconds; stopping on a confidence
//! sequence keeps the error rate however early it stops.

use crate::config::Config;
use crate::error::{Error, Limit, Result};
use crate::ring::{self, Interrupt};
use crate::stats;
use crate::stats::sequential::{self, Interval};
use crate::stop::{BLOCK_REPETITIONS, CONFIDENCE};
use crate::verdict::{self, Change};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;
use std::time::Instant;

/// Blocks of `BLOCK_REPETITIONS` repetitions each side's instance measures per round: the
/// fewest a precision-mode instance measures.
pub const ROUND_BLOCKS: usize = 2;
/// Rounds at most, whatever the budget: far beyond what a decision takes.
pub const MAX_ROUNDS: usize = 100_000;
/// Seconds an A/B run measures at most by default, and its range.
pub const DEFAULT_BUDGET_S: f64 = 30.0;
pub const BUDGET: Limit<f64> = Limit::above("budget", 0.0, 86_400.0).in_unit(" seconds");
/// The practical threshold of an A/B verdict by default: a change within ±2 % is no change.
pub const DEFAULT_THRESHOLD: f64 = crate::stop::DEFAULT_PRECISION;
pub const THRESHOLD: Limit<f64> =
    Limit::between("threshold", 0.0, 0.99).in_unit(" (a fraction of the figure)");
pub const SEED: Limit<u64> = Limit::between("seed", 0, u64::MAX);

/// The seed of the sides' order: the one given, else the clock's nanoseconds (a different
/// order each run).
pub fn seed(given: Option<u64>) -> u64 {
    given.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos() as u64 ^ d.as_secs())
    })
}

/// How long and against what: seconds at most, the practical threshold of the verdict, and
/// the seed of the sides' order.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub budget_s: f64,
    pub threshold: f64,
    pub seed: u64,
}

/// One round: each side's figure (µs per switch, the median of its instance's net samples),
/// which side ran first, and when the round ended (seconds since the start).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Round {
    pub a_us: f64,
    pub b_us: f64,
    pub a_first: bool,
    pub end_s: f64,
    /// Context switches per hop each side made (NaN where not measured: a replay).
    pub a_switches: f64,
    pub b_switches: f64,
}

/// Why the rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The interval decided slower, faster or no change.
    Decided,
    /// The next round would have ended past the budget.
    Budget,
    /// A round had a figure at or below 0: below what the method resolves.
    BelowResolution,
    /// `MAX_ROUNDS` rounds.
    MaxRounds,
    /// A replay's rounds ran out.
    NoMoreRounds,
    /// A CPU quota throttled a side's groups in a round (restriction `cpu_quota`): its
    /// figures hold the throttle's stalls, not a switch's cost, so the round is not kept,
    /// and the run stops there, undecided (going on would keep the rounds the quota spared).
    Throttled,
}

impl Stopped {
    pub const NAMES: [&'static str; 6] = [
        "decided",
        "budget",
        "below resolution",
        "max rounds",
        "no more rounds",
        "throttled",
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Stopped::Decided => Self::NAMES[0],
            Stopped::Budget => Self::NAMES[1],
            Stopped::BelowResolution => Self::NAMES[2],
            Stopped::MaxRounds => Self::NAMES[3],
            Stopped::NoMoreRounds => Self::NAMES[4],
            Stopped::Throttled => Self::NAMES[5],
        }
    }
}
serialize_as_word!(Stopped);

/// What the rounds show: B / A with its anytime-valid interval, the word, and whether the
/// interval decided it (else the budget ended first). Reported (`replay_columns`) with its
/// rounds counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    #[serde(serialize_with = "counted")]
    pub rounds: Vec<Round>,
    pub ratio: f64,
    #[serde(rename = "ratio_low")]
    pub low: f64,
    #[serde(rename = "ratio_high")]
    pub high: f64,
    #[serde(rename = "verdict")]
    pub change: Change,
    pub decided: bool,
    pub stopped: Stopped,
    pub elapsed_s: f64,
    /// Where undecided: how many times the rounds so far a decision would take if the ratio
    /// stayed (the interval narrowing about as 1/√ rounds); NaN otherwise or where none would.
    pub data_factor: f64,
}

fn counted<S: serde::Serializer>(rounds: &[Round], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_u64(rounds.len() as u64)
}

/// The word for the log ratios so far at ± `threshold`, and the interval behind it.
pub fn decide(log_ratios: &[f64], threshold: f64) -> (Change, Interval) {
    let i = sequential::interval(log_ratios, 1.0 - CONFIDENCE);
    let bounds = (i.low.exp(), i.high.exp());
    (verdict::change(i.mean.exp(), bounds, bounds, threshold), i)
}

/// Runs rounds of `a` and `b` (each a configuration of one participant count) under `plan`.
/// `round` hears of each round with the interval after it; its error stops the run.
pub fn run(
    a: &Config,
    b: &Config,
    plan: &Plan,
    interrupt: Interrupt,
    round: &mut dyn FnMut(&Round, &Interval) -> Result<()>,
) -> Result<Outcome> {
    for (side, cfg) in [("a", a), ("b", b)] {
        if cfg.procs.len() != 1 {
            return Err(Error::invalid(
                side,
                format!("must name one participant count, got {:?}", cfg.procs),
            ));
        }
        ring::check(cfg)?;
    }
    let mut rng = SmallRng::seed_from_u64(plan.seed);
    let start = Instant::now();
    let mut throttled = false;
    let mut next = || -> Result<Option<Round>> {
        let a_first = rng.random::<bool>();
        let ((a_us, a_switches, a_stalled), (b_us, b_switches, b_stalled)) = if a_first {
            let x = figure(a, interrupt)?;
            (x, figure(b, interrupt)?)
        } else {
            let y = figure(b, interrupt)?;
            (figure(a, interrupt)?, y)
        };
        if a_stalled || b_stalled {
            throttled = true;
            return Ok(None);
        }
        let end_s = start.elapsed().as_secs_f64();
        Ok(Some(Round {
            a_us,
            b_us,
            a_first,
            end_s,
            a_switches,
            b_switches,
        }))
    };
    let mut out = drive(plan, &mut next, round)?;
    out.elapsed_s = start.elapsed().as_secs_f64();
    if throttled {
        out.stopped = Stopped::Throttled;
    }
    Ok(out)
}

/// What `run` would have said of rounds already measured (each `end_s` as `run` records
/// it), under `plan`: the same rule stops at the same round, so that the error and power of
/// the procedure can be studied on rounds resampled from real runs. Stops, undecided, where
/// the rounds run out before the budget.
/// `replay` of rounds given as columns (each round's µs of A and of B, and the seconds
/// since the start at its end), under `budget` and `threshold`, each checked.
pub fn replay_columns(
    a_us: &[f64],
    b_us: &[f64],
    end_s: &[f64],
    budget_s: f64,
    threshold: f64,
) -> Result<Outcome> {
    let n = a_us.len();
    if b_us.len() != n || end_s.len() != n {
        return Err(Error::invalid(
            "a_us, b_us, end_s",
            format!(
                "one entry per round each, got {n}, {} and {}",
                b_us.len(),
                end_s.len()
            ),
        ));
    }
    for (name, xs) in [("a_us", a_us), ("b_us", b_us), ("end_s", end_s)] {
        if xs.iter().any(|x| !x.is_finite()) {
            return Err(Error::invalid(name, "must be finite"));
        }
    }
    let plan = Plan {
        budget_s: BUDGET.check(budget_s)?,
        threshold: THRESHOLD.check(threshold)?,
        seed: 0,
    };
    let rounds: Vec<Round> = (0..n)
        .map(|k| Round {
            a_us: a_us[k],
            b_us: b_us[k],
            a_first: false,
            end_s: end_s[k],
            a_switches: f64::NAN,
            b_switches: f64::NAN,
        })
        .collect();
    Ok(replay(&rounds, &plan))
}

pub fn replay(rounds: &[Round], plan: &Plan) -> Outcome {
    let mut given = rounds.iter().copied();
    let mut next = || -> Result<Option<Round>> { Ok(given.next()) };
    drive(plan, &mut next, &mut |_, _| Ok(())).expect("replayed rounds cannot fail")
}

/// The stopping rule: a round at a time from `next` (None: no more), the interval after
/// each, until it decides, the next round would end past the budget (at the pace so far),
/// a round is below resolution, or `MAX_ROUNDS`.
fn drive(
    plan: &Plan,
    next: &mut dyn FnMut() -> Result<Option<Round>>,
    heard: &mut dyn FnMut(&Round, &Interval) -> Result<()>,
) -> Result<Outcome> {
    let (mut rounds, mut logs) = (Vec::new(), Vec::new());
    let (mut change, mut interval) = decide(&[], plan.threshold);
    let mut stopped = Stopped::MaxRounds;
    while rounds.len() < MAX_ROUNDS {
        let Some(r) = next()? else {
            stopped = Stopped::NoMoreRounds;
            break;
        };
        rounds.push(r);
        // A round whose figure is not above 0 (its overhead repetitions were preempted more
        // than its ring's, or the switch is below what the method resolves) has no ratio.
        // Leaving such rounds out would keep those where the ring happened to run slow, a
        // selection that biases the ratio; so the run stops there, undecided.
        if !(r.a_us > 0.0 && r.b_us > 0.0) {
            change = Change::Inconclusive;
            stopped = Stopped::BelowResolution;
            break;
        }
        logs.push((r.b_us / r.a_us).ln());
        (change, interval) = decide(&logs, plan.threshold);
        heard(&r, &interval)?;
        let per_round = r.end_s / rounds.len() as f64;
        if change != Change::Inconclusive {
            stopped = Stopped::Decided;
            break;
        }
        if r.end_s + per_round > plan.budget_s {
            stopped = Stopped::Budget;
            break;
        }
    }
    Ok(outcome(rounds, change, interval, stopped, plan))
}

fn outcome(
    rounds: Vec<Round>,
    change: Change,
    i: Interval,
    stopped: Stopped,
    plan: &Plan,
) -> Outcome {
    let decided = change != Change::Inconclusive;
    let needed = verdict::needed_half_width(i.mean.exp(), plan.threshold, 1.0);
    let half = i.half_width();
    let data_factor = if !decided && needed > 0.0 && half.is_finite() {
        (half / needed).powi(2)
    } else {
        f64::NAN
    };
    Outcome {
        elapsed_s: rounds.last().map_or(0.0, |r| r.end_s),
        rounds,
        ratio: i.mean.exp(),
        low: i.low.exp(),
        high: i.high.exp(),
        change,
        decided,
        stopped,
        data_factor,
    }
}

/// A side's figure in one round (µs per hop, the net median of a fresh ring instance of
/// `ROUND_BLOCKS` blocks), the switches per hop it made, and whether a CPU quota throttled
/// its groups while it was timed (as a ring point is flagged: `ring::Point::throttled`).
fn figure(cfg: &Config, interrupt: Interrupt) -> Result<(f64, f64, bool)> {
    let p = ring::instance(cfg, ROUND_BLOCKS, interrupt)?;
    debug_assert_eq!(p.raw_ns.len(), ROUND_BLOCKS * BLOCK_REPETITIONS);
    Ok((
        stats::median(&p.net_ns()) / 1000.0,
        crate::result::per_hop(&p).0,
        p.throttled.is_some_and(|n| n > 0),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::TransportKind;
    use crate::placement::Placement;
    use crate::stop::{Precision, Stop};

    fn pinned(procs: usize, transport: TransportKind) -> Config {
        Config {
            procs: vec![procs],
            transport,
            placement: Placement::Single(None),
            stop: Stop::Precise(Precision {
                target: 0.02,
                max_repetitions: 400,
                max_time: 1.0,
            }),
            min_time: 0.001,
            ..Config::lat_ctx(vec![2])
        }
    }

    #[test]
    fn decide_says_no_word_before_the_interval_is_finite() {
        let (c, i) = decide(&[0.1, 0.1, 0.1], 0.02);
        assert_eq!(c, Change::Inconclusive);
        assert!(i.half_width().is_infinite() || i.half_width().is_nan());
        // Twenty rounds at +10 % with ±1 % scatter: slower.
        let logs: Vec<f64> = (0..20)
            .map(|k| 1.1f64.ln() + 0.01 * ((k % 5) as f64 - 2.0))
            .collect();
        assert_eq!(decide(&logs, 0.02).0, Change::Slower);
        let flat: Vec<f64> = (0..40).map(|k| 0.002 * ((k % 5) as f64 - 2.0)).collect();
        assert_eq!(decide(&flat, 0.02).0, Change::NoChange);
    }

    #[test]
    fn a_budget_bounds_the_rounds_and_every_round_is_paired() {
        let a = pinned(2, TransportKind::Pipe);
        let plan = Plan {
            budget_s: 0.3,
            threshold: 0.02,
            seed: 3,
        };
        let mut heard = 0;
        let out = run(&a, &a, &plan, &mut || false, &mut |_, _| {
            heard += 1;
            Ok(())
        })
        .unwrap();
        // Every round is heard but one whose figure is not above 0, which stops the run
        // (an A/A pair's net figure on a loaded machine: seen at load 11).
        let unheard = usize::from(out.stopped == Stopped::BelowResolution);
        assert!(!out.rounds.is_empty() && heard + unheard == out.rounds.len());
        assert_eq!(out.decided, out.change != Change::Inconclusive);
        // No round starts that the budget cannot hold, by the rounds' pace so far: the last
        // round began (where the one before it ended) inside the budget. Said of the rounds'
        // own stamps, not of the time after them, which a loaded machine can stretch.
        let n = out.rounds.len();
        assert!(n == 1 || out.rounds[n - 2].end_s <= plan.budget_s);
        assert!(out.elapsed_s >= out.rounds[n - 1].end_s);
    }

    #[test]
    fn a_plain_difference_is_decided_and_the_order_is_random() {
        // A ring of eight on one CPU costs more per switch than one of two (about 1.6x
        // here): a woken participant preempts its waker, which runs again only to block.
        let a = pinned(2, TransportKind::Pipe);
        let b = pinned(8, TransportKind::Pipe);
        let plan = Plan {
            budget_s: 20.0,
            threshold: 0.02,
            seed: 5,
        };
        let out = run(&a, &b, &plan, &mut || false, &mut |_, _| Ok(())).unwrap();
        // Decided as slower on a quiet machine within seconds; a machine busy enough can
        // leave it undecided when the budget ends, but never decided the wrong way.
        assert!(
            out.change == Change::Slower || !out.decided,
            "{:?}",
            (out.change, out.ratio, out.low, out.high, out.elapsed_s)
        );
        assert!(
            out.decided || matches!(out.stopped, Stopped::Budget | Stopped::BelowResolution),
            "{:?}",
            out.stopped
        );
        let firsts = out.rounds.iter().filter(|r| r.a_first).count();
        assert!(out.rounds.len() < 12 || (firsts > 0 && firsts < out.rounds.len()));
    }

    #[test]
    fn a_replay_stops_where_the_run_would() {
        let plan = Plan {
            budget_s: 10.0,
            threshold: 0.02,
            seed: 0,
        };
        // Rounds 0.1 s apart, B 10 % above A with ±1 % scatter: decided slower well before
        // the budget, and at the same round however many rounds follow.
        let rounds: Vec<Round> = (0..30)
            .map(|k| Round {
                a_us: 10.0,
                b_us: 11.0 * (1.0 + 0.01 * ((k % 5) as f64 - 2.0)),
                a_first: k % 2 == 0,
                end_s: (k + 1) as f64 * 0.1,
                a_switches: 1.0,
                b_switches: 1.0,
            })
            .collect();
        let out = replay(&rounds, &plan);
        assert_eq!(
            (out.change, out.decided, out.stopped),
            (Change::Slower, true, Stopped::Decided)
        );
        assert!(out.rounds.len() < 30);
        // Debug text: NaN (no data factor once decided) is equal to itself there.
        let again = replay(&rounds[..out.rounds.len()], &plan);
        assert_eq!(format!("{again:?}"), format!("{out:?}"));
        assert_eq!(out.elapsed_s, out.rounds.last().unwrap().end_s);
        // ±2.5 % scatter, 1 s a round and a 5 s budget: five rounds (too few for a finite
        // interval), and a sixth would end past the budget.
        let flat: Vec<Round> = (0..30)
            .map(|k| Round {
                end_s: (k + 1) as f64,
                b_us: 10.0 * (1.0 + 0.05 * ((k % 2) as f64 - 0.5)),
                ..rounds[0]
            })
            .collect();
        let budget = Plan {
            budget_s: 5.0,
            ..plan
        };
        let out = replay(&flat, &budget);
        assert_eq!(
            (out.rounds.len(), out.decided, out.stopped),
            (5, false, Stopped::Budget)
        );
        let none = replay(&[], &plan);
        assert!(none.rounds.is_empty() && none.stopped == Stopped::NoMoreRounds);
        // A round below resolution: stopped for it, at once, whatever the budget.
        let low: Vec<Round> = (0..30)
            .map(|k| Round {
                a_us: -0.1,
                ..flat[k]
            })
            .collect();
        let out = replay(&low, &plan);
        assert_eq!(
            (out.rounds.len(), out.stopped, out.decided),
            (1, Stopped::BelowResolution, false)
        );
        // Rounds dropped where their figure is not above 0 would bias the ratio: one such
        // round among decisive ones ends the run undecided where it stands.
        let mut mixed: Vec<Round> = (0..30)
            .map(|k| Round {
                b_us: 2.0 * flat[k].a_us,
                ..flat[k]
            })
            .collect();
        mixed[2].b_us = -0.1;
        let out = replay(&mixed, &plan);
        assert_eq!(
            (out.rounds.len(), out.stopped),
            (3, Stopped::BelowResolution)
        );
        assert_eq!(out.change, Change::Inconclusive);
    }

    #[test]
    fn a_side_of_several_counts_is_refused() {
        let a = Config {
            procs: vec![2, 4],
            ..pinned(2, TransportKind::Pipe)
        };
        let plan = Plan {
            budget_s: 1.0,
            threshold: 0.02,
            seed: 1,
        };
        let e = run(&a, &a, &plan, &mut || false, &mut |_, _| Ok(())).unwrap_err();
        assert!(e.to_string().contains("one participant count"), "{e}");
    }
}
