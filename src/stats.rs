//! Statistics over a handful of repeated benchmark samples.
//!
//! Benchmarks are repeated only 5-50 times, so everything here favours
//! robust, order-based statistics (median, quantiles, bootstrap) over
//! assumptions of normality.

/// Below this coefficient of variation a result is reproducible enough to
/// compare across runs without further thought.
pub const STABLE_CV: f64 = 0.02;
/// Below this the result is usable but differences of a few percent between
/// runs should not be trusted.
pub const NOISY_CV: f64 = 0.10;

const BOOTSTRAP_RESAMPLES: usize = 2000;
// A fixed seed keeps reports reproducible: re-running `summarize` on the same
// samples must print the same interval, otherwise diffs of reports are noise.
const BOOTSTRAP_SEED: u64 = 0x5EED_0C7B_E4C4_0001;
const TUKEY_K: f64 = 1.5;

// Bimodality thresholds; see `count_clusters` for the reasoning.
const MIN_CLUSTER_SIZE: usize = 2;
const SMALL_CLUSTER_FRACTION: f64 = 0.2;
const ALWAYS_ENOUGH_CLUSTER_SIZE: usize = 3;
const MIN_GAP_OF_MEDIAN: f64 = 0.05;
const MIN_GAP_OVER_POOLED_SD: f64 = 8.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Stable,
    Noisy,
    Unstable,
    Bimodal,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Stable => "stable",
            Verdict::Noisy => "noisy",
            Verdict::Unstable => "unstable",
            Verdict::Bimodal => "bimodal",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation (n - 1 denominator); 0 for a single sample.
    pub stdev: f64,
    /// `stdev / |mean|`; infinite when the mean is 0 but the samples vary.
    pub cv: f64,
    /// Bootstrap 95% confidence interval of the median (percentile method).
    pub ci_low: f64,
    pub ci_high: f64,
    /// Samples outside Tukey's fences (1.5 IQR beyond the quartiles).
    pub outliers: usize,
    /// 1, or 2 when the samples split into two well separated groups.
    pub clusters: usize,
    pub verdict: Verdict,
}

/// Median of unsorted samples; NaN for an empty slice.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    quantile_sorted(&sorted_copy(xs), 0.5)
}

/// Summarizes repeated measurements.
///
/// # Panics
///
/// On empty input or any NaN/infinite sample: a silently poisoned summary is
/// worse than a crash, because it would be published as a benchmark result.
pub fn summarize(xs: &[f64]) -> Summary {
    assert!(
        !xs.is_empty(),
        "summarize: need at least one sample, got an empty slice"
    );
    if let Some((i, x)) = xs.iter().enumerate().find(|(_, x)| !x.is_finite()) {
        panic!("summarize: sample {i} is not finite ({x}); all samples must be finite");
    }

    // Everything below works on sorted data so the result does not depend on
    // the order the repetitions happened to run in, down to the last bit.
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
    let (ci_low, ci_high) = bootstrap_median_ci(&s);
    let clusters = count_clusters(&s);

    Summary {
        n,
        min: s[0],
        max: s[n - 1],
        median: quantile_sorted(&s, 0.5),
        mean,
        stdev,
        cv,
        ci_low,
        ci_high,
        outliers: count_outliers(&s),
        clusters,
        verdict: classify(cv, clusters),
    }
}

/// Summarizes measurements taken in consecutive blocks (runs of repetitions separated in time,
/// or on separate ring instances). The median and spread are those of all samples; the 95 %
/// interval of the median comes from the spread *between* block medians (Student's t with
/// blocks − 1 degrees of freedom), because on a drifting host repetitions within one block
/// are correlated and an interval built from them is too narrow to hold the next run's
/// median. With one block it is the bootstrap interval of `summarize`.
///
/// # Panics
///
/// As `summarize`, and on an empty block.
pub fn summarize_blocks(blocks: &[Vec<f64>]) -> Summary {
    let all: Vec<f64> = blocks.iter().flatten().copied().collect();
    let mut summary = summarize(&all);
    if blocks.len() >= 2 {
        let (lo, hi) = block_interval(summary.median, blocks);
        summary.ci_low = lo;
        summary.ci_high = hi;
    }
    summary
}

