//! Pure statistics over one point's samples and the levels they were measured in; no policy
//! (when to stop and which word describes a point are `stop`'s). Distribution quantiles come
//! from `statrs`.
//!
//! The variance model. A point's samples (net µs per switch, one per timed repetition) are
//! grouped in levels, innermost first:
//!
//! - **repetitions** inside a *block* (consecutive repetitions between two overhead
//!   repetitions),
//! - **blocks** inside a ring *instance* (one set of freshly started participants, with their
//!   own pages, stacks and places in the scheduler),
//! - **instances** inside a *run* (one call, one process),
//! - **runs** (and machines), which one run cannot see.
//!
//! Samples of one block share the same seconds of the machine, and blocks of one instance its
//! pages and task placement, so a level's units are not independent draws of the level above:
//! the uncertainty of a point's figure comes from the highest level that has replicates
//! (`uncertainty`), with the degrees of freedom that level really has.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, FisherSnedecor, Normal, StudentsT};

#[cfg(test)]
pub(crate) mod noise;
mod runs;
pub mod sequential;
mod series;
pub use runs::RUN_HALF_LIFE_S;
pub use runs::{
    run_level, run_levels, runs_estimate, EarlierRun, RunLevel, ASSUMED_RUN_LEVEL, MIN_RUNS,
};
pub use series::{series, Mode, Series, MIN_SPLIT_RUNS, MODE_GAP, MODE_GAP_SPREADS};

/// Tukey's fences: samples beyond 1.5 IQR of the quartiles are outliers.
const TUKEY_K: f64 = 1.5;

// Bimodality thresholds; see `count_clusters` for the reasoning.
const MIN_CLUSTER_SIZE: usize = 2;
const SMALL_CLUSTER_FRACTION: f64 = 0.2;
const ALWAYS_ENOUGH_CLUSTER_SIZE: usize = 3;
const MIN_GAP_OF_MEDIAN: f64 = 0.05;
const MIN_GAP_OVER_POOLED_SD: f64 = 8.0;

/// Instances are pooled with blocks when their spread is not above the blocks' at this
/// significance (Bancroft's rule for pooling a random effect with the error term: a liberal
/// level, so that an instance effect the data can barely see is still kept).
const POOLING_ALPHA: f64 = 0.25;

/// Moments, order statistics and shape of one point's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation (n - 1 denominator); 0 for a single sample.
    pub stdev: f64,
    /// `stdev / |mean|`; infinite when the mean is 0 but the samples vary.
    pub cv: f64,
    /// Samples outside Tukey's fences (1.5 IQR beyond the quartiles).
    pub outliers: usize,
    /// 1, or 2 when the samples split into two well separated groups.
    pub clusters: usize,
}

/// Median of unsorted samples; NaN for an empty slice.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    quantile_sorted(&sorted_copy(xs), 0.5)
}

/// Describes repeated measurements.
///
/// # Panics
///
/// On empty input or any NaN/infinite sample: a silently poisoned summary is worse than a
/// crash, because it would be published as a benchmark result.
pub fn describe(xs: &[f64]) -> Description {
    assert!(
        !xs.is_empty(),
        "describe: need at least one sample, got an empty slice"
    );
    if let Some((i, x)) = xs.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        panic!("describe: sample {i} is not finite ({x}); all samples must be finite");
    }
    // Sorted first, so that the result does not depend on the order of the repetitions,
    // down to the last bit.
    let s = sorted_copy(xs);
    let n = s.len();
    let mean = mean(&s);
    let stdev = if n > 1 {
        (sum_sq_dev(&s) / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let cv = if mean != 0.0 {
        stdev / mean.abs()
    } else if stdev > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    Description {
        n,
        min: s[0],
        max: s[n - 1],
        median: quantile_sorted(&s, 0.5),
        mean,
        stdev,
        cv,
        outliers: count_outliers(&s),
        clusters: count_clusters(&s),
    }
}

/// A level of the variance model, innermost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Repetition,
    Block,
    Instance,
    Run,
}

