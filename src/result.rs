//! From raw points to the figures users read: net per-switch samples, their summaries, the
//! overhead that was subtracted. Python only wraps these arrays.

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
}

const NS_PER_US: f64 = 1000.0;

pub fn summarize(points: &[Point]) -> RingSummary {
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
    RingSummary {
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
