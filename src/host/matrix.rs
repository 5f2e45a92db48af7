//! The CPU matrix's host-derived default: which cells it measures. Every ordered pair where
//! that fits the time budget (`super::TIME_BUDGET_S`); past it, a sample by topology class
//! (`matrix::classes`: relation, NUMA distance, core types) of as many cells per class as
//! the budget holds, never fewer than `MIN_PER_CLASS`, so that every class's figure has an
//! interval. What a matrix will measure, hold and take, and what bounded it, before anything
//! runs: `plan_on`, for the live host or a described one.

use super::time::{duration, point_s};
use crate::error::Result;
use crate::matrix::{self, Class, MatrixConfig};
use crate::ring;
use crate::topology::Topology;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The fewest cells that give a class's median an interval of at least 95 % from the cells
/// alone: the lowest and highest of n cells bound the median with probability 1 − 2 × 2⁻ⁿ,
/// 96.9 % at 6 (93.8 % at 5).
pub const MIN_PER_CLASS: usize = 6;

/// What a matrix will measure on this host, and what it holds and takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixPlan {
    /// The sysfs tree the host was read from.
    #[serde(serialize_with = "super::path_text")]
    pub sysfs: PathBuf,
    /// The CPUs of the matrix, ascending.
    pub cpus: Vec<usize>,
    /// Cells per class; `None`: every ordered pair.
    pub per_class: Option<usize>,
    /// Each class: its ordered pairs among `cpus`, and the cells measured of them per pass.
    #[serde(serialize_with = "classes_named")]
    pub classes: Vec<(Class, usize, usize)>,
    /// Cells measured in all (every pass), and the full matrix's.
    pub cells: usize,
    pub full_cells: usize,
    /// Seconds one cell takes at its cap (`host::time`), and the whole matrix, the full one's
    /// beside it: estimates; a loaded machine may take longer.
    pub cell_s: f64,
    pub estimated_s: f64,
    pub full_estimated_s: f64,
    /// The most the matrix holds at once: one cell's ring, bytes.
    pub memory_bytes: u64,
    /// What bounded the default, and which classes cannot have an interval.
    pub notes: Vec<String>,
}

/// Each class of a plan as it is said: its relation, NUMA distance and name, its pairs and
/// cells.
fn classes_named<S: serde::Serializer>(
    classes: &[(Class, usize, usize)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Named {
        relation: &'static str,
        numa_distance: Option<u32>,
        name: String,
        pairs: usize,
        cells: usize,
    }
    s.collect_seq(classes.iter().map(|&(class, pairs, cells)| Named {
        relation: class.relation.name(),
        numa_distance: class.distance,
        name: class.name(),
        pairs,
        cells,
    }))
}

/// The plan of `cfg` on the host the sysfs tree `sysfs` describes (None: `host::topology`).
pub fn plan(cfg: &MatrixConfig, sysfs: Option<&Path>) -> Result<MatrixPlan> {
    plan_on(&super::topology_of(sysfs)?, cfg)
}

/// The plan of `cfg` on the host `topo`: its CPUs checked as a run checks them.
pub fn plan_on(topo: &Topology, cfg: &MatrixConfig) -> Result<MatrixPlan> {
    let cpus = matrix::validate(topo, cfg)?;
    let sizes: Vec<(Class, usize)> = matrix::classes(topo, &cpus)
        .into_iter()
        .map(|(class, pairs)| (class, pairs.len()))
        .collect();
    let cell_s = point_s(&cfg.ring, 2);
    let passes = cfg.passes;
    let full_cells = cpus.len() * cpus.len() * passes;
    let full_s = full_cells as f64 * cell_s;
    let mut notes = Vec::new();
    let per_class = match (cfg.full, cfg.per_class) {
        (true, _) => None,
        (false, Some(k)) => Some(k),
        (false, None) if full_s <= super::TIME_BUDGET_S => None,
        (false, None) => Some(budgeted(&sizes, passes, cell_s, &mut notes)),
    };
    let classes: Vec<(Class, usize, usize)> = sizes
        .iter()
        .map(|&(class, n)| (class, n, per_class.map_or(n, |k| k.min(n))))
        .collect();
    let cells = classes.iter().map(|c| c.2).sum::<usize>() * passes;
    if per_class.is_some() {
        notes.push(format!(
            "the full matrix of {} CPUs is {full_cells} cells, about {}: every pair with \
             full (--full, classes=False)",
            cpus.len(),
            duration(full_s)
        ));
    }
    notes.extend(too_few(&classes, passes));
    Ok(MatrixPlan {
        sysfs: topo.root.clone(),
        cpus,
        per_class,
        classes,
        cells,
        full_cells,
        cell_s,
        estimated_s: cells as f64 * cell_s,
        full_estimated_s: full_s,
        memory_bytes: ring::rings_need(cfg.ring.engine, 2, 1, cfg.ring.size_kb).0,
        notes,
    })
}

/// The most cells per class whose matrix fits the time budget, `MIN_PER_CLASS` at least
/// (noted where even that passes the budget).
fn budgeted(
    sizes: &[(Class, usize)],
    passes: usize,
    cell_s: f64,
    notes: &mut Vec<String>,
) -> usize {
    let seconds = |k: usize| {
        let cells: usize = sizes.iter().map(|&(_, n)| k.min(n)).sum();
        (cells * passes) as f64 * cell_s
    };
    let largest = sizes.iter().map(|&(_, n)| n).max().unwrap_or(0);
    let (mut lo, mut hi) = (MIN_PER_CLASS, largest.max(MIN_PER_CLASS));
    if seconds(lo) > super::TIME_BUDGET_S {
        notes.push(format!(
            "{MIN_PER_CLASS} cells in each of {} classes, the fewest that give a class an \
             interval, take {}, past the {:.0} s budget",
            sizes.len(),
            duration(seconds(lo)),
            super::TIME_BUDGET_S
        ));
        return lo;
    }
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if seconds(mid) <= super::TIME_BUDGET_S {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// A note for the classes with fewer cells than an interval needs (a class of few pairs).
fn too_few(classes: &[(Class, usize, usize)], passes: usize) -> Option<String> {
    let few: Vec<String> = classes
        .iter()
        .filter(|c| c.2 < MIN_PER_CLASS)
        .map(|(class, _, cells)| format!("{} ({cells})", class.name()))
        .collect();
    (!few.is_empty()).then(|| {
        let each = if passes > 1 { " per pass" } else { "" };
        format!(
            "too few cells{each} for an interval of the class's figure ({MIN_PER_CLASS} \
             needed): {}",
            few.join(", ")
        )
    })
}

#[cfg(test)]
mod tests;
