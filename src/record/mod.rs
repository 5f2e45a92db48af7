//! The record of each result, as result files hold it and every front door receives it: one
//! serde struct per kind, declared with its table of fields (`record!`, `table.rs`: per-point
//! arrays side by side, NaN where a sample is missing), which `ctxbench.schema` reads as
//! `_core.RECORDS`. The Python binding hands a record over as it is (`pythonize`);
//! `ctxbench.record.decode` makes the numpy arrays, the same way for what the core returns and
//! what a file holds.

use crate::config::Config;
use crate::fields::{in_order, record};
use crate::interference::{Achieved, Interference};
use crate::result::{pingpong, summarize, PingPong, PingpongFigures, RingFigures};
use crate::ring::Point;
use crate::sched::{self, Policy, Sched};

pub mod table;

record! {
    /// What a ring was asked: the parameters as the run used them (defaults filled in), which
    /// with its participant counts and machine make a point of a sweep the same point.
    pub struct RingConfigRecord {
        pub engine: &'static str = "oneof=ENGINES",
        pub transport: &'static str = "",
        pub placement: String = "",
        pub size_kb: usize = "min=0",
        /// Null: precision mode.
        pub repetitions: Option<usize> = "min=1",
        pub warmup: usize = "min=0",
        pub parallel: usize = "min=1",
        pub min_time: f64 = "min=0",
        pub precision: Option<f64> = "min=0 optional",
        pub max_time: Option<f64> = "min=0 optional",
        pub max_repetitions: Option<usize> = "min=1 optional",
        /// The CPU given to placement "single" (null: the first allowed one, or another
        /// placement).
        pub cpu: Option<usize> = "min=0 optional",
        pub timeout: f64 = "min=0 optional",
        pub record_hops: bool = "optional",
        pub stride_bytes: usize = "min=8 null optional",
        /// The cgroups the participants were placed in ("same" or "split"; "none": they stayed
        /// in the caller's), how deep and with what weight.
        pub cgroups: &'static str = "literal=none|same|split optional",
        pub cgroup_depth: Option<usize> = "min=1 optional",
        pub cgroup_weight: Option<u64> = "min=1 optional",
        /// Who watched the timed windows.
        pub counters: &'static str = "literal=COUNTERS optional",
        #[serde(flatten)]
        pub sched: SchedRecord = "",
        /// Each participant count's canonical identity (`point::identities`): what the run
        /// history, a sweep's out file and a store key a point by.
        pub point_id: Vec<String> = "[P] optional column",
        /// The neighbours asked, every key resolved; left out where none (a ring's record says
        /// them with what they achieved, in its own `interference`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub interference: Option<Interference> = "optional",
    }

    /// The scheduling policy every task of a run had: as read back after a run, as asked (or,
    /// with nothing asked, the calling thread's, which every task inherits) before one.
    pub struct SchedRecord {
        /// Checked in files: a policy is the kernel's word, not a newer ctxbench's.
        pub policy: &'static str = "oneof=POLICIES optional",
        pub priority: u32 = "min=0 optional",
        pub nice: i32 = "min=-20 optional",
        /// SCHED_DEADLINE's runtime, deadline and period in µs; null under the other policies.
        pub dl_runtime_us: Option<u64> = "min=0 optional",
        pub dl_deadline_us: Option<u64> = "min=0 optional",
        pub dl_period_us: Option<u64> = "min=0 optional",
    }
}

impl From<Sched> for SchedRecord {
    fn from(s: Sched) -> Self {
        let dl = |k: usize| (s.policy == Policy::Deadline).then_some(s.dl_ns[k] / 1000);
        SchedRecord {
            policy: s.policy.name(),
            priority: s.priority,
            nice: s.nice,
            dl_runtime_us: dl(0),
            dl_deadline_us: dl(1),
            dl_period_us: dl(2),
        }
    }
}

impl SchedRecord {
    /// What `cfg` asks, or what the calling thread runs under now where it asks nothing.
    pub fn asked(cfg: &Config) -> Self {
        cfg.sched
            .or_else(|| sched::get(0).ok())
            .unwrap_or_default()
            .into()
    }
}

