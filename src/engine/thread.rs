//! The same ring made of OS threads in the calling process: participants share the address
//! space, so a hop is a thread switch without a change of page tables.

use super::{check_start, wait_ready, Group, Members, OverAnyTransport, Report, Start};
use crate::error::{Error, Result};
use crate::sys::{self, Shared, Slot};
use crate::token::{self, Step};
use crate::transport::{Scope, Transport};
use crate::workload::Workload;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// The participants' code is shallow (the work loop and a syscall); keep 10,000-thread
/// rings affordable.
const STACK_BYTES: usize = 256 * 1024;

/// OS threads of the calling process.
pub struct Thread;

impl OverAnyTransport for Thread {
    const NAME: &'static str = "thread";
    /// The touched part of its stack and its kernel stack.
    const PARTICIPANT_BYTES: u64 = 64 * 1024;

    fn spawn<T: Transport>(s: Start) -> Result<Group> {
        spawn::<T>(s)
    }
}

pub fn spawn<T: Transport>(s: Start) -> Result<Group> {
    let Start {
        procs,
        shape,
        record,
        cpus,
        timeout,
        mut interrupt,
    } = s;
    let parallel = cpus.len();
    // Each ring's inboxes and each driver's overhead ring, as for processes.
    let fd_limit = sys::ensure_fds(4 * (procs * parallel) as u64)?;
    let slots = Arc::new(Shared::<Slot>::new(procs * parallel)?);
    for s in slots.iter() {
        s.cpu.store(-1, Ordering::Relaxed);
        s.exit.store(-1, Ordering::Relaxed);
        s.resident_kb.store(-1, Ordering::Relaxed);
    }
    let rings = (0..parallel)
        .map(|_| T::ring(procs, Scope::Threads).map(Arc::new))
        .collect::<Result<Vec<_>>>()?;
    let logs = super::hop_logs(parallel, procs, record)?;
    let mut members = Threads {
        handles: Vec::with_capacity(parallel * procs),
        procs,
        slots: Arc::clone(&slots),
        rings: rings.clone(),
        why: Mutex::new(None),
        _fd_limit: fd_limit,
    };
    for (r, ring) in rings.iter().enumerate() {
        for i in 1..procs {
            check_start(members.handles.len(), &mut interrupt)?;
            let (ring, slots, cpu) = (Arc::clone(ring), Arc::clone(&slots), cpus[r][i]);
            let log = logs[r].clone();
            let handle = std::thread::Builder::new()
                .name(format!("ctxbench-{r}-{i}"))
                .stack_size(STACK_BYTES)
                .spawn(move || {
                    let slot = &slots[r * procs + i];
                    if let Some(c) = cpu {
                        if sys::set_affinity(&sys::cpu_set(c)) != 0 {
                            return Step::Pin.failed(slot, crate::error::errno());
                        }
                    }
                    let work = match Workload::new(shape) {
                        Ok(work) => work,
                        Err(e) => return Step::Setup.failed(slot, e.errno().unwrap_or(0)),
                    };
                    if let Some(registered) = ring.attach(i) {
                        registered.until_exit();
                    }
                    slot.tid.store(sys::gettid(), Ordering::Release);
                    token::participant(&*ring, i, procs, &work, slot, log.as_deref())
                })
                .map_err(|e| {
                    Error::os(
                        e.raw_os_error().unwrap_or(libc::EAGAIN),
                        format!("starting participant thread {i}"),
                    )
                })?;
            members.handles.push((r, i, handle));
        }
    }
    wait_ready(&slots, &members, cpus, timeout, &mut interrupt)?;
    super::group(rings, logs, shape, procs, Box::new(members))
}

struct Threads<T: Transport> {
    handles: Vec<(usize, usize, JoinHandle<i32>)>,
    procs: usize,
    slots: Arc<Shared<Slot>>,
    rings: Vec<Arc<T>>,
    why: Mutex<Option<String>>,
    /// Restored once the threads are joined and the rings dropped (field order: last).
    _fd_limit: sys::FdLimit,
}

impl<T: Transport> Threads<T> {
    /// Threads cannot be killed: wake everyone with STOP instead.
    fn poison(&self) {
        for ring in &self.rings {
            ring.poison(self.procs);
        }
    }

