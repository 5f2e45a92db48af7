//! A ring's figures, per point: declared as the part of its record they fill (`RingFigures`,
//! flattened into `record::RingRecord` after what was asked) and filled here from the points.

use super::records::{HardwareRecord, HistogramRecord, PhasesRecord, StatsRecord, TscRecord};
use super::{check_model, per_hop, HopSummary, Model, PointStats, NS_PER_US};
use crate::clock;
use crate::config::Config;
use crate::fields::{in_order, record};
use crate::host::restrictions;
use crate::observer::{Accounting, PerHop};
use crate::ring::Point;
use crate::stats;

record! {
    /// What a ring measured, one entry per point.
    pub struct RingFigures {
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
    }
}

/// Every figure of a run of `cfg` that produced `points`.
pub fn summarize(cfg: &Config, points: &[Point]) -> RingFigures {
    let model = Model::of(cfg.engine, cfg.transport);
    let mut s = summarize_with(points, model, cfg);
    s.warnings.extend(
        points
            .iter()
            .filter_map(|p| check_working_set(cfg.size_kb, p)),
    );
    s
}

/// A warning when some participant's array was not all resident and its own: the ring then
/// summed less memory than `size_kb` says (the zero page of an array never written, pages
/// swapped out, or pages still shared with the parent that forked it).
fn check_working_set(size_kb: usize, p: &Point) -> Option<String> {
    let kb = p.resident_kb?;
    (kb < size_kb as u64).then(|| {
        format!(
            "{} participants: resident_kb={kb} < size_kb={size_kb}: a participant's work array \
             was not all resident and its own (never written, so the shared zero page; \
             swapped out; or still shared with its parent): the working set is smaller than \
             it claims",
            p.procs
        )
    })
}

