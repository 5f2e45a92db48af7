//! A new run (or k runs) of each point judged against its series: the newest comparable runs
//! of the same point on the same machine (which runs are comparable is the caller's choice:
//! the store's). Pure: figures in, words out.
//!
//! One run against one run cannot be both sharp and safe where runs move 5–40 % between
//! one another: the spread between runs must be measured, and only a series measures it.
//! Each point's series is described by `stats::series` (its modes, the spread within them
//! pooled); a new run is judged by a prediction interval around the level of a mode: a run
//! of the same code lands in it with the stated probability, whatever the spread between
//! runs, since that spread is what the interval is made of.
//!
//! **Error control per comparison, not per point.** Every point of one call (one `compare`,
//! one gate session) is one family, and Holm's step-down procedure holds the probability of
//! *any* false "slower" or "faster" in it at `family_alpha` (the family-wise error rate),
//! whatever the dependence between points. Not a false-discovery control (Benjamini–
//! Hochberg): a CI gate fails the build on any one call, so what the user pays for is the
//! chance that a night with no change has at least one call, which is the FWER; BH holds
//! only the expected share of false calls among the calls made, and a night with no real
//! change at all has every call false (with 20 points at 5 % each, BH lets about one night
//! in twenty fail just as Holm does, but with real changes present it lets false calls ride
//! along with them, and the gate then names the wrong tests). Holm is uniformly more
//! powerful than Bonferroni at the same guarantee.

use crate::error::{Error, Result};
use crate::stats::{self, Series, MODE_GAP};
use crate::verdict::{change, needed_half_width, Change, Why, EQUIVALENCE_CONFIDENCE, MAX_PLANNED};
use serde::Serialize;

/// Fewest comparable runs a series needs before a run is judged against it: from five, the
/// pooled spread rests on at least three degrees of freedom (t₀.₉₇₅ = 3.2); below, a
/// prediction interval is many times the spread and says little the user can act on.
pub const MIN_SERIES: usize = 5;
/// The newest runs of a series a judgement reads: thirty give the spread about 28 degrees
/// of freedom (t within 5 % of the normal's), and older runs describe a machine that may
/// have drifted since (kernel updates, firmware, neighbours).
pub const SERIES_WINDOW: usize = 30;
/// The chance of any false call in one family (one compare, one gate session).
pub const FAMILY_ALPHA: f64 = 0.05;

/// One point to judge: its series' figures (µs, oldest first) with their relative standard
/// errors (the same length, or empty where unknown), and the new run's figures (k >= 1).
#[derive(Debug, Clone, Copy)]
pub struct Point<'a> {
    pub baseline: &'a [f64],
    pub baseline_rel_se: &'a [f64],
    pub new: &'a [f64],
}

/// What a series says of a point's new runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    #[serde(rename = "verdict")]
    pub change: Change,
    pub why: Why,
    /// The level the new runs were judged against (µs; the geometric mean of a mode's runs)
    /// and the new runs' geometric mean.
    #[serde(rename = "base_us")]
    pub base: f64,
    #[serde(rename = "new_us")]
    pub new: f64,
    /// new / base, and its prediction interval at `confidence` (Holm's level for this point:
    /// it excludes 1 exactly where the point was called different).
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    pub confidence: f64,
    /// The 90 % prediction interval "no change" must lie in (two one-sided tests at 5 %).
    pub equivalent_low: f64,
    pub equivalent_high: f64,
    /// The p-value of "the new runs belong to a mode of the series", and Holm's adjusted one.
    pub p_value: f64,
    pub adjusted_p: f64,
    /// Comparable runs read (in the window), modes of two runs or more, the mode judged
    /// against and the main one (most runs; both indices into the series' modes, fastest
    /// first, where a run set aside from the spread is a mode of one), the judged mode's
    /// level over the main one's, runs set aside from the spread.
    pub runs: usize,
    pub modes: usize,
    #[serde(skip)]
    pub mode: usize,
    #[serde(skip)]
    pub main_mode: usize,
    /// The judged mode is a known one other than the main one.
    pub known_mode: bool,
    pub mode_ratio: f64,
    pub set_aside: usize,
    /// The spread within modes (ln scale) and its degrees of freedom.
    pub sd: f64,
    pub df: f64,
    /// New runs that would decide an inconclusive point if their mean stayed where it is;
    /// None where none is needed or no number would do (the series' own runs limit it).
    pub runs_to_decide: Option<usize>,
}