/// `center` ± t(0.975, b − 1) · sd(block medians) / √b.
fn block_interval(center: f64, blocks: &[Vec<f64>]) -> (f64, f64) {
    let medians: Vec<f64> = blocks
        .iter()
        .map(|b| {
            assert!(!b.is_empty(), "summarize_blocks: empty block");
            median(b)
        })
        .collect();
    let b = medians.len();
    let sd = (sum_sq_dev(&medians) / (b - 1) as f64).sqrt();
    let half = t_975(b - 1) * sd / (b as f64).sqrt();
    (center - half, center + half)
}

/// Two-sided 95 % quantile of Student's t with `df` degrees of freedom.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        // Within 0.001 of the exact quantile from 31 degrees of freedom on.
        _ => 1.96 + 2.4 / df as f64,
    }
}

fn classify(cv: f64, clusters: usize) -> Verdict {
    // Bimodality wins over CV: a two-mode result has a large CV, but calling it
    // merely "unstable" would hide that the typical value is meaningless.
    if clusters == 2 {
        Verdict::Bimodal
    } else if cv < STABLE_CV {
        Verdict::Stable
    } else if cv < NOISY_CV {
        Verdict::Noisy
    } else {
        Verdict::Unstable
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

/// splitmix64: tiny, fast and statistically good enough for resampling
/// indices, and keeps this module free of external crates.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Two uniform indices in `0..n` from one draw, by multiply-high on each
    /// 32-bit half. The bias (about n / 2^32) is far below anything 2000
    /// resamples could detect, and the generator is the bootstrap's main
    /// cost, so one call per two indices matters.
    fn two_below(&mut self, n: usize) -> [usize; 2] {
        let r = self.next_u64();
        let n = n as u64;
        [
            (((r & 0xFFFF_FFFF) * n) >> 32) as usize,
            (((r >> 32) * n) >> 32) as usize,
        ]
    }
}

/// Percentile-bootstrap 95% CI of the median of sorted samples.
///
/// A resample's median depends only on how many times each sorted sample was
/// drawn, so instead of building and sorting every resample we tally the draws
/// and walk the tallies: O(n) per resample rather than O(n log n), which keeps
/// 2000 resamples of 50 samples well under a millisecond.
fn bootstrap_median_ci(s: &[f64]) -> (f64, f64) {
    let n = s.len();
    let mut rng = SplitMix64(BOOTSTRAP_SEED);
    let mut counts = vec![0usize; n];
    let mut medians = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        counts.fill(0);
        for pair in 0..n.div_ceil(2) {
            let [a, b] = rng.two_below(n);
            counts[a] += 1;
            // The second index of the last pair is unused when n is odd.
            if 2 * pair + 1 < n {
                counts[b] += 1;
            }
        }
        medians.push(tallied_median(s, &counts));
    }
    medians.sort_unstable_by(f64::total_cmp);
    (
        quantile_sorted(&medians, 0.025),
        quantile_sorted(&medians, 0.975),
    )
}

/// Median of the resample that draws `s[i]` exactly `counts[i]` times.
fn tallied_median(s: &[f64], counts: &[usize]) -> f64 {
    let n = s.len();
    let (lo_rank, hi_rank) = ((n - 1) / 2, n / 2);
    let mut lo = None;
    let mut seen = 0;
    for (&x, &c) in s.iter().zip(counts) {
        seen += c;
        if seen > lo_rank {
            let lo = *lo.get_or_insert(x);
            if seen > hi_rank {
                // Same interpolation as `quantile_sorted` at p = 0.5.
                return lo + (x - lo) * 0.5;
            }
        }
    }
    unreachable!("counts must sum to s.len()")
}

