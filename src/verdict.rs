//! The words a result says, each with its one rule: a point's (stable, noisy, unstable,
//! bimodal: how narrow its interval is against the precision asked) and a comparison's
//! (slower, faster, no change, inconclusive: what the ratio's interval shows against a
//! practical threshold), with the numbers that say what would decide an inconclusive one.
//! Absence of evidence is never "no change": that word needs the interval inside the
//! threshold (an equivalence test).

use crate::error::{Error, Limit, Result};
use crate::stats::{self, Difference, Estimate, Layout, RunLevel, ASSUMED_RUN_LEVEL};
use crate::stop::CONFIDENCE;
use serde::{Deserialize, Serialize};

/// Relative half-width above which a point is `Unstable` rather than `Noisy`; also the CV
/// of its samples above which a table says a point's samples are noisy, whatever its word
/// (a median can be steady while its samples scatter by 29 %).
pub const NOISY_HALF_WIDTH: f64 = 0.10;

/// The word that describes a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Its interval is as narrow as the precision asked (the default one for a fixed count).
    Stable,
    /// Wider, up to ± `NOISY_HALF_WIDTH`.
    Noisy,
    /// Wider still, or no interval at all (one unit, or a figure at or below zero).
    Unstable,
    /// Its samples fall in two well separated groups: the median describes neither.
    Bimodal,
    /// A CPU quota throttled the run's groups while it was timed (restriction `cpu_quota`):
    /// its figure holds the throttle's stalls, not a switch's cost, whatever its spread.
    Throttled,
}

impl Verdict {
    /// Each one's name, in the enum's order.
    pub const NAMES: [&'static str; 5] = ["stable", "noisy", "unstable", "bimodal", "throttled"];

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// The verdict on a point from its estimate, the precision it was held to and the number of
/// groups its samples form (`stats::Description::clusters`). A point that stopped because
/// it met its precision is therefore always `Stable`, unless it is `Bimodal`.
pub fn verdict(estimate: &Estimate, target: f64, clusters: usize) -> Verdict {
    let half = estimate.relative_half_width(CONFIDENCE);
    if clusters >= 2 {
        Verdict::Bimodal
    } else if half <= target {
        Verdict::Stable
    } else if half <= NOISY_HALF_WIDTH {
        Verdict::Noisy
    } else {
        Verdict::Unstable
    }
}

/// What a comparison of two figures says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The ratio's interval lies above 1 and the ratio beyond the threshold.
    Slower,
    /// Below 1, and the ratio beyond the threshold.
    Faster,
    /// The equivalence interval lies within ± the threshold: shown, not assumed.
    NoChange,
    /// Anything else: the data do not tell.
    Inconclusive,
}

impl Change {
    pub const NAMES: [&'static str; 4] = ["slower", "faster", "no change", "inconclusive"];

    pub fn as_str(self) -> &'static str {
        match self {
            Change::Slower => "slower",
            Change::Faster => "faster",
            Change::NoChange => "no change",
            Change::Inconclusive => "inconclusive",
        }
    }
}
serialize_as_word!(Change, Why, RunSource);

/// Why a comparison came out as it did: decided, or what keeps it from a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    Decided,
    /// A side is one sample (perf's fixed loop): it has no error of its own, so nothing in it
    /// shows how another would differ.
    OneSample,
    /// A figure at or below zero: below the method's resolution, no ratio.
    BelowResolution,
    /// A side is one run, measured while other tasks were runnable (`LOADED_RUNNABLE`), with
    /// no earlier runs of such conditions to say how runs then differ.
    Loaded,
    /// The interval is too wide for either word; more data would narrow it.
    TooWide,
    /// The ratio sits on the threshold: no amount of data decides it soon.
    AtThreshold,
    /// Judged against a series with fewer comparable runs than `judge::series::MIN_SERIES`.
    ShortSeries,
    /// The new run lies inside a mode its series already holds, other than the series'
    /// main one: the machine's known regime, not a change of the code.
    KnownMode,
}

impl Why {
    pub const NAMES: [&'static str; 8] = [
        "decided",
        "one sample",
        "below resolution",
        "under load",
        "too wide",
        "at threshold",
        "short series",
        "known mode",
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Why::Decided => "decided",
            Why::OneSample => "one sample",
            Why::BelowResolution => "below resolution",
            Why::Loaded => "under load",
            Why::TooWide => "too wide",
            Why::AtThreshold => "at threshold",
            Why::ShortSeries => "short series",
            Why::KnownMode => "known mode",
        }
    }
}

