//! From raw points to the figures users read: net per-switch samples, their summaries, the
//! overhead that was subtracted, the kernel's evidence checked against the engine's model,
//! hop-latency percentiles. A Rust caller of `run` gets every figure the Python result has;
//! the binding only converts this struct.

use crate::clock::{self, Tsc};
use crate::config::Config;
use crate::engine::{Engine, TransportKind};
use crate::hops;
use crate::observer::{Accounting, PerHop};
use crate::ring::{Phases, Point};
use crate::stats::{self, Description, Estimate, Layout, RunLevel, Spreads, Uncertainty};
use crate::stop::{self, Stop, Stopped};
use crate::verdict::{self, Verdict};

#[derive(Debug, Clone)]
pub struct RingSummary {
    pub procs: Vec<usize>,
    /// Net µs per switch of every repetition (mean over parallel rings), `[point][repetition]`:
    /// points stopped by precision made different numbers of repetitions.
    pub samples_us: Vec<Vec<f64>>,
    /// Raw µs per hop and overhead µs per hop, same layout.
    pub raw_samples_us: Vec<Vec<f64>>,
    pub overhead_samples_us: Vec<Vec<f64>>,
    /// Per point: the statistics of the net samples, and medians of raw and overhead.
    pub stats: Vec<PointStats>,
    pub raw_us: Vec<f64>,
    pub overhead_point_us: Vec<f64>,
    /// Median of every overhead sample of the run: the `ovr=` of the xgraph title.
    pub overhead_us: f64,
    /// Median net µs per switch of each parallel ring, `[point][ring]`.
    pub ring_us: Vec<Vec<f64>>,
    /// The median net value is not above zero: the switch is below what the method resolves.
    pub below_resolution: Vec<bool>,
    /// Kernel context switches per hop over the timed windows, from the kernel's own
    /// accounting of every observed task (`observer`), else perf's count (evidence
    /// repetition), else the participants' lifetime rusage (`switch_source` says which).
    pub switches_per_hop: Vec<f64>,
    pub switch_source: Vec<&'static str>,
    /// CPU time (user + system, and each) and run-queue wait per hop of every observed task
    /// over the timed windows, from the kernel's accounting; NaN where it was not read.
    pub cpu: Vec<PerHop>,
    /// Involuntary switches of the participants (rusage, lifetime) and CPU migrations over
    /// the timed windows (the kernel's accounting, else perf; -1 where neither counted).
    pub involuntary_switches: Vec<i64>,
    pub migrations: Vec<i64>,
    /// Who watched the timed windows (`observer::Observer`).
    pub observer: &'static str,
    /// Per switch, from hardware counters; `None` with the reason where unavailable.
    pub cycles_per_switch: Option<Vec<f64>>,
    pub instructions_per_switch: Option<Vec<f64>>,
    /// Last-level cache misses and data-TLB read misses per switch, same rule.
    pub cache_misses_per_switch: Option<Vec<f64>>,
    pub dtlb_misses_per_switch: Option<Vec<f64>>,
    pub hardware_unavailable: Option<String>,
    pub software_unavailable: Option<String>,
    /// Disagreements between what was counted and what the engine's model predicts.
    pub warnings: Vec<String>,
    /// Median net TSC cycles per switch (the TSC read cost subtracted), where the TSC is an
    /// invariant clock; else `None` and the reason in `tsc`.
    pub tsc_cycles_per_switch: Option<Vec<f64>>,
    pub tsc: Result<Tsc, String>,
    /// Raw µs per hop of the counted repetition (ring 0): what counting costs.
    pub counted_us: Vec<f64>,
    /// CPU each participant was last on, `[point][ring][participant]`.
    pub cpus: Vec<Vec<Vec<i32>>>,
    /// Trips per ring repetition and rounds per overhead repetition (ring 0), per point.
    pub trips: Vec<u64>,
    pub overhead_rounds: Vec<u64>,
    /// Every participant's workload checksum was right, per point.
    pub work_verified: Vec<bool>,
    /// Seconds per phase, per point.
    pub phase_s: Vec<Phases>,
    /// Wake-to-run latency of every hop, when recording.
    pub hops: Option<HopSummary>,
    /// Why each point's timed repetitions ended; its repetitions per block, and blocks per
    /// ring instance (the levels of the variance model).
    pub stopped: Vec<Stopped>,
    pub block: Vec<usize>,
    pub instance_blocks: Vec<Vec<usize>>,
    /// The working set, proven: per point, the smallest KiB of any participant's
    /// array found resident and its own after measuring; `None` where pagemap is unreadable.
    /// Below `size_kb` it warns (zero page, swapped, still shared with a parent).
    pub resident_kb: Vec<Option<u64>>,
    /// Every participant of the point ran on one CPU (`placement::Resolved::one_cpu`).
    pub one_cpu: Vec<bool>,
    /// What the interference neighbours achieved, per point (None: none ran).
    pub interference: Vec<Option<crate::interference::Achieved>>,
    /// The scheduling policy every task ran under, read back (every point's is the same:
    /// the one asked, or the caller's); None without points.
    pub sched: Option<crate::sched::Sched>,
}

