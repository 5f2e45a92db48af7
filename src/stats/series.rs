//! A point's series of runs (the newest comparable runs of one point on one machine): its
//! level measured robustly, the runs that lie apart from it, and the modes its runs fall in.
//!
//! On this project's machine kind a pinned ring's runs sometimes fall into modes 30–40 %
//! apart (a slow placement the scheduler keeps for a whole run), so a series is not one
//! level with a spread: the mean of a bimodal series describes no run, and its standard
//! deviation is the distance between modes. Runs of a series long enough to estimate a
//! spread per mode (`MIN_SPLIT_RUNS`) are therefore split into modes first (by the gaps
//! between their sorted ln figures), and the spread that judges a new run is the spread
//! *within* modes, pooled; a shorter series is one level.

use super::median;
use super::runs::outlier_scales;

/// A gap between consecutive sorted ln figures splits two modes only where it exceeds this
/// fraction (10 %: smaller steps are the spread of a busy machine, not a second regime) ...
pub const MODE_GAP: f64 = 0.10;
/// ... and this many pooled within-mode standard deviations. The largest gap between n
/// sorted normal draws is about 1.5 standard deviations at n = 30, at its tails, and beyond
/// 4 in far fewer than one series in a thousand; two modes 30 % apart with a 3 % spread
/// within each (10 spreads between their levels) leave a gap of about 6 between their
/// nearest runs, which 6 would merge into one lump whose spread is the distance between
/// them (simulated in `judge`'s tests). A run that a gap of 4 spreads sets apart from a
/// heavy tail costs nothing: it becomes a mode of one, out of the spread.
pub const MODE_GAP_SPREADS: f64 = 4.0;
/// Fewest runs that make a mode whose spread counts in the pooled one. A run apart from all
/// others (beyond the gap both ways) is a mode of one: it adds nothing to the spread, but
/// the series has seen the machine there, and a new run that lands beside it is in a known
/// regime (a slow mode seen once in thirty runs is still the machine's).
pub const MIN_MODE_RUNS: usize = 2;
/// Fewest usable runs a series is split into modes from, or a run set apart from its spread
/// (a mode of one, Hampel's screen): below, the series is one level and every run counts in
/// its spread. To set runs apart from a spread the spread must be estimated from the runs
/// left, and ten runs cannot do that: cut into modes of two to five runs (one to four
/// degrees of freedom each), or shorn of a tail, a broad or skewed series under load (ln sd
/// 0.3–0.7) kept a spread too small for it, and a run of a faster configuration that landed
/// between its modes was called slower in up to 12 % of draws, against the pooled direction
/// (measured on the loaded machine, reproduced in `judge`'s seeded tests: 9 % on a quiet
/// core with load-slowed runs around it, 4.4 % as one level). From twenty runs the modes
/// hold their own: on the same simulated series, the modes' calls against the pooled
/// direction are no more than one level's (2–3 % at thirty runs).
pub const MIN_SPLIT_RUNS: usize = 20;
/// Hampel's screen within modes from this many runs on (below, the median absolute deviation
/// cannot tell an outlier from the spread; as in `runs`).
const MIN_SCREENED: usize = 6;
/// The median absolute deviation of normal data times this is their standard deviation.
const MAD_TO_SD: f64 = 1.4826;
/// Rounds of splitting and pooling before the modes are taken as they are (each round uses
/// the previous round's pooled spread; they settle in two or three).
const MAX_ROUNDS: usize = 16;

/// One mode of a series: the mean and median of its runs' ln figures, how many runs it
/// holds, and the lowest and highest of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mode {
    pub level: f64,
    pub median: f64,
    pub runs: usize,
    pub low: f64,
    pub high: f64,
}

/// A series, described: its modes (fastest first; a run apart from all others is a mode of
/// one), which one holds most runs (`main`), the spread within modes of `MIN_MODE_RUNS` or
/// more pooled (`sd`, ln scale, at least the runs' median own error) on `df` degrees of
/// freedom, the series' median and robust spread (1.4826 × MAD, ln scale) over all its
/// usable runs, and how many runs were usable and how many were set aside from the spread
/// (the modes of one).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub modes: Vec<Mode>,
    pub main: usize,
    pub sd: f64,
    pub df: f64,
    pub median: f64,
    pub mad_sd: f64,
    pub usable: usize,
    pub set_aside: usize,
}

impl Series {
    /// The modes of `MIN_MODE_RUNS` runs or more: the machine's regimes.
    pub fn regimes(&self) -> usize {
        self.modes.len() - self.set_aside
    }
}

