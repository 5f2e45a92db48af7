//! Who switches. An engine starts participants 1..n of each ring somewhere (forked processes,
//! threads, fibers) and hands back one driver per ring for participant 0, which the caller
//! runs and times.

pub mod fiber;
pub mod process;
pub mod thread;

use crate::error::{Error, Result};
use crate::hops::HopLog;
use crate::sys::{Guards, Shared, Slot};
use crate::token::Driver;
use crate::transport::{Transport, WithTransport};
use crate::workload::Shape;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

// Its home is `transport`; named here too because engines and transports are chosen together.
pub use crate::transport::TransportKind;

/// Asked while a ring starts and between repetitions; true means stop now (Ctrl-C).
pub type Interrupt<'a> = &'a mut (dyn FnMut() -> bool + 'a);

/// Participants started between two questions to `Interrupt`: forking from a large parent
/// costs about a millisecond each, so a ring of thousands answers Ctrl-C within ~0.1 s.
const STARTS_PER_CHECK: usize = 64;

/// How long a teardown waits for participants to leave once told to (STOP, SIGKILL): no wait
/// is unbounded. Leaving takes one pass of the work loop and an exit; on a loaded machine
/// with thousands of participants that is well under a second.
pub(crate) const LEAVE_BOUND: Duration = Duration::from_secs(10);

/// One engine as the `engines!` table needs it; each engine's file implements it.
pub trait Switcher {
    /// The name callers give and results record.
    const NAME: &'static str;
    /// Memory one participant costs besides its work array, from measurements of this
    /// project (`memory::ring_bytes` budgets with it).
    const PARTICIPANT_BYTES: u64;
    /// Each participant is a fork, which copies the caller's page tables (about 2 MiB per GiB
    /// the caller holds) on top of `PARTICIPANT_BYTES`.
    const FORKS: bool = false;
    /// Each participant but the caller's own is a task (a process or a thread) of its own,
    /// which counts against the process limits; fibers run on the caller's thread.
    const TASKS: bool = true;
    /// The transports it can use, its default first.
    const TRANSPORTS: &'static [TransportKind];
    /// Starts the rings of `start` with `transport`, one of `TRANSPORTS`.
    fn start(transport: TransportKind, start: Start) -> Result<Group>;
}

/// An engine whose participants the kernel schedules (processes, threads): any `Transport`
/// carries its token, so this is all it implements; its `Switcher` follows (below).
pub trait OverAnyTransport {
    const NAME: &'static str;
    /// As `Switcher::PARTICIPANT_BYTES` and `Switcher::FORKS`.
    const PARTICIPANT_BYTES: u64;
    const FORKS: bool = false;
    /// Starts the rings of `start` over transport `T`.
    fn spawn<T: Transport>(start: Start) -> Result<Group>;
}

/// What every engine starts: `cpus.len()` rings of `procs` participants, `cpus[ring][i]`
/// pinning each, with a work array of `shape` and hop recording when `record`. A start in
/// which no participant registers for `timeout` seconds fails; `interrupt` ends it.
pub struct Start<'a, 'i> {
    pub procs: usize,
    pub shape: Shape,
    pub record: bool,
    pub cpus: &'a [Vec<Option<usize>>],
    pub timeout: f64,
    pub interrupt: Interrupt<'i>,
}

#[cfg(test)]
impl<'a, 'i> Start<'a, 'i> {
    /// Rings of `procs` on `cpus` with empty arrays, no hop log and the default timeout.
    pub fn bare(procs: usize, cpus: &'a [Vec<Option<usize>>], interrupt: Interrupt<'i>) -> Self {
        Start {
            procs,
            shape: Shape::every_word(0).expect("an empty array"),
            record: false,
            cpus,
            timeout: crate::config::DEFAULT_TIMEOUT,
            interrupt,
        }
    }
}

impl<E: OverAnyTransport> Switcher for E {
    const NAME: &'static str = E::NAME;
    const PARTICIPANT_BYTES: u64 = E::PARTICIPANT_BYTES;
    const FORKS: bool = E::FORKS;
    const TRANSPORTS: &'static [TransportKind] = TransportKind::BETWEEN_TASKS;

    /// `E::spawn::<T>` for the `Transport` that `transport` names.
    fn start(transport: TransportKind, start: Start) -> Result<Group> {
        struct Over<'a, 'i, E>(Start<'a, 'i>, std::marker::PhantomData<E>);
        impl<E: OverAnyTransport> WithTransport for Over<'_, '_, E> {
            type Output = Result<Group>;
            fn call<T: Transport>(self) -> Result<Group> {
                E::spawn::<T>(self.0)
            }
        }
        transport
            .dispatch(Over::<E>(start, std::marker::PhantomData))
            .unwrap_or_else(|| Err(unsupported(E::NAME, Self::TRANSPORTS, transport)))
    }
}

/// Every engine, one line each: `module::Type`, where `module` is a file of this folder and
/// `Type` implements `Switcher`. A line makes the variant `Engine::Type`, whose name, cost,
/// transports and start are the type's. The first line is the default engine.
macro_rules! engines {
    ($($module:ident :: $kind:ident),+ $(,)?) => {
        /// Who switches: one of the engines.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Engine {
            $($kind,)+
        }

        impl Engine {
            pub const ALL: &'static [Engine] = &[$(Engine::$kind),+];

            pub fn name(self) -> &'static str {
                match self {
                    $(Engine::$kind => <$module::$kind as Switcher>::NAME,)+
                }
            }

            /// Each participant is a fork of the caller (`Switcher::FORKS`).
            pub fn forks(self) -> bool {
                match self {
                    $(Engine::$kind => <$module::$kind as Switcher>::FORKS,)+
                }
            }

            /// Each participant but the caller's own is a task (`Switcher::TASKS`).
            pub fn starts_tasks(self) -> bool {
                match self {
                    $(Engine::$kind => <$module::$kind as Switcher>::TASKS,)+
                }
            }

            /// Memory one participant costs besides its work array, given the caller's
            /// page-table bytes now (`memory::page_table_bytes`), which each fork copies.
            pub fn participant_bytes(self, page_tables: u64) -> u64 {
                let fixed = match self {
                    $(Engine::$kind => <$module::$kind as Switcher>::PARTICIPANT_BYTES,)+
                };
                fixed + if self.forks() { page_tables } else { 0 }
            }

            /// The transports this engine can use, its default first.
            pub fn transports(self) -> &'static [TransportKind] {
                match self {
                    $(Engine::$kind => <$module::$kind as Switcher>::TRANSPORTS,)+
                }
            }

            fn start(self, transport: TransportKind, start: Start) -> Result<Group> {
                match self {
                    $(Engine::$kind => <$module::$kind as Switcher>::start(transport, start),)+
                }
            }
        }
    };
}

