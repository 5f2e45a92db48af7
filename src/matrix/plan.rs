//! Which cells the matrix measures and in what order. Pure functions of the topology, so the
//! choice is deterministic and testable on fixture trees.
//!
//! - A cell's *class* is its relation (`Topology::relation`) and, where there is more than
//!   one NUMA node, its distance.
//! - Class mode keeps `per_class` cells of each class, chosen greedily so that every pick
//!   uses the CPUs least used so far (as waker or wakee), then the direction between
//!   packages and LLCs least used, ties broken by a bit-reversed position that spreads the
//!   picks over the class: a class is summarised by pairs spread over the machine and both
//!   ways across it, not the first few of one row.
//! - The order interleaves the classes (each cell of a class of n at the fraction
//!   (m + ½) / n of the run, classes alternating at equal fractions), and within a class
//!   follows the same bit-reversed spread, so drift of the host over the run falls on every
//!   class alike instead of on the rows measured last. Odd passes run the order backwards.

use crate::topology::{CoreType, Relation, Topology};
use std::collections::BTreeMap;

/// A relation and, on a machine with more than one NUMA node, the distance it spans; on a
/// hybrid host, the kinds of core of waker and wakee (a switch to an E-core costs
/// differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Class {
    pub relation: Relation,
    pub distance: Option<u32>,
    pub types: Option<(CoreType, CoreType)>,
}

/// One cell to measure: waker `from`, wakee `to`, in pass `pass`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    pub from: usize,
    pub to: usize,
    pub class: Class,
    pub pass: usize,
}

impl Class {
    /// "same-cpu", "cross-package at distance 21", "shared-llc, P-core to E-core".
    pub fn name(&self) -> String {
        let mut name = self.relation.name().to_string();
        if let Some(d) = self.distance {
            name += &format!(" at distance {d}");
        }
        if let Some((from, to)) = self.types {
            name += &format!(", {} to {}", from.name(), to.name());
        }
        name
    }
}

pub fn class_of(topo: &Topology, a: usize, b: usize) -> Class {
    Class {
        relation: topo.relation(a, b),
        distance: topo.numa_distance(a, b),
        types: topo.core_type_pair(a, b),
    }
}

/// `i` with its lowest `bits` bits reversed: 0, 4, 2, 6, 1, 5, 3, 7 for 3 bits.
fn bit_reversed(i: usize, bits: u32) -> usize {
    if bits == 0 {
        return 0;
    }
    i.reverse_bits() >> (usize::BITS - bits)
}

/// `items` in bit-reversed order of their positions: neighbours end up far apart.
fn spread<T: Copy>(items: &[T]) -> Vec<T> {
    let bits = items.len().next_power_of_two().trailing_zeros();
    let mut keyed: Vec<(usize, T)> = items
        .iter()
        .enumerate()
        .map(|(i, &x)| (bit_reversed(i, bits), x))
        .collect();
    keyed.sort_by_key(|&(k, _)| k);
    keyed.into_iter().map(|(_, x)| x).collect()
}

/// Every ordered pair of `cpus` by class, each class in the topology's order (package → LLC
/// → core → SMT) of waker, then wakee.
pub fn classes(topo: &Topology, cpus: &[usize]) -> BTreeMap<Class, Vec<(usize, usize)>> {
    let order = topo.order();
    let rank = |c: usize| order.iter().position(|&o| o == c).unwrap_or(usize::MAX);
    let mut sorted = cpus.to_vec();
    sorted.sort_by_key(|&c| (rank(c), c));
    let mut by_class: BTreeMap<Class, Vec<(usize, usize)>> = BTreeMap::new();
    for &a in &sorted {
        for &b in &sorted {
            by_class
                .entry(class_of(topo, a, b))
                .or_default()
                .push((a, b));
        }
    }
    by_class
}

/// Where a CPU sits, coarsely: its package and (the first CPU of) its last-level cache.
type Place = (i64, usize);

fn place(topo: &Topology, cpu: usize) -> Place {
    let package = topo.cpu(cpu).map_or(-1, |c| c.package);
    let llc = topo
        .llc(cpu)
        .and_then(|i| topo.caches[i].cpus.first().copied());
    (package, llc.unwrap_or(usize::MAX))
}

/// `k` pairs of one class: each pick the pair whose CPUs were used least so far, then whose
/// direction between places (package and LLC of waker and of wakee) was picked least, ties
/// to the earliest in the spread order.
fn pick(topo: &Topology, pairs: &[(usize, usize)], k: usize) -> Vec<(usize, usize)> {
    let mut left = spread(pairs);
    if left.len() <= k {
        return left;
    }
    let mut used: BTreeMap<usize, usize> = BTreeMap::new();
    let mut ways: BTreeMap<(Place, Place), usize> = BTreeMap::new();
    let way = |&(a, b): &(usize, usize)| (place(topo, a), place(topo, b));
    let mut chosen = Vec::with_capacity(k);
    for _ in 0..k {
        let score = |i: usize| {
            let (a, b) = left[i];
            let cpus = used.get(&a).unwrap_or(&0) + used.get(&b).unwrap_or(&0);
            (cpus, *ways.get(&way(&left[i])).unwrap_or(&0), i)
        };
        let best = (0..left.len())
            .min_by_key(|&i| score(i))
            .expect("more pairs left than picks");
        let (a, b) = left.remove(best);
        *used.entry(a).or_default() += 1;
        *used.entry(b).or_default() += 1;
        *ways.entry(way(&(a, b))).or_default() += 1;
        chosen.push((a, b));
    }
    chosen
}

