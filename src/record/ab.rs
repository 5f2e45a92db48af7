//! An A/B run's record: both sides as asked, every round, and the word with the interval
//! behind it.

use super::RingConfigRecord;
use crate::ab::Outcome;
use crate::request::AbRequest;
use serde::Serialize;

/// What one side was asked: what it measures ("ring" or "pingpong"), its participant count
/// and its ring's parameters.
#[derive(Debug, Clone, Serialize)]
pub struct SideRecord {
    pub measure: &'static str,
    pub procs: usize,
    #[serde(flatten)]
    pub config: RingConfigRecord,
}

#[derive(Debug, Clone, Serialize)]
pub struct AbRecord {
    pub a: SideRecord,
    pub b: SideRecord,
    pub budget_s: f64,
    pub threshold: f64,
    pub seed: u64,
    /// Each round's figures (µs per switch), which side ran first, and when it ended.
    pub a_us: Vec<f64>,
    pub b_us: Vec<f64>,
    pub a_first: Vec<bool>,
    pub end_s: Vec<f64>,
    /// B / A with its anytime-valid 95 % interval, the word, whether the interval decided it
    /// (else the budget ended first), and how many times the rounds an undecided run would
    /// take (NaN otherwise).
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    pub verdict: &'static str,
    pub decided: bool,
    /// Why the rounds stopped (`ab::Stopped`'s names).
    pub stopped: &'static str,
    pub elapsed_s: f64,
    pub data_factor: f64,
}

impl AbRecord {
    pub fn new(asked: &AbRequest, out: &Outcome) -> Self {
        let side = |measure: &'static str, cfg: &crate::config::Config| SideRecord {
            measure,
            procs: cfg.procs[0],
            config: cfg.into(),
        };
        AbRecord {
            a: side(asked.measures[0], &asked.a),
            b: side(asked.measures[1], &asked.b),
            budget_s: asked.plan.budget_s,
            threshold: asked.plan.threshold,
            seed: asked.plan.seed,
            a_us: out.rounds.iter().map(|r| r.a_us).collect(),
            b_us: out.rounds.iter().map(|r| r.b_us).collect(),
            a_first: out.rounds.iter().map(|r| r.a_first).collect(),
            end_s: out.rounds.iter().map(|r| r.end_s).collect(),
            ratio: out.ratio,
            ratio_low: out.low,
            ratio_high: out.high,
            verdict: out.change.as_str(),
            decided: out.decided,
            stopped: out.stopped.as_str(),
            elapsed_s: out.elapsed_s,
            data_factor: out.data_factor,
        }
    }
}
