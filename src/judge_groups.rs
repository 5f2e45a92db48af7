//! Two groups of runs of each point compared at the level that varies: the runs of one label's
//! two values (kernel A and kernel B, boots apart, days apart) are each side's units, so the
//! spread between runs, boots and days is in the comparison, not assumed. `ctxbench compare
//! --by LABEL`. Pure: figures in, words out.
//!
//! Each point is Welch's t on the runs' ln figures (a ratio's natural scale), and every
//! point of one call is one family held by Holm's step-down at `family_alpha`, as
//! `judge::judge` holds its points (why Holm: there).

use crate::error::{Error, Result};
use crate::judge::{check, holm};
use crate::stats;
use crate::verdict::{change, Change, Why, EQUIVALENCE_CONFIDENCE};
use serde::Serialize;

/// Fewest runs a side needs to be judged: two runs measure a spread on one degree of
/// freedom (t₀.₉₉₉ = 637 at Holm's level for 50 points), three on two; fewer is "short".
pub const MIN_GROUP_RUNS: usize = 3;

/// One point's two groups of runs' figures (µs, one per run).
#[derive(Debug, Clone, Copy)]
pub struct Groups<'a> {
    pub base: &'a [f64],
    pub new: &'a [f64],
}

/// What the two groups say of a point: new / base (ratio of the groups' geometric means) with
/// its interval at `confidence` (Holm's level for the point: it excludes 1 exactly where the
/// point was called different) and its 90 % equivalence interval, the p-value and Holm's
/// adjusted one, each side's runs, one run's spread (ln, pooled) and Welch's degrees of
/// freedom. Short sides: inconclusive with NaN intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupJudgement {
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
    pub base_runs: usize,
    pub new_runs: usize,
    pub sd: f64,
    pub df: f64,
}

/// Each point's groups compared, Holm across the points both of whose sides hold
/// `MIN_GROUP_RUNS` runs; `threshold` and `family_alpha` as `judge::judge` takes them.
pub fn judge_groups(
    points: &[Groups],
    threshold: f64,
    family_alpha: f64,
) -> Result<Vec<GroupJudgement>> {
    check(threshold, family_alpha)?;
    let mut out = Vec::with_capacity(points.len());
    let mut se = Vec::with_capacity(points.len());
    for p in points {
        let (j, s) = welch(p)?;
        out.push(j);
        se.push(s);
    }
    let tested: Vec<usize> = (0..out.len()).filter(|&i| out[i].df > 0.0).collect();
    let p: Vec<f64> = tested.iter().map(|&i| out[i].p_value).collect();
    for (&i, (adjusted, share)) in tested.iter().zip(holm(&p)) {
        let confidence = 1.0 - family_alpha * share;
        decide(
            &mut out[i],
            se[i],
            adjusted,
            confidence,
            family_alpha,
            threshold,
        );
    }
    Ok(out)
}

/// One run's spread (ln, pooled over `groups` of runs' figures in µs, each about its own
/// mean) and the runs it rests on: what `verdict::runs_to_detect` plans runs a side from.
/// None where no group holds two usable runs (a figure at or below 0 is not usable).
pub fn run_spread(groups: &[&[f64]]) -> Option<(f64, usize)> {
    let (mut ss, mut df, mut runs) = (0.0, 0usize, 0usize);
    for g in groups {
        let ln: Vec<f64> = g
            .iter()
            .filter(|v| v.is_finite() && **v > 0.0)
            .map(|v| v.ln())
            .collect();
        if ln.len() >= 2 {
            let (m, _) = mean_sd(&ln);
            ss += ln.iter().map(|v| (v - m).powi(2)).sum::<f64>();
            df += ln.len() - 1;
            runs += ln.len();
        }
    }
    (df > 0).then(|| ((ss / df as f64).sqrt(), runs))
}

/// Mean and standard deviation (n − 1) of `ln` figures.
fn mean_sd(ln: &[f64]) -> (f64, f64) {
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

/// The point's Welch test, not yet decided (df 0 where a side is short), and the standard
/// error of its ln ratio.
fn welch(p: &Groups) -> Result<(GroupJudgement, f64)> {
    for (param, side) in [("base", p.base), ("new", p.new)] {
        if let Some(v) = side.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
            return Err(Error::invalid(
                param,
                format!("figures must be finite and above 0 µs, got {v}"),
            ));
        }
    }
    let ln = |s: &[f64]| s.iter().map(|v| v.ln()).collect::<Vec<_>>();
    let ((mb, sb), (mn, sn)) = (mean_sd(&ln(p.base)), mean_sd(&ln(p.new)));
    let (nb, nn) = (p.base.len(), p.new.len());
    let mut j = GroupJudgement {
        change: Change::Inconclusive,
        why: Why::ShortSeries,
        base: mb.exp(),
        new: mn.exp(),
        ratio: (mn - mb).exp(),
        low: f64::NAN,
        high: f64::NAN,
        confidence: f64::NAN,
        equivalent_low: f64::NAN,
        equivalent_high: f64::NAN,
        p_value: f64::NAN,
        adjusted_p: f64::NAN,
        base_runs: nb,
        new_runs: nn,
        sd: f64::NAN,
        df: 0.0,
    };
    if nb < MIN_GROUP_RUNS || nn < MIN_GROUP_RUNS {
        return Ok((j, f64::NAN));
    }
    let (vb, vn) = (sb * sb / nb as f64, sn * sn / nn as f64);
    let var = vb + vn;
    j.df = if var > 0.0 {
        var * var / (vb * vb / (nb - 1) as f64 + vn * vn / (nn - 1) as f64)
    } else {
        (nb + nn - 2) as f64
    };
    let pooled = ((nb - 1) as f64 * sb * sb + (nn - 1) as f64 * sn * sn) / (nb + nn - 2) as f64;
    j.sd = pooled.sqrt();
    let d = mn - mb;
    // t_p_value says 0 of an infinite t and 1 of 0/0: runs that never vary.
    j.p_value = stats::t_p_value(d / var.sqrt(), j.df);
    Ok((j, var.sqrt()))
}

/// The word for a tested point at Holm's `confidence` for it, as `judge` decides one.
fn decide(
    j: &mut GroupJudgement,
    se: f64,
    adjusted: f64,
    confidence: f64,
    alpha: f64,
    threshold: f64,
) {
    let d = j.ratio.ln();
    let half = stats::t_quantile(confidence, j.df) * se;
    let equivalent = stats::t_quantile(EQUIVALENCE_CONFIDENCE, j.df) * se;
    (j.low, j.high) = ((d - half).exp(), (d + half).exp());
    (j.equivalent_low, j.equivalent_high) = ((d - equivalent).exp(), (d + equivalent).exp());
    j.confidence = confidence;
    j.adjusted_p = adjusted;
    let rejected = adjusted <= alpha;
    // Not rejected: the interval shown holds 1, so that a point Holm's step-down stopped
    // before is never called on its own interval.
    let shown = if rejected {
        (j.low, j.high)
    } else {
        (j.low.min(1.0), j.high.max(1.0))
    };
    j.change = change(
        j.ratio,
        shown,
        (j.equivalent_low, j.equivalent_high),
        threshold,
    );
    j.why = if j.change == Change::Inconclusive {
        Why::TooWide
    } else {
        Why::Decided
    };
}

#[cfg(test)]
#[path = "judge_groups_tests.rs"]
mod tests;
