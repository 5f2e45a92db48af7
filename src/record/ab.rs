//! An A/B run's record: both sides as asked, every round, and the word with the interval
//! behind it.

use super::RingConfigRecord;
use crate::ab::Outcome;
use crate::fields::record;
use crate::request::AbRequest;

record! {
    /// What one side was asked: what it measures ("ring" or "pingpong"), its participant
    /// count and its ring's parameters.
    pub struct SideRecord as "AbSideDict" {
        pub measure: &'static str = "oneof=ring|pingpong",
        pub procs: usize = "min=2",
        #[serde(flatten)]
        pub config: RingConfigRecord = "",
    }

    pub struct AbRecord {
        pub a: SideRecord = "",
        pub b: SideRecord = "",
        pub budget_s: f64 = "min=0",
        pub threshold: f64 = "min=0",
        pub seed: u64 = "min=0",
        /// Each round's figures (µs per switch: net, may be <= 0 below resolution), which side
        /// ran first, and when it ended (seconds since the start).
        pub a_us: Vec<f64> = "[rounds]",
        pub b_us: Vec<f64> = "[rounds]",
        pub a_first: Vec<bool> = "[rounds]",
        pub end_s: Vec<f64> = "[rounds] min=0",
        /// Context switches per hop each side made in each round: the figures are per hop,
        /// and a side that makes more switches a hop costs more per hop (files from before
        /// lack them).
        pub a_switches_per_hop: Vec<f64> = "[rounds] min=0 nan holes optional",
        pub b_switches_per_hop: Vec<f64> = "[rounds] min=0 nan holes optional",
        /// B / A with its anytime-valid 95 % interval: NaN (null) before a round has a ratio,
        /// bounds 0 and +inf while too few rounds bound it.
        pub ratio: f64 = "min=0 nan holes",
        pub ratio_low: f64 = "min=0 nan holes",
        pub ratio_high: f64 = "min=0 nan inf holes",
        pub verdict: &'static str = "oneof=CHANGES alias=_Change",
        /// Whether the interval decided it (else the budget ended first).
        pub decided: bool = "",
        /// Why the rounds stopped (`ab::Stopped`'s names).
        pub stopped: &'static str = "oneof=AB_STOPS alias=_AbStopped",
        pub elapsed_s: f64 = "min=0",
        /// How many times the rounds an undecided run would take; NaN (null) otherwise.
        pub data_factor: f64 = "min=0 nan holes",
    }
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
            a_switches_per_hop: out.rounds.iter().map(|r| r.a_switches).collect(),
            b_switches_per_hop: out.rounds.iter().map(|r| r.b_switches).collect(),
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
