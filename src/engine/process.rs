//! The lat_ctx engine: participants 1..n of each ring are forked processes.
//!
//! Everything a child touches (its transport, its CPU set, its shared slot, the work array it
//! copies on write) exists before `fork`; after it the child makes raw syscalls only and
//! leaves with `_exit`, which is what makes forking from a multi-threaded Python safe.

use super::{check_start, wait_ready, Group, Members, OverAnyTransport, Report, Start};
use crate::error::{Error, Result};
use crate::hops::HopLog;
use crate::memory;
use crate::sys::{self, Shared, Slot};
use crate::token::{self, Step};
use crate::transport::{Scope, Transport};
use crate::workload::Workload;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Forked processes, as lat_ctx.
pub struct Process;

impl OverAnyTransport for Process {
    const NAME: &'static str = "process";
    /// Besides the copy of the caller's page tables (`FORKS`): its task, kernel stack and the
    /// pages it writes, measured in a memory cgroup at 100-120 KiB; 256 KiB counted. (A
    /// 1 GiB caller forking 1,000 participants needs 2 GiB of page tables for them alone.)
    const PARTICIPANT_BYTES: u64 = 256 * 1024;
    const FORKS: bool = true;

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
    // Ring descriptors for every ring while forking, plus each driver's overhead ring after.
    let fd_limit = sys::ensure_fds(4 * (procs * parallel) as u64)?;
    let slots = Shared::<Slot>::new(procs * parallel)?;
    for s in slots.iter() {
        s.cpu.store(-1, Ordering::Relaxed);
        s.exit.store(-1, Ordering::Relaxed);
        s.resident_kb.store(-1, Ordering::Relaxed);
    }
    let template = Workload::new(shape)?;
    template.inherit_on_fork()?;
    let oom_kills = memory::oom_kills();
    let logs = super::hop_logs(parallel, procs, record)?;
    let mut rings = (0..parallel)
        .map(|_| T::ring(procs, Scope::Processes))
        .collect::<Result<Vec<T>>>()?;
    let sets: Vec<Vec<Option<libc::cpu_set_t>>> = cpus
        .iter()
        .map(|ring| ring.iter().map(|c| c.map(sys::cpu_set)).collect())
        .collect();
    let max_fd = std::fs::read_dir("/proc/self/fd")
        .map_err(|e| Error::os(e.raw_os_error().unwrap_or(0), "listing /proc/self/fd"))?
        .filter_map(|d| d.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .max()
        .unwrap_or(1024);
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };

    let mut pids = Vec::with_capacity(parallel * procs);
    let forked = (|| {
        for (r, ring) in rings.iter().enumerate() {
            for (i, set) in sets[r].iter().enumerate().skip(1) {
                check_start(pids.len(), &mut interrupt)?;
                let slot = &slots[r * procs + i];
                // SAFETY: the child runs only `child`, which makes raw syscalls and `_exit`s.
                match unsafe { libc::fork() } {
                    -1 => return Err(Error::last_os(format!("fork of participant {i}"))),
                    0 => child(
                        ring,
                        i,
                        procs,
                        &template,
                        slot,
                        logs[r].as_deref(),
                        set.as_ref(),
                        max_fd,
                        parent,
                    ),
                    pid => pids.push((r, i, pid)),
                }
            }
        }
        Ok(())
    })();
    drop(template);
    for ring in &mut rings {
        ring.keep_only(0, procs);
    }
    let rings: Vec<Arc<T>> = rings.into_iter().map(Arc::new).collect();
    let children = Children {
        pids,
        procs,
        slots,
        rings: rings.clone(),
        fd_limit: Some(fd_limit),
        why: Mutex::new(None),
        oom_kills,
        cascade_seen: Mutex::new(None),
    };
    forked?;
    wait_ready(&children.slots, &children, cpus, timeout, &mut interrupt)?;
    super::group(rings, logs, shape, procs, Box::new(children))
}

