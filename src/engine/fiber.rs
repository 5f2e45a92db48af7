//! User-space stackful coroutines on the driving thread (the Boost.Fiber case), built on
//! `corosensei`, a maintained crate with audited context-switch assembly per architecture.
//!
//! corosensei's coroutines are asymmetric: participant 0 resumes fiber 1, which does its work
//! and suspends back with the token; participant 0 then resumes fiber 2. So one hop is a trip
//! through participant 0 acting as the scheduler: two user-space stack switches (resume and
//! suspend), no kernel involvement. The kernel sees no context switch at all.

use super::{Group, Members, Report, Ring, Start, Switcher};
use crate::error::{Error, Limit, Result};
use crate::hops::HopLog;
use crate::sys::{self, Guards, Shared, Slot};
use crate::transport::TransportKind;
use crate::wire::{self, STOP};
use crate::workload::{Shape, Workload};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Room for the work loop and for unwinding when a suspended fiber is dropped; 10,000 fibers
/// reserve 640 MiB of address space but touch only a few pages each.
const STACK_BYTES: usize = 64 * 1024;

type Coro = Coroutine<u32, u32, (), DefaultStack>;

/// Coroutines on the driving thread: the token travels in the switch itself (`Resume`).
pub struct Fiber;

impl Switcher for Fiber {
    const NAME: &'static str = "fiber";
    /// Its touched stack.
    const PARTICIPANT_BYTES: u64 = 8 * 1024;
    const TASKS: bool = false;
    const TRANSPORTS: &'static [TransportKind] = &[TransportKind::Resume];

    fn start(_resume: TransportKind, s: Start) -> Result<Group> {
        spawn(s.procs, s.shape, s.record, s.cpus)
    }
}

pub fn spawn(
    procs: usize,
    shape: Shape,
    record: bool,
    cpus: &[Vec<Option<usize>>],
) -> Result<Group> {
    let parallel = cpus.len();
    let logs = super::hop_logs(parallel, procs, record)?;
    let slots = Arc::new(Shared::<Slot>::new(procs * parallel)?);
    for s in slots.iter() {
        s.resident_kb.store(-1, Ordering::Relaxed);
    }
    let mut rings: Vec<Box<dyn Ring>> = Vec::with_capacity(parallel);
    for (r, placement) in cpus.iter().enumerate() {
        let mut fibers = Vec::with_capacity(procs - 1);
        for i in 1..procs {
            let stack = DefaultStack::new(STACK_BYTES).map_err(|e| {
                Error::os(
                    e.raw_os_error().unwrap_or(libc::ENOMEM),
                    "allocating a fiber stack",
                )
            })?;
            let work = Workload::new(shape)?;
            let slots = Arc::clone(&slots);
            let cpu = placement[0];
            let log = logs[r].clone();
            fibers.push(Coro::with_stack(
                stack,
                move |yielder: &Yielder<u32, u32>, mut token: u32| {
                    let slot = &slots[r * procs + i];
                    let (mut checksum, mut passes) = (0u64, 0u64);
                    while token != STOP {
                        if let Some(log) = &log {
                            log.received(i);
                        }
                        checksum = checksum.wrapping_add(work.sum());
                        passes += 1;
                        if let Some(log) = &log {
                            log.sending((i + 1) % procs);
                        }
                        token = yielder.suspend(wire::advance(token));
                    }
                    slot.cpu.store(
                        cpu.map_or(sys::current_cpu(), |c| c as i32),
                        Ordering::Relaxed,
                    );
                    slot.checksum.store(checksum, Ordering::Relaxed);
                    let resident = work.resident_kb().map_or(-1, |kb| kb as i64);
                    slot.resident_kb.store(resident, Ordering::Relaxed);
                    slot.passes.store(passes, Ordering::Release);
                },
            ));
        }
        rings.push(Box::new(FiberRing {
            fibers,
            work: Workload::new(shape)?,
            token: 0,
            checksum: 0,
            passes: 0,
            progress: Arc::new(AtomicU64::new(0)),
            log: logs[r].clone(),
        }));
    }
    Ok(Group {
        rings,
        members: Box::new(NoMembers { slots, procs }),
    })
}

struct FiberRing {
    fibers: Vec<Coro>,
    work: Workload,
    token: u32,
    checksum: u64,
    passes: u64,
    progress: Arc<AtomicU64>,
    log: Option<Arc<HopLog>>,
}

// SAFETY: the fibers' bodies hold no thread-local state across a suspension, and the ring is
// driven by one thread at a time (handed over through thread spawn/join), so moving it between
// threads is sound even though corosensei cannot prove it in general.
unsafe impl Send for FiberRing {}