impl Level {
    /// Each one's name, innermost first.
    pub const NAMES: [&'static str; 4] = ["repetition", "block", "instance", "run"];
    const ALL: [Level; 4] = [Level::Repetition, Level::Block, Level::Instance, Level::Run];

    /// The level a name names.
    pub fn parse(name: &str) -> Option<Level> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}
serialize_as_word!(Level);

/// A level read back by its word.
impl<'de> Deserialize<'de> for Level {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let word = String::deserialize(d)?;
        Level::parse(&word)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown level {word:?}")))
    }
}

/// One point's samples in the order they were measured, and how they are grouped: runs of
/// `block` consecutive samples form the blocks, runs of `instance_blocks[i]` consecutive
/// blocks the instances. A fixed-repetition point (lmbench's way) is one instance of one
/// block.
#[derive(Debug, Clone, Copy)]
pub struct Layout<'a> {
    pub samples: &'a [f64],
    pub block: usize,
    pub instance_blocks: &'a [usize],
}

impl<'a> Layout<'a> {
    /// A point's samples in their levels, checked: at least one sample, all finite, blocks
    /// of at least one repetition.
    pub fn new(samples: &'a [f64], block: usize, instance_blocks: &'a [usize]) -> Result<Self> {
        finite("samples", samples)?;
        if block == 0 {
            return Err(Error::invalid("block", "must be at least 1, got 0"));
        }
        Ok(Layout {
            samples,
            block,
            instance_blocks,
        })
    }
}

/// `values` of `param`, checked: at least one, all finite.
pub fn finite(param: &'static str, values: &[f64]) -> Result<()> {
    if values.is_empty() || values.iter().any(|x| !x.is_finite()) {
        return Err(Error::invalid(
            param,
            "must hold at least one value, all finite",
        ));
    }
    Ok(())
}

impl Layout<'_> {
    /// The samples of each instance, cut into its blocks.
    fn instances(&self) -> Vec<Vec<&[f64]>> {
        let block = self.block.max(1);
        let mut blocks = self.samples.chunks(block);
        let mut out: Vec<Vec<&[f64]>> = self
            .instance_blocks
            .iter()
            .map(|&n| blocks.by_ref().take(n).collect())
            .filter(|b: &Vec<&[f64]>| !b.is_empty())
            .collect();
        // Samples the layout does not account for form one more instance, never vanish.
        let rest: Vec<&[f64]> = blocks.collect();
        if !rest.is_empty() {
            out.push(rest);
        }
        out
    }

    /// The units the uncertainty rests on, per instance: block medians (a block's repetitions
    /// share its seconds, and a median ignores the lone slow repetition that the heavy tail of
    /// these samples holds), or the samples themselves where a block is one repetition.
    fn units(&self) -> (Vec<Vec<f64>>, Level) {
        let level = if self.block > 1 {
            Level::Block
        } else {
            Level::Repetition
        };
        let units = self
            .instances()
            .iter()
            .map(|blocks| match level {
                Level::Block => blocks.iter().map(|b| median(b)).collect(),
                _ => blocks.iter().flat_map(|b| b.iter().copied()).collect(),
            })
            .collect();
        (units, level)
    }
}

/// The spread seen at each level: the standard deviation of the repetitions inside a block,
/// of the block medians inside an instance, and of the instance medians (NaN where a level
/// has fewer than two units). Pooled over the groups of the level below, so each is the
/// typical spread of that level alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spreads {
    pub repetition: f64,
    pub block: f64,
    pub instance: f64,
}

