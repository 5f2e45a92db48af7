//! The run level: how much runs of a point differ beyond their own errors, from earlier
//! runs on the same machine (DerSimonian and Kacker's estimate, Hampel's identifier).

use super::{finite, mean, median, sum_sq_dev, Estimate, Level, Uncertainty};
use crate::error::Result;
use serde::Serialize;

/// The spread between runs of a point that one run cannot see (the machine's drift over
/// seconds to hours), estimated from earlier runs of the same point on the same machine in
/// comparable conditions (which runs those are is the history's choice): `sd` is relative
/// (0.05: runs differ by about 5 % beyond what each run's own error explains), `df` the
/// effective number of runs it rests on less one (`run_level`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(into = "Recorded")]
pub struct RunLevel {
    pub sd: f64,
    pub df: f64,
}

/// A run level as a run records it (a ring's stats name them so): `sd` over `runs_seen`
/// earlier runs, the effective runs its `df` counts.
#[derive(Serialize)]
struct Recorded {
    sd: f64,
    runs_seen: f64,
}

impl From<RunLevel> for Recorded {
    fn from(level: RunLevel) -> Recorded {
        Recorded {
            sd: level.sd,
            runs_seen: level.df + 1.0,
        }
    }
}

impl RunLevel {
    /// The run level a run recorded (its `sd_run` over `runs_seen` earlier runs), where it
    /// is one: a finite spread from at least two runs.
    pub fn recorded(sd: Option<f64>, runs_seen: Option<f64>) -> Option<RunLevel> {
        match (sd, runs_seen) {
            (Some(sd), Some(runs)) if sd.is_finite() && sd >= 0.0 && runs >= 2.0 => {
                Some(RunLevel { sd, df: runs - 1.0 })
            }
            _ => None,
        }
    }
}

/// One earlier run of a point: the ln of its figure, its relative standard error, and how
/// many seconds ago it ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EarlierRun {
    pub log_figure: f64,
    pub rel_se: f64,
    pub age_s: f64,
}

impl EarlierRun {
    /// One point's runs from its ln figures, relative errors and ages, as many of each: a
    /// ValueError naming `history` where they are not.
    pub fn series(figures: &[f64], ses: &[f64], ages: &[f64]) -> crate::error::Result<Vec<Self>> {
        if figures.len() != ses.len() || figures.len() != ages.len() {
            let lengths = format!("{}, {} and {}", figures.len(), ses.len(), ages.len());
            return Err(crate::error::Error::invalid(
                "history",
                format!(
                    "a point's ln figures, relative errors and ages must be as many, got {lengths}"
                ),
            ));
        }
        let runs = figures.iter().zip(ses).zip(ages);
        Ok(runs
            .map(|((&log_figure, &rel_se), &age_s)| EarlierRun {
                log_figure,
                rel_se,
                age_s,
            })
            .collect())
    }
}

/// The run level a comparison assumes for a side that is one run and knows no run level of
/// its own (no history, too few comparable runs): one run cannot show how the next differs.
/// On this project's machine kind runs of a point differ by more than their own intervals
/// say, and with a heavy tail: of 16 back-to-back quiet default runs of a pinned 2-process
/// ring, 15 lay within ±1.1 % and one 29 % above; quiet run-to-run CVs of 10–17 % (the
/// accuracy pages on variance and verdicts). A spread of 10 %, held loosely (8 degrees of
/// freedom): one run a side then calls a change only beyond about ±40 %, where such a jump
/// on either side cannot make it, and calls a doubling even when one side jumped.
pub const ASSUMED_RUN_LEVEL: RunLevel = RunLevel { sd: 0.10, df: 8.0 };
/// Fewest earlier runs a run level is estimated from: from two, Student's t on one degree
/// of freedom (12.7) makes any spread between them an interval of many times the figure.
pub const MIN_RUNS: usize = 3;
/// Seconds after which an earlier run counts half as much as one just made: the machine's
/// regimes last seconds to hours, and a run of yesterday says less of the next one.
pub const RUN_HALF_LIFE_S: f64 = 6.0 * 3600.0;
/// Hampel's identifier, from this many runs on: a run further from the runs' median than
/// `outlier_scales` robust standard deviations (1.4826 × their median absolute deviation,
/// or their median own error where that is larger) is set aside. A few runs measured while
/// something else took the CPU are not the spread between runs; a breakdown point of one
/// half keeps them out until they are half of the runs. Below six runs the median absolute
/// deviation is too noisy to tell an outlier from the spread (see `outlier_scales`).
const MIN_TRIMMED: usize = 6;
/// The median absolute deviation of normal data times this is their standard deviation.
const MAD_TO_SD: f64 = 1.4826;

/// The run level of each point from its earlier runs (None where none are known).
pub fn run_levels(history: &[Option<Vec<EarlierRun>>]) -> Vec<Option<RunLevel>> {
    history
        .iter()
        .map(|runs| runs.as_deref().and_then(run_level))
        .collect()
}

