//! The lat_ctx engine: participants 1..n of each ring are forked processes.
//!
//! Everything a child touches (its transport ends, its CPU set, its shared slot, the work
//! array it copies on write) exists before `fork`; after it the child makes raw syscalls only
//! and leaves with `_exit`, which is what makes forking from a multi-threaded Python safe.

use super::{Group, Members, Report, Ring};
use crate::error::{Error, Result};
use crate::sys::{self, Slots};
use crate::token::{self, Driver};
use crate::transport::Transport;
use crate::workload::Workload;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub fn spawn<T: Transport>(
    procs: usize,
    size_kb: usize,
    cpus: &[Vec<Option<usize>>],
) -> Result<Group> {
    let parallel = cpus.len();
    // Ring pipes for every ring while forking, plus each driver's overhead pipes after.
    let fd_limit = sys::ensure_fds(4 * (procs * parallel) as u64)?;
    let slots = Slots::new(procs * parallel)?;
    let template = Workload::new(size_kb)?;
    let rings = (0..parallel)
        .map(|_| T::ring(procs))
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

    let mut children = Children {
        pids: Vec::with_capacity(parallel * procs),
        procs,
        slots,
        fd_limit,
        why: Mutex::new(None),
    };
    for (r, ring) in rings.iter().enumerate() {
        for (i, set) in sets[r].iter().enumerate().skip(1) {
            let slot = &children.slots[r * procs + i];
            // SAFETY: the child runs only `child` below, which makes raw syscalls and `_exit`s.
            match unsafe { libc::fork() } {
                -1 => return Err(Error::last_os(format!("fork of participant {i}"))),
                0 => child(
                    ring,
                    i,
                    procs,
                    &template,
                    slot,
                    set.as_ref(),
                    max_fd,
                    parent,
                ),
                pid => children.pids.push((r, i, pid)),
            }
        }
    }
    drop(template);
    let mut drivers: Vec<Box<dyn Ring>> = Vec::with_capacity(parallel);
    for mut ring in rings {
        ring.keep_only(0, procs);
        drivers.push(Box::new(Driver::new(ring, Workload::new(size_kb)?, procs)?));
    }
    Ok(Group {
        rings: drivers,
        members: Box::new(children),
    })
}

/// A forked participant. Never returns.
#[allow(clippy::too_many_arguments)]
fn child<T: Transport>(
    ring: &T,
    i: usize,
    n: usize,
    work: &Workload,
    slot: &sys::Slot,
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
                libc::_exit(token::EXIT_ERRNO);
            }
        }
        close_all_but(ring.fds(i, n), max_fd);
    }
    work.touch();
    slot.pid.store(
        // SAFETY: no preconditions.
        unsafe { libc::getpid() },
        std::sync::atomic::Ordering::Relaxed,
    );
    let code = token::participant(ring, i, n, work, slot);
    // SAFETY: leaving without running the parent's atexit handlers or destructors.
    unsafe { libc::_exit(code) }
}

/// Closes every descriptor above stderr except `keep`, so the child holds only its own pipe
/// ends and its death is seen by its neighbours.
unsafe fn close_all_but(mut keep: [i32; 2], max_fd: i32) {
    keep.sort_unstable();
    let mut lo = 3u32;
    for k in keep {
        let k = k as u32;
        if k > lo {
            close_range(lo, k - 1, max_fd);
        }
        lo = lo.max(k + 1);
    }
    close_range(lo, u32::MAX, max_fd);
}

unsafe fn close_range(lo: u32, hi: u32, max_fd: i32) {
    if libc::syscall(libc::SYS_close_range, lo, hi, 0) != 0 {
        // Kernels before 5.9: one close per descriptor that was open at fork time.
        for fd in lo..=hi.min(max_fd as u32) {
            libc::close(fd as i32);
        }
    }
}

struct Children {
    /// (ring, participant, pid) of every live child, in fork order.
    pids: Vec<(usize, usize, libc::pid_t)>,
    procs: usize,
    slots: Slots,
    fd_limit: Option<libc::rlim_t>,
    why: Mutex<Option<String>>,
}

