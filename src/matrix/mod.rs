//! The CPU×CPU matrix: for each chosen ordered pair (waker i, wakee j), a ring of two
//! participants pinned i→j — participant 0, which drives and times, on i — measured by
//! `run::run` with the same stopping rule as any ring point. The diagonal is both on one CPU.
//!
//! What a cell's number means: the ring's net time per switch, (round trip ÷ 2) − overhead,
//! i.e. the mean of the i→j and the j→i wake-up; by construction cell (i, j) and cell (j, i)
//! measure the same pair of directions, with the timing thread on the other side. With hop
//! recording a cell also holds the i→j direction alone: the wake-to-run latency of every hop
//! into participant 1 (`hops::Lane::Others`), whose stamps cross CPUs and are trusted only as
//! far as the two CPUs' clocks agree (`skew`, checked before each such cell).
//!
//! `plan` chooses the cells (all, or a few per class) and their drift-spreading order;
//! `numa` places and verifies the cell's memory where asked.

mod numa;
mod plan;
mod skew;

pub use numa::Placed;
pub use plan::{class_of, classes, plan, Class, Planned};
pub use skew::OffsetBound;

use crate::config::Config;
use crate::engine::{Engine, Interrupt};
use crate::error::{Error, Result};
use crate::hops::{self, Lane};
use crate::placement::Placement;
use crate::result::{summarize, RingFigures};
use crate::ring as whole;
use crate::sched::Sched;
use crate::topology::Topology;
use std::time::Instant;

/// Fibers all run on one thread: no engine of the matrix.
pub fn check_engine(engine: Engine) -> Result<()> {
    if engine == Engine::Fiber {
        return Err(Error::invalid(
            "engine",
            "fibers all run on one thread, so they cannot sit on two CPUs: use 'thread' or \
             'process'",
        ));
    }
    Ok(())
}

/// Cells per class in class mode by default.
pub const DEFAULT_PER_CLASS: usize = 8;

/// Where a cell's memory goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    /// The waker's node where the machine has more than one node; else not placed.
    Auto,
    Waker,
    Wakee,
    Node(usize),
}

impl Memory {
    pub const NAMES: &'static str = "None (the waker's node where there are several), \
                                     'waker', 'wakee' or a node id";

    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "waker" => Ok(Memory::Waker),
            "wakee" => Ok(Memory::Wakee),
            _ => Err(Error::invalid(
                "memory_node",
                format!("unknown placement {name:?}; expected {}", Self::NAMES),
            )),
        }
    }

    /// Node `id`'s memory.
    pub fn of_node(id: i64) -> Result<Self> {
        usize::try_from(id)
            .map(Memory::Node)
            .map_err(|_| Error::invalid("memory_node", format!("node ids are >= 0, got {id}")))
    }

    pub fn name(self) -> String {
        match self {
            Memory::Auto => "auto".into(),
            Memory::Waker => "waker".into(),
            Memory::Wakee => "wakee".into(),
            Memory::Node(n) => n.to_string(),
        }
    }

    /// The node of cell (from, to), if its memory is placed at all.
    fn node(self, topo: &Topology, from: usize, to: usize) -> Option<usize> {
        let node_of = |c: usize| topo.cpu(c).and_then(|c| c.node).unwrap_or(0);
        match self {
            Memory::Auto if topo.nodes.len() > 1 => Some(node_of(from)),
            Memory::Auto => None,
            Memory::Waker => Some(node_of(from)),
            Memory::Wakee => Some(node_of(to)),
            Memory::Node(n) => Some(n),
        }
    }

    fn validate(self, topo: &Topology) -> Result<()> {
        let Memory::Node(n) = self else {
            return Ok(());
        };
        let nodes: Vec<usize> = topo.nodes.iter().map(|n| n.id).collect();
        if nodes.contains(&n) || (nodes.is_empty() && n == 0) {
            return Ok(());
        }
        Err(Error::invalid(
            "memory_node",
            format!("node {n} does not exist here; nodes: {nodes:?}"),
        ))
    }
}

