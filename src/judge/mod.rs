//! Each point's new runs judged against what the same point ran before, every point of one
//! call (one `compare`, one gate session) one family of calls: against its series
//! (`series`: the newest comparable runs of the point) or between two groups of runs
//! (`groups`: a label's two values). Both say a point's `Call`, made here. Pure: figures in,
//! words out.
//!
//! **Error control per comparison, not per point.** Holm's step-down procedure holds the
//! probability of *any* false "slower" or "faster" in a family at `family_alpha` (the
//! family-wise error rate), whatever the dependence between points. Not a false-discovery
//! control (Benjamini–Hochberg): a CI gate fails the build on any one call, so what the user
//! pays for is the chance that a night with no change has at least one call, which is the
//! FWER; BH holds only the expected share of false calls among the calls made, and a night
//! with no real change at all has every call false (with 20 points at 5 % each, BH lets about
//! one night in twenty fail just as Holm does, but with real changes present it lets false
//! calls ride along with them, and the gate then names the wrong tests). Holm is uniformly
//! more powerful than Bonferroni at the same guarantee.

pub mod groups;
pub mod series;

use crate::error::{Error, Result};
use crate::stats;
use crate::verdict::{change, Change, Why, EQUIVALENCE_CONFIDENCE};
use serde::Serialize;

/// The chance of any false call in one family (one compare, one gate session).
pub const FAMILY_ALPHA: f64 = 0.05;

/// What a point's new runs say against its base, as every judgement says it: the word and
/// why; the base's level and the new runs' (µs, geometric means); new / base with its
/// interval at `confidence` (Holm's level for the point: it excludes 1 exactly where the
/// point was called different) and its 90 % equivalence interval ("no change" must lie in
/// it: two one-sided tests at 5 %); the p-value and Holm's adjusted one; one run's spread
/// (ln) and its degrees of freedom. Where the point could not be tested: inconclusive, the
/// ratio of the levels, NaN intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    #[serde(rename = "verdict")]
    pub change: Change,
    pub why: Why,
    #[serde(rename = "base_us")]
    pub base: f64,
    #[serde(rename = "new_us")]
    pub new: f64,
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
    pub equivalent_low: f64,
    pub equivalent_high: f64,
    pub p_value: f64,
    pub adjusted_p: f64,
    pub sd: f64,
    pub df: f64,
}

/// Where Holm's step-down left one point of a family: its adjusted p-value and the share of
/// the family's α it was held to (`holm`), and that α.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Held {
    pub adjusted: f64,
    pub share: f64,
    pub alpha: f64,
}

impl Held {
    pub fn rejected(&self) -> bool {
        self.adjusted <= self.alpha
    }
}

impl Call {
    /// An untested point (`why`): the levels and their ratio, nothing else known.
    pub fn untested(why: Why, base: f64, new: f64, ratio: f64) -> Call {
        Call {
            change: Change::Inconclusive,
            why,
            base,
            new,
            ratio,
            low: f64::NAN,
            high: f64::NAN,
            confidence: f64::NAN,
            equivalent_low: f64::NAN,
            equivalent_high: f64::NAN,
            p_value: f64::NAN,
            adjusted_p: f64::NAN,
            sd: f64::NAN,
            df: f64::NAN,
        }
    }

    /// The intervals around `d` (the ln of `ratio`, whose standard error is `se` on `df`
    /// degrees of freedom; `equivalence_se` for the equivalence interval, at least `se`) at
    /// the confidence Holm `held` the point to, and the word they earn against `threshold`
    /// (as `verdict::change` says of any interval): why is "decided", or "too wide" where
    /// inconclusive. Returns the two half-widths (ln): at that confidence, and the
    /// equivalence interval's.
    pub(crate) fn decide(
        &mut self,
        d: f64,
        (se, equivalence_se): (f64, f64),
        held: Held,
        threshold: f64,
    ) -> (f64, f64) {
        self.confidence = 1.0 - held.alpha * held.share;
        self.adjusted_p = held.adjusted;
        let half = stats::t_quantile(self.confidence, self.df) * se;
        let equivalent =
            stats::t_quantile(EQUIVALENCE_CONFIDENCE, self.df) * equivalence_se.max(se);
        (self.low, self.high) = ((d - half).exp(), (d + half).exp());
        (self.equivalent_low, self.equivalent_high) =
            ((d - equivalent).exp(), (d + equivalent).exp());
        // Not rejected: the interval shown holds 1, so that a point Holm's step-down stopped
        // before is never called on its own interval.
        let shown = if held.rejected() {
            (self.low, self.high)
        } else {
            (self.low.min(1.0), self.high.max(1.0))
        };
        let equivalence = (self.equivalent_low, self.equivalent_high);
        self.change = change(self.ratio, shown, equivalence, threshold);
        self.why = if self.change == Change::Inconclusive {
            Why::TooWide
        } else {
            Why::Decided
        };
        (half, equivalent)
    }
}

/// `threshold` is the change below which a difference is "no change" (as in
/// `verdict::change`), `family_alpha` the chance of any false call in the family.
pub(crate) fn check(threshold: f64, family_alpha: f64) -> Result<()> {
    if !(threshold.is_finite() && (0.0..1.0).contains(&threshold)) {
        return Err(Error::invalid(
            "threshold",
            format!("must be a fraction >= 0 and < 1, got {threshold}"),
        ));
    }
    if !(family_alpha > 0.0 && family_alpha <= 0.5) {
        return Err(Error::invalid(
            "family_alpha",
            format!("must be above 0 and at most 0.5, got {family_alpha}"),
        ));
    }
    Ok(())
}

/// Runs' figures (µs) named `param`: each finite and above 0.
pub(crate) fn positive(param: &'static str, figures: &[f64]) -> Result<()> {
    match figures.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
        Some(v) => Err(Error::invalid(
            param,
            format!("figures must be finite and above 0 µs, got {v}"),
        )),
        None => Ok(()),
    }
}

/// Holm's step-down over `p`: each p-value's adjusted value (the running maximum of
/// (m − rank) · p in ascending order, at most 1) and the per-test level it was held to,
/// α / (m − rank) as a fraction of α (`alpha`, the family's).
pub(crate) fn holm(p: &[f64], alpha: f64) -> Vec<Held> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![
        Held {
            adjusted: 1.0,
            share: 1.0,
            alpha
        };
        m
    ];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        let share = (m - rank) as f64;
        running = running.max((share * p[i]).min(1.0));
        out[i] = Held {
            adjusted: running,
            share: 1.0 / share,
            alpha,
        };
    }
    out
}

/// Mean and standard deviation (n − 1) of `ln` figures.
pub(crate) fn mean_sd(ln: &[f64]) -> (f64, f64) {
    let n = ln.len() as f64;
    let m = ln.iter().sum::<f64>() / n;
    let ss = ln.iter().map(|v| (v - m).powi(2)).sum::<f64>();
    (
        m,
        if ln.len() > 1 {
            (ss / (n - 1.0)).sqrt()
        } else {
            f64::NAN
        },
    )
}
