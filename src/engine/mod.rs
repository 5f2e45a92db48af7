//! Who switches. An engine starts participants 1..n of each ring somewhere (forked processes,
//! threads, fibers) and hands back one driver per ring for participant 0, which the caller
//! runs and times.

pub mod process;

use crate::error::{Error, Result};
use crate::token::Driver;
use crate::transport::{pipe::Pipe, Transport};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Process,
}

impl Engine {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "process" => Ok(Engine::Process),
            _ => Err(Error::invalid(
                "engine",
                format!("unknown engine {name:?}; expected 'process'"),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Engine::Process => "process",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    Pipe,
}

impl TransportKind {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "pipe" => Ok(TransportKind::Pipe),
            _ => Err(Error::invalid(
                "transport",
                format!("unknown transport {name:?}; expected 'pipe'"),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Pipe => Pipe::NAME,
        }
    }
}

/// Participant 0 of one ring, as the measurement loop sees it.
pub trait Ring: Send {
    /// Sends the token round the ring `trips` times.
    fn trips(&mut self, trips: u64) -> Result<()>;
    /// `rounds` rounds of the hot-cache overhead loop (`procs` self-hops each).
    fn overhead(&mut self, rounds: u64) -> Result<()>;
    /// Ends the ring cleanly: every participant reports and leaves.
    fn stop(&mut self) -> Result<()>;
    /// A counter that moves while the ring makes progress.
    fn progress(&self) -> Arc<AtomicU64>;
    /// (workload passes, checksum) of participant 0.
    fn work_done(&self) -> (u64, u64);
}

impl<T: Transport> Ring for Driver<T> {
    fn trips(&mut self, trips: u64) -> Result<()> {
        Driver::trips(self, trips)
    }
    fn overhead(&mut self, rounds: u64) -> Result<()> {
        Driver::overhead(self, rounds)
    }
    fn stop(&mut self) -> Result<()> {
        Driver::stop(self)
    }
    fn progress(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.progress)
    }
    fn work_done(&self) -> (u64, u64) {
        Driver::work_done(self)
    }
}

/// What the participants other than the drivers reported once they left.
#[derive(Debug, Default)]
pub struct Report {
    /// CPU each participant was last seen on, `[ring][participant]`, participant 0 excluded.
    pub cpus: Vec<Vec<i32>>,
    /// (workload passes, checksum) of each participant, same layout.
    pub work: Vec<Vec<(u64, u64)>>,
    /// Why the run failed, as far as the participants tell (a death, a hang).
    pub failure: Option<String>,
}

/// The participants an engine started, other than the drivers.
pub trait Members: Send + Sync {
    /// Unblocks everyone at once; the drivers then see their peers gone. `why` explains it.
    fn abort(&self, why: &str);
    /// Waits for every participant to leave (killing them unless `clean`) and reports.
    fn finish(self: Box<Self>, clean: bool) -> Report;
}

pub struct Group {
    pub rings: Vec<Box<dyn Ring>>,
    pub members: Box<dyn Members>,
}

/// Starts `parallel` rings of `procs` participants; `cpus[ring][participant]` pins them.
pub fn spawn(
    engine: Engine,
    transport: TransportKind,
    procs: usize,
    size_kb: usize,
    cpus: &[Vec<Option<usize>>],
) -> Result<Group> {
    match (engine, transport) {
        (Engine::Process, TransportKind::Pipe) => process::spawn::<Pipe>(procs, size_kb, cpus),
    }
}
