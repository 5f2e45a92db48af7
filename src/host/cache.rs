//! A cache sweep's host-derived defaults: the cache levels its participants can use, as
//! per-CPU shares (a cache shared by k CPUs counts size / k for each CPU of the placement that
//! uses it: never the machine's caches summed), the grid of sizes, the streaming read and the
//! line size; each bounded by the core's limits (`config::SIZE_KB`, `STREAM_KB`,
//! `LINE_BYTES`), by the memory budget (`host::memory_budget`) and by a time budget, so that
//! a default sweep is of bounded size and time on any host; and what the sweep will hold and
//! take. What bounded a default is said in `notes`.

use crate::cache::STREAM_PASSES;
use crate::config::{Config, DEFAULT_LINE_BYTES, LINE_BYTES, SIZE_KB, STREAM_KB};
use crate::error::{Error, Result};
use crate::request::CacheRequest;
use crate::ring;
use crate::topology::Topology;
// A default sweep's time budget is shared evenly by its ring sizes.
use super::TIME_BUDGET_S;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Working sets reach at least this many times the largest cache share the participants can
/// use: past it, every knee has been crossed.
pub const REACH: u64 = 4;
/// The smallest non-zero size of an automatic grid (KiB per participant), and its points per
/// octave.
pub const FIRST_KB: usize = 4;
pub const PER_OCTAVE: u32 = 2;
/// The grid where the host describes no cache: 0, then 4 KiB to 64 MiB per participant,
/// every octave.
pub const DEFAULT_GRID_KB: [usize; 16] = [
    0, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
];
/// The streaming read sums at least this much (or `REACH` x the largest cache share).
pub const MIN_STREAM_KB: u64 = 64 * 1024;

// What a sweep costs, as measured on the project's 2-vCPU AMD EPYC guest at a load of 3 to
// 4, a third added: a ring instance is set up in 25 ms (+1 ms per process), times about 8
// repetitions of `min_time`, and spends 1.8-2.2 µs per KiB of its working set (the first
// touch of every page, then the passes over it); a streaming pass reads 20 KiB per µs.
const SETUP_S: f64 = 0.01;
const PER_PROCESS_S: f64 = 0.0015;
const REPETITIONS_PER_INSTANCE: f64 = 8.0;
const US_PER_KIB: f64 = 3.0;
const STREAM_US_PER_KIB: f64 = 0.075;

/// What a cache sweep will measure on this host, and what it holds and takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CachePlan {
    /// The sysfs tree the host was read from.
    #[serde(serialize_with = "super::path_text")]
    pub sysfs: PathBuf,
    /// The CPUs the placement uses there.
    pub cpus: Vec<usize>,
    /// Each cache level the participants can use (`Cache::name`), KiB: the per-CPU shares of
    /// `cpus`, summed; lowest level first (said as an object, in this order).
    #[serde(serialize_with = "by_name")]
    pub caches: Vec<(String, u64)>,
    pub line_bytes: usize,
    pub stream_kb: usize,
    /// One grid per count of the request's `procs`, in its order, each holding 0.
    pub sizes_kb: Vec<Vec<usize>>,
    /// The most the sweep holds at once: the largest ring and the streaming array, bytes.
    pub memory_bytes: u64,
    /// Seconds the whole sweep is planned to take on this machine.
    pub estimated_s: f64,
    /// What bounded a default, and what was assumed.
    pub notes: Vec<String>,
}

fn by_name<S: serde::Serializer>(
    caches: &[(String, u64)],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_map(caches.iter().map(|(name, kb)| (name, kb)))
}

impl CachePlan {
    /// The one grid of every ring size, where one core sweep measures them all at each
    /// size: the sizes named, or a single ring size's automatic grid.
    pub fn grid(&self) -> Result<&[usize]> {
        match self.sizes_kb.split_first() {
            Some((first, rest)) if rest.iter().all(|g| g == first) => Ok(first),
            _ => Err(Error::invalid(
                "sizes_kb",
                "name the sizes for a sweep of several ring sizes at once: each ring size has \
                 a grid of its own (ctxbench.cache_sweep measures them one at a time)",
            )),
        }
    }

    /// The largest cache share the participants compete for, KiB (0: none known): past it
    /// a refill comes from memory, as the streaming read does.
    pub fn largest_share_kb(&self) -> u64 {
        largest_kb(&self.caches)
    }
}

/// The plan of `c` on the host (`host::topology`), within `host::memory_budget`.
pub fn plan(c: &CacheRequest) -> Result<CachePlan> {
    plan_on(&super::topology()?, c, super::memory_budget())
}

