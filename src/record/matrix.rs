//! The CPU matrix's record: what was asked, then one entry per cell in every per-cell array,
//! in the order the cells were measured, and the topology it was measured on.

use crate::fields::record;
use crate::matrix::{Cell, Matrix, MatrixConfig};
use crate::result::{by_repetition, RingFigures};
use crate::topology::Table;

record! {
    /// A CPU×CPU matrix: what was asked, then one entry per cell (`cpu_from` -> `cpu_to`).
    pub struct MatrixRecord {
        pub engine: &'static str = "oneof=ENGINES",
        pub transport: &'static str = "",
        pub size_kb: usize = "min=0",
        /// Null: precision mode.
        pub repetitions: Option<usize> = "min=1",
        pub precision: Option<f64> = "min=0",
        pub max_time: Option<f64> = "min=0",
        pub warmup: usize = "min=0",
        pub min_time: f64 = "min=0",
        pub record_hops: bool = "",
        /// Null: every pair.
        pub per_class: Option<usize> = "min=1",
        pub passes: usize = "min=1",
        pub memory_node: String = "",
        pub cpus: Vec<usize> = "min=0",
        pub started_unix_s: f64 = "min=0",
        pub cpu_from: Vec<usize> = "[C] min=0 column",
        pub cpu_to: Vec<usize> = "[C] min=0 column",
        pub relation: Vec<&'static str> = "[C] oneof=RELATIONS column",
        /// -1: one node, or unknown.
        pub numa_distance: Vec<i64> = "[C] min=-1 column",
        pub pass_index: Vec<usize> = "[C] min=0 column",
        pub started_s: Vec<f64> = "[C] min=0 column",
        pub elapsed_s: Vec<f64> = "[C] min=0",
        pub latency_us: Vec<f64> = "[C]",
        pub min_us: Vec<f64> = "[C]",
        /// NaN: no interval (a cell with one unit to go on).
        pub ci_low: Vec<f64> = "[C] nan holes",
        pub ci_high: Vec<f64> = "[C] nan holes",
        pub cv: Vec<f64> = "[C] min=0 inf",
        pub verdict: Vec<&'static str> = "[C]",
        pub stopped: Vec<&'static str> = "[C] column",
        pub repetitions_made: Vec<usize> = "[C] min=0 column",
        pub samples_us: Vec<Vec<f64>> = "[R,C] holes",
        pub raw_samples_us: Vec<Vec<f64>> = "[R,C] min=0 holes",
        pub overhead_samples_us: Vec<Vec<f64>> = "[R,C] min=0 holes",
        pub below_resolution: Vec<bool> = "[C]",
        pub switches_per_hop: Vec<f64> = "[C] min=0 column",
        pub migrations: Vec<i64> = "[C] min=-1 column",
        pub block: Vec<usize> = "[C] min=1 optional",
        pub instance_blocks: Vec<Vec<usize>> = "[C,*] min=0 optional ragged",
        pub work_verified: Vec<bool> = "[C]",
        pub cpus_seen: Vec<[i32; 2]> = "[C,2] min=-1",
        /// -1: not placed.
        pub memory_node_asked: Vec<i64> = "[C] min=-1 column",
        pub memory_node_seen: Vec<i64> = "[C] min=-1 column",
        /// NaN (null): not checked (no hops); +inf: the clocks allowed no bound.
        pub clock_offset_bound_ns: Vec<f64> = "[C] min=0 nan inf holes column",
        pub clock_untrusted: Vec<bool> = "[C] column",
        #[serde(serialize_with = "crate::fields::in_order")]
        pub wake_us: Option<Vec<(&'static str, Vec<f64>)>> =
            "keys=p50|p90|p99|p99.9 [C] min=0 nan holes alias=_WakeDict",
        pub warnings: Vec<String> = "",
        #[serde(flatten)]
        pub sched: super::SchedRecord = "",
        /// The machine's topology the cells were measured on (its relations left out).
        pub topology: Table = "",
    }
}

fn known<T: TryInto<i64>>(v: Option<T>) -> i64 {
    v.and_then(|x| x.try_into().ok()).unwrap_or(-1)
}

/// `f` of each cell, in the order the cells were measured.
fn each<T>(cells: &[Cell], f: impl Fn(&Cell) -> T) -> Vec<T> {
    cells.iter().map(f).collect()
}

impl MatrixRecord {
    /// The record of `m`, measured as `cfg` asked on `topology`, started at `started_unix_s`.
    pub fn new(cfg: &MatrixConfig, m: &Matrix, topology: Table, started_unix_s: f64) -> Self {
        let r = &cfg.ring;
        let rule = r.stop.rule();
        let cells = &m.cells;
        // A cell is one point: its entry `[0]` of each figure, its column 0 of each series.
        let one = |f: fn(&RingFigures) -> &Vec<Vec<f64>>| {
            by_repetition(&each(cells, |c| {
                f(&c.figures).iter().map(|r| r[0]).collect()
            }))
        };
        let recorded = !cells.is_empty() && cells.iter().all(|c| c.wake.is_some());
        let wake_us = recorded.then(|| {
            [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)]
                .into_iter()
                .map(|(name, q)| (name, each(cells, |c| c.wake_us(q))))
                .collect()
        });
        MatrixRecord {
            engine: r.engine.name(),
            transport: r.transport.name(),
            size_kb: r.size_kb,
            repetitions: r.stop.fixed(),
            precision: rule.map(|p| p.target),
            max_time: rule.map(|p| p.max_time),
            warmup: r.warmup,
            min_time: r.min_time,
            record_hops: r.record_hops,
            per_class: cfg.per_class,
            passes: cfg.passes,
            memory_node: cfg.memory.name(),
            cpus: m.cpus.clone(),
            started_unix_s,
            cpu_from: each(cells, |c| c.from),
            cpu_to: each(cells, |c| c.to),
            relation: each(cells, |c| c.class.relation.name()),
            numa_distance: each(cells, |c| known(c.class.distance)),
            pass_index: each(cells, |c| c.pass),
            started_s: each(cells, |c| c.started_s),
            elapsed_s: each(cells, |c| c.elapsed_s),
            latency_us: each(cells, |c| c.figures.latency_us[0]),
            min_us: each(cells, |c| c.figures.min_us[0]),
            ci_low: each(cells, |c| c.figures.stats.ci_low[0]),
            ci_high: each(cells, |c| c.figures.stats.ci_high[0]),
            cv: each(cells, |c| c.figures.stats.cv[0]),
            verdict: each(cells, |c| c.figures.stats.verdict[0]),
            stopped: each(cells, |c| c.figures.stopped[0]),
            repetitions_made: each(cells, |c| c.figures.repetitions_made[0]),
            samples_us: one(|f| &f.samples_us),
            raw_samples_us: one(|f| &f.raw_samples_us),
            overhead_samples_us: one(|f| &f.overhead_samples_us),
            below_resolution: each(cells, |c| c.figures.below_resolution[0]),
            switches_per_hop: each(cells, |c| c.figures.switches_per_hop[0]),
            migrations: each(cells, |c| c.figures.migrations[0]),
            block: each(cells, |c| c.figures.block[0]),
            instance_blocks: each(cells, |c| c.figures.instance_blocks[0].clone()),
            work_verified: each(cells, |c| c.figures.work_verified[0]),
            cpus_seen: each(cells, |c| {
                let seen = &c.figures.cpus[0][0];
                [seen[0], seen.get(1).copied().unwrap_or(-1)]
            }),
            memory_node_asked: each(cells, |c| known(c.memory.map(|m| m.node))),
            memory_node_seen: each(cells, |c| {
                c.memory.map_or(-1, |m| i64::from(m.seen.max(-1)))
            }),
            clock_offset_bound_ns: each(cells, |c| c.offset.map_or(f64::NAN, |o| o.bound_ns())),
            clock_untrusted: each(cells, |c| c.offset_flagged),
            wake_us,
            warnings: m.warnings.clone(),
            sched: cells
                .first()
                .map_or_else(|| super::SchedRecord::asked(r), |c| c.sched.into()),
            topology,
        }
    }
}
