//! Two groups of runs of each point compared at the level that varies: the runs of one label's
//! two values (kernel A and kernel B, boots apart, days apart) are each side's units, so the
//! spread between runs, boots and days is in the comparison, not assumed. `ctxbench compare
//! --by LABEL`. Pure: figures in, words out.
//!
//! Each point is Welch's t on the runs' ln figures (a ratio's natural scale), and every
//! point of one call is one family held by Holm's step-down at `family_alpha`, as
//! `series::judge` holds its points (why Holm: `judge`).

use super::{check, holm, mean_sd, positive, Call};
use crate::error::Result;
use crate::stats;
use crate::verdict::Why;
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

/// What the two groups say of a point: the call on new / base (the ratio of the groups'
/// geometric means; one run's spread pooled, Welch's degrees of freedom, 0 where a side is
/// short) and each side's runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupJudgement {
    #[serde(flatten)]
    pub call: Call,
    pub base_runs: usize,
    pub new_runs: usize,
}

/// Each point's groups compared, Holm across the points both of whose sides hold
/// `MIN_GROUP_RUNS` runs; `threshold` and `family_alpha` as `series::judge` takes them.
pub fn judge(points: &[Groups], threshold: f64, family_alpha: f64) -> Result<Vec<GroupJudgement>> {
    check(threshold, family_alpha)?;
    let mut out = Vec::with_capacity(points.len());
    let mut se = Vec::with_capacity(points.len());
    for p in points {
        let (j, s) = welch(p)?;
        out.push(j);
        se.push(s);
    }
    let tested: Vec<usize> = (0..out.len()).filter(|&i| out[i].call.df > 0.0).collect();
    let p: Vec<f64> = tested.iter().map(|&i| out[i].call.p_value).collect();
    for (&i, held) in tested.iter().zip(holm(&p, family_alpha)) {
        let call = &mut out[i].call;
        call.decide(call.ratio.ln(), (se[i], se[i]), held, threshold);
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

/// The point's Welch test, not yet decided (df 0 where a side is short), and the standard
/// error of its ln ratio.
fn welch(p: &Groups) -> Result<(GroupJudgement, f64)> {
    positive("base", p.base)?;
    positive("new", p.new)?;
    let ln = |s: &[f64]| s.iter().map(|v| v.ln()).collect::<Vec<_>>();
    let ((mb, sb), (mn, sn)) = (mean_sd(&ln(p.base)), mean_sd(&ln(p.new)));
    let (nb, nn) = (p.base.len(), p.new.len());
    let mut call = Call {
        df: 0.0,
        ..Call::untested(Why::ShortSeries, mb.exp(), mn.exp(), (mn - mb).exp())
    };
    if nb < MIN_GROUP_RUNS || nn < MIN_GROUP_RUNS {
        let j = GroupJudgement {
            call,
            base_runs: nb,
            new_runs: nn,
        };
        return Ok((j, f64::NAN));
    }
    let (vb, vn) = (sb * sb / nb as f64, sn * sn / nn as f64);
    let var = vb + vn;
    call.df = if var > 0.0 {
        var * var / (vb * vb / (nb - 1) as f64 + vn * vn / (nn - 1) as f64)
    } else {
        (nb + nn - 2) as f64
    };
    let pooled = ((nb - 1) as f64 * sb * sb + (nn - 1) as f64 * sn * sn) / (nb + nn - 2) as f64;
    call.sd = pooled.sqrt();
    // t_p_value says 0 of an infinite t and 1 of 0/0: runs that never vary.
    call.p_value = stats::t_p_value((mn - mb) / var.sqrt(), call.df);
    let j = GroupJudgement {
        call,
        base_runs: nb,
        new_runs: nn,
    };
    Ok((j, var.sqrt()))
}

#[cfg(test)]
#[path = "groups_tests.rs"]
mod tests;