    /// Joins every participant thread, waiting at most `LEAVE_BOUND` in all: a thread that
    /// has not left by then (its wake-up was lost) is left behind, named, rather than waited
    /// for forever. It holds only `Arc`s to what it uses, so it outlives this safely.
    fn join_all(&mut self) -> Option<String> {
        let deadline = Instant::now() + super::LEAVE_BOUND;
        let mut failure = None;
        let mut stuck = Vec::new();
        for (r, i, h) in std::mem::take(&mut self.handles) {
            if !super::wait_until(deadline, || h.is_finished()) {
                stuck.push(format!("{i} of ring {r}"));
                continue;
            }
            let code = h.join().unwrap_or(token::EXIT_ERRNO);
            if code == token::EXIT_ERRNO && failure.is_none() {
                failure = Some(self.failed(r, i));
            }
        }
        if !stuck.is_empty() {
            return Some(format!(
                "participant threads {} did not leave within {} s of being told to stop and were \
                 left running (their wake-up was lost)",
                stuck.join(", "),
                super::LEAVE_BOUND.as_secs()
            ));
        }
        failure
    }

    fn failed(&self, r: usize, i: usize) -> String {
        let slot = &self.slots[r * self.procs + i];
        format!(
            "participant {i} of ring {r} (thread) {}",
            token::failure::<T>(slot)
        )
    }
}

impl<T: Transport> Members for Threads<T> {
    fn tids(&self) -> Vec<(usize, libc::pid_t)> {
        super::tids(&self.slots, self.procs)
    }

    fn casualty(&self) -> Option<String> {
        let exit = |r: usize, i: usize| self.slots[r * self.procs + i].exit.load(Ordering::Acquire);
        let gone: Vec<_> = self
            .handles
            .iter()
            .filter(|(r, i, h)| h.is_finished() && exit(*r, *i) != token::EXIT_STOPPED)
            .map(|(r, i, _)| (*r, *i))
            .collect();
        // The one that failed a syscall is the cause; its neighbours left because of it.
        match gone.iter().find(|&&(r, i)| exit(r, i) == token::EXIT_ERRNO) {
            Some(&(r, i)) => Some(self.failed(r, i)),
            None => gone
                .first()
                .map(|(r, i)| format!("participant {i} of ring {r} (thread) left mid-run")),
        }
    }

    fn lost_wakeup(&self) -> Option<String> {
        super::lost_wakeups(&self.rings, &self.slots, self.procs)
    }

    fn abort(&self, why: &str) {
        self.why
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| why.to_string());
        self.poison();
    }

    fn finish(mut self: Box<Self>, clean: bool) -> Report {
        if !clean {
            self.poison();
        }
        let why = self.why.lock().unwrap_or_else(|p| p.into_inner()).take();
        let failure = why.or(self.join_all());
        super::report(&self.slots, self.procs, failure)
    }
}

