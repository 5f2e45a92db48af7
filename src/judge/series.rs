//! A new run (or k runs) of each point judged against its series: the newest comparable runs
//! of the same point on the same machine (which runs are comparable is the caller's choice:
//! the store's). Pure: figures in, words out.
//!
//! One run against one run cannot be both sharp and safe where runs move 5–40 % between
//! one another: the spread between runs must be measured, and only a series measures it.
//! Each point's series is described by `stats::series` (its modes, the spread within them
//! pooled); a new run is judged by a prediction interval around the level of a mode: a run
//! of the same code lands in it with the stated probability, whatever the spread between
//! runs, since that spread is what the interval is made of. Every point of one call is one
//! family held by Holm's step-down (why Holm: `judge`).

use super::{check, holm, mean_sd, positive, Call, Held, FAMILY_ALPHA};
use crate::error::{Error, Result};
use crate::stats::{self, Series, MODE_GAP};
use crate::verdict::{needed_half_width, Change, Why, MAX_PLANNED};
use serde::Serialize;

/// Fewest comparable runs a series needs before a run is judged against it: from five, the
/// pooled spread rests on at least three degrees of freedom (t₀.₉₇₅ = 3.2); below, a
/// prediction interval is many times the spread and says little the user can act on.
pub const MIN_SERIES: usize = 5;
/// The newest runs of a series a judgement reads: thirty give the spread about 28 degrees
/// of freedom (t within 5 % of the normal's), and older runs describe a machine that may
/// have drifted since (kernel updates, firmware, neighbours).
pub const SERIES_WINDOW: usize = 30;
/// The most degrees of freedom a new run is judged with: its p-value and intervals come from a
/// t of min(the series' own degrees of freedom, this), not of the series' n − 1, because a
/// run's level has heavier tails than a normal's. Each of 1,700 runs of this project's
/// machine kind (2-process to 16-process rings, quiet and beside a CPU-bound process) judged
/// against its 30 runs before: |z| beyond 3, 4 and 5 of the series' spread in 3.0 %, 1.3 %
/// and 0.7 % of runs, where the series' t₂₉ gives 0.5 %, 0.03 % and 0.002 % (the machine moves
/// between levels a few percent apart, and one run caught in a move is out of its series'
/// spread by many times). t₄ gives 4.0 %, 1.6 % and 0.7 %: the lightest-tailed t that is not
/// below the measured tail where Holm's step-down decides (a family of 4 points holds its
/// first at 1.25 %, about 4 spreads out); t₅ gives 1.0 % there. With the series' own t₂₉,
/// `compare NEW` beside a CPU-bound process exited 1 in 9 of 100 A/A runs; 205 A/A runs
/// measured beside one, judged with t₄, exit in 4 of 200 (`benches/series_verdicts.py`, its
/// tails and `--replay`; docs/accuracy).
pub const RUN_LEVEL_DF: f64 = 4.0;

/// One point to judge: its series' figures (µs, oldest first) with their relative standard
/// errors (the same length, or empty where unknown), and the new runs' figures (k >= 1) with
/// theirs (the same length, or empty).
#[derive(Debug, Clone, Copy)]
pub struct Point<'a> {
    pub baseline: &'a [f64],
    pub baseline_rel_se: &'a [f64],
    pub new: &'a [f64],
    pub new_rel_se: &'a [f64],
}

/// What a series says of a point's new runs: the call (its base the level of the mode judged
/// against, the geometric mean of that mode's runs; its interval a prediction interval; its
/// spread the one within modes), and what the series behind it held.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    #[serde(flatten)]
    pub call: Call,
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
    let held = holm(
        &tested.iter().map(|t| t.1).collect::<Vec<_>>(),
        family_alpha,
    );
    // A short series is held to nothing: its level is never read.
    let untested = Held {
        adjusted: f64::NAN,
        share: f64::NAN,
        alpha: family_alpha,
    };
    let mut levels = vec![untested; points.len()];
    for ((i, _), h) in tested.iter().zip(held) {
        levels[*i] = h;
    }
    Ok(tests
        .into_iter()
        .zip(levels)
        .map(|(t, held)| match t {
            Ok(t) => decide(t, held, threshold),
            Err(short) => short,
        })
        .collect())
}