/// The interval in which "no change" must lie, two-sided: that of two one-sided tests
/// (TOST) at 5 % each, i.e. the 90 % interval.
pub const EQUIVALENCE_CONFIDENCE: f64 = 0.90;

/// The word for a ratio given the interval that shows a difference (`shown`, at the
/// comparison's confidence) and the one that shows equivalence (`equivalent`), against
/// ± `threshold` (symmetric on the log scale: 1 + θ slower, 1 / (1 + θ) faster).
pub fn change(ratio: f64, shown: (f64, f64), equivalent: (f64, f64), threshold: f64) -> Change {
    let (up, down) = (1.0 + threshold, 1.0 / (1.0 + threshold));
    if shown.0 > 1.0 && ratio > up {
        Change::Slower
    } else if shown.1 < 1.0 && ratio < down {
        Change::Faster
    } else if equivalent.0 >= down && equivalent.1 <= up {
        Change::NoChange
    } else {
        Change::Inconclusive
    }
}

/// One side of a comparison: its figure and uncertainty, and whether that uncertainty
/// reaches the level that differs between runs (several runs, a run level from earlier
/// runs, or at least two ring instances).
/// Read back (a reported side), `replicated` and `loaded` are false where not said.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Side {
    #[serde(flatten)]
    pub estimate: Estimate,
    #[serde(default)]
    pub replicated: bool,
    /// One run measured under load, with no earlier runs to say how such runs differ.
    #[serde(default)]
    pub loaded: bool,
}

/// Other tasks runnable per CPU, just before a run, from which one run cannot speak for
/// another: with two CPU-bound processes on this project's 2-vCPU machine (1.0), a pinned
/// 2-process ring's default runs differed by a factor of two from one run to the next (a
/// round's ln ratio spread 0.71), and one run a side called A/A pairs different in 35 % of
/// draws even with the assumed run level. One busy neighbour on two CPUs is 0.5.
pub const LOADED_RUNNABLE: f64 = 0.5;

/// Where a side's run level came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunSource {
    /// The run knew one from earlier runs of the point (the run history).
    Earlier,
    /// None known: `ASSUMED_RUN_LEVEL`.
    Assumed,
    /// The side has no error of its own to add one to (one sample).
    Unknown,
}

impl RunSource {
    pub fn as_str(self) -> &'static str {
        match self {
            RunSource::Earlier => "earlier runs",
            RunSource::Assumed => "assumed",
            RunSource::Unknown => "unknown",
        }
    }
}

/// A run as a side, as reported: the side, and where its run level came from.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RunSide {
    #[serde(flatten)]
    pub side: Side,
    pub run_level: RunSource,
}

impl Side {
    /// One run of a point as a side: its figure and uncertainty with the run level that run
    /// knew from earlier runs, or else the assumed one, since one run alone cannot show how
    /// the next differs. Replicated wherever that level could be added: a one-sample side
    /// has no error to add it to.
    /// `runnable`: other tasks runnable per CPU just before the run, where known.
    pub fn of_run(
        layout: &Layout,
        earlier: Option<&RunLevel>,
        runnable: Option<f64>,
    ) -> (Side, RunSource) {
        let source = if earlier.is_some() {
            RunSource::Earlier
        } else {
            RunSource::Assumed
        };
        let estimate = stats::estimate(layout, Some(earlier.unwrap_or(&ASSUMED_RUN_LEVEL)));
        let replicated = estimate.uncertainty.se.is_finite();
        let side = Side {
            estimate,
            replicated,
            loaded: earlier.is_none() && runnable.is_some_and(|r| r >= LOADED_RUNNABLE),
        };
        (
            side,
            if replicated {
                source
            } else {
                RunSource::Unknown
            },
        )
    }
}

/// A comparison of `new` with `base`: the word, why, the ratio with its interval
/// (`difference`, at `CONFIDENCE`) and its equivalence interval, and how much more data a
/// decision would take if the ratio stayed where it is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    #[serde(rename = "verdict")]
    pub change: Change,
    pub why: Why,
    #[serde(flatten)]
    pub difference: Difference,
    pub equivalent_low: f64,
    pub equivalent_high: f64,
    /// The relative half-width of the ratio's interval on the log scale, and the one that
    /// would decide it.
    pub half_width: f64,
    pub needed_half_width: f64,
    /// How many times the data of each side a decision would take (the interval narrows as
    /// 1/√ of it): 4 means four times the runs (or instances). NaN where none is needed or
    /// none would do.
    pub data_factor: f64,
}