/// A thread ring never leaves a thread running: whatever path drops it joins them all.
impl<T: Transport> Drop for Threads<T> {
    fn drop(&mut self) {
        if !self.handles.is_empty() {
            self.poison();
            self.join_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::barrier::Barrier;
    use crate::ring::watchdog::watch;
    use crate::transport::pipe::Pipe;
    use crate::transport::word::{Wake, WordRing};
    use crate::transport::{Hop, HopError};
    use crate::wire::{EMPTY, STOP};
    use std::sync::atomic::{AtomicBool, AtomicU32};

    /// Pipes whose hop into participant 0's inbox fails, as a full signal queue makes
    /// `tgkill` fail: only STOP gets through.
    struct RefusesToken0(Pipe);

    impl Transport for RefusesToken0 {
        const NAME: &'static str = "refuses-0";
        fn ring(n: usize, scope: Scope) -> Result<Self> {
            Pipe::ring(n, scope).map(RefusesToken0)
        }
        fn recv(&self, i: usize) -> Hop<u32> {
            self.0.recv(i)
        }
        fn send(&self, i: usize, token: u32) -> Hop<()> {
            if i == 0 && token != STOP {
                return Err(HopError::Errno(libc::EAGAIN));
            }
            self.0.send(i, token)
        }
        fn explain(errno: i32) -> Option<&'static str> {
            (errno == libc::EAGAIN).then_some("the test's limit")
        }
    }

    #[test]
    fn a_participant_that_cannot_pin_itself_is_named_with_the_pinning_failure() {
        // No machine has the last CPU an affinity mask can name: sched_setaffinity fails.
        let cpus = [vec![None, Some(sys::MAX_CPUS - 1)]];
        let Err(e) = spawn::<Pipe>(Start::bare(2, &cpus, &mut || false)) else {
            panic!("a participant pinned to CPU {} started", sys::MAX_CPUS - 1);
        };
        let text = e.to_string();
        assert!(
            text.contains(
                "participant 1 of ring 0 (thread) could not pin itself to its CPU: Invalid \
                 argument (os error 22)"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_participant_that_fails_a_send_is_named_with_the_errno_and_its_meaning() {
        let cpus = [vec![None; 3]];
        let group = spawn::<RefusesToken0>(Start::bare(3, &cpus, &mut || false)).unwrap();
        let (mut rings, members) = (group.rings, group.members);
        std::thread::scope(|s| {
            let driver = s.spawn(|| rings[0].trips(10));
            let why = loop {
                if let Some(why) = members.casualty() {
                    break why;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            };
            assert_eq!(
                why,
                "participant 2 of ring 0 (thread) could not pass the token on: Resource \
                 temporarily unavailable (os error 11): the test's limit"
            );
            members.abort(&why);
            assert!(driver.join().unwrap().is_err());
        });
        drop(rings);
        let report = members.finish(false);
        assert!(report.failure.unwrap().contains("the test's limit"));
    }

    /// Word inboxes whose receivers sleep on a bell of their own, rung by every wake but the
    /// ones this forgets: from the third on, wakes of participant 1 are lost.
    struct Forgetful {
        bells: Vec<AtomicU32>,
        wakes: AtomicU32,
        futex: crate::transport::futex::FutexWake,
    }

    impl Wake for Forgetful {
        const NAME: &'static str = "forgetful";
        fn new(n: usize, scope: Scope) -> Result<Self> {
            Ok(Forgetful {
                bells: (0..n).map(|_| AtomicU32::new(EMPTY)).collect(),
                wakes: AtomicU32::new(0),
                futex: Wake::new(n, scope)?,
            })
        }
        fn wait(&self, i: usize, _word: &AtomicU32) -> Hop<()> {
            let bell = &self.bells[i];
            // FUTEX_WAIT sleeps while the bell is EMPTY.
            while bell.swap(EMPTY, Ordering::AcqRel) == EMPTY {
                self.futex.wait(i, bell)?;
            }
            Ok(())
        }
        fn wake(&self, i: usize, word: &AtomicU32) -> Hop<()> {
            if i == 1 && self.wakes.fetch_add(1, Ordering::Relaxed) >= 2 {
                return Ok(());
            }
            self.wake_from_outside(i, word)
        }
        fn wake_from_outside(&self, i: usize, _word: &AtomicU32) -> Hop<()> {
            self.bells[i].store(1, Ordering::Release);
            self.futex.wake(i, &self.bells[i])
        }
    }

    #[test]
    fn the_watchdog_names_a_lost_wake_up() {
        let cpus = [vec![None; 2]];
        let group = spawn::<WordRing<Forgetful>>(Start::bare(2, &cpus, &mut || false)).unwrap();
        let (mut rings, members) = (group.rings, group.members);
        let progress = [rings[0].progress()];
        let (barrier, done) = (Barrier::new(2), AtomicBool::new(false));
        let interrupted = AtomicBool::new(false);
        std::thread::scope(|s| {
            let ring = &mut rings[0];
            let driver = s.spawn(move || ring.trips(1_000_000));
            let dog = s.spawn(|| watch(&progress, 0.2, &barrier, &done, &interrupted, &*members));
            assert!(barrier.wait().is_err(), "the watchdog breaks the barrier");
            assert!(driver.join().unwrap().is_err());
            done.store(true, Ordering::Release);
            dog.thread().unpark();
            dog.join().unwrap();
        });
        drop(rings);
        let failure = members.finish(false).failure.unwrap();
        assert!(
            failure.contains(
                "no token moved for 0.2 s (timeout): a lost wake-up: participant 1 of ring 0 \
                 had the token in its inbox and slept on"
            ),
            "{failure}"
        );
    }
}
