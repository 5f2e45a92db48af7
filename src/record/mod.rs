//! The record of each result, as result files hold it and every front door receives it: one
//! serde struct per kind, declared with its table of fields (`record!`, `table.rs`: per-point
//! arrays side by side, NaN where a sample is missing), which `ctxbench.schema` reads as
//! `_core.RECORDS`. The Python binding hands a record over as it is (`pythonize`);
//! `ctxbench.record.decode` makes the numpy arrays, the same way for what the core returns and
//! what a file holds.

use crate::clock::Tsc;
use crate::config::Config;
use crate::fields::record;
use crate::interference::{Achieved, Interference};
use crate::measure::Phases;
use crate::result::{HopSummary, PingPong, PointStats, RingSummary};
use crate::sched::{self, Policy, Sched};

pub mod table;

/// Named series as a map in their order ("p50" before "max"), or null.
pub(crate) fn in_order<S: serde::Serializer>(
    named: &Option<Vec<(&'static str, Vec<f64>)>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match named {
        Some(v) => s.collect_map(v.iter().map(|(k, x)| (k, x))),
        None => s.serialize_none(),
    }
}

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
        let (repetitions, precision, max_time, max_repetitions) = (
            cfg.stop.fixed(),
            rule.map(|r| r.target),
            rule.map(|r| r.max_time),
            rule.map(|r| r.max_repetitions),
        );
        let sched = SchedRecord::asked(cfg);
        RingConfigRecord {
            engine: cfg.engine.name(),
            transport: cfg.transport.name(),
            placement: cfg.placement.name(),
            cpu: cfg.placement.cpu(),
            size_kb: cfg.size_kb,
            stride_bytes: cfg.stride_bytes,
            repetitions,
            precision,
            max_time,
            max_repetitions,
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
    /// Each point's statistics, one array per figure.
    #[derive(Default)]
    pub struct StatsRecord as "StatsDict" {
        pub min: Vec<f64> = "[P]",
        pub median: Vec<f64> = "[P]",
        pub mean: Vec<f64> = "[P]",
        pub max: Vec<f64> = "[P]",
        pub stdev: Vec<f64> = "[P] min=0",
        pub cv: Vec<f64> = "[P] min=0 inf",
        /// NaN: no interval (a point with one unit to go on).
        pub ci_low: Vec<f64> = "[P] nan holes",
        pub ci_high: Vec<f64> = "[P] nan holes",
        /// The variance model (files from before it lack these).
        pub se: Vec<f64> = "[P] min=0 nan holes optional",
        pub se_within: Vec<f64> = "[P] min=0 nan holes optional",
        pub df: Vec<f64> = "[P] min=0 optional",
        pub level: Vec<&'static str> = "[P] oneof=LEVELS optional",
        pub sd_repetition: Vec<f64> = "[P] min=0 nan holes optional",
        pub sd_block: Vec<f64> = "[P] min=0 nan holes optional",
        pub sd_instance: Vec<f64> = "[P] min=0 nan holes optional",
        pub sd_run: Vec<f64> = "[P] min=0 nan holes optional",
        pub runs_seen: Vec<f64> = "[P] min=0 optional",
        pub instances: Vec<usize> = "[P] min=1 optional",
        pub outliers: Vec<usize> = "[P] min=0",
        pub clusters: Vec<usize> = "[P] min=1",
        pub verdict: Vec<&'static str> = "[P] literal=VERDICTS",
    }
}

/// An unknown standard error (one unit to go on) is NaN, as the interval is.
fn known(se: f64) -> f64 {
    if se.is_finite() {
        se
    } else {
        f64::NAN
    }
}

impl From<&[PointStats]> for StatsRecord {
    fn from(stats: &[PointStats]) -> Self {
        let mut r = StatsRecord::default();
        for x in stats {
            let d = &x.description;
            r.min.push(d.min);
            r.median.push(d.median);
            r.mean.push(d.mean);
            r.max.push(d.max);
            r.stdev.push(d.stdev);
            r.cv.push(d.cv);
            r.ci_low.push(x.ci_low);
            r.ci_high.push(x.ci_high);
            r.se.push(known(x.estimate.uncertainty.se));
            r.se_within.push(known(x.within.se));
            r.df.push(x.estimate.uncertainty.df);
            r.level.push(x.estimate.uncertainty.level.as_str());
            r.sd_repetition.push(x.spreads.repetition);
            r.sd_block.push(x.spreads.block);
            r.sd_instance.push(x.spreads.instance);
            r.sd_run.push(x.run_level.map_or(f64::NAN, |l| l.sd));
            r.runs_seen.push(x.run_level.map_or(0.0, |l| l.df + 1.0));
            r.instances.push(x.instances);
            r.outliers.push(d.outliers);
            r.clusters.push(d.clusters);
            r.verdict.push(x.verdict.as_str());
        }
        r
    }
}