/// What the statistics say of one point's samples: their description, the point's figure
/// with its uncertainty under the variance model (`stats`), the 95 % interval that holds the
/// next run's figure, each level's spread, and the verdict word.
#[derive(Debug, Clone, PartialEq)]
pub struct PointStats {
    pub description: Description,
    pub estimate: Estimate,
    /// The run level earlier runs showed, included in `estimate`, if any, and the
    /// uncertainty of this run alone (what the next run's history keeps).
    pub run_level: Option<RunLevel>,
    pub within: Uncertainty,
    pub ci_low: f64,
    pub ci_high: f64,
    pub spreads: Spreads,
    pub instances: usize,
    pub verdict: Verdict,
}

impl PointStats {
    /// Of `samples` measured in blocks of `block` repetitions, `instance_blocks` blocks per
    /// ring instance, held to `stop`'s precision, with the run level earlier runs showed.
    pub fn of(
        samples: &[f64],
        block: usize,
        instance_blocks: &[usize],
        stop: &Stop,
        run_level: Option<&RunLevel>,
    ) -> Self {
        let layout = Layout {
            samples,
            block,
            instance_blocks,
        };
        let description = stats::describe(samples);
        let estimate = stats::estimate(&layout, run_level);
        let within = stats::estimate(&layout, None).uncertainty;
        // No interval at all (one unit to go on) is NaN, not ±inf: "none", in every format.
        let (low, high) = estimate.next_run_interval(stop::CONFIDENCE);
        let finite = low.is_finite() && high.is_finite();
        let (ci_low, ci_high) = if finite {
            (low, high)
        } else {
            (f64::NAN, f64::NAN)
        };
        PointStats {
            verdict: verdict::verdict(&estimate, stop.target(), description.clusters),
            description,
            estimate,
            run_level: run_level.copied(),
            within,
            ci_low,
            ci_high,
            spreads: stats::spreads(&layout),
            instances: instance_blocks.len(),
        }
    }
}

/// Percentiles of the hop latencies and the histogram they come from, trimmed after the last
/// bucket any point used.
#[derive(Debug, Clone, PartialEq)]
pub struct HopSummary {
    /// ("p50", µs per point), ("p90", ...), ("p99", ...), ("p99.9", ...), ("max", ...).
    pub percentiles_us: Vec<(&'static str, Vec<f64>)>,
    /// Bucket edges in µs: one more than buckets.
    pub edges_us: Vec<f64>,
    /// Hops per bucket, `[point][bucket]`.
    pub counts: Vec<Vec<u64>>,
}

const HOP_QUANTILES: [(&str, f64); 4] =
    [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)];

impl HopSummary {
    /// `None` unless every point recorded its hops.
    fn of(points: &[Point]) -> Option<Self> {
        // Both lanes (hops into participant 0 and into the others) in one histogram.
        let merged: Vec<(Vec<u64>, u64)> = points
            .iter()
            .map(|p| p.hops.as_ref().map(|(c, m)| (hops::merged(c), *m)))
            .collect::<Option<_>>()?;
        let logs: Vec<&(Vec<u64>, u64)> = merged.iter().collect();
        let used = logs
            .iter()
            .filter_map(|(c, _)| c.iter().rposition(|&x| x > 0))
            .max()
            .map_or(1, |j| j + 1);
        let mut percentiles_us: Vec<(&'static str, Vec<f64>)> = HOP_QUANTILES
            .iter()
            .map(|&(name, q)| {
                let v = logs.iter().map(|(c, _)| hops::percentile(c, q) / NS_PER_US);
                (name, v.collect())
            })
            .collect();
        let max = logs.iter().map(|(_, m)| *m as f64 / NS_PER_US).collect();
        percentiles_us.push(("max", max));
        Some(HopSummary {
            percentiles_us,
            edges_us: (0..=used)
                .map(|j| hops::lower(j) as f64 / NS_PER_US)
                .collect(),
            counts: logs.iter().map(|(c, _)| c[..used].to_vec()).collect(),
        })
    }
}

/// What the kernel should count per hop for this engine and transport.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    /// Fibers: the kernel sees no switch at all.
    Invisible,
    /// Every hop blocks the receiver until the sender wakes it (a pipe, eventfd or socket
    /// read; a futex wait, futex_waitv or io_uring FUTEX_WAIT; io_uring_enter until MSG_RING
    /// posts a completion; a signal; a condition variable). On one CPU that is at least
    /// one switch per hop, and at most two: a woken participant often preempts its waker,
    /// which runs again later only to block. Fewer when the receiver is still running on
    /// another CPU.
    Blocking,
    /// sched_yield: at least one switch per hop, more when the scheduler picks a task that
    /// does not hold the token.
    Yielding,
}