/// The plan of `c` on the host `topo`, holding at most `memory` (bytes, and where that bound
/// comes from) where one is known.
pub fn plan_on(
    topo: &Topology,
    c: &CacheRequest,
    memory: Option<(u64, String)>,
) -> Result<CachePlan> {
    let base = &c.base;
    let most = base.procs.iter().copied().max().unwrap_or(2);
    let cpus = base
        .placement
        .cpus_used(&topo.allowed(), most, base.parallel)?;
    let caches = shares(topo, &cpus);
    let mut notes = Vec::new();
    let line_bytes = c
        .line_bytes
        .unwrap_or_else(|| line(topo, &cpus, &mut notes));
    let largest = largest_kb(&caches);
    let room = memory.as_ref().map_or(u64::MAX, |(bytes, _)| *bytes);
    let stream_kb = match c.stream_kb {
        Some(kb) => kb,
        None => stream(largest, room, memory.as_ref(), &mut notes),
    };
    let budget = Budget {
        bytes: room.saturating_sub(stream_kb as u64 * 1024),
        source: memory.map(|(_, source)| source),
        seconds: TIME_BUDGET_S / base.procs.len().max(1) as f64,
    };
    let sizes_kb = grids(c, largest, stream_kb, &budget, &mut notes);
    if largest == 0 && c.sizes_kb.is_none() {
        notes.push(format!(
            "sysfs has no cache sizes for CPUs {cpus:?} ({}): sizes_kb='auto' uses the \
             default grid {DEFAULT_GRID_KB:?} KiB, within the budgets",
            topo.root.display()
        ));
    }
    Ok(CachePlan {
        sysfs: topo.root.clone(),
        cpus,
        caches,
        line_bytes,
        stream_kb,
        memory_bytes: memory_bytes(base, &sizes_kb, stream_kb),
        estimated_s: base
            .procs
            .iter()
            .zip(&sizes_kb)
            .map(|(&p, grid)| sweep_s(base, p, grid, c.rounds, stream_kb))
            .sum(),
        sizes_kb,
        notes,
    })
}

/// One grid per ring size of `c`: the sizes it names, else each ring size's automatic grid.
fn grids(
    c: &CacheRequest,
    largest: u64,
    stream_kb: usize,
    budget: &Budget,
    notes: &mut Vec<String>,
) -> Vec<Vec<usize>> {
    let base = &c.base;
    base.procs
        .iter()
        .map(|&p| match &c.sizes_kb {
            Some(sizes) => with_zero(sizes),
            None => auto(base, p, largest, c.rounds, stream_kb, budget, notes),
        })
        .collect()
}

/// The most a sweep over `grids` holds at once: its largest ring beside the streaming array.
fn memory_bytes(base: &Config, grids: &[Vec<usize>], stream_kb: usize) -> u64 {
    base.procs
        .iter()
        .zip(grids)
        .map(|(&p, grid)| ring_bytes(base, p, grid.last().copied().unwrap_or(0)))
        .max()
        .unwrap_or(0)
        .saturating_add(stream_kb as u64 * 1024)
}

/// Each level `cpus` can use: the per-CPU shares of those CPUs summed, KiB, lowest first.
fn shares(topo: &Topology, cpus: &[usize]) -> Vec<(String, u64)> {
    let mut kb: BTreeMap<String, f64> = BTreeMap::new();
    for &cpu in cpus {
        for share in topo.cache_share_kb(cpu) {
            *kb.entry(share.name).or_default() += share.per_cpu_kb;
        }
    }
    // "L1d" < "L1i" < "L2" < "L3": by name is by level.
    kb.into_iter()
        .map(|(name, kb)| (name, kb.round() as u64))
        .collect()
}

/// The largest share a working set competes for (instruction caches aside).
fn largest_kb(caches: &[(String, u64)]) -> u64 {
    caches
        .iter()
        .filter(|(name, _)| !name.ends_with('i'))
        .map(|(_, kb)| *kb)
        .max()
        .unwrap_or(0)
}

/// The line of the first data cache of the first of `cpus` (its L1d: every level of a CPU
/// has one line), where `config::LINE_BYTES` holds it and it is a power of two; else
/// `DEFAULT_LINE_BYTES`, noted.
fn line(topo: &Topology, cpus: &[usize], notes: &mut Vec<String>) -> usize {
    let given = cpus
        .first()
        .and_then(|&cpu| topo.cpu(cpu))
        .and_then(|c| {
            c.caches
                .iter()
                .map(|&i| &topo.caches[i])
                .find(|cache| cache.holds_data())
        })
        .and_then(|cache| cache.line_bytes);
    match given {
        Some(b) if LINE_BYTES.check(b).is_ok() && b.is_power_of_two() => b as usize,
        other => {
            let why = other.map_or("gives none".to_string(), |b| {
                format!(
                    "gives {b}, not a power of two between {} and {}",
                    LINE_BYTES.lo, LINE_BYTES.hi
                )
            });
            notes.push(format!(
                "sysfs {why} for the cache line of CPUs {cpus:?} ({}): refills count lines of \
                 {DEFAULT_LINE_BYTES} bytes (line_bytes names another)",
                topo.root.display()
            ));
            DEFAULT_LINE_BYTES
        }
    }
}