/// A forked participant. Never returns.
#[allow(clippy::too_many_arguments)]
fn child<T: Transport>(
    ring: &T,
    i: usize,
    n: usize,
    work: &Workload,
    slot: &Slot,
    log: Option<&HopLog>,
    cpu: Option<&libc::cpu_set_t>,
    max_fd: i32,
    parent: libc::pid_t,
) -> ! {
    // SAFETY: raw syscalls on values prepared before fork; see the module comment.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        // The parent may have died before prctl took effect.
        if libc::getppid() != parent {
            libc::_exit(token::EXIT_ERRNO);
        }
        // Ctrl-C reaches the whole process group; the caller tears the ring down itself.
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        if let Some(set) = cpu {
            if sys::set_affinity(set) != 0 {
                libc::_exit(Step::Pin.failed(slot, crate::error::errno()));
            }
        }
        close_all_but(ring.fds(i, n), max_fd);
    }
    work.touch();
    // The guard is never dropped: the child leaves through `_exit`.
    let _registered = ring.attach(i);
    slot.tid.store(sys::gettid(), Ordering::Release);
    let code = token::participant(ring, i, n, work, slot, log);
    // SAFETY: leaving without running the parent's atexit handlers or destructors.
    unsafe { libc::_exit(code) }
}

/// Closes every descriptor above stderr except `keep`, so the child holds only its own
/// inbox ends and its death is seen by its neighbours.
unsafe fn close_all_but(mut keep: [i32; 2], max_fd: i32) {
    keep.sort_unstable();
    let mut lo = 3u32;
    for k in keep {
        if k < lo as i32 {
            continue;
        }
        let k = k as u32;
        if k > lo {
            close_range(lo, k - 1, max_fd);
        }
        lo = k + 1;
    }
    close_range(lo, u32::MAX, max_fd);
}

unsafe fn close_range(lo: u32, hi: u32, max_fd: i32) {
    if libc::syscall(libc::SYS_close_range, lo, hi, 0) != 0 {
        // Kernels before 5.9: one close per descriptor that was open at fork time.
        for fd in lo..=hi.min(max_fd.max(0) as u32) {
            libc::close(fd as i32);
        }
    }
}

struct Children<T: Transport> {
    /// (ring, participant, pid) of every child, in fork order.
    pids: Vec<(usize, usize, libc::pid_t)>,
    procs: usize,
    slots: Shared<Slot>,
    rings: Vec<Arc<T>>,
    /// Dropped (the limit restored) once every child is reaped.
    fd_limit: Option<sys::FdLimit>,
    why: Mutex<Option<String>>,
    /// The machine's OOM kills before the first fork: a SIGKILL while this count rose was
    /// most likely the OOM killer's.
    oom_kills: Option<u64>,
    /// When the watchdog first saw only neighbours of a death leave (see `casualty`).
    cascade_seen: Mutex<Option<Instant>>,
}

/// How long a departure that is only a consequence (a neighbour saw EOF) may stand without
/// its cause: a participant killed outright closes its pipes before it becomes a zombie, so
/// under load its neighbour can be reaped first. The cause shows within this; if it never
/// does, the consequence is reported.
const CASCADE_GRACE: Duration = Duration::from_millis(500);