engines! {
    process::Process,
    thread::Thread,
    fiber::Fiber,
}

impl Engine {
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|e| e.name() == name)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|e| e.name()).collect();
                Error::invalid(
                    "engine",
                    format!("unknown engine {name:?}; expected one of {names:?}"),
                )
            })
    }

    /// The transport used when none is named.
    pub fn default_transport(self) -> TransportKind {
        self.transports()[0]
    }
}

/// Rejects combinations that make no sense, listing the valid ones.
pub fn check_combination(engine: Engine, transport: TransportKind) -> Result<()> {
    if engine.transports().contains(&transport) {
        Ok(())
    } else {
        Err(unsupported(engine.name(), engine.transports(), transport))
    }
}

fn unsupported(engine: &str, transports: &[TransportKind], transport: TransportKind) -> Error {
    let names: Vec<_> = transports.iter().map(|t| t.name()).collect();
    Error::invalid(
        "transport",
        format!(
            "{:?} does not work with engine {engine:?}; valid transports for it: {names:?}",
            transport.name(),
        ),
    )
}

/// Participant 0 of one ring, as the measurement loop sees it.
pub trait Ring: Send {
    /// Registers the driving thread; keep the guards until the ring is stopped.
    fn attach(&self) -> Guards;
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
    /// Trips sent round the ring, which each other participant counts on receipt; `None`
    /// where the participants are not counted apart (fibers).
    fn sent(&self) -> Option<u64> {
        None
    }
    /// KiB of participant 0's array resident and its own; `None` where pagemap is unreadable.
    fn resident_kb(&self) -> Option<u64>;
    /// Switches per-hop latency recording on or off (only the timed repetitions record).
    fn record(&self, on: bool);
    /// The ring's hop histogram (counts per `hops::Lane` and bucket, max ns), when recording.
    fn hops(&self) -> Option<(Vec<u64>, u64)>;
    /// Hops per trip that run on the driving thread: 1 (its own), or all of them for fibers.
    fn driver_hops_per_trip(&self) -> u64 {
        1
    }
}

impl<T: Transport> Ring for Driver<T> {
    fn attach(&self) -> Guards {
        Driver::attach(self)
    }
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
    fn sent(&self) -> Option<u64> {
        Some(Driver::sent(self))
    }
    fn resident_kb(&self) -> Option<u64> {
        Driver::resident_kb(self)
    }
    fn record(&self, on: bool) {
        if let Some(log) = &self.log {
            log.record(on);
        }
    }
    fn hops(&self) -> Option<(Vec<u64>, u64)> {
        self.log.as_ref().map(|l| (l.counts(), l.max_ns()))
    }
}