/// The cells of a matrix over `cpus`: every ordered pair, or with `per_class` that many of
/// each class; in the drift-spreading order, `passes` times.
pub fn plan(
    topo: &Topology,
    cpus: &[usize],
    per_class: Option<usize>,
    passes: usize,
) -> Vec<Planned> {
    let mut keyed: Vec<(f64, usize, Planned)> = Vec::new();
    for (rank, (class, pairs)) in classes(topo, cpus).into_iter().enumerate() {
        let cells = match per_class {
            Some(k) => pick(topo, &pairs, k),
            None => spread(&pairs),
        };
        let n = cells.len() as f64;
        for (m, (from, to)) in cells.into_iter().enumerate() {
            let at = (m as f64 + 0.5) / n;
            let cell = Planned {
                from,
                to,
                class,
                pass: 0,
            };
            keyed.push((at, rank, cell));
        }
    }
    keyed.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let once: Vec<Planned> = keyed.into_iter().map(|(_, _, c)| c).collect();
    (0..passes)
        .flat_map(|pass| {
            let mut cells = once.clone();
            if pass % 2 == 1 {
                cells.reverse();
            }
            cells.into_iter().map(move |c| Planned { pass, ..c })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::tests::fixture;
    use std::collections::BTreeSet;

    #[test]
    fn bit_reversal_spreads_neighbours() {
        assert_eq!(spread(&[0, 1, 2, 3, 4, 5, 6, 7]), [0, 4, 2, 6, 1, 5, 3, 7]);
        assert_eq!(spread(&[0, 1, 2]), [0, 2, 1]);
        assert!(spread::<u8>(&[]).is_empty());
    }

    #[test]
    fn full_mode_measures_every_ordered_pair_once_per_pass() {
        let t = fixture("intel-2s-smt2");
        let cpus: Vec<usize> = (0..16).collect();
        let cells = plan(&t, &cpus, None, 2);
        assert_eq!(cells.len(), 2 * 16 * 16);
        let first: BTreeSet<_> = cells[..256].iter().map(|c| (c.from, c.to)).collect();
        assert_eq!(first.len(), 256);
        // The second pass is the first backwards.
        let back: Vec<_> = cells[256..].iter().rev().map(|c| (c.from, c.to)).collect();
        let fwd: Vec<_> = cells[..256].iter().map(|c| (c.from, c.to)).collect();
        assert_eq!(back, fwd);
        assert!(cells[256..].iter().all(|c| c.pass == 1));
    }

    #[test]
    fn the_order_spreads_each_class_over_the_run_and_never_goes_row_by_row() {
        let t = fixture("intel-2s-smt2");
        let cpus: Vec<usize> = (0..16).collect();
        let cells = plan(&t, &cpus, None, 1);
        // Every quarter of the run holds about a quarter of each class.
        for class in classes(&t, &cpus).keys() {
            let at: Vec<usize> = (0..cells.len())
                .filter(|&i| cells[i].class == *class)
                .collect();
            for q in 0..4 {
                let inside = at.iter().filter(|&&i| i * 4 / cells.len() == q).count();
                let share = inside as f64 / at.len() as f64;
                assert!(
                    (share - 0.25).abs() <= 0.1,
                    "{class:?} quarter {q}: {share}"
                );
            }
        }
        let same_row = cells.windows(2).filter(|w| w[0].from == w[1].from).count();
        assert!(
            same_row < cells.len() / 8,
            "{same_row} consecutive cells share a waker"
        );
    }

    #[test]
    fn class_mode_covers_every_class_deterministically() {
        for (tree, want) in [
            (
                "intel-2s-smt2",
                &["same-cpu", "smt-sibling", "shared-llc", "cross-package"][..],
            ),
            (
                "amd-1s-2ccx",
                &["same-cpu", "smt-sibling", "shared-llc", "same-package"][..],
            ),
            ("arm-clusters", &["same-cpu", "shared-l2", "shared-llc"][..]),
            ("vm-no-caches", &["same-cpu", "same-package"][..]),
        ] {
            let t = fixture(tree);
            let cpus = t.allowed();
            let cells = plan(&t, &cpus, Some(3), 1);
            assert_eq!(
                cells,
                plan(&t, &cpus, Some(3), 1),
                "{tree}: not deterministic"
            );
            let got: BTreeSet<&str> = cells.iter().map(|c| c.class.relation.name()).collect();
            assert_eq!(got, want.iter().copied().collect(), "{tree}");
            for class in classes(&t, &cpus).keys() {
                let n = cells.iter().filter(|c| c.class == *class).count();
                assert_eq!(n, 3, "{tree} {class:?}");
            }
            for c in &cells {
                assert_eq!(class_of(&t, c.from, c.to), c.class);
            }
        }
    }

    #[test]
    fn class_mode_picks_spread_over_cpus_and_directions() {
        let t = fixture("intel-2s-smt2");
        let cells = plan(&t, &t.allowed(), Some(8), 1);
        let cross: Vec<_> = cells
            .iter()
            .filter(|c| c.class.relation == Relation::CrossPackage)
            .collect();
        assert_eq!(cross.len(), 8);
        assert!(cross.iter().all(|c| c.class.distance == Some(21)));
        let cpus: BTreeSet<usize> = cross.iter().flat_map(|c| [c.from, c.to]).collect();
        assert_eq!(cpus.len(), 16, "8 pairs use 16 different CPUs");
        let from_first = cross
            .iter()
            .filter(|c| t.cpu(c.from).unwrap().package == 0)
            .count();
        assert!(
            (2..=6).contains(&from_first),
            "both directions: {from_first}"
        );
    }
}