/// The series of `ln_figures` (runs' ln figures) whose runs had relative standard errors
/// `rel_se` (the same length, or empty where unknown). Figures that are not finite are not
/// usable; None where no mode of `MIN_MODE_RUNS` remains or the modes leave no degree of
/// freedom.
pub fn series(ln_figures: &[f64], rel_se: &[f64]) -> Option<Series> {
    let mut y: Vec<f64> = ln_figures
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    y.sort_unstable_by(f64::total_cmp);
    let own = median(
        &rel_se
            .iter()
            .copied()
            .filter(|s| s.is_finite() && *s > 0.0)
            .collect::<Vec<_>>(),
    );
    let own = if own.is_finite() { own } else { 0.0 };
    // The first cut uses half the series' robust spread (1.4826 × MAD), not none: from none,
    // a broad scatter (runs a factor of two apart under load) falls apart at every 10 % gap
    // into pairs whose spread is near zero, and each new run then lies outside them all.
    // Half, not all of it: a minority mode 30 % away (one run in five) inflates the MAD by
    // about half again, and the whole of it would merge the modes it should cut.
    let center = median(&y);
    let robust = MAD_TO_SD * median(&y.iter().map(|v| (v - center).abs()).collect::<Vec<_>>());
    let splits = y.len() >= MIN_SPLIT_RUNS;
    let mut groups = if splits {
        split(&y, (robust / 2.0).max(own))
    } else {
        vec![&y[..]]
    };
    for _ in 0..MAX_ROUNDS * usize::from(splits) {
        let spread = pooled_sd(&modes_of(&groups)).0;
        let next = split(&y, spread);
        if next == groups {
            break;
        }
        groups = next;
    }
    let mut modes: Vec<Vec<f64>> = modes_of(&groups).into_iter().map(|m| m.to_vec()).collect();
    let screened = if splits {
        screen(&mut modes, own)
    } else {
        Vec::new()
    };
    let (sd, df) = pooled_sd(&modes.iter().map(|m| m.as_slice()).collect::<Vec<_>>());
    if modes.is_empty() || df < 1.0 {
        return None;
    }
    let lone = groups
        .iter()
        .filter(|g| g.len() < MIN_MODE_RUNS)
        .flat_map(|g| g.iter().copied())
        .chain(screened);
    let mut modes: Vec<Mode> = modes
        .iter()
        .map(|m| mode_of(m))
        .chain(lone.map(|v| mode_of(&[v])))
        .collect();
    modes.sort_by(|a, b| a.level.total_cmp(&b.level));
    let main = (0..modes.len())
        .max_by_key(|&i| (modes[i].runs, std::cmp::Reverse(i)))
        .expect("at least one mode");
    let deviations: Vec<f64> = y.iter().map(|v| (v - center).abs()).collect();
    let lone = modes.iter().filter(|m| m.runs < MIN_MODE_RUNS).count();
    Some(Series {
        modes,
        main,
        sd: sd.max(own),
        df,
        median: center,
        mad_sd: MAD_TO_SD * median(&deviations),
        usable: y.len(),
        set_aside: lone,
    })
}

/// Sorted `y` cut where a gap exceeds both `MODE_GAP` and `MODE_GAP_SPREADS` × `spread`.
fn split(y: &[f64], spread: f64) -> Vec<&[f64]> {
    let gap = (1.0 + MODE_GAP).ln().max(MODE_GAP_SPREADS * spread);
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=y.len() {
        if i == y.len() || y[i] - y[i - 1] > gap {
            out.push(&y[start..i]);
            start = i;
        }
    }
    out
}

/// The groups that are modes (at least `MIN_MODE_RUNS` runs).
fn modes_of<'a>(groups: &[&'a [f64]]) -> Vec<&'a [f64]> {
    groups
        .iter()
        .copied()
        .filter(|g| g.len() >= MIN_MODE_RUNS)
        .collect()
}

/// The standard deviation within groups, pooled, and its degrees of freedom (runs less
/// groups); 0 on 0 where there are none.
fn pooled_sd(groups: &[&[f64]]) -> (f64, f64) {
    let (mut ss, mut df) = (0.0, 0usize);
    for g in groups {
        let m = g.iter().sum::<f64>() / g.len() as f64;
        ss += g.iter().map(|v| (v - m).powi(2)).sum::<f64>();
        df += g.len() - 1;
    }
    if df == 0 {
        (0.0, 0.0)
    } else {
        ((ss / df as f64).sqrt(), df as f64)
    }
}

/// Hampel's identifier within each mode: a run further from its mode's median than
/// `outlier_scales` robust standard deviations (1.4826 × the median absolute deviation of
/// all runs from their modes' medians, or the runs' median own error where larger) is set
/// aside, as is a mode left with fewer than `MIN_MODE_RUNS`; returned, as modes of one.
/// Set aside from the spread, not forgotten: where two modes lie closer than the gap
/// (30 % apart at a 3 % spread within each) the split keeps them together and this screen
/// takes the smaller apart, and a new run beside them is still in a regime the series saw.
fn screen(modes: &mut Vec<Vec<f64>>, own: f64) -> Vec<f64> {
    let n: usize = modes.iter().map(|m| m.len()).sum();
    if n < MIN_SCREENED {
        return Vec::new();
    }
    let centers: Vec<f64> = modes.iter().map(|m| median(m)).collect();
    let deviations: Vec<f64> = modes
        .iter()
        .zip(&centers)
        .flat_map(|(m, c)| m.iter().map(move |v| (v - c).abs()))
        .collect();
    let scale = (MAD_TO_SD * median(&deviations)).max(own);
    let limit = outlier_scales(n) * scale;
    let mut aside = Vec::new();
    for (m, c) in modes.iter_mut().zip(&centers) {
        let (kept, out): (Vec<f64>, Vec<f64>) = m.iter().partition(|v| (*v - c).abs() <= limit);
        *m = kept;
        aside.extend(out);
    }
    for m in modes.iter().filter(|m| m.len() < MIN_MODE_RUNS) {
        aside.extend(m.iter().copied());
    }
    modes.retain(|m| m.len() >= MIN_MODE_RUNS);
    aside
}

fn mode_of(runs: &[f64]) -> Mode {
    Mode {
        level: runs.iter().sum::<f64>() / runs.len() as f64,
        median: median(runs),
        runs: runs.len(),
        low: runs.iter().copied().fold(f64::INFINITY, f64::min),
        high: runs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}