/// SIGKILL for our own unreaped child (its pid cannot have been recycled), under the
/// default policy first: dying takes CPU time, which a participant of a real-time policy
/// waiting behind a task of a higher one never gets (`sched::to_fair`).
fn kill(pid: libc::pid_t) {
    crate::sched::to_fair(pid);
    // SAFETY: signalling our own unreaped child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// `PF_EXITING` in the flags of /proc/PID/stat: the task is already on its way out.
const PF_EXITING: u64 = 0x4;

/// The fields of /proc/PID/stat after the command name: state, ppid, ..., flags (index 6).
fn stat_fields(pid: libc::pid_t) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

impl<T: Transport> Children<T> {
    /// After a failure: the statuses of the children that left within a moment (a dead
    /// participant takes its neighbours with it through EOF/EPIPE, so that they show who went
    /// first), then SIGKILL for the rest. Returns the statuses, and which children this
    /// teardown killed: their SIGKILL is ours, not the cause of anything.
    fn cascade_then_kill(&self) -> (Vec<Option<i32>>, Vec<bool>) {
        let mut statuses = vec![None; self.pids.len()];
        let mut ours = vec![false; self.pids.len()];
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline && statuses.iter().any(Option::is_none) {
            for (k, &(_, _, pid)) in self.pids.iter().enumerate() {
                if statuses[k].is_none() {
                    statuses[k] = Self::reap(pid, libc::WNOHANG);
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        for (k, &(_, _, pid)) in self.pids.iter().enumerate() {
            if statuses[k].is_none() {
                // One already dying (killed by someone else, still closing its files) keeps
                // its own cause.
                let flags = stat_fields(pid).and_then(|f| f.get(6)?.parse::<u64>().ok());
                ours[k] = flags.is_none_or(|f| f & PF_EXITING == 0);
                kill(pid);
            }
        }
        (statuses, ours)
    }

    fn kill_all(&self) {
        for &(_, _, pid) in &self.pids {
            kill(pid);
        }
    }

    /// The status of `pid` once it has exited, reaped; `None` if it has not by `deadline`.
    fn reap_by(pid: libc::pid_t, deadline: Instant) -> Option<i32> {
        let mut status = None;
        super::wait_until(deadline, || {
            status = Self::reap(pid, libc::WNOHANG);
            status.is_some()
        });
        status
    }

    fn reap(pid: libc::pid_t, flags: i32) -> Option<i32> {
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child with a valid status pointer.
            let rc = unsafe { libc::waitpid(pid, &mut status, flags) };
            if rc == pid {
                return Some(status);
            }
            if rc == -1 && crate::error::errno() == libc::EINTR {
                continue;
            }
            return None;
        }
    }

    /// Status of a child that has exited, without reaping it.
    fn peek(pid: libc::pid_t) -> Option<(i32, i32)> {
        // SAFETY: siginfo_t is plain data; waitid with WNOWAIT leaves the child reapable.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            (rc == 0 && info.si_pid() == pid).then(|| (info.si_code, info.si_status()))
        }
    }

    fn describe(&self, r: usize, i: usize, pid: libc::pid_t, status: i32) -> Option<String> {
        let what = if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            // SAFETY: strsignal returns a static string for any signal number.
            let name = unsafe { std::ffi::CStr::from_ptr(libc::strsignal(sig)) };
            let oom = match (self.oom_kills, memory::oom_kills()) {
                (Some(before), Some(now)) if sig == libc::SIGKILL && now > before => format!(
                    ": memory was short, the kernel's OOM killer ended it (oom_kill in \
                     /proc/vmstat rose from {before} to {now}; lower size_kb, procs or parallel)"
                ),
                _ => String::new(),
            };
            format!(
                "was killed by signal {sig} ({}){oom}",
                name.to_string_lossy()
            )
        } else {
            match libc::WEXITSTATUS(status) {
                token::EXIT_STOPPED | token::EXIT_UPSTREAM_GONE | token::EXIT_DOWNSTREAM_GONE => {
                    return None
                }
                token::EXIT_ERRNO => token::failure::<T>(&self.slots[r * self.procs + i]),
                code => format!("exited with status {code}"),
            }
        };
        Some(format!("participant {i} of ring {r} (pid {pid}) {what}"))
    }
}

impl<T: Transport> Members for Children<T> {
    fn tids(&self) -> Vec<(usize, libc::pid_t)> {
        super::tids(&self.slots, self.procs)
    }

    fn casualty(&self) -> Option<String> {
        // One cheap syscall per watchdog tick; the per-child scan only once someone left.
        // SAFETY: as in `peek`.
        let anyone = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_ALL,
                0,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            ) == 0
                && info.si_pid() != 0
        };
        if !anyone {
            return None;
        }
        // Leaving after STOP is the normal end; any other exit is a death or its cascade.
        let mut cascade: Option<String> = None;
        for &(r, i, pid) in &self.pids {
            let Some((code, value)) = Self::peek(pid) else {
                continue;
            };
            if code == libc::CLD_EXITED && value == token::EXIT_STOPPED {
                continue;
            }
            let status = if code == libc::CLD_EXITED {
                value << 8
            } else {
                value
            };
            match self.describe(r, i, pid, status) {
                Some(d) => return Some(d),
                None => {
                    cascade = cascade.or(Some(format!(
                        "participant {i} of ring {r} (pid {pid}) left: a neighbour is gone"
                    )))
                }
            }
        }
        let cascade = cascade?;
        let mut seen = self.cascade_seen.lock().unwrap_or_else(|p| p.into_inner());
        let since = *seen.get_or_insert_with(Instant::now);
        (since.elapsed() >= CASCADE_GRACE).then_some(cascade)
    }

    fn lost_wakeup(&self) -> Option<String> {
        super::lost_wakeups(&self.rings, &self.slots, self.procs)
    }

    fn abort(&self, why: &str) {
        let mut w = self.why.lock().unwrap_or_else(|p| p.into_inner());
        if w.is_none() {
            let stopped: Vec<String> = self
                .pids
                .iter()
                .filter(|(_, _, pid)| {
                    stat_fields(*pid).is_some_and(|f| f.first().is_some_and(|s| s == "T"))
                })
                .map(|(r, i, pid)| format!("participant {i} of ring {r} (pid {pid}) is stopped"))
                .collect();
            *w = Some(if stopped.is_empty() {
                why.to_string()
            } else {
                format!("{why}; {}", stopped.join(", "))
            });
        }
        drop(w);
        self.kill_all();
        // Transports without EOF leave the drivers waiting: hand them STOP.
        for ring in &self.rings {
            let _ = ring.stop_from_outside(0);
        }
    }

    fn finish(mut self: Box<Self>, clean: bool) -> Report {
        let mut failure = self.why.lock().unwrap_or_else(|p| p.into_inner()).take();
        let (statuses, mut ours) = if clean {
            (vec![None; self.pids.len()], vec![false; self.pids.len()])
        } else {
            self.cascade_then_kill()
        };
        let deadline = Instant::now() + super::LEAVE_BOUND;
        let killed_by = deadline + super::LEAVE_BOUND;
        let mut stuck = Vec::new();
        for (k, &(r, i, pid)) in self.pids.iter().enumerate() {
            let status = statuses[k].or_else(|| Self::reap_by(pid, deadline));
            // Told to stop and still there: the ring came down, so it goes the hard way.
            let status = status.or_else(|| {
                ours[k] = true;
                kill(pid);
                Self::reap_by(pid, killed_by)
            });
            match status {
                Some(status) if failure.is_none() && !ours[k] => {
                    failure = self.describe(r, i, pid, status);
                }
                Some(_) => {}
                None => stuck.push(format!("{i} of ring {r} (pid {pid})")),
            }
        }
        if !stuck.is_empty() && failure.is_none() {
            failure = Some(stuck_message(&stuck));
        }
        self.pids.clear();
        let report = super::report(&self.slots, self.procs, failure);
        self.fd_limit.take();
        report
    }
}

