//! From raw points to the figures users read: net per-switch samples, their summaries, the
//! overhead that was subtracted, the kernel's evidence checked against the engine's model,
//! hop-latency percentiles. A Rust caller of `run` gets every figure the Python result has:
//! `summarize` fills a ring's figures as its record holds them (`ring.rs`), `records.rs`
//! declares the parts of the records the figures fill.

use crate::clock;
use crate::config::Config;
use crate::engine::{Engine, TransportKind};
use crate::fields::record;
use crate::hops;
use crate::ring::Point;
use crate::stats::{self, Description, Estimate, Layout, RunLevel, Spreads, Uncertainty};
use crate::stop::{self, Stop};
use crate::verdict::{self, Verdict};

mod records;
mod ring;

pub use records::{HardwareRecord, HistogramRecord, PhasesRecord, StatsRecord, TscRecord};
pub use ring::{by_repetition, summarize, RingFigures};

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

    /// These statistics of a point a CPU quota throttled `periods` times while it was
    /// timed: `Throttled`, whatever its spread (one stall can sit inside a narrow interval).
    pub fn throttled(self, periods: Option<u64>) -> Self {
        match periods {
            Some(1..) => PointStats {
                verdict: Verdict::Throttled,
                ..self
            },
            _ => self,
        }
    }
}

/// Percentiles of the hop latencies and the histogram they come from, trimmed after the last
/// bucket any point used: its edges in µs (one more than buckets), hops per bucket
/// `[point][bucket]`.
struct HopSummary {
    /// ("p50", µs per point), ("p90", ...), ("p99", ...), ("p99.9", ...), ("max", ...).
    percentiles_us: Vec<(&'static str, Vec<f64>)>,
    histogram: HistogramRecord,
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
        let histogram = HistogramRecord {
            edges_us: (0..=used)
                .map(|j| hops::lower(j) as f64 / NS_PER_US)
                .collect(),
            counts: logs.iter().map(|(c, _)| c[..used].to_vec()).collect(),
        };
        Some(HopSummary {
            percentiles_us,
            histogram,
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

record! {
    /// A ping-pong's figures: perf's (one op is one round trip, two switches; raw time,
    /// nothing subtracted) and, measured until precise, the statistics of a ring point.
    pub struct PingpongFigures {
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
    }
}

/// A ping-pong's round trips timed (perf's `loops`, its record's first field), its figures,
/// and the hops' latency percentiles where recorded (its record's, after the policy).
#[derive(Debug, Clone)]
pub struct PingPong {
    pub loops: u64,
    pub figures: PingpongFigures,
    pub hop_percentiles_us: Option<Vec<(&'static str, Vec<f64>)>>,
}

/// The context switches a point made per hop, and who counted them: the kernel's accounting
/// of the timed windows, else perf's count, else the participants' lifetime rusage. Wake-up
/// preemption makes many ring switches involuntary: every source counts both kinds.
pub(crate) fn per_hop(p: &Point) -> (f64, &'static str) {
    match (&p.accounting, p.counters.switches) {
        (Ok(a), _) if a.hops > 0 => (a.switches as f64 / a.hops as f64, "kernel"),
        (_, Some(sw)) => (sw as f64 / p.observed_hops.max(1) as f64, "perf"),
        _ => (
            (p.rusage.voluntary + p.rusage.involuntary) as f64 / p.rusage.passes.max(1) as f64,
            "rusage",
        ),
    }
}

/// The `PingPong` of the point a `ring::pingpong_config` run measured.
pub fn pingpong(cfg: &Config, p: &Point) -> PingPong {
    // One trip of a ring of two is a round trip; raw times are per hop.
    let per_op = |per_hop: f64| per_hop * 2.0 / NS_PER_US;
    let samples_us: Vec<f64> = p.raw_ns.iter().map(|r| per_op(r[0])).collect();
    let trips = p.trips[0];
    let run = cfg.run_level(0);
    let stats = PointStats::of(&samples_us, p.block, &p.instance_blocks, &cfg.stop, run)
        .throttled(p.throttled);
    // µs per round trip: the median repetition's (perf's form: the whole loop's mean).
    let usecs_per_op = stats.description.median;
    let tsc = clock::tsc();
    let figures = PingpongFigures {
        elapsed_s: samples_us.iter().sum::<f64>() * trips as f64 / 1e6,
        usecs_per_op,
        ops_per_sec: 1e6 / usecs_per_op,
        usecs_per_switch: usecs_per_op / 2.0,
        cycles_per_switch: tsc
            .is_ok()
            .then(|| stats::median(&p.raw_cycles.iter().map(|r| r[0]).collect::<Vec<_>>())),
        tsc: (&tsc).into(),
        cpus: p.cpus[0].clone(),
        stats: std::slice::from_ref(&stats).into(),
        stopped: p.stopped.as_str(),
        block: p.block,
        instance_blocks: p.instance_blocks.clone(),
        phase_s: std::slice::from_ref(&p.phase_s).into(),
        samples_us,
    };
    PingPong {
        loops: trips * figures.samples_us.len() as u64,
        figures,
        hop_percentiles_us: HopSummary::of(std::slice::from_ref(p)).map(|h| h.percentiles_us),
    }
}

#[cfg(test)]
mod tests;