/// Per point series as `[repetition][point]`, NaN below a point's last repetition.
pub fn by_repetition(series: &[Vec<f64>]) -> Vec<Vec<f64>> {
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

pub(super) fn summarize_with(points: &[Point], model: Model, cfg: &Config) -> RingFigures {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    // Each point's series, one value per repetition (averaged over the parallel rings).
    let samples_us: Vec<Vec<f64>> = points
        .iter()
        .map(|p| p.net_ns().into_iter().map(|x| x / NS_PER_US).collect())
        .collect();
    let per_rep = |series: fn(&Point) -> &Vec<Vec<f64>>| -> Vec<Vec<f64>> {
        points
            .iter()
            .map(|p| series(p).iter().map(|r| mean(r) / NS_PER_US).collect())
            .collect()
    };
    let raw_samples_us = per_rep(|p| &p.raw_ns);
    let overhead_samples_us = per_rep(|p| &p.overhead_ns);
    let stats: Vec<PointStats> = points
        .iter()
        .zip(&samples_us)
        .enumerate()
        .map(|(j, (p, v))| {
            PointStats::of(v, p.block, &p.instance_blocks, &cfg.stop, cfg.run_level(j))
                .throttled(p.throttled)
        })
        .collect();
    let all_overhead: Vec<f64> = points
        .iter()
        .flat_map(|p| p.overhead_ns.iter().flatten().map(|x| x / NS_PER_US))
        .collect();
    // CPU time and run-queue wait per hop of every observed task over the timed windows,
    // from the kernel's accounting; NaN where it was not read.
    let cpu: Vec<PerHop> = each(points, |p| {
        p.accounting
            .as_ref()
            .map_or_else(|_| PerHop::default(), Accounting::per_hop)
    });
    let first = points
        .first()
        .map(|p| p.counters.clone())
        .unwrap_or_default();
    let tsc = clock::tsc();
    let tsc_cycles_per_switch = tsc
        .is_ok()
        .then(|| each(points, |p| stats::median(&p.net_cycles())));
    let (hop_percentiles_us, hop_histogram) = HopSummary::of(points)
        .map(|h| (h.percentiles_us, h.histogram))
        .unzip();
    RingFigures {
        procs: each(points, |p| p.procs),
        latency_us: stats.iter().map(|x| x.description.median).collect(),
        min_us: stats.iter().map(|x| x.description.min).collect(),
        repetitions_made: samples_us.iter().map(Vec::len).collect(),
        samples_us: by_repetition(&samples_us),
        raw_us: raw_samples_us.iter().map(|v| stats::median(v)).collect(),
        raw_samples_us: by_repetition(&raw_samples_us),
        overhead_us: stats::median(&all_overhead),
        overhead_point_us: overhead_samples_us
            .iter()
            .map(|v| stats::median(v))
            .collect(),
        overhead_samples_us: by_repetition(&overhead_samples_us),
        ring_us: each(points, ring_medians_us),
        // The median net value is not above zero: the switch is below what the method resolves.
        below_resolution: stats.iter().map(|s| s.description.median <= 0.0).collect(),
        stats: stats.as_slice().into(),
        cpus: each(points, |p| p.cpus.clone()),
        // Trips per ring repetition and rounds per overhead repetition (ring 0).
        trips: each(points, |p| p.trips[0]),
        overhead_rounds: each(points, |p| p.overhead_rounds[0]),
        work_verified: each(points, |p| p.work_verified),
        phase_s: each(points, |p| p.phase_s).as_slice().into(),
        switches_per_hop: each(points, |p| per_hop(p).0),
        switch_source: each(points, |p| per_hop(p).1),
        // Raw µs per hop of the counted repetition (ring 0): what counting costs.
        counted_us: each(points, |p| p.counted_ns / NS_PER_US),
        involuntary_switches: each(points, |p| p.rusage.involuntary as i64),
        migrations: each(points, migrations),
        cpu_us_per_hop: cpu.iter().map(|c| c.cpu_us).collect(),
        cpu_user_us_per_hop: cpu.iter().map(|c| c.user_us).collect(),
        cpu_sys_us_per_hop: cpu.iter().map(|c| c.sys_us).collect(),
        runq_wait_us_per_hop: cpu.iter().map(|c| c.runq_wait_us).collect(),
        hardware: HardwareRecord {
            cycles_per_switch: per_switch(points, |p| p.counters.cycles),
            instructions_per_switch: per_switch(points, |p| p.counters.instructions),
            cache_misses_per_switch: per_switch(points, |p| p.counters.cache_misses),
            dtlb_misses_per_switch: per_switch(points, |p| p.counters.dtlb_misses),
            unavailable_reason: first.hardware_unavailable,
        },
        counters_unavailable_reason: first.software_unavailable,
        warnings: warnings(points, model),
        hop_percentiles_us,
        hop_histogram,
        tsc_cycles_per_switch,
        tsc: (&tsc).into(),
        // Why each point's timed repetitions ended; its repetitions per block, and blocks
        // per ring instance (the levels of the variance model).
        stopped: each(points, |p| p.stopped.as_str()),
        block: each(points, |p| p.block),
        instance_blocks: each(points, |p| p.instance_blocks.clone()),
        one_cpu: each(points, |p| p.one_cpu),
        resident_kb: each(points, |p| p.resident_kb.map_or(-1, |kb| kb as i64)),
    }
}

/// `f` of each point, in order.
fn each<T>(points: &[Point], f: impl Fn(&Point) -> T) -> Vec<T> {
    points.iter().map(f).collect()
}

/// CPU migrations over the timed windows: the kernel's accounting, else perf's; -1 where
/// neither counted.
fn migrations(p: &Point) -> i64 {
    match (&p.accounting, p.counters.migrations) {
        (
            Ok(Accounting {
                migrations: Some(m),
                hops: 1..,
                ..
            }),
            _,
        ) => *m as i64,
        (_, Some(m)) => m as i64,
        _ => -1,
    }
}

/// A hardware count per switch of every point; `None` unless every point counted it.
fn per_switch(points: &[Point], count: impl Fn(&Point) -> Option<u64>) -> Option<Vec<f64>> {
    points
        .iter()
        .map(|p| count(p).map(|v| v as f64 / p.observed_hops.max(1) as f64))
        .collect()
}

/// Disagreements between what was counted and what the engine's model predicts, and the
/// points a CPU quota throttled.
fn warnings(points: &[Point], model: Model) -> Vec<String> {
    let throttled = points.iter().filter_map(|p| match p.throttled {
        Some(n @ 1..) => Some(restrictions::throttled_warning(p.procs, n)),
        _ => None,
    });
    points
        .iter()
        .filter_map(|p| check_model(model, p, per_hop(p).0))
        .chain(throttled)
        .collect()
}

/// Median net µs per switch of each parallel ring of a point.
fn ring_medians_us(p: &Point) -> Vec<f64> {
    let net = p.net_by_ring();
    (0..net.first().map_or(0, Vec::len))
        .map(|r| stats::median(&net.iter().map(|rep| rep[r]).collect::<Vec<_>>()) / NS_PER_US)
        .collect()
}