/// Participants that did not die within `LEAVE_BOUND` of SIGKILL.
fn stuck_message(stuck: &[String]) -> String {
    format!(
        "participants {} did not exit within {} s of SIGKILL and were left unreaped \
         (uninterruptible sleep? see their state in /proc)",
        stuck.join(", "),
        super::LEAVE_BOUND.as_secs()
    )
}

/// Every path that drops the children without `finish` (an error while spawning, a panic)
/// still kills and reaps them.
impl<T: Transport> Drop for Children<T> {
    fn drop(&mut self) {
        self.kill_all();
        let deadline = Instant::now() + super::LEAVE_BOUND;
        for &(_, _, pid) in &self.pids {
            Self::reap_by(pid, deadline);
        }
        self.fd_limit.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{spawn, Engine, TransportKind};
    use std::time::Duration;

    /// A transport without EOF (condvar, futex): a killed participant leaves the driver
    /// waiting, and only the watchdog's path (`casualty`, then `abort`) ends the run.
    fn killed_participant_ends_the_run(transport: TransportKind) {
        let cpus = [vec![None; 3]];
        let mut never = || false;
        let start = Start::bare(3, &cpus, &mut never);
        let Group { mut rings, members } = spawn(Engine::Process, transport, start).unwrap();
        let (_, pid) = members.tids()[0];
        // SAFETY: our own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let why = loop {
            if let Some(why) = members.casualty() {
                break why;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        assert!(why.contains("killed by signal 9"), "{why}");
        std::thread::scope(|s| {
            let driver = s.spawn(|| rings[0].trips(1000));
            std::thread::sleep(Duration::from_millis(20));
            members.abort(&why);
            let e = driver.join().unwrap().unwrap_err();
            assert!(matches!(e, Error::Peer(_)), "{e}");
        });
        drop(rings);
        let report = members.finish(false);
        assert!(report.failure.unwrap().contains("killed by signal 9"));
    }

    #[test]
    fn a_killed_participant_ends_a_condvar_ring() {
        killed_participant_ends_the_run(TransportKind::Condvar);
    }

    #[test]
    fn a_killed_participant_ends_a_futex_ring() {
        killed_participant_ends_the_run(TransportKind::Futex);
    }

    /// No EOF either: the io_uring rings outlive the dead participant, and the driver is
    /// handed STOP from outside (the caller's own ring, or its end of a pipe).
    #[test]
    fn a_killed_participant_ends_an_io_uring_or_futex2_ring() {
        for t in [
            TransportKind::MsgRing,
            TransportKind::UringFutex,
            TransportKind::FutexWaitv,
            TransportKind::UringRead,
        ] {
            killed_participant_ends_the_run(t);
        }
    }
}
