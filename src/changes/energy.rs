//! E-Divisive's statistic and its permutation test (Matteson & James 2014, as MongoDB's
//! signal-processing-algorithms computes them): the energy distance between the runs before
//! and after a split, weighted by `n·m/(n+m)`, maximised over the split, and compared with
//! the same maximum over random orders of the runs within each segment.

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;

/// The distances between every two runs of a series, `|x_i - x_j|` (energy distance with
/// exponent 1: on ln figures, a ratio's size whatever the point's scale).
pub struct Distances {
    n: usize,
    d: Vec<f64>,
}

impl Distances {
    pub fn new(xs: &[f64]) -> Self {
        let n = xs.len();
        let mut d = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                d[i * n + j] = (xs[i] - xs[j]).abs();
            }
        }
        Distances { n, d }
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        self.d[i * self.n + j]
    }
}

/// The best split of one segment: the index (into the series) of the first run after it,
/// and its statistic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    pub index: usize,
    pub statistic: f64,
}

/// The split of the runs `order` (indices into the series, in the order to consider them)
/// that maximises the weighted energy distance, with at least `min_runs` on each side; None
/// when the segment is too short for that. The sums are updated as each run moves from the
/// right side to the left, so one pass costs O(len²).
pub fn best_split(dist: &Distances, order: &[usize], min_runs: usize) -> Option<(usize, f64)> {
    let len = order.len();
    if len < 2 * min_runs {
        return None;
    }
    // Sums over unordered pairs: within the left part, within the right, across.
    let (mut within_left, mut across) = (0.0, 0.0);
    let mut within_right = 0.0;
    for a in 0..len {
        for b in a + 1..len {
            within_right += dist.at(order[a], order[b]);
        }
    }
    let mut best: Option<(usize, f64)> = None;
    for tau in 0..=len - min_runs {
        if tau >= min_runs {
            let (n, m) = (tau as f64, (len - tau) as f64);
            let energy =
                2.0 * across / (n * m) - 2.0 * within_left / (n * n) - 2.0 * within_right / (m * m);
            let statistic = n * m / (n + m) * energy;
            if best.is_none_or(|(_, s)| statistic > s) {
                best = Some((tau, statistic));
            }
        }
        // Run `tau` moves to the left part.
        let to_left: f64 = order[..tau].iter().map(|&i| dist.at(i, order[tau])).sum();
        let to_right: f64 = order[tau + 1..]
            .iter()
            .map(|&j| dist.at(order[tau], j))
            .sum();
        across += to_right - to_left;
        within_left += to_left;
        within_right -= to_right;
    }
    best
}

/// The best split over all segments between the change points found so far (`bounds`: 0,
/// the change points, the series' length), as E-Divisive takes the next one.
pub fn best_over(dist: &Distances, bounds: &[usize], min_runs: usize) -> Option<Split> {
    let mut best: Option<Split> = None;
    for w in bounds.windows(2) {
        let order: Vec<usize> = (w[0]..w[1]).collect();
        if let Some((tau, statistic)) = best_split(dist, &order, min_runs) {
            if best.is_none_or(|b| statistic > b.statistic) {
                best = Some(Split {
                    index: w[0] + tau,
                    statistic,
                });
            }
        }
    }
    best
}

/// The permutation p-value of `observed`: the share of random orders (runs shuffled within
/// each segment, so earlier change points stay) whose best split is at least as strong,
/// `(count + 1) / (done + 1)`. It stops early once the p-value cannot reach `level`; the
/// figure it then returns is above `level`, which is all a caller uses it for.
pub fn p_value(
    dist: &Distances,
    bounds: &[usize],
    min_runs: usize,
    observed: f64,
    permutations: usize,
    level: f64,
    rng: &mut SmallRng,
) -> f64 {
    let mut orders: Vec<Vec<usize>> = bounds.windows(2).map(|w| (w[0]..w[1]).collect()).collect();
    let mut at_least = 0usize;
    for done in 1..=permutations {
        let mut strongest = f64::NEG_INFINITY;
        for order in orders.iter_mut() {
            order.shuffle(rng);
            if let Some((_, s)) = best_split(dist, order, min_runs) {
                strongest = strongest.max(s);
            }
        }
        // A tolerance, so that a permutation equal to the observed order counts as one.
        if strongest >= observed - 1e-12 * observed.abs() {
            at_least += 1;
        }
        let lowest_possible = (at_least + 1) as f64 / (permutations + 1) as f64;
        if lowest_possible > level {
            return (at_least + 1) as f64 / (done + 1) as f64;
        }
    }
    (at_least + 1) as f64 / (permutations + 1) as f64
}