impl Model {
    /// The model for a run: what its engine and transport make the kernel do (and, for
    /// blocking hops, whether a point ran on one CPU: `Point::one_cpu`).
    pub fn of(engine: Engine, transport: TransportKind) -> Self {
        match (engine, transport) {
            (Engine::Fiber, _) => Model::Invisible,
            (_, TransportKind::Yield) => Model::Yielding,
            _ => Model::Blocking,
        }
    }
}

fn check_model(model: Model, p: &Point, per_hop: f64) -> Option<String> {
    let procs = p.procs;
    let what = match model {
        Model::Invisible if per_hop > 0.05 => {
            "fibers should cost no kernel switch: the driving thread was descheduled"
        }
        Model::Blocking if p.one_cpu && per_hop < 0.9 => {
            "fewer than one switch per hop on one CPU: participants found the token without \
             sleeping (spinning?)"
        }
        Model::Blocking if per_hop > 2.05 => {
            "more than two switches per hop: participants were preempted by other work or woke \
             spuriously"
        }
        Model::Yielding if per_hop < 0.9 => {
            "sched_yield did not always switch: another task or CPU ran the ring"
        }
        _ => return None,
    };
    Some(format!(
        "{procs} participants: switches_per_hop={per_hop:.2}: {what}"
    ))
}

const NS_PER_US: f64 = 1000.0;

/// Every figure of a run of `cfg` that produced `points`.
pub fn summarize(cfg: &Config, points: &[Point]) -> RingSummary {
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

fn summarize_with(points: &[Point], model: Model, cfg: &Config) -> RingSummary {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let us = |v: Vec<f64>| v.into_iter().map(|x| x / NS_PER_US).collect::<Vec<_>>();
    // Each point's series, one value per repetition (averaged over the parallel rings).
    let samples_us: Vec<Vec<f64>> = points.iter().map(|p| us(p.net_ns())).collect();
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
        })
        .collect();
    let all_overhead: Vec<f64> = points
        .iter()
        .flat_map(|p| p.overhead_ns.iter().flatten().map(|x| x / NS_PER_US))
        .collect();
    // Wake-up preemption makes many ring switches involuntary: every source counts both kinds.
    let per_hop = |p: &Point| match (&p.accounting, p.counters.switches) {
        (Ok(a), _) if a.hops > 0 => (a.switches as f64 / a.hops as f64, "kernel"),
        (_, Some(sw)) => (sw as f64 / p.observed_hops.max(1) as f64, "perf"),
        _ => (
            (p.rusage.voluntary + p.rusage.involuntary) as f64 / p.rusage.passes.max(1) as f64,
            "rusage",
        ),
    };
    let migrations = |p: &Point| match (&p.accounting, p.counters.migrations) {
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
    };
    let hw = |f: &dyn Fn(&Point) -> Option<u64>| {
        points
            .iter()
            .map(|p| f(p).map(|v| v as f64 / p.observed_hops.max(1) as f64))
            .collect::<Option<Vec<f64>>>()
    };
    let first = points
        .first()
        .map(|p| p.counters.clone())
        .unwrap_or_default();
    let warnings = points
        .iter()
        .filter_map(|p| check_model(model, p, per_hop(p).0))
        .collect();
    let tsc = clock::tsc();
    let tsc_cycles_per_switch = tsc.is_ok().then(|| {
        points
            .iter()
            .map(|p| stats::median(&p.net_cycles()))
            .collect()
    });
    RingSummary {
        tsc_cycles_per_switch,
        tsc,
        switches_per_hop: points.iter().map(|p| per_hop(p).0).collect(),
        switch_source: points.iter().map(|p| per_hop(p).1).collect(),
        cpu: points
            .iter()
            .map(|p| {
                p.accounting
                    .as_ref()
                    .map_or_else(|_| PerHop::default(), Accounting::per_hop)
            })
            .collect(),
        involuntary_switches: points.iter().map(|p| p.rusage.involuntary as i64).collect(),
        migrations: points.iter().map(migrations).collect(),
        observer: cfg.observer.as_str(),
        cycles_per_switch: hw(&|p| p.counters.cycles),
        instructions_per_switch: hw(&|p| p.counters.instructions),
        cache_misses_per_switch: hw(&|p| p.counters.cache_misses),
        dtlb_misses_per_switch: hw(&|p| p.counters.dtlb_misses),
        hardware_unavailable: first.hardware_unavailable,
        software_unavailable: first.software_unavailable,
        warnings,
        procs: points.iter().map(|p| p.procs).collect(),
        raw_us: raw_samples_us.iter().map(|v| stats::median(v)).collect(),
        overhead_point_us: overhead_samples_us
            .iter()
            .map(|v| stats::median(v))
            .collect(),
        overhead_us: stats::median(&all_overhead),
        ring_us: points.iter().map(ring_medians_us).collect(),
        below_resolution: stats.iter().map(|s| s.description.median <= 0.0).collect(),
        counted_us: points.iter().map(|p| p.counted_ns / NS_PER_US).collect(),
        stopped: points.iter().map(|p| p.stopped).collect(),
        block: points.iter().map(|p| p.block).collect(),
        instance_blocks: points.iter().map(|p| p.instance_blocks.clone()).collect(),
        resident_kb: points.iter().map(|p| p.resident_kb).collect(),
        one_cpu: points.iter().map(|p| p.one_cpu).collect(),
        interference: points.iter().map(|p| p.interference.clone()).collect(),
        sched: points.first().map(|p| p.sched),
        cpus: points.iter().map(|p| p.cpus.clone()).collect(),
        trips: points.iter().map(|p| p.trips[0]).collect(),
        overhead_rounds: points.iter().map(|p| p.overhead_rounds[0]).collect(),
        work_verified: points.iter().map(|p| p.work_verified).collect(),
        phase_s: points.iter().map(|p| p.phase_s).collect(),
        hops: HopSummary::of(points),
        stats,
        samples_us,
        raw_samples_us,
        overhead_samples_us,
    }
}