pub fn spreads(layout: &Layout) -> Spreads {
    let instances = layout.instances();
    let blocks: Vec<&[f64]> = instances.iter().flatten().copied().collect();
    let block_medians: Vec<Vec<f64>> = instances
        .iter()
        .map(|bs| bs.iter().map(|b| median(b)).collect())
        .collect();
    let instance_medians: Vec<f64> = instances
        .iter()
        .map(|bs| {
            median(
                &bs.iter()
                    .flat_map(|b| b.iter().copied())
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    Spreads {
        repetition: pooled_sd(blocks.iter().map(|b| b.to_vec())),
        block: pooled_sd(block_medians.into_iter()),
        instance: pooled_sd(std::iter::once(instance_medians)),
    }
}

/// The standard deviation inside groups, pooled (NaN without a group of two).
fn pooled_sd(groups: impl Iterator<Item = Vec<f64>>) -> f64 {
    let (mut ss, mut df) = (0.0, 0usize);
    for g in groups.filter(|g| g.len() > 1) {
        ss += sum_sq_dev(&g);
        df += g.len() - 1;
    }
    if df == 0 {
        f64::NAN
    } else {
        (ss / df as f64).sqrt()
    }
}

/// The uncertainty of a point's figure: its standard error, the degrees of freedom the
/// estimate of it has, and the level it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Uncertainty {
    pub se: f64,
    pub df: f64,
    pub level: Level,
}

impl Uncertainty {
    /// Nothing to go on: one unit.
    const UNKNOWN: Uncertainty = Uncertainty {
        se: f64::INFINITY,
        df: 0.0,
        level: Level::Repetition,
    };

    /// This run's uncertainty of a figure of `center` plus the run level, as the next run
    /// will see it: the two variances add, with Satterthwaite's degrees of freedom.
    pub fn with_run_level(self, center: f64, run: &RunLevel) -> Uncertainty {
        let (within, between) = (self.se * self.se, (run.sd * center).powi(2));
        if between == 0.0 || !within.is_finite() {
            return self;
        }
        let total = within + between;
        let df = total * total / (within * within / self.df + between * between / run.df);
        Uncertainty {
            se: total.sqrt(),
            df,
            level: Level::Run,
        }
    }
}

/// The standard error of a point's figure, from a one-way random-effects analysis of its
/// units (see `Layout::units`) grouped by instance. Where instances differ by more than their
/// units' spread predicts, the instance is the replicate: the standard error holds the
/// between-instance variance and rests on about `instances − 1` degrees of freedom
/// (Satterthwaite). Where they do not (F test at `POOLING_ALPHA`), units are pooled across
/// instances and every unit counts. One instance: its units.
pub fn uncertainty(layout: &Layout) -> Uncertainty {
    let (units, unit_level) = layout.units();
    let n: Vec<f64> = units.iter().map(|u| u.len() as f64).collect();
    let total: f64 = n.iter().sum();
    if total < 2.0 {
        return Uncertainty::UNKNOWN;
    }
    let all: Vec<f64> = units.iter().flatten().copied().collect();
    let pooled = |level| Uncertainty {
        se: (sum_sq_dev(&all) / (total - 1.0) / total).sqrt(),
        df: total - 1.0,
        level,
    };
    let k = units.len() as f64;
    if k < 2.0 {
        return pooled(unit_level);
    }
    let grand = mean(&all);
    let means: Vec<f64> = units.iter().map(|u| mean(u)).collect();
    let ms_between = n
        .iter()
        .zip(&means)
        .map(|(ni, m)| ni * (m - grand).powi(2))
        .sum::<f64>()
        / (k - 1.0);
    let within_df = total - k;
    if within_df < 1.0 {
        // One unit per instance: the instances are the units.
        return Uncertainty {
            se: (ms_between / total).sqrt(),
            df: k - 1.0,
            level: Level::Instance,
        };
    }
    let ms_within = units.iter().map(|u| sum_sq_dev(u)).sum::<f64>() / within_df;
    let instance_effect = ms_within == 0.0 && ms_between > 0.0
        || ms_within > 0.0 && {
            let f = FisherSnedecor::new(k - 1.0, within_df).expect("positive degrees of freedom");
            ms_between / ms_within > f.inverse_cdf(1.0 - POOLING_ALPHA)
        };
    if !instance_effect {
        return pooled(unit_level);
    }
    // Unbalanced one-way model: Var(grand mean) = σ²_I Σn²/N² + σ²_W/N, with
    // σ²_I = (MS_B − MS_W)/n0, i.e. c_B·MS_B + c_W·MS_W.
    let sum_sq_n: f64 = n.iter().map(|x| x * x).sum();
    let n0 = (total - sum_sq_n / total) / (k - 1.0);
    let c_between = sum_sq_n / (total * total * n0);
    let c_within = 1.0 / total - c_between;
    let var = c_between * ms_between + c_within * ms_within;
    let df = var * var
        / ((c_between * ms_between).powi(2) / (k - 1.0)
            + (c_within * ms_within).powi(2) / within_df);
    Uncertainty {
        se: var.sqrt(),
        df: df.clamp(1.0, total - 1.0),
        level: Level::Instance,
    }
}

/// Degrees of freedom beyond which Student's t is the normal distribution to 6 digits;
/// statrs' t loses its accuracy (and at 1e9 its termination) far beyond.
const NORMAL_DF: f64 = 1e5;

/// Student's t with `df` degrees of freedom, or the normal beyond `NORMAL_DF`.
fn t_distribution(df: f64) -> Box<dyn ContinuousCDF<f64, f64>> {
    if df > NORMAL_DF {
        Box::new(Normal::standard())
    } else {
        Box::new(StudentsT::new(0.0, 1.0, df).expect("positive degrees of freedom"))
    }
}

/// Two-sided quantile of Student's t: the `t` with P(|T| <= t) = `confidence`.
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 {
        return f64::INFINITY;
    }
    t_distribution(df).inverse_cdf(0.5 + confidence / 2.0)
}

/// Two-sided p-value of a t statistic.
pub fn t_p_value(t: f64, df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 || !t.is_finite() {
        return if t.is_infinite() { 0.0 } else { 1.0 };
    }
    (2.0 * t_distribution(df).sf(t.abs())).min(1.0)
}

/// A figure and its uncertainty: what an interval or a comparison needs of a point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub center: f64,
    #[serde(flatten)]
    pub uncertainty: Uncertainty,
}