/// Each point's new runs against its series, with Holm's procedure across the points that
/// could be judged (a short series is no member of the family): `threshold` is the change
/// below which a difference is "no change" (as in `verdict::change`), `family_alpha` the
/// chance of any false call among them.
pub fn judge(points: &[Point], threshold: f64, family_alpha: f64) -> Result<Vec<Judgement>> {
    check(threshold, family_alpha)?;
    let mut tests = Vec::with_capacity(points.len());
    for p in points {
        tests.push(test(p)?);
    }
    let tested: Vec<(usize, f64)> = tests
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.as_ref().ok().map(|t| (i, t.p_value)))
        .collect();
    let holm = holm(&tested.iter().map(|t| t.1).collect::<Vec<_>>());
    let mut levels = vec![(f64::NAN, f64::NAN); points.len()];
    for ((i, _), h) in tested.iter().zip(holm) {
        levels[*i] = h;
    }
    Ok(tests
        .into_iter()
        .zip(levels)
        .map(|(t, (adjusted, level))| match t {
            Ok(t) => decide(t, adjusted, level, family_alpha, threshold),
            Err(short) => short,
        })
        .collect())
}

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

/// Holm's step-down over `p`: each p-value's adjusted value (the running maximum of
/// (m − rank) · p in ascending order, at most 1) and the per-test level it was held to,
/// α / (m − rank) as a fraction of α (multiply by the family's α).
pub(crate) fn holm(p: &[f64]) -> Vec<(f64, f64)> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![(1.0, 1.0); m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        let share = (m - rank) as f64;
        running = running.max((share * p[i]).min(1.0));
        out[i] = (running, 1.0 / share);
    }
    out
}

/// A point's series and new runs, ready for Holm: the series, the new runs' mean ln figure
/// and count, each mode's p-value, the largest of them.
struct Tested {
    series: Series,
    runs: usize,
    new_ln: f64,
    k: usize,
    p_by_mode: Vec<f64>,
    p_value: f64,
}

/// `point` tested against each mode of its series, or the judgement of a short one.
fn test(point: &Point) -> Result<std::result::Result<Tested, Judgement>> {
    positive("baseline", point.baseline)?;
    positive("new", point.new)?;
    if point.new.is_empty() {
        return Err(Error::invalid("new", "needs at least one run's figure"));
    }
    let rel_se = point.baseline_rel_se;
    if !(rel_se.is_empty() || rel_se.len() == point.baseline.len()) {
        return Err(Error::invalid(
            "baseline_rel_se",
            format!(
                "must be empty or as long as baseline ({}), got {}",
                point.baseline.len(),
                rel_se.len()
            ),
        ));
    }
    let from = point.baseline.len().saturating_sub(SERIES_WINDOW);
    let ln: Vec<f64> = point.baseline[from..].iter().map(|v| v.ln()).collect();
    let rel_se = if rel_se.is_empty() {
        rel_se
    } else {
        &rel_se[from..]
    };
    let new_ln = point.new.iter().map(|v| v.ln()).sum::<f64>() / point.new.len() as f64;
    let series = (ln.len() >= MIN_SERIES)
        .then(|| stats::series(&ln, rel_se))
        .flatten();
    let Some(series) = series else {
        return Ok(Err(short(&ln, new_ln)));
    };
    let k = point.new.len();
    // Against the main mode and every regime apart from it (`is_regime`); a run set aside
    // from the main mode's tail is no level of its own.
    let p_by_mode: Vec<f64> = (0..series.modes.len())
        .map(|i| {
            let m = series.modes[i];
            let se = series.sd * (1.0 / k as f64 + 1.0 / m.runs as f64).sqrt();
            if i == series.main || is_regime(&series, i, k) {
                stats::t_p_value((new_ln - m.level) / se, series.df)
            } else {
                0.0
            }
        })
        .collect();
    let p_value = p_by_mode.iter().copied().fold(0.0, f64::max);
    Ok(Ok(Tested {
        series,
        runs: ln.len(),
        new_ln,
        k,
        p_by_mode,
        p_value,
    }))
}

/// Whether mode `i` is a regime apart from the series' main one for `k` new runs: as far
/// from it as a gap between modes (`MODE_GAP`), and held by enough runs that `k` runs of the
/// same code all landing in it is no rarer than `FAMILY_ALPHA`: ((m + 1) / (n + 1))^k, the
/// chance by rank that k exchangeable runs all fall at or beyond the mode's m of n runs. A
/// run the screen set aside from the main mode's tail lies inside the main regime. One run
/// in thirty apart is a regime for one new run (2/31: one run cannot tell a 2x regression
/// from the level the machine once showed), not for two (0.4 %): with a mode of one taken
/// for a regime whatever k, three new runs at 2x were "no change (known mode)"; with none,
/// A/A families with a slow mode one run in five called anything in 10.6 % (seeded).
fn is_regime(s: &Series, i: usize, k: usize) -> bool {
    let share = (s.modes[i].runs + 1) as f64 / (s.usable + 1) as f64;
    i != s.main
        && share.powi(k as i32) >= FAMILY_ALPHA
        && (s.modes[i].level - s.modes[s.main].level).abs() > MODE_GAP.ln_1p()
}