record! {
    /// Seconds per phase, one array per phase (one value per point).
    #[derive(Default)]
    pub struct PhasesRecord as "PhasesDict" {
        pub calibration: Vec<f64> = "[P] min=0",
        pub warmup: Vec<f64> = "[P] min=0",
        pub measure: Vec<f64> = "[P] min=0",
        pub setup_teardown: Vec<f64> = "[P] min=0",
        pub observer_wait: Vec<f64> = "[P] min=0 optional",
    }
}

impl From<&[Phases]> for PhasesRecord {
    fn from(phases: &[Phases]) -> Self {
        let column = |f: fn(&Phases) -> f64| phases.iter().map(f).collect();
        PhasesRecord {
            calibration: column(|p| p.calibration),
            warmup: column(|p| p.warmup),
            measure: column(|p| p.measure),
            setup_teardown: column(|p| p.setup_teardown),
            observer_wait: column(|p| p.observer_wait),
        }
    }
}

record! {
    /// The TSC's calibration, or why there is none.
    pub struct TscRecord as "TscDict" {
        pub ghz: Option<f64> = "min=0",
        pub read_cost_cycles: Option<f64> = "min=0",
        pub unavailable_reason: Option<String> = "",
    }
}

impl From<&Result<Tsc, String>> for TscRecord {
    fn from(tsc: &Result<Tsc, String>) -> Self {
        TscRecord {
            ghz: tsc.as_ref().ok().map(|t| t.ghz),
            read_cost_cycles: tsc.as_ref().ok().map(|t| t.read_cost),
            unavailable_reason: tsc.as_ref().err().cloned(),
        }
    }
}

record! {
    pub struct HardwareRecord as "HardwareDict" {
        pub cycles_per_switch: Option<Vec<f64>> = "[P] min=0",
        pub instructions_per_switch: Option<Vec<f64>> = "[P] min=0",
        /// Issue 19; files from before it lack them.
        pub cache_misses_per_switch: Option<Vec<f64>> = "[P] min=0 optional",
        pub dtlb_misses_per_switch: Option<Vec<f64>> = "[P] min=0 optional",
        pub unavailable_reason: Option<String> = "",
    }

    pub struct HistogramRecord as "HopHistogramDict" {
        pub edges_us: Vec<f64> = "min=0",
        pub counts: Vec<Vec<u64>> = "[P,*] min=0 unsigned",
    }