/// `new` against `base` at ± `threshold`.
pub fn compare(base: &Side, new: &Side, threshold: f64) -> Comparison {
    let d = stats::difference(&base.estimate, &new.estimate, CONFIDENCE);
    let e = stats::difference(&base.estimate, &new.estimate, EQUIVALENCE_CONFIDENCE);
    let half = ((d.high / d.low).ln() / 2.0).abs();
    let mut c = Comparison {
        change: Change::Inconclusive,
        why: Why::Decided,
        difference: d,
        equivalent_low: e.low,
        equivalent_high: e.high,
        half_width: half,
        needed_half_width: f64::NAN,
        data_factor: f64::NAN,
    };
    if d.ratio.is_nan() {
        c.why = Why::BelowResolution;
        return c;
    }
    if !(base.replicated && new.replicated) {
        c.why = Why::OneSample;
        return c;
    }
    if base.loaded || new.loaded {
        c.why = Why::Loaded;
        return c;
    }
    c.change = change(d.ratio, (d.low, d.high), (e.low, e.high), threshold);
    if c.change == Change::Inconclusive {
        let t_ratio = stats::t_quantile(CONFIDENCE, d.df) / stats::t_quantile(0.90, d.df);
        c.needed_half_width = needed_half_width(d.ratio, threshold, t_ratio);
        if c.needed_half_width > 0.0 && half.is_finite() {
            c.why = Why::TooWide;
            c.data_factor = (half / c.needed_half_width).powi(2);
        } else {
            c.why = Why::AtThreshold;
        }
    }
    c
}

/// The half-width (log scale, at the comparison's confidence) that would decide a ratio that
/// stayed at `ratio`: below its distance from 1 it shows a difference (where the ratio is
/// beyond the threshold); below its distance from the threshold, scaled by `t_ratio` (the
/// comparison's t over the equivalence test's), it shows none. The easier of the two; 0 where
/// the ratio sits on the threshold.
pub fn needed_half_width(ratio: f64, threshold: f64, t_ratio: f64) -> f64 {
    let (distance, bound) = (ratio.ln().abs(), (1.0 + threshold).ln());
    let to_differ = if distance > bound { distance } else { 0.0 };
    let to_equal = (bound - distance).max(0.0) * t_ratio;
    to_differ.max(to_equal)
}

/// Runs per side a comparison needs to tell a change of `detect` (relative, on the log scale)
/// with probability `power`, when one run's ln figure scatters by `spread` (its own error and
/// the spread between runs together): Welch's t on k runs a side, the smallest k with
/// (t₀.₉₇₅ + t_power) · spread · √(2/k) ≤ ln(1 + detect), both t at 2k − 2 degrees of
/// freedom. None beyond `MAX_PLANNED`.
pub fn runs_to_detect(spread: f64, detect: f64, power: f64) -> Option<usize> {
    let effect = (1.0 + detect).ln();
    (2..=MAX_PLANNED).find(|&k| {
        let df = (2 * k - 2) as f64;
        let t = stats::t_quantile(CONFIDENCE, df) + stats::t_quantile(2.0 * power - 1.0, df);
        t * spread * (2.0 / k as f64).sqrt() <= effect
    })
}

/// The most runs or rounds a plan names; beyond, "more than".
pub const MAX_PLANNED: usize = 10_000;
/// The probability a plan tells the change it is asked for, where none is named.
pub const DEFAULT_POWER: f64 = 0.8;
/// A plan's change to tell apart (a fraction of the figure), and the probability of telling it.
pub const DETECT: Limit<f64> = Limit::above("detect", 0.0, 10.0).in_unit(" (a fraction)");
pub const POWER: Limit<f64> = Limit::between("power", 0.5, 0.999);
/// The change a plan is for where none is named: 5 %.
pub const DEFAULT_DETECT: f64 = 0.05;
/// Runs a plan measures first of a point with too few in the history.
pub const PILOT: Limit<u64> = Limit::between("pilot", 0, 100);

/// What a plan is asked, checked: `detect` and `power` in their ranges, `spread` a finite
/// relative spread >= 0.
pub fn check_plan(spread: f64, detect: f64, power: f64) -> Result<()> {
    DETECT.check(detect)?;
    POWER.check(power)?;
    if !(spread.is_finite() && spread >= 0.0) {
        return Err(Error::invalid(
            "spread",
            format!("must be a finite relative spread >= 0, got {spread}"),
        ));
    }
    Ok(())
}

