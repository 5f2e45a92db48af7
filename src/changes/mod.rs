//! Change points over time: where a stored series of runs of one point shifted and stayed.
//!
//! E-Divisive (Matteson & James 2014), the method of MongoDB's signal-processing-algorithms
//! and of Apache Otava's exact mode, ported here so that the CLI, the gate and `changes` need
//! no extra dependency (that library pins numpy < 2; Otava brings cloud clients with it). Its
//! agreement with signal-processing-algorithms is measured by `benches/changes_crosscheck.py`.
//!
//! - On each series of ln figures, the split maximising the weighted energy distance is a
//!   candidate; a permutation test (runs shuffled within segments) gives its p-value; a
//!   significant split is kept and the segments on each side are searched again.
//! - A segment keeps at least `min_runs` runs on each side of a split: a change needs that
//!   many runs after it to be seen at all, so the newest runs of a series cannot be one yet.
//! - Error control is per scan, not per series: Holm's step-down over the series' first
//!   splits holds the chance of any false change point in a scan at `level` (Holm rather than
//!   a false-discovery rate because a gate acts on a single call). A series whose first split
//!   passed is searched further at the strictest level, `level / series scanned`: Holm's
//!   levels relax once true changes are found, and a split inside a segment is a new call.
//! - Each series has its own seed (the scan's seed and the series' key), so one series gives
//!   the same answer whichever others are scanned with it.
//! - A change's size is the Hodges-Lehmann ratio of the segment after it to the one before,
//!   with the distribution-free (Moses) interval: robust to runs that fall into modes.

mod energy;
#[cfg(test)]
mod tests;

use crate::error::{Error, Limit, Result};
use energy::Distances;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// The chance of any false change point in one scan.
pub const LEVEL: Limit<f64> = Limit::above("level", 0.0, 0.5);
pub const DEFAULT_LEVEL: f64 = 0.05;
/// Runs on each side of a change, at least.
pub const MIN_RUNS: Limit<u64> = Limit::between("min_runs", 2, 1000);
pub const DEFAULT_MIN_RUNS: usize = 5;
/// Random orders per permutation test.
pub const PERMUTATIONS: Limit<u64> = Limit::between("permutations", 19, 1_000_000);
/// The confidence of a change's size interval.
pub const SIZE_CONFIDENCE: f64 = 0.95;

/// How one scan searches.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub level: f64,
    pub min_runs: usize,
    /// None: enough that the smallest p-value a test can give is a tenth of Holm's strictest
    /// level (`default_permutations`).
    pub permutations: Option<usize>,
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            level: DEFAULT_LEVEL,
            min_runs: DEFAULT_MIN_RUNS,
            permutations: None,
            seed: 0,
        }
    }
}

impl Settings {
    /// The settings a caller gave (None: the default); the scan checks them.
    pub fn given(
        level: Option<f64>,
        min_runs: Option<i64>,
        permutations: Option<i64>,
        seed: Option<u64>,
    ) -> Result<Settings> {
        let d = Settings::default();
        Ok(Settings {
            level: level.unwrap_or(d.level),
            min_runs: min_runs.map_or(Ok(d.min_runs), |n| MIN_RUNS.count(n))?,
            permutations: permutations.map(|n| PERMUTATIONS.count(n)).transpose()?,
            seed: seed.unwrap_or(d.seed),
        })
    }

    fn checked(self) -> Result<Self> {
        LEVEL.check(self.level)?;
        MIN_RUNS.check(self.min_runs as u64)?;
        if let Some(p) = self.permutations {
            PERMUTATIONS.check(p as u64)?;
        }
        Ok(self)
    }
}

/// Random orders for a scan of `series` series: the smallest p-value, `1/(R+1)`, a tenth of
/// Holm's strictest level `level/series`; at least 199, at most 19 999.
pub fn default_permutations(level: f64, series: usize) -> usize {
    let wanted = (10.0 * series.max(1) as f64 / level).ceil() as usize;
    wanted.saturating_sub(1).clamp(199, 19_999)
}

/// One change point: the index of the first run after it, its p-value and the level it was
/// passed (Holm's for its series' first, the strictest after), its statistic, and its size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    pub index: usize,
    pub p: f64,
    pub level: f64,
    pub statistic: f64,
    /// Runs in the segments before and after it (bounded by the neighbouring changes).
    pub runs_before: usize,
    pub runs_after: usize,
    /// After / before, Hodges-Lehmann, with its `SIZE_CONFIDENCE` interval.
    pub ratio: f64,
    pub ratio_lo: f64,
    pub ratio_hi: f64,
    /// `SIZE_CONFIDENCE`, said beside the interval it is of.
    pub confidence: f64,
}