impl FiberRing {
    fn resume(fiber: &mut Coro, token: u32, i: usize) -> Result<u32> {
        match fiber.resume(token) {
            CoroutineResult::Yield(t) => Ok(t),
            CoroutineResult::Return(()) => Err(Error::Peer(format!("fiber {i} ended mid-run"))),
        }
    }
}

impl Ring for FiberRing {
    fn attach(&self) -> Guards {
        Guards::default()
    }

    fn trips(&mut self, trips: u64) -> Result<()> {
        let n = self.fibers.len() + 1;
        let start = self.token;
        let mut token = start;
        let log = self.log.clone();
        for _ in 0..trips {
            if let Some(log) = &log {
                log.sending(1);
            }
            for (k, fiber) in self.fibers.iter_mut().enumerate() {
                token = Self::resume(fiber, token, k + 1)?;
            }
            if let Some(log) = &log {
                log.received(0);
            }
            self.checksum = self.checksum.wrapping_add(self.work.sum());
            self.passes += 1;
            token = wire::advance(token);
            self.progress.fetch_add(1, Ordering::Relaxed);
        }
        wire::check_count(start, trips, n, token)?;
        self.token = token;
        Ok(())
    }

    /// The same work and token step per hop, with no switch at all.
    fn overhead(&mut self, rounds: u64) -> Result<()> {
        let n = self.fibers.len() + 1;
        let mut token = self.token;
        for _ in 0..rounds {
            for _ in 0..n {
                self.checksum = self.checksum.wrapping_add(self.work.sum());
                self.passes += 1;
                token = std::hint::black_box(wire::advance(token));
            }
            self.progress.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn stop(&mut self) -> Result<()> {
        for (k, fiber) in self.fibers.iter_mut().enumerate() {
            if let CoroutineResult::Yield(_) = fiber.resume(STOP) {
                return Err(Error::Peer(format!("fiber {} ignored STOP", k + 1)));
            }
        }
        Ok(())
    }

    fn progress(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.progress)
    }

    fn resident_kb(&self) -> Option<u64> {
        self.work.resident_kb()
    }

    fn work_done(&self) -> (u64, u64) {
        (self.passes, self.checksum)
    }

    fn record(&self, on: bool) {
        if let Some(log) = &self.log {
            log.record(on);
        }
    }

    fn hops(&self) -> Option<(Vec<u64>, u64)> {
        self.log.as_ref().map(|l| (l.counts(), l.max_ns()))
    }

    fn driver_hops_per_trip(&self) -> u64 {
        self.fibers.len() as u64 + 1
    }
}

/// Fibers live inside their ring: nothing else to watch, abort or reap.
struct NoMembers {
    slots: Arc<Shared<Slot>>,
    procs: usize,
}

impl Members for NoMembers {
    /// The kernel sees only the driving thread.
    fn tids(&self) -> Vec<(usize, libc::pid_t)> {
        Vec::new()
    }

    fn casualty(&self) -> Option<String> {
        None
    }

    fn abort(&self, _why: &str) {}

    fn finish(self: Box<Self>, _clean: bool) -> Report {
        super::report(&self.slots, self.procs, None)
    }
}

/// Resume+suspend pairs the bare-coroutine baseline may time.
pub const BASELINE_PAIRS: Limit<u64> = Limit::between("pairs", 1, 1 << 40);

/// The cheapest switch corosensei offers, with nothing around it: a resume and the matching
/// suspend of one coroutine, in ns per pair. The peer that `benches/` compares a fiber hop
/// (also one resume and one suspend) against.
pub fn baseline_switch_ns(pairs: i64) -> Result<f64> {
    let pairs = BASELINE_PAIRS.count(pairs)?;
    let stack = DefaultStack::new(STACK_BYTES).map_err(|e| {
        Error::os(
            e.raw_os_error().unwrap_or(libc::ENOMEM),
            "allocating a fiber stack",
        )
    })?;
    let mut co = Coro::with_stack(stack, |yielder: &Yielder<u32, u32>, mut v: u32| {
        while v != STOP {
            v = yielder.suspend(v);
        }
    });
    let t = std::time::Instant::now();
    let mut v = 0;
    for _ in 0..pairs {
        if let CoroutineResult::Yield(x) = co.resume(v) {
            v = wire::advance(x);
        }
    }
    let ns = t.elapsed().as_nanos() as f64 / pairs as f64;
    co.resume(STOP);
    Ok(ns)
}