#[derive(Debug, Clone)]
pub struct MatrixConfig {
    /// The CPUs whose pairs to measure; `None`: every allowed CPU.
    pub cpus: Option<Vec<usize>>,
    /// How each cell is measured: engine, transport, size, stopping rule, hop recording.
    /// Its `procs`, `parallel` and `placement` are the matrix's (2, 1, the cell's pair).
    pub ring: Config,
    /// Class mode: this many cells per class; `None`: every ordered pair where `full`, else
    /// the host's default (`host::matrix`: every pair within the time budget, else a
    /// sample by class); `run` measures every pair.
    pub per_class: Option<usize>,
    pub full: bool,
    pub passes: usize,
    pub memory: Memory,
}

/// One measured cell.
#[derive(Debug, Clone)]
pub struct Cell {
    pub from: usize,
    pub to: usize,
    pub class: Class,
    pub pass: usize,
    /// Seconds from the start of the matrix to the start of this cell, and what it took.
    pub started_s: f64,
    pub elapsed_s: f64,
    /// The ring's figures of its one point (procs = 2), and the policy its tasks ran under,
    /// read back.
    pub figures: RingFigures,
    pub sched: Sched,
    /// Hops into the wakee (the i→j direction): counts per `hops::bucket`, when recording.
    pub wake: Option<Vec<u64>>,
    /// The two CPUs' clock offset interval, checked before a cell that records hops across
    /// CPUs; `offset_flagged` when its bound exceeds the histogram's resolution at the
    /// direction's median (the stamps then cannot resolve what the percentiles claim).
    pub offset: Option<OffsetBound>,
    pub offset_flagged: bool,
    pub memory: Option<Placed>,
}

impl Cell {
    /// The i→j wake-to-run percentile `q` in µs (NaN without hops).
    pub fn wake_us(&self, q: f64) -> f64 {
        self.wake
            .as_ref()
            .map_or(f64::NAN, |c| hops::percentile(c, q) / 1000.0)
    }

    pub fn label(&self) -> String {
        format!("cell {}->{}", self.from, self.to)
    }
}

pub struct Matrix {
    /// The CPUs of the matrix, ascending.
    pub cpus: Vec<usize>,
    /// In the order they were measured.
    pub cells: Vec<Cell>,
    /// What the caller should know: one CPU only, placements not verified, pinning broken.
    pub warnings: Vec<String>,
}

/// The CPUs of the matrix: each named one present, online, allowed and named once.
fn chosen_cpus(topo: &Topology, cpus: Option<&[usize]>) -> Result<Vec<usize>> {
    let allowed = topo.allowed();
    let Some(cpus) = cpus else {
        if allowed.is_empty() {
            return Err(Error::invalid("cpus", "no CPU is allowed to this process"));
        }
        return Ok(allowed);
    };
    if cpus.is_empty() {
        return Err(Error::invalid("cpus", "name at least one CPU"));
    }
    let mut seen = Vec::with_capacity(cpus.len());
    for &c in cpus {
        let why = match topo.cpu(c) {
            _ if seen.contains(&c) => format!("CPU {c} is named twice"),
            None => format!("CPU {c} does not exist here (CPUs: {:?})", topo.online()),
            Some(cpu) if !cpu.online => format!("CPU {c} is offline"),
            Some(cpu) if !cpu.allowed => format!(
                "CPU {c} is outside this process's cpuset or affinity mask (allowed: {allowed:?})"
            ),
            Some(_) => {
                seen.push(c);
                continue;
            }
        };
        return Err(Error::invalid("cpus", why));
    }
    seen.sort_unstable();
    Ok(seen)
}

/// Everything about `cfg` that this host can refuse, checked before the first cell (the
/// request checked each value, the engine and the policy); returns the CPUs.
pub fn validate(topo: &Topology, cfg: &MatrixConfig) -> Result<Vec<usize>> {
    let engine = cfg.ring.engine;
    let cpus = chosen_cpus(topo, cfg.cpus.as_deref())?;
    let crossing: Vec<&str> = engine
        .transports()
        .iter()
        .filter(|t| !t.single_cpu_only())
        .map(|t| t.name())
        .collect();
    if cfg.ring.transport.single_cpu_only() && cpus.len() > 1 {
        return Err(Error::invalid(
            "transport",
            format!(
                "{:?} has no wake-up from one CPU to another, so it fits only the diagonal; \
                 across CPUs the matrix works with {crossing:?}",
                cfg.ring.transport.name()
            ),
        ));
    }
    cfg.memory.validate(topo)?;
    Ok(cpus)
}