/// What a scan says of one series.
#[derive(Debug, Clone, PartialEq)]
pub enum Scan {
    /// Fewer than `2 · min_runs` runs: no change could be seen.
    TooShort { runs: usize },
    /// The change points found, in index order (none: no change found at this level).
    Scanned { changes: Vec<Change> },
}

impl Scan {
    /// What the scan of a series of `runs` runs says, under `settings`, as it is reported.
    pub fn report(self, runs: usize, settings: &Settings) -> Report {
        let (status, changes) = match self {
            Scan::TooShort { .. } => ("too short", Vec::new()),
            Scan::Scanned { changes } => ("scanned", changes),
        };
        Report {
            runs,
            level: settings.level,
            min_runs: settings.min_runs,
            status,
            changes,
        }
    }
}

/// A series' scan as reported: its runs, the scan's level and `min_runs`, "scanned" or
/// "too short", and the change points found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub runs: usize,
    pub level: f64,
    pub min_runs: usize,
    pub status: &'static str,
    pub changes: Vec<Change>,
}

/// One series to scan: its key (seeds its permutations) and its runs' ln figures, oldest
/// first.
pub struct Series<'a> {
    pub key: &'a str,
    pub ln_values: &'a [f64],
}

/// FNV-1a: a series' key as part of its seed, stable across builds and platforms.
fn key_hash(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A split kept: its index, statistic, p-value and the level it passed.
type Found = (usize, f64, f64, f64);

/// One series under search: its distances, its random orders and its changes so far.
struct Search<'a> {
    xs: &'a [f64],
    dist: Distances,
    rng: SmallRng,
    bounds: Vec<usize>,
}

impl<'a> Search<'a> {
    fn new(series: &Series<'a>, seed: u64) -> Self {
        Search {
            xs: series.ln_values,
            dist: Distances::new(series.ln_values),
            rng: SmallRng::seed_from_u64(seed ^ key_hash(series.key)),
            bounds: vec![0, series.ln_values.len()],
        }
    }

    /// The next split and its p-value, None where no segment can be split.
    fn next(&mut self, s: &Settings, permutations: usize, level: f64) -> Option<(usize, f64, f64)> {
        let split = energy::best_over(&self.dist, &self.bounds, s.min_runs)?;
        let p = energy::p_value(
            &self.dist,
            &self.bounds,
            s.min_runs,
            split.statistic,
            permutations,
            level,
            &mut self.rng,
        );
        Some((split.index, split.statistic, p))
    }

    fn keep(&mut self, index: usize) {
        let at = self.bounds.partition_point(|&b| b < index);
        self.bounds.insert(at, index);
    }

    fn changes(&self, found: &[Found]) -> Vec<Change> {
        let mut changes: Vec<Change> = found
            .iter()
            .map(|&(index, statistic, p, level)| {
                let at = self.bounds.partition_point(|&b| b < index);
                let (start, end) = (self.bounds[at - 1], self.bounds[at + 1]);
                let (ratio, ratio_lo, ratio_hi) =
                    size(&self.xs[start..index], &self.xs[index..end]);
                Change {
                    index,
                    p,
                    level,
                    statistic,
                    runs_before: index - start,
                    runs_after: end - index,
                    ratio,
                    ratio_lo,
                    ratio_hi,
                    confidence: SIZE_CONFIDENCE,
                }
            })
            .collect();
        changes.sort_by_key(|c| c.index);
        changes
    }
}