fn positive(param: &'static str, figures: &[f64]) -> Result<()> {
    match figures.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
        Some(v) => Err(Error::invalid(
            param,
            format!("figures must be finite and above 0 µs, got {v}"),
        )),
        None => Ok(()),
    }
}

/// The judgement of a series too short to judge by: inconclusive, the ratio to its median.
fn short(ln: &[f64], new_ln: f64) -> Judgement {
    let base = stats::median(ln).exp();
    let new = new_ln.exp();
    Judgement {
        change: Change::Inconclusive,
        why: Why::ShortSeries,
        base,
        new,
        ratio: new / base,
        low: f64::NAN,
        high: f64::NAN,
        confidence: f64::NAN,
        equivalent_low: f64::NAN,
        equivalent_high: f64::NAN,
        p_value: f64::NAN,
        adjusted_p: f64::NAN,
        runs: ln.len(),
        modes: 0,
        mode: 0,
        main_mode: 0,
        known_mode: false,
        mode_ratio: f64::NAN,
        set_aside: 0,
        sd: f64::NAN,
        df: f64::NAN,
        runs_to_decide: None,
    }
}

/// The word for a tested point: called different where Holm rejects it (then against the
/// series' main mode: slower or faster than the level most runs hold); inside a mode other
/// than the main one, "no change (known mode)"; else by the prediction interval around the
/// mode it lies nearest, as `verdict::change` says of any interval.
fn decide(t: Tested, adjusted: f64, share: f64, alpha: f64, threshold: f64) -> Judgement {
    let s = &t.series;
    let rejected = adjusted <= alpha;
    let nearest = (0..s.modes.len())
        .max_by(|&a, &b| t.p_by_mode[a].total_cmp(&t.p_by_mode[b]))
        .expect("a series has a mode");
    let mode = if rejected || !is_regime(s, nearest, t.k) {
        s.main
    } else {
        nearest
    };
    let m = s.modes[mode];
    let se = s.sd * (1.0 / t.k as f64 + 1.0 / m.runs as f64).sqrt();
    let confidence = 1.0 - alpha * share;
    let d = t.new_ln - m.level;
    let half = stats::t_quantile(confidence, s.df) * se;
    let equivalent = stats::t_quantile(EQUIVALENCE_CONFIDENCE, s.df) * se;
    let (ratio, low, high) = (d.exp(), (d - half).exp(), (d + half).exp());
    let mut j = Judgement {
        change: Change::Inconclusive,
        why: Why::Decided,
        base: m.level.exp(),
        new: t.new_ln.exp(),
        ratio,
        low,
        high,
        confidence,
        equivalent_low: (d - equivalent).exp(),
        equivalent_high: (d + equivalent).exp(),
        p_value: t.p_value,
        adjusted_p: adjusted,
        runs: t.runs,
        modes: s.regimes(),
        mode,
        main_mode: s.main,
        known_mode: mode != s.main,
        mode_ratio: (m.level - s.modes[s.main].level).exp(),
        set_aside: s.set_aside,
        sd: s.sd,
        df: s.df,
        runs_to_decide: None,
    };
    if !rejected && mode != s.main {
        j.change = Change::NoChange;
        j.why = Why::KnownMode;
        return j;
    }
    // Not rejected: the interval shown is widened to hold 1, so that a point Holm's step-down
    // stopped before is never called on its own interval.
    let shown = if rejected {
        (low, high)
    } else {
        (low.min(1.0), high.max(1.0))
    };
    j.change = change(
        ratio,
        shown,
        (j.equivalent_low, j.equivalent_high),
        threshold,
    );
    if j.change == Change::Inconclusive {
        let t_ratio = half / equivalent;
        let needed = needed_half_width(ratio, threshold, t_ratio);
        j.why = if needed > 0.0 {
            Why::TooWide
        } else {
            Why::AtThreshold
        };
        j.runs_to_decide = runs_to_decide(needed, half / se * s.sd, m.runs);
    }
    j
}

/// New runs whose mean would make the interval's half-width `needed`, where one run's
/// half-width alone is `one` (t · sd) and the mode rests on `mode_runs` runs: the smallest k
/// with one · √(1/k + 1/n) <= needed.
fn runs_to_decide(needed: f64, one: f64, mode_runs: usize) -> Option<usize> {
    if !(needed > 0.0 && one > 0.0) {
        return None;
    }
    let room = (needed / one).powi(2) - 1.0 / mode_runs as f64;
    if room <= 0.0 {
        return None;
    }
    let k = (1.0 / room).ceil();
    (k <= MAX_PLANNED as f64).then_some(k as usize)
}

#[cfg(test)]
#[path = "judge_tests.rs"]
mod tests;