/// Mann-Whitney U test of two independent samples: (U of `a`, two-sided p-value).
///
/// Rank-based, so it suits latency samples, which are skewed and sometimes bimodal, better
/// than a t-test. Exact p-value from the U distribution when both samples have at most 50
/// values and no ties (benchmarks usually have ~11); otherwise the normal approximation with
/// tie and continuity corrections.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> (f64, f64) {
    assert!(
        !a.is_empty() && !b.is_empty(),
        "need at least one sample on each side"
    );
    let (n1, n2) = (a.len(), b.len());
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Midranks for ties, and the tie term of the variance.
    let mut rank_a = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        let mid = (i + j) as f64 / 2.0 + 1.0;
        rank_a += mid * all[i..=j].iter().filter(|x| x.1).count() as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let u = rank_a - (n1 * (n1 + 1)) as f64 / 2.0;
    let (f1, f2) = (n1 as f64, n2 as f64);
    let p = if tie_term == 0.0 && n1 <= 50 && n2 <= 50 {
        exact_p(u, n1, n2)
    } else {
        let n = f1 + f2;
        let var = f1 * f2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
        if var <= 0.0 {
            1.0
        } else {
            let z = ((u - f1 * f2 / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
            erfc(z / std::f64::consts::SQRT_2)
        }
    };
    (u, p.min(1.0))
}

/// Two-sided exact p-value: the number of rank arrangements with U at least as extreme,
/// counted by the usual recurrence over (n1, n2).
fn exact_p(u: f64, n1: usize, n2: usize) -> f64 {
    let max_u = n1 * n2;
    // counts[m][k]: arrangements of m values of `a` among the first values with U = k,
    // built up one `b` value at a time.
    let mut dist = vec![vec![0f64; max_u + 1]; n1 + 1];
    dist[0][0] = 1.0;
    for j in 1..=n2 {
        let mut next = vec![vec![0f64; max_u + 1]; n1 + 1];
        next[0][0] = 1.0;
        for m in 1..=n1 {
            for k in 0..=max_u {
                // The largest value is from b (adds nothing) or from a (adds j to U).
                let from_b = dist[m][k];
                let from_a = if k >= j { next[m - 1][k - j] } else { 0.0 };
                next[m][k] = from_b + from_a;
            }
        }
        dist = next;
    }
    let counts = &dist[n1];
    let total: f64 = counts.iter().sum();
    let centre = max_u as f64 / 2.0;
    let extreme = (u - centre).abs();
    let tail: f64 = counts
        .iter()
        .enumerate()
        .filter(|(k, _)| (*k as f64 - centre).abs() >= extreme - 1e-9)
        .map(|(_, c)| c)
        .sum();
    tail / total
}

/// Complementary error function (Numerical Recipes' erfcc, relative error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic standard-normal samples (Box-Muller) so noise-based tests
    /// never flake.
    fn normal_samples(seed: u64, n: usize, mean: f64, cv: f64) -> Vec<f64> {
        let mut rng = SplitMix64(seed);
        let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (0..n)
            .map(|_| {
                // 1 - u lies in (0, 1], keeping ln finite.
                let (u1, u2) = (1.0 - unit(), unit());
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                mean * (1.0 + cv * z)
            })
            .collect()
    }

    const BIMODAL: [f64; 11] = [
        0.85, 0.86, 0.84, 0.85, 0.87, 1.50, 1.52, 1.49, 1.51, 0.86, 1.50,
    ];

    #[test]
    fn verdict_names() {
        assert_eq!(Verdict::Stable.as_str(), "stable");
        assert_eq!(Verdict::Noisy.as_str(), "noisy");
        assert_eq!(Verdict::Unstable.as_str(), "unstable");
        assert_eq!(Verdict::Bimodal.as_str(), "bimodal");
    }

    #[test]
    fn median_odd_and_even_unsorted() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[7.5]), 7.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn median_is_order_independent() {
        let xs = normal_samples(1, 21, 10.0, 0.1);
        let mut rev = xs.clone();
        rev.reverse();
        assert_eq!(median(&xs), median(&rev));
        let below = xs.iter().filter(|&&x| x < median(&xs)).count();
        assert_eq!(below, 10);
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
        assert!(close(
            quantile_sorted(&[15.0, 20.0, 35.0, 40.0, 50.0], 0.4),
            29.0
        ));
    }

    #[test]
    fn tallied_median_matches_median_of_materialized_resample() {
        let s = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
        for counts in [[6, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1], [0, 2, 0, 0, 3, 1]] {
            let resample: Vec<f64> = s
                .iter()
                .zip(counts)
                .flat_map(|(&x, c)| std::iter::repeat_n(x, c))
                .collect();
            assert_eq!(tallied_median(&s, &counts), median(&resample));
        }
        let odd = [1.0, 2.0, 3.0];
        assert_eq!(tallied_median(&odd, &[0, 1, 2]), 3.0);
    }

    #[test]
    fn basic_moments() {
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.n, 8);
        assert_eq!((s.min, s.max, s.median, s.mean), (2.0, 9.0, 4.5, 5.0));
        // Sum of squared deviations is 32, so the n-1 variance is 32/7.
        assert!((s.stdev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((s.cv - s.stdev / 5.0).abs() < 1e-12);
    }

    #[test]
    fn ci_contains_median_and_stays_within_range() {
        let mut datasets = vec![BIMODAL.to_vec(), vec![1.0, 2.0], vec![-4.0, 3.0, -1.0]];
        for seed in 0..20 {
            for n in [5, 11, 50] {
                datasets.push(normal_samples(seed, n, 1.0, 0.05));
                datasets.push(normal_samples(seed, n, -3.0, 0.3));
            }
        }
        for xs in &datasets {
            let s = summarize(xs);
            assert!(s.min <= s.ci_low, "{s:?}");
            assert!(s.ci_low <= s.median, "{s:?}");
            assert!(s.median <= s.ci_high, "{s:?}");
            assert!(s.ci_high <= s.max, "{s:?}");
        }
    }

    #[test]
    fn ci_narrows_with_more_samples() {
        let width = |n| {
            let s = summarize(&normal_samples(3, n, 1.0, 0.05));
            s.ci_high - s.ci_low
        };
        assert!(width(50) < width(5));
    }

    #[test]
    fn ci_is_deterministic_and_order_independent() {
        let xs = normal_samples(42, 30, 5.0, 0.04);
        let mut shuffled = xs.clone();
        shuffled.reverse();
        shuffled.swap(0, 17);
        let a = summarize(&xs);
        assert_eq!(a, summarize(&xs));
        assert_eq!(a, summarize(&shuffled));
        assert!(a.ci_low < a.ci_high);
    }

    #[test]
    fn single_sample() {
        let s = summarize(&[3.5]);
        assert_eq!(
            (s.n, s.min, s.max, s.median, s.mean),
            (1, 3.5, 3.5, 3.5, 3.5)
        );
        assert_eq!((s.stdev, s.cv, s.ci_low, s.ci_high), (0.0, 0.0, 3.5, 3.5));
        assert_eq!((s.outliers, s.clusters, s.verdict), (0, 1, Verdict::Stable));
    }

    #[test]
    fn constant_samples() {
        for x in [0.0, 1.25, -2.0] {
            let s = summarize(&[x; 9]);
            assert_eq!((s.stdev, s.cv), (0.0, 0.0));
            assert_eq!((s.ci_low, s.ci_high), (x, x));
            assert_eq!((s.outliers, s.clusters, s.verdict), (0, 1, Verdict::Stable));
        }
    }

    #[test]
    fn negative_values_are_kept() {
        let s = summarize(&[-3.0, -1.0, -2.0, -4.0, -5.0]);
        assert_eq!(s.n, 5);
        assert_eq!((s.min, s.max, s.median, s.mean), (-5.0, -1.0, -3.0, -3.0));
        // CV uses |mean|, so a negative mean must not yield a negative CV.
        assert!((s.cv - s.stdev / 3.0).abs() < 1e-12);
        assert!(s.cv > 0.0);
        assert_eq!(s.verdict, Verdict::Unstable);
    }

    #[test]
    fn zero_mean_with_spread_has_infinite_cv() {
        let s = summarize(&[-1.0, 1.0]);
        assert_eq!(s.mean, 0.0);
        assert_eq!(s.cv, f64::INFINITY);
        assert_eq!(s.verdict, Verdict::Unstable);
    }

    #[test]
    fn tukey_outliers_on_known_set() {
        // Quartiles 2.5 and 7.5 give fences at -5 and 15.
        let xs = [-50.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 100.0];
        assert_eq!(summarize(&xs).outliers, 2);
        // Points exactly on a fence are not outliers.
        let on_fence = [-5.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 15.0];
        assert_eq!(summarize(&on_fence).outliers, 0);
    }

    #[test]
    fn bimodal_example_is_detected() {
        let s = summarize(&BIMODAL);
        assert_eq!(s.clusters, 2);
        assert_eq!(s.verdict, Verdict::Bimodal);
        assert_eq!(s.verdict.as_str(), "bimodal");
    }

    #[test]
    fn bimodal_with_negative_values_is_detected() {
        let xs: Vec<f64> = BIMODAL.iter().map(|x| -x).collect();
        assert_eq!(summarize(&xs).clusters, 2);
    }

    #[test]
    fn noisy_modes_are_still_bimodal() {
        // Many repetitions must not hide a real second mode behind their
        // accumulated within-mode spread.
        for seed in 0..20 {
            let mut xs = normal_samples(seed, 25, 0.85, 0.02);
            xs.extend(normal_samples(seed + 1000, 25, 1.5, 0.02));
            assert_eq!(summarize(&xs).verdict, Verdict::Bimodal, "{xs:?}");
        }
    }

    #[test]
    fn normal_noise_is_not_bimodal() {
        for seed in 0..200 {
            for n in [11, 50] {
                for cv in [0.01, 0.02, 0.05] {
                    let xs = normal_samples(seed, n, 1.0, cv);
                    assert_eq!(count_clusters(&sorted_copy(&xs)), 1, "{xs:?}");
                }
            }
        }
    }

    #[test]
    fn outliers_are_not_a_second_mode() {
        let mut one = vec![1.0; 10];
        one.push(5.0);
        assert_eq!(summarize(&one).clusters, 1);
        // Two strays out of eleven are below both the 20% and 3-sample bars.
        let mut two = vec![1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99];
        two.extend([3.0, 3.01]);
        assert_eq!(summarize(&two).clusters, 1);
    }

    #[test]
    fn tiny_relative_gap_is_not_bimodal() {
        // Two tight groups 1% apart: looks like quantisation, not two modes.
        let xs = [1.00, 1.00, 1.00, 1.01, 1.01, 1.01];
        assert_eq!(summarize(&xs).clusters, 1);
    }

    #[test]
    fn verdict_thresholds() {
        assert_eq!(classify(0.0, 1), Verdict::Stable);
        assert_eq!(classify(STABLE_CV - 1e-9, 1), Verdict::Stable);
        assert_eq!(classify(STABLE_CV, 1), Verdict::Noisy);
        assert_eq!(classify(NOISY_CV - 1e-9, 1), Verdict::Noisy);
        assert_eq!(classify(NOISY_CV, 1), Verdict::Unstable);
        assert_eq!(classify(f64::INFINITY, 1), Verdict::Unstable);
        assert_eq!(classify(0.0, 2), Verdict::Bimodal);
    }

    #[test]
    #[should_panic(expected = "need at least one sample")]
    fn empty_input_panics() {
        summarize(&[]);
    }

    #[test]
    #[should_panic(expected = "sample 1 is not finite")]
    fn nan_panics() {
        summarize(&[1.0, f64::NAN, 2.0]);
    }

    #[test]
    #[should_panic(expected = "sample 0 is not finite")]
    fn infinity_panics() {
        summarize(&[f64::INFINITY]);
    }

    #[test]
    fn mann_whitney_matches_scipy() {
        // scipy.stats.mannwhitneyu(a, b, method="exact") -> U=1.0, p=0.05714285714285714
        let (u, p) = mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[3.5, 5.0, 6.0, 7.0]);
        assert_eq!(u, 1.0);
        assert!((p - 0.05714285714285714).abs() < 1e-12, "{p}");
        // Identical samples: no evidence at all.
        let x = [1.0, 1.0, 2.0, 2.0, 3.0];
        let (_, p) = mann_whitney(&x, &x);
        assert!(p > 0.99, "{p}");
        // Fully separated 11 vs 11: p = 2 / C(22, 11).
        let a: Vec<f64> = (0..11).map(f64::from).collect();
        let b: Vec<f64> = (0..11).map(|i| f64::from(i) + 100.0).collect();
        let (u, p) = mann_whitney(&a, &b);
        assert_eq!(u, 0.0);
        assert!((p - 2.0 / 705_432.0).abs() < 1e-12, "{p}");
    }

    #[test]
    fn mann_whitney_normal_approximation_with_ties() {
        let a: Vec<f64> = (0..60).map(|i| f64::from(i % 7)).collect();
        let b: Vec<f64> = (0..60).map(|i| f64::from(i % 7) + 0.5).collect();
        let (_, p) = mann_whitney(&a, &b);
        assert!(p > 0.05 && p < 1.0, "{p}");
        let shifted: Vec<f64> = a.iter().map(|x| x + 10.0).collect();
        assert!(mann_whitney(&a, &shifted).1 < 1e-6);
    }

    #[test]
    fn block_intervals_widen_with_drift_between_blocks() {
        let steady: Vec<Vec<f64>> = (0..5).map(|_| vec![10.0, 10.1, 9.9, 10.0]).collect();
        let s = summarize_blocks(&steady);
        assert_eq!((s.ci_low, s.ci_high), (s.median, s.median));
        // The same samples, but each block sits at its own level: a drifting host.
        let drifting: Vec<Vec<f64>> = [9.6, 10.4, 9.8, 10.2, 10.0]
            .iter()
            .map(|&m| vec![m - 0.01, m, m + 0.01])
            .collect();
        let d = summarize_blocks(&drifting);
        let flat: Vec<f64> = drifting.iter().flatten().copied().collect();
        let naive = summarize(&flat);
        assert!(d.ci_high - d.ci_low > naive.ci_high - naive.ci_low);
        // t(0.975, 4) * sd([9.6, 10.4, 9.8, 10.2, 10.0]) / sqrt(5)
        let half = 2.776 * 0.316_227_766 / 5f64.sqrt();
        assert!((d.ci_high - d.median - half).abs() < 1e-6, "{d:?}");
        assert_eq!(
            summarize_blocks(std::slice::from_ref(&flat)),
            summarize(&flat)
        );
    }

    #[test]
    fn t_quantiles_shrink_to_the_normal() {
        assert_eq!(t_975(0), f64::INFINITY);
        assert_eq!(t_975(4), 2.776);
        assert!((t_975(60) - 2.000).abs() < 1e-3 && (t_975(120) - 1.980).abs() < 1e-3);
        assert!((1..200).all(|df| t_975(df) > t_975(df + 1) && t_975(df + 1) > 1.96));
    }
}