/// Participant 0 of each ring, once the others run: its own work array, and the rings'
/// transports and hop logs.
fn group<T: Transport>(
    rings: Vec<Arc<T>>,
    logs: Vec<Option<Arc<HopLog>>>,
    shape: Shape,
    procs: usize,
    members: Box<dyn Members>,
) -> Result<Group> {
    let mut drivers: Vec<Box<dyn Ring>> = Vec::with_capacity(rings.len());
    for (ring, log) in rings.into_iter().zip(logs) {
        let work = crate::workload::Workload::new(shape)?;
        drivers.push(Box::new(Driver::new(ring, work, procs, log)?));
    }
    Ok(Group {
        rings: drivers,
        members,
    })
}

/// One hop log per ring when recording, made before any participant starts.
fn hop_logs(parallel: usize, procs: usize, record: bool) -> Result<Vec<Option<Arc<HopLog>>>> {
    (0..parallel)
        .map(|_| record.then(|| HopLog::new(procs).map(Arc::new)).transpose())
        .collect()
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
    /// Sums over those participants of their lifetime rusage switches and their hops.
    pub voluntary: u64,
    pub involuntary: u64,
    pub passes: u64,
    /// The smallest `Slot::resident_kb` of those participants; `None` if any did not report.
    pub resident_kb: Option<u64>,
}

/// The participants an engine started, other than the drivers.
pub trait Members: Send + Sync {
    /// (ring, thread id) of every participant the kernel schedules, other than the drivers.
    fn tids(&self) -> Vec<(usize, libc::pid_t)>;
    /// A participant that left on its own mid-run, described; checked by the watchdog, so
    /// that transports without EOF (futex, signal, yield, condvar) also notice a death.
    fn casualty(&self) -> Option<String>;
    /// Participants that have the token in their inbox and sleep on: a lost wake-up, named
    /// for the watchdog when a ring stops moving. `None` when there is none to see.
    fn lost_wakeup(&self) -> Option<String> {
        None
    }
    /// Unblocks everyone at once; the drivers then see their peers gone. `why` explains it.
    fn abort(&self, why: &str);
    /// Waits for every participant to leave (forcing them unless `clean`) and reports.
    fn finish(self: Box<Self>, clean: bool) -> Report;
}

pub struct Group {
    pub rings: Vec<Box<dyn Ring>>,
    pub members: Box<dyn Members>,
}

/// Starts the rings of `start` with `engine` and `transport`. `Config::validate` checks the
/// combination first; here an unsupported one is the same error.
pub fn spawn(engine: Engine, transport: TransportKind, start: Start) -> Result<Group> {
    check_combination(engine, transport)?;
    engine.start(transport, start)
}

/// Polls `done` until it holds or `deadline` passes, sleeping a little longer each time (from
/// 20 µs to 2 ms): cheap when participants leave at once, bounded when they never do.
fn wait_until(deadline: Instant, mut done: impl FnMut() -> bool) -> bool {
    let mut pause = Duration::from_micros(20);
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(2));
    }
}