/// Median net µs per switch of each parallel ring of a point.
fn ring_medians_us(p: &Point) -> Vec<f64> {
    let net = p.net_by_ring();
    (0..net.first().map_or(0, Vec::len))
        .map(|r| stats::median(&net.iter().map(|rep| rep[r]).collect::<Vec<_>>()) / NS_PER_US)
        .collect()
}

/// A ping-pong's figures: perf's (one op is one round trip, two switches; raw time, nothing
/// subtracted) and, measured until precise, the statistics of a ring point.
#[derive(Debug, Clone)]
pub struct PingPong {
    /// Round trips timed, and the seconds they took.
    pub loops: u64,
    pub elapsed_s: f64,
    /// µs per round trip: the median repetition's (perf's form: the whole loop's mean).
    pub usecs_per_op: f64,
    pub ops_per_sec: f64,
    pub usecs_per_switch: f64,
    /// TSC cycles per switch where the TSC is a clock (see `clock::tsc`).
    pub cycles_per_switch: Option<f64>,
    /// CPU each of the two participants was last on.
    pub cpus: Vec<i32>,
    /// µs per round trip of every timed repetition, and their statistics.
    pub samples_us: Vec<f64>,
    pub stats: PointStats,
    pub stopped: Stopped,
    pub block: usize,
    pub instance_blocks: Vec<usize>,
    pub phase_s: Phases,
    /// What both participants and the driver ran under, read back.
    pub sched: crate::sched::Sched,
    /// The hops' latencies where recorded, and what the neighbours achieved where any ran.
    pub hops: Option<HopSummary>,
    pub interference: Option<crate::interference::Achieved>,
}

/// The `PingPong` of the point a `ring::pingpong_config` run measured.
pub fn pingpong(cfg: &Config, p: &Point) -> PingPong {
    // One trip of a ring of two is a round trip; raw times are per hop.
    let per_op = |per_hop: f64| per_hop * 2.0 / NS_PER_US;
    let samples_us: Vec<f64> = p.raw_ns.iter().map(|r| per_op(r[0])).collect();
    let trips = p.trips[0];
    let loops = trips * samples_us.len() as u64;
    let elapsed_s = samples_us.iter().sum::<f64>() * trips as f64 / 1e6;
    let run = cfg.run_level(0);
    let stats = PointStats::of(&samples_us, p.block, &p.instance_blocks, &cfg.stop, run);
    let usecs_per_op = stats.description.median;
    PingPong {
        loops,
        elapsed_s,
        usecs_per_op,
        ops_per_sec: 1e6 / usecs_per_op,
        usecs_per_switch: usecs_per_op / 2.0,
        cycles_per_switch: clock::tsc()
            .ok()
            .map(|_| stats::median(&p.raw_cycles.iter().map(|r| r[0]).collect::<Vec<_>>())),
        cpus: p.cpus[0].clone(),
        samples_us,
        stats,
        stopped: p.stopped,
        block: p.block,
        instance_blocks: p.instance_blocks.clone(),
        phase_s: p.phase_s,
        sched: p.sched,
        hops: HopSummary::of(std::slice::from_ref(p)),
        interference: p.interference.clone(),
    }
}

#[cfg(test)]
mod tests;