/// The change points of every series, the chance of any false one in the scan held at
/// `settings.level` (Holm over the series' first splits).
pub fn change_points(series: &[Series<'_>], settings: Settings) -> Result<Vec<Scan>> {
    let s = settings.checked()?;
    for one in series.iter().filter(|one| !one.ln_values.is_empty()) {
        crate::stats::finite("ln_values", one.ln_values)?;
    }
    let long_enough: Vec<usize> = (0..series.len())
        .filter(|&i| series[i].ln_values.len() >= 2 * s.min_runs)
        .collect();
    let tests = long_enough.len();
    let permutations = s
        .permutations
        .unwrap_or_else(|| default_permutations(s.level, tests));
    let mut searches: Vec<Option<Search<'_>>> = series.iter().map(|_| None).collect();
    let mut first: Vec<(usize, usize, f64, f64)> = Vec::new();
    for &i in &long_enough {
        let mut search = Search::new(&series[i], s.seed);
        if let Some((index, statistic, p)) = search.next(&s, permutations, s.level) {
            first.push((i, index, statistic, p));
        }
        searches[i] = Some(search);
    }
    // Holm: the k-th smallest p-value (from 0) against level / (tests - k), until one fails.
    first.sort_by(|a, b| a.3.total_cmp(&b.3));
    let mut found: Vec<Vec<Found>> = vec![Vec::new(); series.len()];
    let strictest = s.level / tests.max(1) as f64;
    for (rank, &(i, index, statistic, p)) in first.iter().enumerate() {
        let level = s.level / (tests - rank) as f64;
        if p > level {
            break;
        }
        let mut search = searches[i].take().expect("each series searched once");
        search.keep(index);
        found[i].push((index, statistic, p, level));
        found[i].extend(search_rest(&mut search, &s, permutations, strictest));
        searches[i] = Some(search);
    }
    Ok((0..series.len())
        .map(|i| match &searches[i] {
            None => Scan::TooShort {
                runs: series[i].ln_values.len(),
            },
            Some(search) => Scan::Scanned {
                changes: search.changes(&found[i]),
            },
        })
        .collect())
}

/// `Search::finish` without giving up the search (its bounds are needed for the sizes).
fn search_rest(
    search: &mut Search<'_>,
    s: &Settings,
    permutations: usize,
    level: f64,
) -> Vec<Found> {
    let mut found = Vec::new();
    while let Some((index, statistic, p)) = search.next(s, permutations, level) {
        if p > level {
            break;
        }
        search.keep(index);
        found.push((index, statistic, p, level));
    }
    found
}

/// Is run `index` of one series a change point of it? The gate's question about one run.
#[derive(Debug, Clone, PartialEq)]
pub enum At {
    /// A change point of its series starts at this run.
    Change(Change),
    /// The series was searched and no change point starts here (others may be elsewhere).
    NoneFound { changes: Vec<Change> },
    /// Fewer than `min_runs` runs before or after it: it cannot be seen to be one (yet).
    TooFewRuns { before: usize, after: usize },
}

impl At {
    /// The answer for run `index` of a series of `runs` runs, as reported.
    pub fn report(self, index: usize, runs: usize) -> AtReport {
        let (status, change, changes) = match self {
            At::Change(c) => ("change", Some(c), Vec::new()),
            At::NoneFound { changes } => ("none found", None, changes),
            At::TooFewRuns { .. } => ("too few runs", None, Vec::new()),
        };
        AtReport {
            runs_before: index,
            runs_after: runs - index,
            status,
            change,
            changes,
        }
    }
}

/// `change_at`'s answer as reported: the runs before and after the run asked of, "change",
/// "none found" (with the series' change points) or "too few runs", and the change.
#[derive(Debug, Clone, Serialize)]
pub struct AtReport {
    pub runs_before: usize,
    pub runs_after: usize,
    pub status: &'static str,
    pub change: Option<Change>,
    pub changes: Vec<Change>,
}

/// The answer for run `index` of the series `ln_values` (one series, so no Holm step).
pub fn change_at(series: &Series<'_>, index: usize, settings: Settings) -> Result<At> {
    let s = settings.checked()?;
    let len = series.ln_values.len();
    if index >= len {
        return Err(Error::invalid(
            "index",
            format!(
                "must be between 0 and {} (the series' runs), got {index}",
                len.max(1) - 1
            ),
        ));
    }
    if index < s.min_runs || len - index < s.min_runs {
        return Ok(At::TooFewRuns {
            before: index,
            after: len - index,
        });
    }
    let scan = change_points(std::slice::from_ref(series), s)?;
    let changes = match scan.into_iter().next() {
        Some(Scan::Scanned { changes }) => changes,
        _ => Vec::new(),
    };
    Ok(match changes.iter().find(|c| c.index == index) {
        Some(c) => At::Change(*c),
        None => At::NoneFound { changes },
    })
}

/// After / before as a ratio: the Hodges-Lehmann shift of ln figures (the median of all
/// pairwise differences) and Moses' distribution-free interval at `SIZE_CONFIDENCE` (the
/// order statistics of those differences that the Mann-Whitney distribution gives, normal
/// approximation).
pub fn size(before: &[f64], after: &[f64]) -> (f64, f64, f64) {
    let mut diffs: Vec<f64> = after
        .iter()
        .flat_map(|a| before.iter().map(move |b| a - b))
        .collect();
    diffs.sort_by(f64::total_cmp);
    let (n, m) = (before.len() as f64, after.len() as f64);
    let count = diffs.len();
    let z = Normal::standard().inverse_cdf(0.5 + SIZE_CONFIDENCE / 2.0);
    let c = (n * m / 2.0 - z * (n * m * (n + m + 1.0) / 12.0).sqrt()).floor();
    // 1-based order statistics c and count + 1 - c, kept inside the list.
    let k = (c.max(1.0) as usize).min(count);
    let center = crate::stats::median(&diffs);
    (center.exp(), diffs[k - 1].exp(), diffs[count - k].exp())
}