impl From<&Config> for RingConfigRecord {
    fn from(cfg: &Config) -> Self {
        let rule = cfg.stop.rule();
        let sched = SchedRecord::asked(cfg);
        RingConfigRecord {
            engine: cfg.engine.name(),
            transport: cfg.transport.name(),
            placement: cfg.placement.name(),
            cpu: cfg.placement.cpu(),
            size_kb: cfg.size_kb,
            stride_bytes: cfg.stride_bytes,
            repetitions: cfg.stop.fixed(),
            precision: rule.map(|r| r.target),
            max_time: rule.map(|r| r.max_time),
            max_repetitions: rule.map(|r| r.max_repetitions),
            warmup: cfg.warmup,
            parallel: cfg.parallel,
            min_time: cfg.min_time,
            timeout: cfg.timeout,
            record_hops: cfg.record_hops,
            counters: cfg.observer.as_str(),
            point_id: point::identities(cfg, &sched),
            sched,
            cgroups: cfg.cgroups.as_ref().map_or("none", |c| c.layout()),
            cgroup_depth: cfg.cgroups.as_ref().map(|c| c.depth),
            cgroup_weight: cfg.cgroups.as_ref().and_then(|c| c.weight),
            interference: cfg.interference,
        }
    }
}

/// The hierarchy the groups were made in ("v1:<mount>" or "v2:<mount>"), where any were.
fn cgroup_hierarchy(cfg: &Config) -> Option<String> {
    cfg.cgroups.as_ref().map(|c| c.hierarchy.describe())
}

record! {
    /// A ring result: what was asked and everything measured, per point.
    pub struct RingRecord {
        #[serde(flatten)]
        pub config: RingConfigRecord = "config",
        #[serde(flatten)]
        pub figures: RingFigures = "",
        /// The hierarchy the groups were made in ("v1:<mount>" or "v2:<mount>").
        pub cgroup_hierarchy: Option<String> = "optional",
        /// The neighbours asked and what they achieved per point; null where none ran.
        pub interference: Option<InterferenceRecord> = "optional",
    }

    /// Interference asked (`interference::Interference`) and achieved, per point: each hog's
    /// and each neighbour ring's CPU time over the span the ring was driven / that span, the
    /// thrasher's (NaN: none) and its buffer's resident KiB (-1: none, or unreadable), each
    /// queued task's CPU time over the span / that span, and how many queued tasks were still
    /// runnable at its end (the fewest over the point's instances).
    pub struct InterferenceRecord as "InterferenceDict" {
        #[serde(flatten)]
        pub asked: Interference = "",
        pub span_s: Vec<f64> = "[P] min=0 nan holes",
        pub hog_duty: Vec<Vec<f64>> = "[P,*] min=0 nan holes ragged",
        pub thrash_duty: Vec<f64> = "[P] min=0 nan holes",
        pub thrash_resident_kb: Vec<i64> = "[P] min=-1",
        pub ring_duty: Vec<Vec<f64>> = "[P,*] min=0 nan holes ragged",
        pub queued_duty: Vec<Vec<f64>> = "[P,*] min=0 nan holes ragged optional",
        pub queued_runnable: Vec<i64> = "[P] min=-1 optional",
    }
}

impl InterferenceRecord {
    fn new(cfg: &Config, points: &[Point]) -> Option<Self> {
        let asked = cfg.interference?;
        Some(InterferenceRecord {
            asked,
            span_s: per_point(points, f64::NAN, |a| a.span_s),
            hog_duty: per_point(points, Vec::new(), |a| a.hog_duty.clone()),
            thrash_duty: per_point(points, f64::NAN, |a| a.thrash_duty.unwrap_or(f64::NAN)),
            thrash_resident_kb: per_point(points, -1, |a| {
                a.thrash_resident_kb.map_or(-1, |kb| kb as i64)
            }),
            ring_duty: per_point(points, Vec::new(), |a| a.ring_duty.clone()),
            queued_duty: per_point(points, Vec::new(), |a| a.queued_duty.clone()),
            queued_runnable: per_point(points, -1, |a| a.queued_runnable as i64),
        })
    }
}

