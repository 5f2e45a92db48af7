//! From raw points to the figures users read: net per-switch samples, their summaries, the
//! overhead that was subtracted. Python only wraps these arrays.

use crate::clock::{self, Tsc};
use crate::ring::Point;
use crate::stats::{self, Summary};

#[derive(Debug, Clone)]
pub struct RingSummary {
    pub procs: Vec<usize>,
    /// Net µs per switch of every repetition (mean over parallel rings), `[repetition][point]`.
    pub samples_us: Vec<Vec<f64>>,
    /// Raw µs per hop and overhead µs per hop, same layout.
    pub raw_samples_us: Vec<Vec<f64>>,
    pub overhead_samples_us: Vec<Vec<f64>>,
    /// Per point: summary of the net samples, and medians of raw and overhead.
    pub stats: Vec<Summary>,
    pub raw_us: Vec<f64>,
    pub overhead_point_us: Vec<f64>,
    /// Median of every overhead sample of the run: the `ovr=` of the xgraph title.
    pub overhead_us: f64,
    /// Median net µs per switch of each parallel ring, `[point][ring]`.
    pub ring_us: Vec<Vec<f64>>,
    /// The median net value is not above zero: the switch is below what the method resolves.
    pub below_resolution: Vec<bool>,
    /// Kernel context switches per hop: perf counters over one extra repetition run with
    /// them attached (after the timed ones, which run without: counting slows every switch)
    /// where permitted, else the participants' lifetime rusage (`switch_source` says which).
    pub switches_per_hop: Vec<f64>,
    pub switch_source: Vec<&'static str>,
    /// Involuntary switches of the participants (rusage, lifetime) and CPU migrations
    /// (perf, timed repetitions; -1 where counters are unavailable).
    pub involuntary_switches: Vec<i64>,
    pub migrations: Vec<i64>,
    /// Per switch, from hardware counters; `None` with the reason where unavailable.
    pub cycles_per_switch: Option<Vec<f64>>,
    pub instructions_per_switch: Option<Vec<f64>>,
    pub hardware_unavailable: Option<String>,
    pub software_unavailable: Option<String>,
    /// Disagreements between what was counted and what the engine's model predicts.
    pub warnings: Vec<String>,
    /// Median net TSC cycles per switch (the TSC read cost subtracted), where the TSC is an
    /// invariant clock; else `None` and the reason in `tsc`.
    pub tsc_cycles_per_switch: Option<Vec<f64>>,
    pub tsc: Result<Tsc, String>,
}

/// What the kernel should count per hop for this engine and transport.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Model {
    /// Fibers: the kernel sees no switch at all.
    Invisible,
    /// Every hop blocks the receiver until the sender wakes it. On one CPU that is at least
    /// one switch per hop, and at most two: a woken participant often preempts its waker,
    /// which runs again later only to block (measured: 1.0 with 2 participants, about 1.5
    /// with 8). Fewer when the receiver is still running on another CPU.
    Blocking { single_cpu: bool },
    /// sched_yield: at least one switch per hop, more when the scheduler picks a task that
    /// does not hold the token.
    Yielding,
}

fn check_model(model: Model, procs: usize, per_hop: f64) -> Option<String> {
    let what = match model {
        Model::Invisible if per_hop > 0.05 => {
            "fibers should cost no kernel switch: the driving thread was descheduled"
        }
        Model::Blocking { single_cpu: true } if per_hop < 0.9 => {
            "fewer than one switch per hop on one CPU: participants found the token without \
             sleeping (spinning?)"
        }
        Model::Blocking { .. } if per_hop > 2.05 => {
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

pub fn summarize(points: &[Point], model: Model) -> RingSummary {
    let reps = points.first().map_or(0, |p| p.raw_ns.len());
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let per_rep = |f: &dyn Fn(&Point, usize) -> f64| -> Vec<Vec<f64>> {
        (0..reps)
            .map(|k| points.iter().map(|p| f(p, k)).collect())
            .collect()
    };
    let net = |p: &Point, k: usize, r: usize| (p.raw_ns[k][r] - p.overhead_ns[k][r]) / NS_PER_US;
    let samples_us = per_rep(&|p, k| {
        mean(
            &(0..p.raw_ns[k].len())
                .map(|r| net(p, k, r))
                .collect::<Vec<_>>(),
        )
    });
    let raw_samples_us = per_rep(&|p, k| mean(&p.raw_ns[k]) / NS_PER_US);
    let overhead_samples_us = per_rep(&|p, k| mean(&p.overhead_ns[k]) / NS_PER_US);
    let column = |m: &[Vec<f64>], j: usize| m.iter().map(|row| row[j]).collect::<Vec<f64>>();
    let stats: Vec<Summary> = (0..points.len())
        .map(|j| stats::summarize(&column(&samples_us, j)))
        .collect();
    let all_overhead: Vec<f64> = points
        .iter()
        .flat_map(|p| p.overhead_ns.iter().flatten().map(|x| x / NS_PER_US))
        .collect();
    let per_hop = |p: &Point| match p.counters.switches {
        Some(sw) => (sw as f64 / p.observed_hops.max(1) as f64, "perf"),
        // Wake-up preemption makes many ring switches involuntary: count both kinds.
        None => (
            (p.rusage.voluntary + p.rusage.involuntary) as f64 / p.rusage.passes.max(1) as f64,
            "rusage",
        ),
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
        .filter_map(|p| check_model(model, p.procs, per_hop(p).0))
        .collect();
    let tsc = clock::tsc();
    let tsc_cycles_per_switch = tsc.is_ok().then(|| {
        points
            .iter()
            .map(|p| {
                let net: Vec<f64> = (0..reps)
                    .map(|k| {
                        let rings = p.raw_cycles[k].len();
                        (0..rings)
                            .map(|r| p.raw_cycles[k][r] - p.overhead_cycles[k][r])
                            .sum::<f64>()
                            / rings as f64
                    })
                    .collect();
                stats::median(&net)
            })
            .collect()
    });
    RingSummary {
        tsc_cycles_per_switch,
        tsc,
        switches_per_hop: points.iter().map(|p| per_hop(p).0).collect(),
        switch_source: points.iter().map(|p| per_hop(p).1).collect(),
        involuntary_switches: points.iter().map(|p| p.rusage.involuntary as i64).collect(),
        migrations: points
            .iter()
            .map(|p| p.counters.migrations.map_or(-1, |m| m as i64))
            .collect(),
        cycles_per_switch: hw(&|p| p.counters.cycles),
        instructions_per_switch: hw(&|p| p.counters.instructions),
        hardware_unavailable: first.hardware_unavailable,
        software_unavailable: first.software_unavailable,
        warnings,
        procs: points.iter().map(|p| p.procs).collect(),
        raw_us: (0..points.len())
            .map(|j| stats::median(&column(&raw_samples_us, j)))
            .collect(),
        overhead_point_us: (0..points.len())
            .map(|j| stats::median(&column(&overhead_samples_us, j)))
            .collect(),
        overhead_us: stats::median(&all_overhead),
        ring_us: points
            .iter()
            .map(|p| {
                (0..p.raw_ns[0].len())
                    .map(|r| stats::median(&(0..reps).map(|k| net(p, k, r)).collect::<Vec<_>>()))
                    .collect()
            })
            .collect(),
        below_resolution: stats.iter().map(|s| s.median <= 0.0).collect(),
        stats,
        samples_us,
        raw_samples_us,
        overhead_samples_us,
    }
}