    /// A ring result: what was asked and everything measured, per point.
    pub struct RingRecord {
        #[serde(flatten)]
        pub config: RingConfigRecord = "config",
        pub procs: Vec<usize> = "[P] min=2",
        pub latency_us: Vec<f64> = "[P]",
        pub min_us: Vec<f64> = "[P]",
        /// `[repetition][point]`, NaN below a point's last repetition.
        pub samples_us: Vec<Vec<f64>> = "[R,P] holes",
        pub raw_us: Vec<f64> = "[P] min=0",
        pub raw_samples_us: Vec<Vec<f64>> = "[R,P] min=0 holes",
        pub overhead_us: f64 = "min=0",
        pub overhead_point_us: Vec<f64> = "[P] min=0",
        pub overhead_samples_us: Vec<Vec<f64>> = "[R,P] min=0 holes",
        pub ring_us: Vec<Vec<f64>> = "[P,parallel]",
        pub below_resolution: Vec<bool> = "[P]",
        pub stats: StatsRecord = "",
        /// `[point][ring][participant]`.
        pub cpus: Vec<Vec<Vec<i32>>> = "[P,parallel,*] min=-1 ragged",
        pub trips: Vec<u64> = "[P] min=0",
        pub overhead_rounds: Vec<u64> = "[P] min=0",
        pub work_verified: Vec<bool> = "[P]",
        pub phase_s: PhasesRecord = "",
        pub switches_per_hop: Vec<f64> = "[P] min=0 column",
        pub switch_source: Vec<&'static str> = "[P] literal=kernel|perf|rusage",
        /// NaN: no evidence repetition (no hardware counters, or counters="off").
        pub counted_us: Vec<f64> = "[P] min=0 nan holes",
        pub involuntary_switches: Vec<i64> = "[P] min=0 column",
        /// -1: counters unavailable.
        pub migrations: Vec<i64> = "[P] min=-1 column",
        /// CPU time per hop of every observed task (user + system, then each) and their wait on
        /// a run queue, in µs; NaN where the kernel did not show it.
        pub cpu_us_per_hop: Vec<f64> = "[P] min=0 nan holes column optional",
        pub cpu_user_us_per_hop: Vec<f64> = "[P] min=0 nan holes column optional",
        pub cpu_sys_us_per_hop: Vec<f64> = "[P] min=0 nan holes column optional",
        pub runq_wait_us_per_hop: Vec<f64> = "[P] min=0 nan holes column optional",
        pub hardware: HardwareRecord = "",
        pub counters_unavailable_reason: Option<String> = "",
        pub warnings: Vec<String> = "",
        /// NaN where a point has no hops.
        #[serde(serialize_with = "in_order")]
        pub hop_percentiles_us: Option<Vec<(&'static str, Vec<f64>)>> =
            "keys=p50|p90|p99|p99.9|max [P] min=0 nan holes alias=_HopPercentilesDict",
        pub hop_histogram: Option<HistogramRecord> = "",
        /// Net: may be negative.
        pub tsc_cycles_per_switch: Option<Vec<f64>> = "[P]",
        pub tsc: TscRecord = "",
        pub stopped: Vec<&'static str> = "[P] literal=STOPPED optional column",
        pub repetitions_made: Vec<usize> = "[P] min=0 optional column",
        /// Repetitions per block and blocks per ring instance.
        pub block: Vec<usize> = "[P] min=1 optional",
        pub instance_blocks: Vec<Vec<usize>> = "[P,*] min=0 optional ragged",
        /// Every participant of the point ran on one CPU: a pinned one, the same one in a CPU
        /// list, or the only one the caller may use.
        pub one_cpu: Vec<bool> = "[P] optional",
        /// -1 where pagemap could not be read.
        pub resident_kb: Vec<i64> = "[P] min=-1 optional column",
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
    fn new(cfg: &Config, achieved: &[Option<Achieved>]) -> Option<Self> {
        let asked = cfg.interference?;
        Some(InterferenceRecord {
            asked,
            span_s: per_point(achieved, f64::NAN, |a| a.span_s),
            hog_duty: per_point(achieved, Vec::new(), |a| a.hog_duty.clone()),
            thrash_duty: per_point(achieved, f64::NAN, |a| a.thrash_duty.unwrap_or(f64::NAN)),
            thrash_resident_kb: per_point(achieved, -1, |a| {
                a.thrash_resident_kb.map_or(-1, |kb| kb as i64)
            }),
            ring_duty: per_point(achieved, Vec::new(), |a| a.ring_duty.clone()),
            queued_duty: per_point(achieved, Vec::new(), |a| a.queued_duty.clone()),
            queued_runnable: per_point(achieved, -1, |a| a.queued_runnable as i64),
        })
    }
}

/// `f` of what each point's neighbours achieved, `missing` where none ran.
fn per_point<T: Clone>(
    achieved: &[Option<Achieved>],
    missing: T,
    f: impl Fn(&Achieved) -> T,
) -> Vec<T> {
    let f = &f;
    achieved
        .iter()
        .map(|a| a.as_ref().map_or_else(|| missing.clone(), f))
        .collect()
}

/// Per point series as `[repetition][point]`, NaN below a point's last repetition.
pub(crate) fn by_repetition(series: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let rows = series.iter().map(Vec::len).max().unwrap_or(0);
    (0..rows)
        .map(|k| {
            series
                .iter()
                .map(|v| v.get(k).copied().unwrap_or(f64::NAN))
                .collect()
        })
        .collect()
}

impl RingRecord {
    pub fn new(cfg: &Config, s: RingSummary) -> Self {
        let hops = s.hops.as_ref();
        let mut config = RingConfigRecord::from(cfg);
        if let Some(seen) = s.sched {
            config.sched = seen.into();
        }
        // Said with what the neighbours achieved, in the record's own `interference`.
        config.interference = None;
        RingRecord {
            cgroup_hierarchy: cgroup_hierarchy(cfg),
            interference: InterferenceRecord::new(cfg, &s.interference),
            config,
            repetitions_made: s.samples_us.iter().map(Vec::len).collect(),
            samples_us: by_repetition(&s.samples_us),
            raw_samples_us: by_repetition(&s.raw_samples_us),
            overhead_samples_us: by_repetition(&s.overhead_samples_us),
            latency_us: s.stats.iter().map(|x| x.description.median).collect(),
            min_us: s.stats.iter().map(|x| x.description.min).collect(),
            stats: s.stats.as_slice().into(),
            phase_s: s.phase_s.as_slice().into(),
            hardware: HardwareRecord {
                cycles_per_switch: s.cycles_per_switch,
                instructions_per_switch: s.instructions_per_switch,
                cache_misses_per_switch: s.cache_misses_per_switch,
                dtlb_misses_per_switch: s.dtlb_misses_per_switch,
                unavailable_reason: s.hardware_unavailable,
            },
            hop_percentiles_us: hops.map(|h| h.percentiles_us.clone()),
            hop_histogram: hops.map(|h: &HopSummary| HistogramRecord {
                edges_us: h.edges_us.clone(),
                counts: h.counts.clone(),
            }),
            tsc: (&s.tsc).into(),
            stopped: s.stopped.iter().map(|x| x.as_str()).collect(),
            resident_kb: s
                .resident_kb
                .iter()
                .map(|kb| kb.map_or(-1, |kb| kb as i64))
                .collect(),
            procs: s.procs,
            raw_us: s.raw_us,
            overhead_us: s.overhead_us,
            overhead_point_us: s.overhead_point_us,
            ring_us: s.ring_us,
            below_resolution: s.below_resolution,
            cpus: s.cpus,
            trips: s.trips,
            overhead_rounds: s.overhead_rounds,
            work_verified: s.work_verified,
            cpu_us_per_hop: s.cpu.iter().map(|c| c.cpu_us).collect(),
            cpu_user_us_per_hop: s.cpu.iter().map(|c| c.user_us).collect(),
            cpu_sys_us_per_hop: s.cpu.iter().map(|c| c.sys_us).collect(),
            runq_wait_us_per_hop: s.cpu.iter().map(|c| c.runq_wait_us).collect(),
            switches_per_hop: s.switches_per_hop,
            switch_source: s.switch_source,
            counted_us: s.counted_us,
            involuntary_switches: s.involuntary_switches,
            migrations: s.migrations,
            counters_unavailable_reason: s.software_unavailable,
            warnings: s.warnings,
            tsc_cycles_per_switch: s.tsc_cycles_per_switch,
            block: s.block,
            instance_blocks: s.instance_blocks,
            one_cpu: s.one_cpu,
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
        pub elapsed_s: f64 = "min=0",
        pub usecs_per_op: f64 = "min=0 column",
        pub ops_per_sec: f64 = "min=0 column",
        pub usecs_per_switch: f64 = "min=0",
        pub cycles_per_switch: Option<f64> = "min=0",
        pub tsc: TscRecord = "",
        pub cpus: Vec<i32> = "[2] min=-1",
        pub samples_us: Vec<f64> = "min=0 optional",
        /// As a ring's, of one point.
        pub stats: StatsRecord = "optional opaque",
        pub stopped: &'static str = "literal=STOPPED optional",
        pub block: usize = "min=1 optional",
        pub instance_blocks: Vec<usize> = "min=0 optional",
        pub phase_s: PhasesRecord = "optional",
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
    pub fn new(cfg: &Config, p: PingPong) -> Self {
        let asked = RingConfigRecord::from(cfg);
        PingpongRecord {
            loops: p.loops,
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
            elapsed_s: p.elapsed_s,
            usecs_per_op: p.usecs_per_op,
            ops_per_sec: p.ops_per_sec,
            usecs_per_switch: p.usecs_per_switch,
            cycles_per_switch: p.cycles_per_switch,
            tsc: (&crate::clock::tsc()).into(),
            cpus: p.cpus,
            samples_us: p.samples_us,
            stats: std::slice::from_ref(&p.stats).into(),
            stopped: p.stopped.as_str(),
            block: p.block,
            instance_blocks: p.instance_blocks,
            phase_s: std::slice::from_ref(&p.phase_s).into(),
            sched: p.sched.into(),
            hop_percentiles_us: p.hops.map(|h| h.percentiles_us),
            interference: InterferenceRecord::new(cfg, std::slice::from_ref(&p.interference)),
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