impl Children {
    fn kill_all(&self) {
        for &(_, _, pid) in &self.pids {
            // SAFETY: signalling our own unreaped child (its pid cannot have been recycled).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
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
}

fn describe(status: i32) -> Option<String> {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        // SAFETY: strsignal returns a static string for any signal number.
        let name = unsafe { std::ffi::CStr::from_ptr(libc::strsignal(sig)) };
        return Some(format!(
            "was killed by signal {sig} ({})",
            name.to_string_lossy()
        ));
    }
    match libc::WEXITSTATUS(status) {
        token::EXIT_STOPPED | token::EXIT_UPSTREAM_GONE | token::EXIT_DOWNSTREAM_GONE => None,
        code => Some(format!("exited with status {code}")),
    }
}

impl Members for Children {
    fn abort(&self, why: &str) {
        let mut w = self.why.lock().unwrap_or_else(|p| p.into_inner());
        if w.is_none() {
            let stopped: Vec<String> = self
                .pids
                .iter()
                .filter(|(_, _, pid)| {
                    std::fs::read_to_string(format!("/proc/{pid}/stat"))
                        .ok()
                        .and_then(|s| {
                            s.rsplit(')')
                                .next()
                                .map(|t| t.trim_start().starts_with('T'))
                        })
                        .unwrap_or(false)
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
    }

    fn finish(mut self: Box<Self>, clean: bool) -> Report {
        let mut failure = self.why.lock().unwrap_or_else(|p| p.into_inner()).take();
        let mut statuses = vec![None; self.pids.len()];
        if !clean {
            // A dead participant takes its neighbours with it (EOF, EPIPE): give the cascade a
            // moment, so that the statuses show who went first rather than our SIGKILL.
            let deadline = Instant::now() + Duration::from_millis(200);
            while Instant::now() < deadline && statuses.iter().any(Option::is_none) {
                for (k, &(_, _, pid)) in self.pids.iter().enumerate() {
                    if statuses[k].is_none() {
                        statuses[k] = Children::reap(pid, libc::WNOHANG);
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            for (k, &(_, _, pid)) in self.pids.iter().enumerate() {
                if statuses[k].is_none() {
                    // SAFETY: our own unreaped child.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
        for (k, &(r, i, pid)) in self.pids.iter().enumerate() {
            let status = match statuses[k] {
                Some(s) => s,
                None => Children::reap(pid, 0).unwrap_or(0),
            };
            if failure.is_none() {
                if let Some(d) = describe(status) {
                    failure = Some(format!("participant {i} of ring {r} (pid {pid}) {d}"));
                }
            }
        }
        self.pids.clear();
        let parallel = self.slots.len() / self.procs;
        let slot = |r: usize, i: usize| &self.slots[r * self.procs + i];
        use std::sync::atomic::Ordering::Acquire;
        let report = Report {
            cpus: (0..parallel)
                .map(|r| {
                    (1..self.procs)
                        .map(|i| slot(r, i).cpu.load(Acquire))
                        .collect()
                })
                .collect(),
            work: (0..parallel)
                .map(|r| {
                    (1..self.procs)
                        .map(|i| {
                            (
                                slot(r, i).passes.load(Acquire),
                                slot(r, i).checksum.load(Acquire),
                            )
                        })
                        .collect()
                })
                .collect(),
            failure,
        };
        if let Some(old) = self.fd_limit.take() {
            sys::restore_fd_limit(old);
        }
        report
    }
}

/// Every path that drops the children without `finish` (an error while spawning, a panic)
/// still kills and reaps them.
impl Drop for Children {
    fn drop(&mut self) {
        self.kill_all();
        for &(_, _, pid) in &self.pids {
            Children::reap(pid, 0);
        }
        if let Some(old) = self.fd_limit.take() {
            sys::restore_fd_limit(old);
        }
    }
}