/// Rounds `ab` needs for the same (`sequential::rounds_to_detect` at the comparisons'
/// confidence), when one round's ln ratio scatters by `spread`.
pub fn rounds_to_detect(spread: f64, detect: f64, power: f64) -> Option<usize> {
    let alpha = 1.0 - CONFIDENCE;
    crate::stats::sequential::rounds_to_detect(spread, detect, alpha, power, MAX_PLANNED)
}

/// What a plan asks, checked (`check_plan`), with `DEFAULT_POWER` where no power is asked:
/// the runs per side (`runs_to_detect`), or with `rounds` the rounds of `ab`.
pub fn planned(
    spread: f64,
    detect: f64,
    power: Option<f64>,
    rounds: bool,
) -> Result<Option<usize>> {
    let power = power.unwrap_or(DEFAULT_POWER);
    check_plan(spread, detect, power)?;
    let plan = if rounds {
        rounds_to_detect
    } else {
        runs_to_detect
    };
    Ok(plan(spread, detect, power))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Level, Uncertainty};

    fn estimate_of(center: f64, se: f64, df: f64) -> Estimate {
        Estimate {
            center,
            uncertainty: Uncertainty {
                se,
                df,
                level: Level::Instance,
            },
        }
    }

    fn side(center: f64, rel_se: f64) -> Side {
        Side {
            estimate: estimate_of(center, center * rel_se, 9.0),
            replicated: true,
            loaded: false,
        }
    }

    #[test]
    fn verdict_words_follow_the_interval() {
        // t(0.975, 20) · se · √2 ≈ 2.95 se: se 0.5 % is ±1.5 %, 3 % is ±8.8 %.
        let met = estimate_of(100.0, 0.5, 20.0);
        assert_eq!(verdict(&met, 0.02, 1), Verdict::Stable);
        assert_eq!(verdict(&met, 0.01, 1), Verdict::Noisy);
        assert_eq!(
            verdict(&estimate_of(100.0, 3.0, 20.0), 0.02, 1),
            Verdict::Noisy
        );
        assert_eq!(
            verdict(&estimate_of(100.0, 5.0, 20.0), 0.02, 1),
            Verdict::Unstable
        );
        assert_eq!(
            verdict(&estimate_of(100.0, 0.1, 0.0), 0.02, 1),
            Verdict::Unstable
        );
        assert_eq!(
            verdict(&estimate_of(-1.0, 0.1, 9.0), 0.02, 1),
            Verdict::Unstable
        );
        assert_eq!(verdict(&met, 0.02, 2), Verdict::Bimodal);
        let names: Vec<&str> = [
            Verdict::Stable,
            Verdict::Noisy,
            Verdict::Unstable,
            Verdict::Bimodal,
            Verdict::Throttled,
        ]
        .iter()
        .map(|v| v.as_str())
        .collect();
        assert_eq!(
            names,
            ["stable", "noisy", "unstable", "bimodal", "throttled"]
        );
    }

    #[test]
    fn no_change_needs_the_whole_interval_inside_the_threshold() {
        // An interval that includes 1 but reaches far beyond the threshold shows nothing.
        assert_eq!(
            change(1.67, (0.3, 14.0), (0.4, 9.0), 0.02),
            Change::Inconclusive
        );
        assert_eq!(
            change(1.0, (0.99, 1.01), (0.992, 1.008), 0.02),
            Change::NoChange
        );
        // Significant but within the threshold, and shown to be: no change.
        assert_eq!(
            change(1.01, (1.004, 1.016), (1.005, 1.015), 0.02),
            Change::NoChange
        );
        // Significant, small, not shown to be within it: inconclusive.
        assert_eq!(
            change(1.015, (1.001, 1.04), (1.003, 1.035), 0.02),
            Change::Inconclusive
        );
        assert_eq!(change(1.5, (1.3, 1.7), (1.35, 1.65), 0.02), Change::Slower);
        assert_eq!(change(0.5, (0.4, 0.6), (0.42, 0.58), 0.02), Change::Faster);
    }

    #[test]
    fn comparisons_name_why_and_what_would_decide() {
        // Two sides 12 % apart with ±19 % each: too wide; a decision takes more data.
        let c = compare(&side(100.0, 0.08), &side(112.0, 0.08), 0.02);
        assert_eq!((c.change, c.why), (Change::Inconclusive, Why::TooWide));
        assert!(c.data_factor > 1.0, "{c:?}");
        // With that much more data (se shrinking as 1/√), the same ratio is decided.
        let k = c.data_factor * 1.05;
        let narrower = |center: f64| side(center, 0.08 / k.sqrt());
        let decided = compare(&narrower(100.0), &narrower(112.0), 0.02);
        assert_eq!(decided.change, Change::Slower, "{decided:?}");
        // One instance on a side: never a word but inconclusive, whatever the ratio.
        let lone = Side {
            replicated: false,
            ..side(200.0, 0.001)
        };
        let c = compare(&side(100.0, 0.001), &lone, 0.02);
        assert_eq!((c.change, c.why), (Change::Inconclusive, Why::OneSample));
        let c = compare(&side(-1.0, 0.1), &side(100.0, 0.01), 0.02);
        assert_eq!(c.why, Why::BelowResolution);
        // One run measured under load: nothing it shows speaks for another such run.
        let busy = Side {
            loaded: true,
            ..side(200.0, 0.001)
        };
        let c = compare(&side(100.0, 0.001), &busy, 0.02);
        assert_eq!((c.change, c.why), (Change::Inconclusive, Why::Loaded));
        // Exactly on the threshold nothing decides it.
        let c = compare(&side(100.0, 0.01), &side(102.0, 0.01), 0.02);
        assert_eq!((c.change, c.why), (Change::Inconclusive, Why::AtThreshold));
    }

    #[test]
    fn one_run_carries_a_run_level_and_says_where_it_came_from() {
        let samples: Vec<f64> = (0..16).map(|i| 100.0 + (i % 4) as f64 * 0.1).collect();
        let layout = Layout {
            samples: &samples,
            block: 4,
            instance_blocks: &[2, 2],
        };
        let (alone, source) = Side::of_run(&layout, None, Some(0.0));
        assert_eq!(source, RunSource::Assumed);
        assert!(alone.replicated && !alone.loaded);
        // The assumed spread between runs dominates a steady run's own error.
        let rel_se = alone.estimate.uncertainty.se / alone.estimate.center;
        assert!(rel_se >= ASSUMED_RUN_LEVEL.sd, "{rel_se}");
        let (busy, _) = Side::of_run(&layout, None, Some(LOADED_RUNNABLE));
        assert!(busy.loaded);
        // Earlier runs of such conditions say how runs then differ: not loaded, theirs.
        let seen = RunLevel { sd: 0.01, df: 9.0 };
        let (known, source) = Side::of_run(&layout, Some(&seen), Some(1.0));
        assert_eq!(source, RunSource::Earlier);
        assert!(!known.loaded);
        assert!(known.estimate.uncertainty.se < alone.estimate.uncertainty.se);
        // One sample has no error to add a level to.
        let one = Layout {
            samples: &samples[..1],
            block: 1,
            instance_blocks: &[1],
        };
        let (lone, source) = Side::of_run(&one, None, None);
        assert_eq!(source, RunSource::Unknown);
        assert!(!lone.replicated);
    }

    #[test]
    fn runs_to_detect_grow_with_the_spread_and_shrink_with_the_change() {
        // 5 % apart at 2 % spread: a handful of runs; at 10 % spread, many more.
        let few = runs_to_detect(0.02, 0.05, 0.8).unwrap();
        let many = runs_to_detect(0.10, 0.05, 0.8).unwrap();
        assert!((3..=6).contains(&few), "{few}");
        assert!(many > 10 * few, "{many}");
        // The normal approximation's 2 (1.96 + 0.84)² σ²/δ² with t's small-sample premium.
        let approx = 2.0 * (1.96f64 + 0.84).powi(2) * 0.10f64.powi(2) / 1.05f64.ln().powi(2);
        assert!(
            (many as f64) >= approx && (many as f64) < approx * 1.1,
            "{many} {approx}"
        );
        assert_eq!(runs_to_detect(1.0, 0.001, 0.8), None);
    }

    #[test]
    fn the_needed_half_width_is_the_easier_decision() {
        let t = 1.2;
        // 12 % apart: showing the difference needs ±ln 1.12.
        assert!((needed_half_width(1.12, 0.02, t) - 1.12f64.ln()).abs() < 1e-12);
        // 0.5 % apart: showing equivalence needs (ln 1.02 - ln 1.005) · t.
        let want = (1.02f64.ln() - 1.005f64.ln()) * t;
        assert!((needed_half_width(1.005, 0.02, t) - want).abs() < 1e-12);
        assert_eq!(needed_half_width(1.02, 0.02, t), 0.0);
    }
}
