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

use statrs::distribution::{ContinuousCDF, FisherSnedecor, Normal, StudentsT};

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
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Repetition => "repetition",
            Level::Block => "block",
            Level::Instance => "instance",
            Level::Run => "run",
        }
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
#[derive(Debug, Clone, Copy, PartialEq)]
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

/// The spread between runs of a point that one run cannot see (the machine's drift over
/// seconds to hours), estimated from earlier runs of the same point on the same machine in
/// comparable conditions (which runs those are is the history's choice): `sd` is relative
/// (0.05: runs differ by about 5 % beyond what each run's own error explains), `df` the
/// effective number of runs it rests on less one (`run_level`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunLevel {
    pub sd: f64,
    pub df: f64,
}

/// One earlier run of a point: the ln of its figure, its relative standard error, and how
/// many seconds ago it ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EarlierRun {
    pub log_figure: f64,
    pub rel_se: f64,
    pub age_s: f64,
}

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
fn outlier_scales(n: usize) -> f64 {
    4.0 + 26.0 / (n as f64 - 2.0)
}

/// `runs` without those Hampel's identifier sets aside (see `MIN_TRIMMED`).
fn without_outliers(runs: &[EarlierRun]) -> Vec<EarlierRun> {
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
fn t_p_value(t: f64, df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 || !t.is_finite() {
        return if t.is_infinite() { 0.0 } else { 1.0 };
    }
    (2.0 * t_distribution(df).sf(t.abs())).min(1.0)
}

/// A figure and its uncertainty: what an interval or a comparison needs of a point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub center: f64,
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

/// The estimate from whole runs of the same point: their mean, with the spread between runs
/// as the uncertainty (the level that repeats between runs, when a file holds several).
pub fn runs_estimate(figures: &[f64]) -> Estimate {
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
    Estimate {
        center: mean(figures),
        uncertainty,
    }
}

/// `new` against `base`: the ratio of their figures with its interval, and the two-sided
/// p-value of "no difference", on the log scale (a ratio's natural one: 2× slower and 2×
/// faster are the same distance from 1). Welch's t with Satterthwaite's degrees of freedom,
/// each side's error being its own standard error. NaN ratio and interval where a figure is
/// not above zero.
#[derive(Debug, Clone, Copy, PartialEq)]
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
mod tests {
    use super::*;

    /// splitmix64: deterministic noise, so tests on random-looking data never flake.
    struct Rng(u64);

    impl Rng {
        fn unit(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }

        /// Standard normal (Box-Muller).
        fn normal(&mut self) -> f64 {
            let (u1, u2) = (1.0 - self.unit(), self.unit());
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        }
    }

    fn normal_samples(seed: u64, n: usize, mean: f64, cv: f64) -> Vec<f64> {
        let mut rng = Rng(seed);
        (0..n).map(|_| mean * (1.0 + cv * rng.normal())).collect()
    }

    const BIMODAL: [f64; 11] = [
        0.85, 0.86, 0.84, 0.85, 0.87, 1.50, 1.52, 1.49, 1.51, 0.86, 1.50,
    ];

    #[test]
    fn median_odd_and_even_unsorted() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[7.5]), 7.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn quantiles_match_numpy_linear() {
        // Expected values from numpy.percentile(..., method="linear").
        let s: Vec<f64> = (1..=10).map(f64::from).collect();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(quantile_sorted(&s, 0.25), 3.25));
        assert!(close(quantile_sorted(&s, 0.5), 5.5));
        assert!(close(quantile_sorted(&s, 0.025), 1.225));
        assert!(close(quantile_sorted(&s, 0.975), 9.775));
        assert_eq!(quantile_sorted(&s, 0.0), 1.0);
        assert_eq!(quantile_sorted(&s, 1.0), 10.0);
    }

    #[test]
    fn basic_moments() {
        let s = describe(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.n, 8);
        assert_eq!((s.min, s.max, s.median, s.mean), (2.0, 9.0, 4.5, 5.0));
        // Sum of squared deviations is 32, so the n-1 variance is 32/7.
        assert!((s.stdev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((s.cv - s.stdev / 5.0).abs() < 1e-12);
        let one = describe(&[3.5]);
        assert_eq!(
            (one.stdev, one.cv, one.outliers, one.clusters),
            (0.0, 0.0, 0, 1)
        );
        let negative = describe(&[-3.0, -1.0, -2.0, -4.0, -5.0]);
        // CV uses |mean|, so a negative mean must not yield a negative CV.
        assert!(negative.cv > 0.0 && negative.median == -3.0);
        assert_eq!(describe(&[-1.0, 1.0]).cv, f64::INFINITY);
    }

    #[test]
    fn tukey_outliers_on_known_set() {
        // Quartiles 2.5 and 7.5 give fences at -5 and 15.
        let xs = [-50.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 100.0];
        assert_eq!(describe(&xs).outliers, 2);
        // Points exactly on a fence are not outliers.
        let on_fence = [-5.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 15.0];
        assert_eq!(describe(&on_fence).outliers, 0);
    }

    #[test]
    fn two_real_modes_are_found_noise_and_strays_are_not() {
        assert_eq!(describe(&BIMODAL).clusters, 2);
        let negated: Vec<f64> = BIMODAL.iter().map(|x| -x).collect();
        assert_eq!(describe(&negated).clusters, 2);
        for seed in 0..20 {
            // Many repetitions must not hide a real second mode behind their spread.
            let mut xs = normal_samples(seed, 25, 0.85, 0.02);
            xs.extend(normal_samples(seed + 1000, 25, 1.5, 0.02));
            assert_eq!(describe(&xs).clusters, 2, "{xs:?}");
        }
        for seed in 0..200 {
            for n in [11, 50] {
                for cv in [0.01, 0.02, 0.05] {
                    let xs = normal_samples(seed, n, 1.0, cv);
                    assert_eq!(describe(&xs).clusters, 1, "{xs:?}");
                }
            }
        }
        // Two strays out of eleven are below both the 20% and 3-sample bars.
        let mut two = vec![1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99];
        two.extend([3.0, 3.01]);
        assert_eq!(describe(&two).clusters, 1);
        // Two tight groups 1% apart: quantisation, not two modes.
        assert_eq!(describe(&[1.00, 1.00, 1.00, 1.01, 1.01, 1.01]).clusters, 1);
    }

    #[test]
    #[should_panic(expected = "need at least one sample")]
    fn empty_input_panics() {
        describe(&[]);
    }

    #[test]
    #[should_panic(expected = "sample 1 is not finite")]
    fn nan_panics() {
        describe(&[1.0, f64::NAN, 2.0]);
    }

    fn layout<'a>(samples: &'a [f64], block: usize, instance_blocks: &'a [usize]) -> Layout<'a> {
        Layout {
            samples,
            block,
            instance_blocks,
        }
    }

    #[test]
    fn a_layout_cuts_instances_into_blocks_and_loses_no_sample() {
        let xs: Vec<f64> = (0..10).map(f64::from).collect();
        let l = layout(&xs, 2, &[1, 2]);
        let inst = l.instances();
        assert_eq!(
            inst.len(),
            3,
            "the two samples past the layout form an instance"
        );
        assert_eq!(inst[0], vec![&xs[0..2]]);
        assert_eq!(inst[1], vec![&xs[2..4], &xs[4..6]]);
        assert_eq!(inst[2], vec![&xs[6..8], &xs[8..10]]);
        let (units, level) = l.units();
        assert_eq!(level, Level::Block);
        assert_eq!(units, vec![vec![0.5], vec![2.5, 4.5], vec![6.5, 8.5]]);
        let (units, level) = layout(&xs[..3], 1, &[3]).units();
        assert_eq!(
            (units, level),
            (vec![vec![0.0, 1.0, 2.0]], Level::Repetition)
        );
    }

    #[test]
    fn spreads_name_each_level() {
        // Two instances of two blocks of two: repetitions differ by 2 inside each block,
        // block medians by 10 inside each instance, instances by 100.
        let xs = [0.0, 2.0, 10.0, 12.0, 100.0, 102.0, 110.0, 112.0];
        let s = spreads(&layout(&xs, 2, &[2, 2]));
        assert!((s.repetition - 2f64.sqrt()).abs() < 1e-12, "{s:?}");
        assert!((s.block - 50f64.sqrt()).abs() < 1e-12, "{s:?}");
        assert!((s.instance - 5000f64.sqrt()).abs() < 1e-12, "{s:?}");
        let one = spreads(&layout(&xs[..2], 2, &[1]));
        assert!(one.block.is_nan() && one.instance.is_nan());
    }

    #[test]
    fn one_instance_rests_on_its_blocks() {
        let xs = [9.0, 9.0, 11.0, 11.0, 10.0, 10.0];
        let u = uncertainty(&layout(&xs, 2, &[3]));
        assert_eq!((u.level, u.df), (Level::Block, 2.0));
        // sd of the block medians 9, 11, 10 is 1; over √3 blocks.
        assert!((u.se - 1.0 / 3f64.sqrt()).abs() < 1e-12, "{u:?}");
        // lmbench's fixed repetitions: every repetition is a block of one.
        let u = uncertainty(&layout(&xs, 1, &[6]));
        assert_eq!((u.level, u.df), (Level::Repetition, 5.0));
        assert_eq!(uncertainty(&layout(&xs[..1], 1, &[1])).df, 0.0);
    }

    #[test]
    fn instances_that_differ_are_the_replicate() {
        // Three instances, blocks within each nearly equal, instances far apart.
        let xs = [
            9.0, 9.0, 9.1, 9.1, // instance at ~9
            11.0, 11.0, 11.1, 11.1, // ~11
            10.0, 10.0, 10.1, 10.1, // ~10
        ];
        let u = uncertainty(&layout(&xs, 2, &[2, 2, 2]));
        assert_eq!(u.level, Level::Instance);
        // Balanced: the standard error of the mean of the instance means, on 2 df.
        let means = [9.05, 11.05, 10.05];
        let expect = (sum_sq_dev(&means) / 2.0 / 3.0).sqrt();
        assert!((u.se - expect).abs() < 1e-9, "{u:?} vs {expect}");
        assert!((u.df - 2.0).abs() < 1e-9, "{u:?}");
    }

    #[test]
    fn instances_that_agree_are_pooled_with_their_blocks() {
        // Block medians alternate within every instance; instance means are equal.
        let xs = [
            9.0, 9.0, 11.0, 11.0, 9.0, 9.0, 11.0, 11.0, 9.0, 9.0, 11.0, 11.0,
        ];
        let u = uncertainty(&layout(&xs, 2, &[2, 2, 2]));
        assert_eq!((u.level, u.df), (Level::Block, 5.0));
        // sd of 9, 11, 9, 11, 9, 11 over √6.
        let sd = (6.0f64 / 5.0).sqrt();
        assert!((u.se - sd / 6f64.sqrt()).abs() < 1e-12, "{u:?}");
    }

    /// Runs made of `instances` instances of `blocks` blocks, each level adding normal noise
    /// of the given relative size, plus a run-level shift.
    fn simulated_run(rng: &mut Rng, instances: usize, blocks: usize, sd: [f64; 4]) -> Vec<f64> {
        let [run, inst, block, rep] = sd;
        let base = 10.0 * (1.0 + run * rng.normal());
        let mut xs = Vec::new();
        for _ in 0..instances {
            let i = base * (1.0 + inst * rng.normal());
            for _ in 0..blocks {
                let b = i * (1.0 + block * rng.normal());
                xs.extend((0..4).map(|_| b * (1.0 + rep * rng.normal())));
            }
        }
        xs
    }

    /// How often the next run's median falls inside this run's next-run interval, and the
    /// median half-width over 1.96 × the true sd of a run's median.
    fn coverage_and_sharpness(sd: [f64; 4], instances: usize, blocks: usize) -> (f64, f64) {
        let mut rng = Rng(7);
        let shape = vec![blocks; instances];
        let runs: Vec<(f64, (f64, f64))> = (0..2000)
            .map(|_| {
                let xs = simulated_run(&mut rng, instances, blocks, sd);
                let l = layout(&xs, 4, &shape);
                let e = Estimate {
                    center: median(&xs),
                    uncertainty: uncertainty(&l),
                };
                (e.center, e.next_run_interval(0.95))
            })
            .collect();
        let inside = runs
            .windows(2)
            .filter(|w| (w[0].1 .0..=w[0].1 .1).contains(&w[1].0))
            .count() as f64
            / (runs.len() - 1) as f64;
        let medians: Vec<f64> = runs.iter().map(|r| r.0).collect();
        let spread = (sum_sq_dev(&medians) / (medians.len() - 1) as f64).sqrt();
        let halves: Vec<f64> = runs.iter().map(|r| (r.1 .1 - r.1 .0) / 2.0).collect();
        (inside, median(&halves) / (1.96 * spread))
    }

    #[test]
    fn the_next_run_falls_inside_as_often_as_promised_when_no_run_level_exists() {
        // Noise at every level a run can see, none between runs.
        for (sd, instances) in [
            ([0.0, 0.03, 0.01, 0.02], 6),
            ([0.0, 0.0, 0.02, 0.05], 4),
            ([0.0, 0.05, 0.0, 0.0], 8),
        ] {
            let (coverage, sharpness) = coverage_and_sharpness(sd, instances, 3);
            assert!((0.92..=0.985).contains(&coverage), "{sd:?}: {coverage}");
            assert!(sharpness < 1.9, "{sd:?}: {sharpness}");
        }
    }

    #[test]
    fn a_run_level_the_run_cannot_see_breaks_coverage() {
        // The model's stated limit: drift slower than a run is not in its interval.
        let (coverage, _) = coverage_and_sharpness([0.05, 0.01, 0.01, 0.01], 6, 3);
        assert!(coverage < 0.5, "{coverage}");
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        assert!((t_quantile(0.95, 4.0) - 2.776_445).abs() < 1e-5);
        assert!((t_quantile(0.95, 1.0) - 12.706_205).abs() < 1e-5);
        assert!((t_quantile(0.95, 1e5) - 1.959_981).abs() < 1e-5);
        assert!((t_quantile(0.95, 1e9) - 1.959_964).abs() < 1e-5);
        assert_eq!(t_quantile(0.95, 0.0), f64::INFINITY);
        assert!((t_p_value(2.776_445, 4.0) - 0.05).abs() < 1e-6);
    }

    fn estimate(center: f64, se: f64, df: f64) -> Estimate {
        Estimate {
            center,
            uncertainty: Uncertainty {
                se,
                df,
                level: Level::Instance,
            },
        }
    }

    #[test]
    fn next_run_intervals_are_root_two_wider_than_the_level_s() {
        let e = estimate(10.0, 0.5, 4.0);
        let (lo, hi) = e.next_run_interval(0.95);
        let half = 2.776_445 * 0.5 * std::f64::consts::SQRT_2;
        assert!((hi - 10.0 - half).abs() < 1e-5 && (10.0 - lo - half).abs() < 1e-5);
        assert!((e.relative_half_width(0.95) - half / 10.0).abs() < 1e-6);
        assert_eq!(
            estimate(-1.0, 0.1, 4.0).relative_half_width(0.95),
            f64::INFINITY
        );
    }

    #[test]
    fn a_difference_is_a_ratio_with_welch_s_interval() {
        let base = estimate(10.0, 0.1, 5.0);
        let same = difference(&base, &base, 0.95);
        assert_eq!((same.ratio, same.p_value), (1.0, 1.0));
        assert!(same.low < 1.0 && same.high > 1.0);
        // Equal relative errors and df: Welch's df is the sum.
        assert!((same.df - 10.0).abs() < 1e-9);
        let slower = difference(&base, &estimate(12.0, 0.12, 5.0), 0.95);
        assert!((slower.ratio - 1.2).abs() < 1e-12);
        assert!(slower.low > 1.0 && slower.p_value < 1e-4, "{slower:?}");
        // ln(1.2) / sqrt(2 * 0.01²) on 10 df.
        let t = 1.2f64.ln() / (2.0f64 * 1e-4).sqrt();
        assert!((slower.p_value - t_p_value(t, 10.0)).abs() < 1e-12);
        assert!(difference(&estimate(0.0, 0.1, 5.0), &base, 0.95)
            .ratio
            .is_nan());
    }

    fn runs(log_figures: &[f64], rel_se: f64) -> Vec<EarlierRun> {
        log_figures
            .iter()
            .map(|&y| EarlierRun {
                log_figure: y,
                rel_se,
                age_s: 0.0,
            })
            .collect()
    }

    #[test]
    fn the_run_level_is_what_runs_differ_by_beyond_their_own_errors() {
        // Runs agreeing within their errors: no run level.
        let close = [0.0, 0.001, -0.001, 0.0005];
        let l = run_level(&runs(&close, 0.01)).unwrap();
        assert_eq!((l.sd, l.df), (0.0, 3.0));
        // Runs 10 % apart with 1 % errors: about the spread of the figures themselves.
        let apart = [0.0, 0.1, -0.1, 0.05, -0.05];
        let l = run_level(&runs(&apart, 0.01)).unwrap();
        let sd = (sum_sq_dev(&apart) / 4.0).sqrt();
        assert!((l.sd * l.sd - (sd * sd - 1e-4)).abs() < 1e-9, "{l:?}");
        // Unusable runs are left out; fewer than three: nothing to say.
        assert!(run_level(&runs(&[0.0, 0.1, f64::NAN], 0.01)).is_none());
        let mut two = runs(&[0.0, 0.1, 0.2], 0.01);
        two[2].rel_se = 0.0;
        assert!(run_level(&two).is_none());
        two[2].rel_se = 0.01;
        two[2].age_s = -1.0;
        assert!(run_level(&two).is_none());
    }

    #[test]
    fn a_few_runs_measured_under_load_do_not_blow_up_the_run_level() {
        // Twelve quiet runs 2 % apart, then three made while hogs took the CPU: 60-100 %
        // slower and sure of themselves to 1 %.
        let quiet = [
            0.0, 0.02, -0.02, 0.01, -0.01, 0.03, -0.03, 0.015, -0.015, 0.0, 0.02, -0.02,
        ];
        let alone = run_level(&runs(&quiet, 0.01)).unwrap();
        let mut all = runs(&quiet, 0.01);
        all.extend(runs(&[0.5, 0.7, 0.6], 0.01));
        let with_load = run_level(&all).unwrap();
        assert_eq!(with_load, alone, "the loaded runs are set aside");
        // DerSimonian-Laird on all fifteen says 25 %.
        assert!(alone.sd < 0.03, "{alone:?}");
        // Half the runs loaded are no minority: they are the spread, and are kept.
        let mut half = runs(&quiet[..6], 0.01);
        half.extend(runs(&[0.5, 0.7, 0.6, 0.55, 0.65, 0.6], 0.01));
        assert!(run_level(&half).unwrap().sd > 0.2);
    }

    #[test]
    fn runs_that_differ_by_chance_are_all_kept() {
        // Three runs two of which happen to agree: the third is no outlier (a fixed 3.5
        // robust deviations set it aside, and with it the run level).
        let three = runs(&[0.0, 0.005, 0.1], 0.005);
        assert!(run_level(&three).unwrap().sd > 0.03);
        // Sets of normal runs lose one about once in a hundred, whatever their number.
        let mut rng = Rng(5);
        for n in [6, 10, 30] {
            let lost = (0..2000)
                .filter(|_| {
                    let y: Vec<f64> = (0..n).map(|_| 0.05 * rng.normal()).collect();
                    without_outliers(&runs(&y, 0.001)).len() < n
                })
                .count();
            assert!(lost < 60, "{n} runs: {lost} of 2000 sets lost one");
        }
    }

    #[test]
    fn old_runs_count_less_and_no_weights_make_runs_differ_more_than_seen() {
        // Two regimes: a day-old one 30 % apart, a recent one 2 % apart.
        let mut mixed = runs(&[0.3, -0.3, 0.25, -0.25], 0.01);
        for r in &mut mixed {
            r.age_s = 4.0 * RUN_HALF_LIFE_S;
        }
        let recent = runs(&[0.02, -0.02, 0.01, -0.01], 0.01);
        mixed.extend(&recent);
        let l = run_level(&mixed).unwrap();
        let even = run_level(&runs(
            &mixed.iter().map(|r| r.log_figure).collect::<Vec<_>>(),
            0.01,
        ));
        assert!(l.sd < 0.6 * even.unwrap().sd, "{l:?} {even:?}");
        // Eight runs, four of them a sixteenth as weighty: fewer effective runs.
        assert!(l.df < 7.0 && l.df > 3.0, "{l:?}");
        // One run far more certain than the rest cannot make the level exceed their spread.
        let mut lopsided = runs(&[0.0, 0.1, -0.1, 0.05], 0.05);
        lopsided[0].rel_se = 1e-6;
        let l = run_level(&lopsided).unwrap();
        let seen = (sum_sq_dev(&[0.0, 0.1, -0.1, 0.05]) / 3.0).sqrt();
        assert!(l.sd <= seen + 1e-12, "{l:?} {seen}");
    }

    #[test]
    fn a_run_level_widens_the_uncertainty_and_becomes_its_level() {
        let u = Uncertainty {
            se: 0.3,
            df: 10.0,
            level: Level::Instance,
        };
        let run = RunLevel { sd: 0.04, df: 19.0 };
        let w = u.with_run_level(10.0, &run);
        assert_eq!(w.level, Level::Run);
        assert!((w.se - 0.5).abs() < 1e-12, "{w:?}");
        // Satterthwaite: 0.25² / (0.09²/10 + 0.16²/19).
        let df = 0.0625 / (0.0081 / 10.0 + 0.0256 / 19.0);
        assert!((w.df - df).abs() < 1e-9);
        assert_eq!(u.with_run_level(10.0, &RunLevel { sd: 0.0, df: 5.0 }), u);
    }

    #[test]
    fn with_the_run_level_the_next_run_falls_inside_as_promised() {
        // A run level of 4 % the run cannot see, known from 29 earlier runs.
        let mut rng = Rng(11);
        let sd = [0.04, 0.01, 0.01, 0.01];
        let shape = vec![3; 6];
        let runs: Vec<(f64, (f64, f64))> = (0..2000)
            .map(|_| {
                let xs = simulated_run(&mut rng, 6, 3, sd);
                let l = layout(&xs, 4, &shape);
                let center = median(&xs);
                let run = RunLevel { sd: 0.04, df: 29.0 };
                let e = Estimate {
                    center,
                    uncertainty: uncertainty(&l).with_run_level(center, &run),
                };
                (center, e.next_run_interval(0.95))
            })
            .collect();
        let inside = runs
            .windows(2)
            .filter(|w| (w[0].1 .0..=w[0].1 .1).contains(&w[1].0))
            .count() as f64
            / (runs.len() - 1) as f64;
        assert!((0.92..=0.985).contains(&inside), "{inside}");
    }

    #[test]
    fn runs_are_the_replicate_of_a_runs_estimate() {
        let e = runs_estimate(&[9.0, 10.0, 11.0]);
        assert_eq!(e.center, 10.0);
        assert_eq!((e.uncertainty.level, e.uncertainty.df), (Level::Run, 2.0));
        assert!((e.uncertainty.se - 1.0 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(runs_estimate(&[3.0]).uncertainty.df, 0.0);
    }
}