impl Estimate {
    /// The interval that holds the figure of another run made the same way with probability
    /// `confidence`: `center ± t · se · √2`. Both runs' figures carry an error of about `se`,
    /// so their difference has √2 times it; a plain confidence interval of the level (without
    /// the √2) holds the next run's figure in only about 83 % of runs at 95 %.
    pub fn next_run_interval(&self, confidence: f64) -> (f64, f64) {
        let u = self.uncertainty;
        let half = t_quantile(confidence, u.df) * u.se * std::f64::consts::SQRT_2;
        (self.center - half, self.center + half)
    }

    /// Half the width of `next_run_interval` as a fraction of the figure (infinite at or
    /// below zero, where a fraction means nothing).
    pub fn relative_half_width(&self, confidence: f64) -> f64 {
        let (low, high) = self.next_run_interval(confidence);
        if self.center > 0.0 {
            (high - low) / 2.0 / self.center
        } else {
            f64::INFINITY
        }
    }
}

/// A point's figure and uncertainty under the variance model: the median of its samples,
/// and the uncertainty from the levels they were measured in, plus the run level where
/// earlier runs showed one.
pub fn estimate(layout: &Layout, run: Option<&RunLevel>) -> Estimate {
    let center = median(layout.samples);
    let within = uncertainty(layout);
    Estimate {
        center,
        uncertainty: match run {
            Some(run) => within.with_run_level(center, run),
            None => within,
        },
    }
}

/// `new` against `base`: the ratio of their figures with its interval, and the two-sided
/// p-value of "no difference", on the log scale (a ratio's natural one: 2× slower and 2×
/// faster are the same distance from 1). Welch's t with Satterthwaite's degrees of freedom,
/// each side's error being its own standard error. NaN ratio and interval where a figure is
/// not above zero.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Difference {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    pub p_value: f64,
    pub df: f64,
}