/// Between starting participants: `Interrupted` every `STARTS_PER_CHECK` participants if
/// Ctrl-C came.
fn check_start(started: usize, interrupt: &mut Interrupt) -> Result<()> {
    if started % STARTS_PER_CHECK == 0 && interrupt() {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// How often a start that waits for its participants asks `interrupt`.
const ASK_EVERY: Duration = Duration::from_millis(100);

/// Waits until every participant other than the drivers has registered in its slot (so
/// that, e.g., the signal transport knows every thread id before the first token); the
/// participants of ring `r` run on `cpus[r]`. Ends with Ctrl-C, a participant that left, or
/// `timeout` seconds in which none registered, which names why one may not have started.
fn wait_ready(
    slots: &Shared<Slot>,
    members: &dyn Members,
    cpus: &[Vec<Option<usize>>],
    timeout: f64,
    interrupt: &mut Interrupt,
) -> Result<()> {
    let procs = cpus.first().map_or(1, Vec::len);
    let waiting = || -> Vec<usize> {
        let others = slots.iter().enumerate().filter(|(k, _)| k % procs != 0);
        others
            .filter(|(_, s)| s.tid.load(Ordering::Acquire) == 0)
            .map(|(k, _)| k)
            .collect()
    };
    let mut left = waiting();
    let (mut since, mut asked) = (Instant::now(), Instant::now());
    let mut pause = Duration::from_micros(20);
    while let Some(&k) = left.first() {
        if let Some(why) = members.casualty() {
            return Err(Error::Peer(format!("while starting the ring: {why}")));
        }
        if asked.elapsed() >= ASK_EVERY {
            if interrupt() {
                return Err(Error::Interrupted);
            }
            asked = Instant::now();
        }
        if since.elapsed().as_secs_f64() > timeout {
            let (r, i) = (k / procs, k % procs);
            return Err(not_started(r, i, cpus[r][i], timeout));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(2));
        let now = waiting();
        if now.len() < left.len() {
            since = Instant::now();
        }
        left = now;
    }
    Ok(())
}

/// Participant `i` of ring `r` (pinned to `cpu`, if any) did not register within `timeout`
/// seconds: what may hold its CPU, where a task of a real-time policy does.
fn not_started(r: usize, i: usize, cpu: Option<usize>, timeout: f64) -> Error {
    let cpus = match cpu {
        Some(c) => vec![c],
        None => crate::sys::allowed_cpus().unwrap_or_default(),
    };
    let holders = crate::sched::realtime_holders(&cpus);
    let why = if holders.is_empty() {
        "it never ran far enough to register (stopped, or starved of CPU time)".to_string()
    } else {
        format!(
            "a task of a real-time policy holds its CPU: {}; it keeps fair tasks, and \
             real-time ones of no higher priority, off that CPU until it blocks",
            holders.join(", ")
        )
    };
    Error::Peer(format!(
        "participant {i} of ring {r} did not start within {timeout} s (timeout): {why}"
    ))
}

/// The scheduler state of a task ('S' sleeping, 'T' stopped, 'R' running), from /proc.
fn task_state(tid: libc::pid_t) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/stat")).ok()?;
    text.rsplit_once(')')?
        .1
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

/// `Members::lost_wakeup` for rings whose participants registered in `slots`: each inbox
/// holding a token whose owner sleeps ('S', or participant 0, which the caller runs).
fn lost_wakeups<T: Transport>(
    rings: &[Arc<T>],
    slots: &Shared<Slot>,
    procs: usize,
) -> Option<String> {
    let mut lost = Vec::new();
    for (r, ring) in rings.iter().enumerate() {
        for i in 0..procs {
            if !ring.pending(i) {
                continue;
            }
            let tid = slots[r * procs + i].tid.load(Ordering::Acquire);
            let state = if i == 0 { Some('S') } else { task_state(tid) };
            if state == Some('S') {
                lost.push(format!("participant {i} of ring {r}"));
            }
        }
    }
    (!lost.is_empty()).then(|| {
        format!(
            "a lost wake-up: {} had the token in its inbox and slept on",
            lost.join(", ")
        )
    })
}

/// (ring, tid) of the participants registered in `slots`, participant 0 excluded.
fn tids(slots: &Shared<Slot>, procs: usize) -> Vec<(usize, libc::pid_t)> {
    slots
        .iter()
        .enumerate()
        .filter(|(k, _)| k % procs != 0)
        .map(|(k, s)| (k / procs, s.tid.load(Ordering::Acquire)))
        .collect()
}

/// What the participants left in their slots, participant 0 of each ring excluded.
fn report(slots: &Shared<Slot>, procs: usize, failure: Option<String>) -> Report {
    let rings = slots.len() / procs;
    let slot = |r: usize, i: usize| &slots[r * procs + i];
    let members = || {
        slots
            .iter()
            .enumerate()
            .filter(|(k, _)| k % procs != 0)
            .map(|(_, s)| s)
    };
    Report {
        voluntary: members().map(|s| s.nvcsw.load(Ordering::Acquire)).sum(),
        involuntary: members().map(|s| s.nivcsw.load(Ordering::Acquire)).sum(),
        passes: members().map(|s| s.passes.load(Ordering::Acquire)).sum(),
        resident_kb: members()
            .map(|s| u64::try_from(s.resident_kb.load(Ordering::Acquire)).ok())
            .try_fold(u64::MAX, |low, kb| Some(low.min(kb?)))
            .filter(|_| slots.len() > rings),
        cpus: (0..rings)
            .map(|r| {
                (1..procs)
                    .map(|i| slot(r, i).cpu.load(Ordering::Acquire))
                    .collect()
            })
            .collect(),
        work: (0..rings)
            .map(|r| {
                (1..procs)
                    .map(|i| {
                        let s = slot(r, i);
                        (
                            s.passes.load(Ordering::Acquire),
                            s.checksum.load(Ordering::Acquire),
                        )
                    })
                    .collect()
            })
            .collect(),
        failure,
    }
}

#[cfg(test)]
mod tests;
