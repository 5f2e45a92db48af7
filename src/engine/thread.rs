//! The same ring made of OS threads in the calling process: participants share the address
//! space, so a hop is a thread switch without a change of page tables.

use super::{check_start, wait_ready, Group, Interrupt, Members, OverAnyTransport, Report, Start};
use crate::error::{Error, Result};
use crate::sys::{self, Shared, Slot};
use crate::token;
use crate::transport::{Scope, Transport};
use crate::workload::{Shape, Workload};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

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
        spawn::<T>(s.procs, s.shape, s.record, s.cpus, s.interrupt)
    }
}

pub fn spawn<T: Transport>(
    procs: usize,
    shape: Shape,
    record: bool,
    cpus: &[Vec<Option<usize>>],
    mut interrupt: Interrupt,
) -> Result<Group> {
    let parallel = cpus.len();
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
                    if let Some(c) = cpu {
                        if sys::set_affinity(&sys::cpu_set(c)) != 0 {
                            return token::EXIT_ERRNO;
                        }
                    }
                    let Ok(work) = Workload::new(shape) else {
                        return token::EXIT_ERRNO;
                    };
                    let _registered = ring.attach(i);
                    let slot = &slots[r * procs + i];
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
    wait_ready(&slots, &members, procs, &mut interrupt)?;
    super::group(rings, logs, shape, procs, Box::new(members))
}

struct Threads<T: Transport> {
    handles: Vec<(usize, usize, JoinHandle<i32>)>,
    procs: usize,
    slots: Arc<Shared<Slot>>,
    rings: Vec<Arc<T>>,
    why: Mutex<Option<String>>,
}

impl<T: Transport> Threads<T> {
    /// Threads cannot be killed: wake everyone with STOP instead.
    fn poison(&self) {
        for ring in &self.rings {
            ring.poison(self.procs);
        }
    }

    fn join_all(&mut self) -> Option<String> {
        let mut failure = None;
        for (r, i, h) in self.handles.drain(..) {
            let code = h.join().unwrap_or(token::EXIT_ERRNO);
            if code == token::EXIT_ERRNO && failure.is_none() {
                failure = Some(format!(
                    "participant {i} of ring {r} (thread) failed a syscall"
                ));
            }
        }
        failure
    }
}

impl<T: Transport> Members for Threads<T> {
    fn tids(&self) -> Vec<(usize, libc::pid_t)> {
        super::tids(&self.slots, self.procs)
    }

    fn casualty(&self) -> Option<String> {
        self.handles
            .iter()
            .find(|(r, i, h)| {
                h.is_finished()
                    && self.slots[r * self.procs + i].exit.load(Ordering::Acquire)
                        != token::EXIT_STOPPED
            })
            .map(|(r, i, _)| format!("participant {i} of ring {r} (thread) left mid-run"))
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