/// A point's series and new runs, ready for Holm: the series, the new runs' mean ln figure
/// and count, each mode's p-value, the largest of them.
struct Tested {
    series: Series,
    runs: usize,
    new_ln: f64,
    new_sd: f64,
    k: usize,
    /// What the new runs' own errors add to the variance of their mean (`excess_variance`).
    excess: f64,
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
    same_length("baseline_rel_se", rel_se, "baseline", point.baseline)?;
    same_length("new_rel_se", point.new_rel_se, "new", point.new)?;
    let from = point.baseline.len().saturating_sub(SERIES_WINDOW);
    let ln: Vec<f64> = point.baseline[from..].iter().map(|v| v.ln()).collect();
    let rel_se = if rel_se.is_empty() {
        rel_se
    } else {
        &rel_se[from..]
    };
    let (new_ln, new_sd) = mean_sd(&point.new.iter().map(|v| v.ln()).collect::<Vec<_>>());
    let series = (ln.len() >= MIN_SERIES)
        .then(|| stats::series(&ln, rel_se))
        .flatten();
    let Some(series) = series else {
        return Ok(Err(short(&ln, new_ln)));
    };
    let k = point.new.len();
    let excess = excess_variance(point.new_rel_se, rel_se);
    // Against the main mode and every regime apart from it (`is_regime`); a run set aside
    // from the main mode's tail is no level of its own.
    let p_by_mode: Vec<f64> = (0..series.modes.len())
        .map(|i| {
            let m = series.modes[i];
            let se = prediction_se(&series, k, m.runs, excess);
            if i == series.main || is_regime(&series, i, k) {
                stats::t_p_value((new_ln - m.level) / se, judged_df(&series, i))
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
        new_sd,
        k,
        excess,
        p_by_mode,
        p_value,
    }))
}

/// `values` empty or as long as `of`.
fn same_length(name: &'static str, values: &[f64], of_name: &str, of: &[f64]) -> Result<()> {
    if values.is_empty() || values.len() == of.len() {
        return Ok(());
    }
    Err(Error::invalid(
        name,
        format!(
            "must be empty or as long as {of_name} ({}), got {}",
            of.len(),
            values.len()
        ),
    ))
}

/// The standard error of the mean of `k` new runs' ln figures about the level of a mode of
/// `mode_runs` runs: the series' spread between runs for both, and what the new runs' own
/// errors add beyond a typical run's (`excess_variance`).
fn prediction_se(s: &Series, k: usize, mode_runs: usize, excess: f64) -> f64 {
    (s.sd.powi(2) * (1.0 / k as f64 + 1.0 / mode_runs as f64) + excess).sqrt()
}

/// The variance the new runs' mean carries beyond what the series' spread already holds: the
/// spread between runs includes a typical run's own error (the median of the series' relative
/// standard errors), so only each new run's excess over it adds, as Σ (se² − typical²)⁺ / k².
/// A run that saw its machine move says so in its own error, and is judged with it
/// (docs/accuracy, the lost-wakeup page). Nothing is added where either side's errors are
/// unknown (empty).
fn excess_variance(new_rel_se: &[f64], baseline_rel_se: &[f64]) -> f64 {
    let known: Vec<f64> = baseline_rel_se
        .iter()
        .copied()
        .filter(|e| e.is_finite() && *e > 0.0)
        .collect();
    if new_rel_se.is_empty() || known.is_empty() {
        return 0.0;
    }
    let typical = stats::median(&known);
    let k = new_rel_se.len() as f64;
    new_rel_se
        .iter()
        .filter(|e| e.is_finite())
        .map(|e| (e.powi(2) - typical.powi(2)).max(0.0))
        .sum::<f64>()
        / (k * k)
}