/// The `RunLevel` of earlier runs; `None` below `MIN_RUNS` usable ones (a figure, error or
/// age that is not finite, an error that is not positive and an age below zero leave a run
/// out, as does Hampel's identifier).
///
/// The between-run variance is DerSimonian and Kacker's method-of-moments estimate with
/// general weights (the DerSimonian–Laird estimate when all runs are equally old): run i
/// weighs `d_i / s_i²`, its own error `s_i` and its age's decay `d_i = ½^(age/half-life)`.
/// It is bounded by the variance of the kept runs' figures themselves, so no choice of
/// weights makes runs differ by more than they were seen to; the degrees of freedom are
/// Kish's effective number of runs under the decay, less one (at least one).
pub fn run_level(runs: &[EarlierRun]) -> Option<RunLevel> {
    let usable: Vec<EarlierRun> = runs
        .iter()
        .filter(|r| r.log_figure.is_finite() && r.rel_se.is_finite() && r.rel_se > 0.0)
        .filter(|r| r.age_s.is_finite() && r.age_s >= 0.0)
        .copied()
        .collect();
    if usable.len() < MIN_RUNS {
        return None;
    }
    let kept = without_outliers(&usable);
    if kept.len() < MIN_RUNS {
        return None;
    }
    let decay: Vec<f64> = kept
        .iter()
        .map(|r| 0.5f64.powf(r.age_s / RUN_HALF_LIFE_S))
        .collect();
    let var: Vec<f64> = kept.iter().map(|r| r.rel_se * r.rel_se).collect();
    let y: Vec<f64> = kept.iter().map(|r| r.log_figure).collect();
    let a: Vec<f64> = decay.iter().zip(&var).map(|(d, v)| d / v).collect();
    let sum_a: f64 = a.iter().sum();
    let sum_a2: f64 = a.iter().map(|w| w * w).sum();
    let center = a.iter().zip(&y).map(|(w, y)| w * y).sum::<f64>() / sum_a;
    let q: f64 = a
        .iter()
        .zip(&y)
        .map(|(w, y)| w * (y - center).powi(2))
        .sum();
    // What q would be without a run level: each run's own variance, as weighed.
    let own: f64 = a
        .iter()
        .zip(&var)
        .map(|(w, v)| w * v - w * w * v / sum_a)
        .sum();
    let scale = sum_a - sum_a2 / sum_a;
    let tau2 = if scale > 0.0 {
        ((q - own) / scale).max(0.0)
    } else {
        0.0
    };
    let seen = sum_sq_dev(&y) / (y.len() - 1) as f64;
    let effective = decay.iter().sum::<f64>().powi(2) / decay.iter().map(|d| d * d).sum::<f64>();
    Some(RunLevel {
        sd: tau2.min(seen).sqrt(),
        df: (effective - 1.0).max(1.0),
    })
}

/// Hampel's threshold for `n` runs, in robust standard deviations: about the 99th
/// percentile of the largest distance of n normal draws from their median (simulated: 10.4
/// at 6 runs, 6.7 at 10, 4.75 at 30; 15.6 at 4 and 114 at 3), so that about one set of
/// runs in a hundred that differ only by chance loses one (0.8-1.5 % from 6 to 30 runs).
/// The usual fixed 3.5 would take a run from 12 % of such sets of 10 and 28 % of sets of 3.
pub(super) fn outlier_scales(n: usize) -> f64 {
    4.0 + 26.0 / (n as f64 - 2.0)
}

/// `runs` without those Hampel's identifier sets aside (see `MIN_TRIMMED`).
pub(super) fn without_outliers(runs: &[EarlierRun]) -> Vec<EarlierRun> {
    if runs.len() < MIN_TRIMMED {
        return runs.to_vec();
    }
    let y: Vec<f64> = runs.iter().map(|r| r.log_figure).collect();
    let center = median(&y);
    let deviations: Vec<f64> = y.iter().map(|v| (v - center).abs()).collect();
    let own = median(&runs.iter().map(|r| r.rel_se).collect::<Vec<_>>());
    let scale = (MAD_TO_SD * median(&deviations)).max(own);
    runs.iter()
        .zip(&deviations)
        .filter(|(_, d)| **d <= outlier_scales(runs.len()) * scale)
        .map(|(r, _)| *r)
        .collect()
}

/// The estimate from whole runs of the same point: their mean, with the spread between runs
/// as the uncertainty (the level that repeats between runs, when a file holds several).
/// `figures`: at least one, all finite.
pub fn runs_estimate(figures: &[f64]) -> Result<Estimate> {
    finite("figures", figures)?;
    let n = figures.len() as f64;
    let uncertainty = if figures.len() < 2 {
        Uncertainty::UNKNOWN
    } else {
        Uncertainty {
            se: (sum_sq_dev(figures) / (n - 1.0) / n).sqrt(),
            df: n - 1.0,
            level: Level::Run,
        }
    };
    Ok(Estimate {
        center: mean(figures),
        uncertainty,
    })
}