/// The ring of cell (from, to): two participants, participant 0 on `from`.
fn cell_config(template: &Config, from: usize, to: usize) -> Config {
    Config {
        procs: vec![2],
        parallel: 1,
        placement: Placement::List(vec![from, to]),
        observer: template.observer.without_evidence(),
        ..template.clone()
    }
}

/// Measures the matrix of `cfg` on this machine, whose topology is `topo`. `progress` hears
/// of each cell as it is done (cells done, cells in all); its error stops the run.
pub fn run(
    topo: &Topology,
    cfg: &MatrixConfig,
    interrupt: Interrupt,
    progress: &mut dyn FnMut(usize, usize, &Cell) -> Result<()>,
) -> Result<Matrix> {
    let cpus = validate(topo, cfg)?;
    let planned = plan(topo, &cpus, cfg.per_class, cfg.passes);
    let mut warnings = Vec::new();
    if cpus.len() == 1 {
        warnings.push(format!(
            "only CPU {} is in the matrix: its diagonal (same-cpu) alone; name more CPUs \
             (cpus=) or widen the affinity mask (taskset -c) to compare CPUs",
            cpus[0]
        ));
    }
    let t0 = Instant::now();
    let mut cells = Vec::with_capacity(planned.len());
    for p in &planned {
        if interrupt() {
            return Err(Error::Interrupted);
        }
        let cell = measure_cell(topo, cfg, p, t0, interrupt)?;
        warnings.extend(cell_warnings(&cell));
        progress(cells.len() + 1, planned.len(), &cell)?;
        cells.push(cell);
    }
    Ok(Matrix {
        cpus,
        cells,
        warnings,
    })
}

fn measure_cell(
    topo: &Topology,
    cfg: &MatrixConfig,
    p: &Planned,
    t0: Instant,
    interrupt: Interrupt,
) -> Result<Cell> {
    let started = Instant::now();
    let ring_cfg = cell_config(&cfg.ring, p.from, p.to);
    let placed = cfg
        .memory
        .node(topo, p.from, p.to)
        .map(numa::place)
        .transpose()?;
    let offset = ring_cfg
        .record_hops
        .then(|| skew::estimate(p.from, p.to))
        .transpose()?;
    let points = whole::run(&ring_cfg, interrupt)?;
    let (_bound, memory) = placed.unzip();
    let wake = points[0]
        .hops
        .as_ref()
        .map(|(c, _)| hops::lane(c, Lane::Others).to_vec());
    let mut cell = Cell {
        from: p.from,
        to: p.to,
        class: p.class,
        pass: p.pass,
        started_s: (started - t0).as_secs_f64(),
        elapsed_s: started.elapsed().as_secs_f64(),
        figures: summarize(&ring_cfg, &points),
        sched: points[0].sched,
        wake,
        offset,
        offset_flagged: false,
        memory,
    };
    cell.offset_flagged = offset_exceeds_resolution(&cell);
    Ok(cell)
}

/// Whether the clock offset bound is wider than a bucket of the hop histogram at the
/// direction's median.
fn offset_exceeds_resolution(cell: &Cell) -> bool {
    let Some(offset) = cell.offset else {
        return false;
    };
    let p50 = cell.wake_us(0.5) * 1000.0;
    if cell.from == cell.to || !p50.is_finite() {
        return false;
    }
    let b = hops::bucket(p50 as u64);
    let width = (hops::lower(b + 1) - hops::lower(b)) as f64;
    offset.bound_ns() > width
}

fn cell_warnings(cell: &Cell) -> Vec<String> {
    let mut out: Vec<String> = cell
        .figures
        .warnings
        .iter()
        .map(|w| format!("{}: {w}", cell.label()))
        .collect();
    out.extend(cell.memory.and_then(|m| m.problem(&cell.label())));
    let seen = &cell.figures.cpus[0][0];
    let want = [cell.from as i32, cell.to as i32];
    if seen[..] != want[..] {
        out.push(format!(
            "{}: the participants ran on CPUs {seen:?}, not where they were pinned",
            cell.label()
        ));
    }
    out
}

#[cfg(test)]
mod tests;