/// `f` of what each point's neighbours achieved, `missing` where none ran.
fn per_point<T: Clone>(points: &[Point], missing: T, f: impl Fn(&Achieved) -> T) -> Vec<T> {
    let f = &f;
    points
        .iter()
        .map(|p| p.interference.as_ref().map_or_else(|| missing.clone(), f))
        .collect()
}

impl RingRecord {
    /// The record of a run of `cfg` that measured `points`: what was asked, with the policy
    /// every task ran under read back, and the figures.
    pub fn new(cfg: &Config, points: &[Point]) -> Self {
        let mut config = RingConfigRecord::from(cfg);
        if let Some(p) = points.first() {
            config.sched = p.sched.into();
        }
        // Said with what the neighbours achieved, in the record's own `interference`.
        config.interference = None;
        RingRecord {
            config,
            figures: summarize(cfg, points),
            cgroup_hierarchy: cgroup_hierarchy(cfg),
            interference: InterferenceRecord::new(cfg, points),
        }
    }
}

record! {
    /// A ping-pong result, perf's fields first.
    pub struct PingpongRecord {
        pub loops: u64 = "min=1",
        pub threads: bool = "",
        pub engine: &'static str = "oneof=ENGINES",
        pub transport: &'static str = "",
        pub placement: String = "",
        /// Measured until precise, as a ring point (files from before lack these).
        pub repetitions: Option<usize> = "min=1 optional",
        pub precision: Option<f64> = "min=0 optional",
        pub max_time: Option<f64> = "min=0 optional",
        pub min_time: f64 = "min=0 optional",
        pub counters: &'static str = "literal=COUNTERS optional",
        pub cgroups: &'static str = "literal=none|same|split optional",
        pub cgroup_depth: Option<usize> = "min=1 optional",
        pub cgroup_weight: Option<u64> = "min=1 optional",
        pub cgroup_hierarchy: Option<String> = "optional",
        #[serde(flatten)]
        pub figures: PingpongFigures = "",
        #[serde(flatten)]
        pub sched: SchedRecord = "",
        /// The hops' percentiles where recorded, one value each (files from before lack
        /// them).
        #[serde(serialize_with = "in_order")]
        pub hop_percentiles_us: Option<Vec<(&'static str, Vec<f64>)>> =
            "keys=p50|p90|p99|p99.9|max [P] min=0 nan holes alias=_HopPercentilesDict optional",
        /// The neighbours asked and what they achieved; null where none ran.
        pub interference: Option<InterferenceRecord> = "optional",
    }
}

impl PingpongRecord {
    /// The record of the point `p` a ping-pong of `cfg` measured.
    pub fn new(cfg: &Config, p: &Point) -> Self {
        let PingPong {
            loops,
            figures,
            hop_percentiles_us,
        } = pingpong(cfg, p);
        let asked = RingConfigRecord::from(cfg);
        PingpongRecord {
            loops,
            threads: cfg.engine == crate::engine::Engine::Thread,
            engine: asked.engine,
            transport: asked.transport,
            placement: asked.placement,
            repetitions: asked.repetitions,
            precision: asked.precision,
            max_time: asked.max_time,
            min_time: asked.min_time,
            counters: asked.counters,
            cgroups: asked.cgroups,
            cgroup_depth: asked.cgroup_depth,
            cgroup_weight: asked.cgroup_weight,
            cgroup_hierarchy: cgroup_hierarchy(cfg),
            figures,
            sched: p.sched.into(),
            hop_percentiles_us,
            interference: InterferenceRecord::new(cfg, std::slice::from_ref(p)),
        }
    }
}

mod ab;
mod cache;
mod matrix;
pub mod measure;
mod point;

pub use ab::AbRecord;
pub use cache::{CacheRecord, IndirectRecord};
pub use matrix::MatrixRecord;
