//! Thin wrappers over the syscalls the engines share: affinity, limits, signal masks, and the
//! shared-memory slots children report through. Everything a forked child calls from here is
//! a single raw syscall (no allocation, no locks).

use crate::error::{Error, Result};
use std::mem;
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// CPUs this thread may run on, in ascending order.
pub fn allowed_cpus() -> Result<Vec<usize>> {
    let set = get_affinity()?;
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET only reads the set.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

pub fn get_affinity() -> Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the size matches the set.
    let rc = unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(Error::last_os("sched_getaffinity"));
    }
    Ok(set)
}

pub fn cpu_set(cpu: usize) -> libc::cpu_set_t {
    // SAFETY: as above; CPU_SET writes one bit inside the set (cpu < CPU_SETSIZE checked by callers).
    unsafe {
        let mut set: libc::cpu_set_t = mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    }
}

/// Pins the calling thread (or, after `fork`, the child). Raw syscall: async-signal-safe.
pub fn set_affinity(set: &libc::cpu_set_t) -> i32 {
    // SAFETY: pid 0 is the calling thread; the set is a valid cpu_set_t.
    unsafe { libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), set) }
}

/// The CPU the calling thread is on now (-1 if unknown).
pub fn current_cpu() -> i32 {
    // SAFETY: no arguments; vDSO or syscall.
    unsafe { libc::sched_getcpu() }
}

/// Makes sure `needed` more descriptors fit under RLIMIT_NOFILE, raising the soft limit up to
/// the hard one if needed. Returns the previous soft limit when it was raised.
pub fn ensure_fds(needed: u64) -> Result<Option<libc::rlim_t>> {
    // SAFETY: rlimit is plain data.
    let mut lim: libc::rlimit = unsafe { mem::zeroed() };
    // SAFETY: valid pointer to an rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(Error::last_os("getrlimit(RLIMIT_NOFILE)"));
    }
    let open = std::fs::read_dir("/proc/self/fd").map_or(64, |d| d.count() as u64);
    let want = open + needed + 16;
    if want <= lim.rlim_cur {
        return Ok(None);
    }
    if want > lim.rlim_max {
        return Err(Error::Os {
            errno: libc::EMFILE,
            context: format!(
                "the ring needs {needed} file descriptors but the hard limit (ulimit -Hn) is {}",
                lim.rlim_max
            ),
            hint: "lower procs/parallel or raise the hard RLIMIT_NOFILE",
        });
    }
    let old = lim.rlim_cur;
    lim.rlim_cur = want;
    // SAFETY: valid rlimit, soft <= hard.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(Error::last_os("raising RLIMIT_NOFILE"));
    }
    Ok(Some(old))
}

pub fn restore_fd_limit(old: libc::rlim_t) {
    // SAFETY: plain data in and out of get/setrlimit.
    unsafe {
        let mut lim: libc::rlimit = mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur = old;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// Blocks SIGPIPE in the calling thread for its lifetime, so a write into a pipe whose reader
/// died returns EPIPE instead of killing the caller. Threads spawned meanwhile inherit the mask.
pub struct SigpipeBlocked {
    old: libc::sigset_t,
}

impl SigpipeBlocked {
    pub fn new() -> Self {
        // SAFETY: sigset manipulation on local values; pthread_sigmask affects this thread only.
        unsafe {
            let mut set: libc::sigset_t = mem::zeroed();
            let mut old: libc::sigset_t = mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            SigpipeBlocked { old }
        }
    }
}

impl Drop for SigpipeBlocked {
    fn drop(&mut self) {
        // SAFETY: as in `new`; a zero timeout makes sigtimedwait a non-blocking poll that
        // discards the SIGPIPEs our own writes raised, before the old mask comes back.
        unsafe {
            let mut set: libc::sigset_t = mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            if libc::sigismember(&self.old, libc::SIGPIPE) == 0 {
                while libc::sigtimedwait(&set, ptr::null_mut(), &zero) == libc::SIGPIPE {}
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, ptr::null_mut());
        }
    }
}

/// Per-participant slots in a `MAP_SHARED` mapping, created before `fork`: the only channel
/// through which a child reports back (its pid, the CPU it ran on, its checksum).
pub struct Slots {
    base: *mut Slot,
    len: usize,
}

#[repr(C, align(64))]
pub struct Slot {
    pub pid: AtomicI32,
    pub cpu: AtomicI32,
    pub checksum: AtomicU64,
    pub passes: AtomicU64,
}

// SAFETY: slots are atomics in shared memory; concurrent access goes through them only.
unsafe impl Send for Slots {}
// SAFETY: as above.
unsafe impl Sync for Slots {}

impl Slots {
    pub fn new(len: usize) -> Result<Self> {
        let bytes = len.max(1) * mem::size_of::<Slot>();
        // SAFETY: fresh anonymous shared mapping; zero-filled memory is a valid Slot.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::last_os("mapping shared memory for the participants"));
        }
        let s = Slots {
            base: p.cast(),
            len,
        };
        for i in 0..len {
            s[i].cpu.store(-1, Ordering::Relaxed);
        }
        Ok(s)
    }
}

impl Slots {
    pub fn len(&self) -> usize {
        self.len
    }
}

impl std::ops::Index<usize> for Slots {
    type Output = Slot;
    fn index(&self, i: usize) -> &Slot {
        assert!(i < self.len);
        // SAFETY: i < len, inside the mapping.
        unsafe { &*self.base.add(i) }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `new` mapped.
        unsafe { libc::munmap(self.base.cast(), self.len.max(1) * mem::size_of::<Slot>()) };
    }
}