/// The streaming read: `REACH` x the largest share, `MIN_STREAM_KB` at least, within
/// `STREAM_KB` and half the memory budget (the rings take the rest), noted where bounded.
fn stream(
    largest: u64,
    room: u64,
    memory: Option<&(u64, String)>,
    notes: &mut Vec<String>,
) -> usize {
    let want = (REACH * largest).max(MIN_STREAM_KB);
    let half_room_kb = (room / 2 / 1024).max(1);
    let kb = want.min(STREAM_KB.hi).min(half_room_kb);
    if kb < want {
        let by = if kb == STREAM_KB.hi {
            format!("stream_kb's limit, {} KiB", STREAM_KB.hi)
        } else {
            let source = memory.map_or("", |(_, s)| s.as_str());
            format!("half the memory budget ({source})")
        };
        notes.push(format!(
            "the streaming read sums {kb} KiB, bounded by {by}, short of {want} KiB ({REACH} x \
             the largest cache share): part of it may come from a cache"
        ));
    }
    kb as usize
}

/// What an automatic grid may take: bytes at once beside the streaming array (and where
/// that bound comes from), seconds.
struct Budget {
    bytes: u64,
    source: Option<String>,
    seconds: f64,
}

/// 0, then sizes per participant from `FIRST_KB`, `PER_OCTAVE` per octave, until a ring of
/// `procs` reaches `REACH` x `largest` (`DEFAULT_GRID_KB` where `largest` is 0); cut from the
/// top where a size passes `SIZE_KB`, the memory budget or the time budget, noted.
fn auto(
    base: &Config,
    procs: usize,
    largest: u64,
    rounds: usize,
    stream_kb: usize,
    budget: &Budget,
    notes: &mut Vec<String>,
) -> Vec<usize> {
    let mut grid = if largest == 0 {
        DEFAULT_GRID_KB.to_vec()
    } else {
        octaves(REACH as f64 * largest as f64 / procs as f64)
    };
    let reach = REACH * largest;
    let mut cut = None;
    while grid.len() > 2 {
        let top = grid[grid.len() - 1];
        cut = if top as u64 > SIZE_KB.hi {
            Some(format!("size_kb's limit, {} KiB", SIZE_KB.hi))
        } else if ring_bytes(base, procs, top) > budget.bytes {
            let source = budget.source.as_deref().unwrap_or("");
            Some(format!(
                "the memory budget ({source}) beside the streaming read"
            ))
        } else if sweep_s(base, procs, &grid, rounds, stream_kb) > budget.seconds {
            Some(format!(
                "the time budget, {:.0} s for this ring size",
                budget.seconds
            ))
        } else {
            break;
        };
        grid.pop();
    }
    if let Some(by) = cut {
        let last = grid.last().copied().unwrap_or(0);
        let short = if largest == 0 {
            "short of the default grid's".to_string()
        } else {
            format!("short of {reach} KiB ({REACH} x the largest cache share)")
        };
        notes.push(format!(
            "the grid of {procs} processes stops at {last} KiB per participant, a working \
             set of {} KiB, {short}: bounded by {by}",
            procs * last
        ));
    }
    grid
}

/// 0, then `FIRST_KB` x 2^(k / `PER_OCTAVE`) up to the first size at or past `top_kb`.
fn octaves(top_kb: f64) -> Vec<usize> {
    let octaves = (top_kb / FIRST_KB as f64).log2().ceil().max(1.0) as u32;
    let mut grid: Vec<usize> = (0..=octaves * PER_OCTAVE)
        .map(|k| {
            (FIRST_KB as f64 * 2f64.powf(f64::from(k) / f64::from(PER_OCTAVE))).round() as usize
        })
        .collect();
    grid.insert(0, 0);
    grid.dedup();
    grid
}

/// `sizes` sorted, each once, with 0.
fn with_zero(sizes: &[usize]) -> Vec<usize> {
    let mut grid = sizes.to_vec();
    grid.push(0);
    grid.sort_unstable();
    grid.dedup();
    grid
}

/// Bytes a ring of `procs` of `base` at `size_kb` holds (`ring::rings_need`).
fn ring_bytes(base: &Config, procs: usize, size_kb: usize) -> u64 {
    ring::rings_need(base.engine, procs, base.parallel, size_kb).0
}

/// Seconds a sweep of one ring size over `grid` is planned to take: every size's instance in
/// every round, the streaming array's first touch, and its passes each round.
fn sweep_s(base: &Config, procs: usize, grid: &[usize], rounds: usize, stream_kb: usize) -> f64 {
    let us = |kib: f64| kib * US_PER_KIB * 1e-6;
    let rings = (procs * base.parallel) as f64;
    let round: f64 = grid
        .iter()
        .map(|&kb| {
            SETUP_S
                + rings * PER_PROCESS_S
                + REPETITIONS_PER_INSTANCE * base.min_time
                + us(rings * kb as f64)
        })
        .sum();
    let passes = STREAM_PASSES as f64;
    let stream_round = base.min_time + passes * stream_kb as f64 * STREAM_US_PER_KIB * 1e-6;
    us(stream_kb as f64) + rounds as f64 * (round + stream_round)
}

#[cfg(test)]
mod tests;