/// The standard error "no change" is read with: the prediction's `se`, unless the k new runs
/// scatter more than the series' runs, when their own spread stands for theirs. The series'
/// spread is what a run of the same code shows; a change can widen it (a configuration whose
/// runs fall into a fast and a slow mode), and k runs drawn from a 1.048x configuration whose
/// runs spread 2.9 % against a series spread 1.6 % landed within 1 % of it and were "no
/// change" on the series' spread in 1 of 400 draws (docs/accuracy, the run-level tails page).
/// Only the word "no change" reads it: a wider spread of the new runs never makes a call.
fn equivalence_se(t: &Tested, mode_runs: usize, se: f64) -> f64 {
    // One new run (k = 1) has no spread of its own: NaN, never wider.
    if t.new_sd > t.series.sd {
        let (base, new) = (t.series.sd.powi(2), t.new_sd.powi(2));
        (base / mode_runs as f64 + new / t.k as f64).sqrt()
    } else {
        se
    }
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

/// The degrees of freedom a new run is judged with against mode `i` of series `s`: against
/// the main mode, no more than `RUN_LEVEL_DF` (the measured tails are of runs about their
/// series' main level); against another regime, the series' own. A run is in a known regime
/// only where it lies near it: with t₄ there too, a doubling against a series whose modes
/// merged (spread 11 %) fell within reach of a lone run 29 % up and was "no change (known
/// mode)" (seeded, 1 point in 1,000) — a false "no change" of a real change is the worse error.
fn judged_df(s: &Series, i: usize) -> f64 {
    if i == s.main {
        s.df.min(RUN_LEVEL_DF)
    } else {
        s.df
    }
}

/// The judgement of a series too short to judge by: inconclusive, the ratio to its median.
fn short(ln: &[f64], new_ln: f64) -> Judgement {
    let base = stats::median(ln).exp();
    let new = new_ln.exp();
    Judgement {
        call: Call::untested(Why::ShortSeries, base, new, new / base),
        runs: ln.len(),
        modes: 0,
        mode: 0,
        main_mode: 0,
        known_mode: false,
        mode_ratio: f64::NAN,
        set_aside: 0,
        runs_to_decide: None,
    }
}

/// The word for a tested point: called different where Holm rejects it (then against the
/// series' main mode: slower or faster than the level most runs hold); inside a mode other
/// than the main one, "no change (known mode)"; else by the prediction interval around the
/// mode it lies nearest, as `verdict::change` says of any interval.
fn decide(t: Tested, held: Held, threshold: f64) -> Judgement {
    let s = &t.series;
    let rejected = held.rejected();
    let nearest = (0..s.modes.len())
        .max_by(|&a, &b| t.p_by_mode[a].total_cmp(&t.p_by_mode[b]))
        .expect("a series has a mode");
    let mode = if rejected || !is_regime(s, nearest, t.k) {
        s.main
    } else {
        nearest
    };
    let m = s.modes[mode];
    let se = prediction_se(s, t.k, m.runs, t.excess);
    let d = t.new_ln - m.level;
    let mut call = Call {
        p_value: t.p_value,
        sd: s.sd,
        df: judged_df(s, mode),
        ..Call::untested(Why::Decided, m.level.exp(), t.new_ln.exp(), d.exp())
    };
    let (half, equivalent) = call.decide(d, (se, equivalence_se(&t, m.runs, se)), held, threshold);
    let mut j = Judgement {
        call,
        runs: t.runs,
        modes: s.regimes(),
        mode,
        main_mode: s.main,
        known_mode: mode != s.main,
        mode_ratio: (m.level - s.modes[s.main].level).exp(),
        set_aside: s.set_aside,
        runs_to_decide: None,
    };
    if !rejected && mode != s.main {
        (j.call.change, j.call.why) = (Change::NoChange, Why::KnownMode);
    } else if j.call.change == Change::Inconclusive {
        let needed = needed_half_width(j.call.ratio, threshold, half / equivalent);
        j.call.why = if needed > 0.0 {
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
#[path = "series_tests.rs"]
mod tests;
