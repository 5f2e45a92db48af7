//! The parts of a result's record its figures fill: each point's statistics, seconds per
//! phase, the TSC's calibration, the hardware counts and the hop histogram. Declared here,
//! beside `summarize` and `pingpong`, which fill them; `record/` puts them in its records.

use super::PointStats;
use crate::clock::Tsc;
use crate::fields::record;
use crate::ring::Phases;

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
}