pub fn difference(base: &Estimate, new: &Estimate, confidence: f64) -> Difference {
    if !(base.center > 0.0 && new.center > 0.0) {
        return Difference {
            ratio: f64::NAN,
            low: f64::NAN,
            high: f64::NAN,
            p_value: f64::NAN,
            df: f64::NAN,
        };
    }
    let rel = |e: &Estimate| e.uncertainty.se / e.center;
    let (vb, vn) = (rel(base).powi(2), rel(new).powi(2));
    let var = vb + vn;
    let df = if var > 0.0 {
        var * var / (vb * vb / base.uncertainty.df + vn * vn / new.uncertainty.df)
    } else {
        base.uncertainty.df + new.uncertainty.df
    };
    let log_ratio = (new.center / base.center).ln();
    let sd = var.sqrt();
    let half = t_quantile(confidence, df) * sd;
    let p_value = if sd > 0.0 {
        t_p_value(log_ratio / sd, df)
    } else if log_ratio == 0.0 {
        1.0
    } else {
        0.0
    };
    Difference {
        ratio: log_ratio.exp(),
        low: (log_ratio - half).exp(),
        high: (log_ratio + half).exp(),
        p_value,
        df,
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn sum_sq_dev(xs: &[f64]) -> f64 {
    let m = mean(xs);
    xs.iter().map(|x| (x - m).powi(2)).sum()
}

fn sorted_copy(xs: &[f64]) -> Vec<f64> {
    let mut s = xs.to_vec();
    s.sort_unstable_by(f64::total_cmp);
    s
}

/// Quantile `p` in [0, 1] of non-empty sorted data, using the same linear
/// interpolation as numpy's default (`method="linear"`), so results can be
/// cross-checked with `numpy.percentile(xs, 100 * p)`.
fn quantile_sorted(s: &[f64], p: f64) -> f64 {
    let h = (s.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    match s.get(lo + 1) {
        Some(&next) => s[lo] + (next - s[lo]) * (h - lo as f64),
        None => s[lo],
    }
}

fn count_outliers(s: &[f64]) -> usize {
    let q1 = quantile_sorted(s, 0.25);
    let q3 = quantile_sorted(s, 0.75);
    let iqr = q3 - q1;
    let (low, high) = (q1 - TUKEY_K * iqr, q3 + TUKEY_K * iqr);
    s.iter().filter(|&&x| x < low || x > high).count()
}

/// Decides whether sorted samples form one group or two.
///
/// Only the single largest gap is examined: with at most a few dozen samples
/// there is no evidence for more than two modes, and the VM artefact we are
/// looking for (a run landing on a "fast" or a "slow" host state) is two.
///
/// The split at that gap counts as two clusters only if all hold:
/// - each side has at least 2 samples, and the smaller side holds 20% of the
///   samples or at least 3 of them, so one or two stray outliers in a long
///   run are reported as outliers rather than as a mode;
/// - the gap exceeds 5% of |median|, so timer quantisation or sub-percent
///   drift in otherwise tight samples is not mistaken for a second mode;
/// - the gap exceeds 8 pooled within-cluster standard deviations. Pooling
///   both sides (n - 2 degrees of freedom) keeps the spread estimate usable
///   when one side has only 2-3 samples, and unlike a range-based rule it
///   does not grow with n, so more repetitions do not make a real second
///   mode harder to see. Simulated normal noise (any CV) trips it in ~1.5%
///   of 5-sample runs, ~0.1% at 8 and ~0.01% at 11; two modes 0.85/1.5 with
///   3% noise inside each are caught in >98% of runs from 5 to 50 samples.
fn count_clusters(s: &[f64]) -> usize {
    let n = s.len();
    let Some((split, gap)) = s
        .windows(2)
        .map(|w| w[1] - w[0])
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return 1;
    };
    let (left, right) = s.split_at(split + 1);
    let smaller = left.len().min(right.len());
    let big_enough = smaller >= MIN_CLUSTER_SIZE
        && (smaller as f64 >= SMALL_CLUSTER_FRACTION * n as f64
            || smaller >= ALWAYS_ENOUGH_CLUSTER_SIZE);
    if !big_enough {
        return 1;
    }
    let pooled_sd = ((sum_sq_dev(left) + sum_sq_dev(right)) / (n - 2) as f64).sqrt();
    let separated = gap > MIN_GAP_OF_MEDIAN * quantile_sorted(s, 0.5).abs()
        && gap > MIN_GAP_OVER_POOLED_SD * pooled_sd;
    if separated {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests;
