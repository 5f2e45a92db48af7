//! Thin wrappers over the syscalls the engines share: affinity, limits, signal masks, and the
//! shared-memory slots children report through. Everything a forked child calls from here is
//! a single raw syscall (no allocation, no locks).

use crate::error::{Error, Result};
use std::mem;
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64};
use std::sync::Mutex;

/// CPUs an affinity mask can name: ids 0 to `MAX_CPUS - 1`, each once. Every list of CPUs
/// a caller gives is held to it (as `_core.MAX_CPUS` in Python, the CLI's too).
pub const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

/// CPUs this thread may run on, in ascending order.
pub fn allowed_cpus() -> Result<Vec<usize>> {
    let set = get_affinity()?;
    Ok((0..MAX_CPUS)
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

/// Rings that hold a raised RLIMIT_NOFILE, process-wide, and the soft limit before the first
/// raise: the limit comes back only when the last of them is done, whatever order they end
/// in, so that two measurements at once (threads) neither pull it from under each other nor
/// leave it raised.
struct FdRaises {
    live: usize,
    original: Option<libc::rlim_t>,
}

static FD_RAISES: Mutex<FdRaises> = Mutex::new(FdRaises {
    live: 0,
    original: None,
});

/// RLIMIT_NOFILE held raised for one user: the soft limit is restored when the last guard
/// of the process is dropped.
pub struct FdLimit(());

/// Descriptors kept free beside a ring's for the caller's own use while it runs.
const FD_SPARE: u64 = 16;

/// Makes sure `needed` more descriptors fit under RLIMIT_NOFILE beside those open now and
/// `FD_SPARE`, raising the soft limit up to the hard one if needed, until the guard is
/// dropped.
pub fn ensure_fds(needed: u64) -> Result<FdLimit> {
    let mut raises = FD_RAISES.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: rlimit is plain data.
    let mut lim: libc::rlimit = unsafe { mem::zeroed() };
    // SAFETY: valid pointer to an rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(Error::last_os("getrlimit(RLIMIT_NOFILE)"));
    }
    let open = std::fs::read_dir("/proc/self/fd").map_or(64, |d| d.count() as u64);
    let want = open + needed + FD_SPARE;
    if want > lim.rlim_cur {
        if want > lim.rlim_max {
            return Err(Error::Os {
                errno: libc::EMFILE,
                context: format!(
                    "the ring needs {needed} file descriptors beside the {open} open and \
                     {FD_SPARE} kept spare, {want} in all, but the hard limit (ulimit -Hn) is {}",
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
        raises.original.get_or_insert(old);
    }
    raises.live += 1;
    Ok(FdLimit(()))
}

impl Drop for FdLimit {
    fn drop(&mut self) {
        let mut raises = FD_RAISES.lock().unwrap_or_else(|p| p.into_inner());
        raises.live -= 1;
        if raises.live > 0 {
            return;
        }
        if let Some(old) = raises.original.take() {
            // SAFETY: plain data in and out of get/setrlimit.
            unsafe {
                let mut lim: libc::rlimit = mem::zeroed();
                if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
                    lim.rlim_cur = old;
                    libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
                }
            }
        }
    }
}

/// Blocks signals in the calling thread for the guard's lifetime. On drop it first
/// discards instances of them that are pending for this thread (our own doing: a SIGPIPE
/// from a write into a dead ring, a signal-transport token nobody consumed), then restores
/// the previous mask exactly. Threads spawned meanwhile inherit the block.
pub struct Blocked {
    set: libc::sigset_t,
    old: libc::sigset_t,
}

impl Blocked {
    /// Raw `rt_sigprocmask` underneath: safe between `fork` and `_exit`.
    pub fn new(sig: i32) -> Self {
        Self::all(&[sig])
    }

    /// The same for several signals at once.
    pub fn all(sigs: &[i32]) -> Self {
        // SAFETY: sigset manipulation on local values; pthread_sigmask affects this thread only.
        unsafe {
            let set = sigset(sigs);
            let mut old: libc::sigset_t = mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            Blocked { set, old }
        }
    }
}

/// A signal set of `sigs`, built in a local value (no allocation: safe after `fork`).
pub fn sigset(sigs: &[i32]) -> libc::sigset_t {
    // SAFETY: building a signal set in a local value.
    unsafe {
        let mut set: libc::sigset_t = mem::zeroed();
        libc::sigemptyset(&mut set);
        for &sig in sigs {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
}

impl Blocked {
    /// Keeps the signals blocked until the calling thread exits, which discards whatever is
    /// pending for it. For threads that exit right after their last hop: a token signal or
    /// STOP sent to them late, with the mask already restored, would take the default
    /// action (terminating the whole process).
    pub fn until_exit(self) {
        std::mem::forget(self);
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a zero timeout makes sigtimedwait a non-blocking poll over the signals this
        // guard blocked that were not blocked before; then the saved mask comes back.
        unsafe {
            let mut ours: libc::sigset_t = mem::zeroed();
            libc::sigemptyset(&mut ours);
            for sig in 1..=libc::SIGRTMAX() {
                if libc::sigismember(&self.set, sig) == 1 && libc::sigismember(&self.old, sig) == 0
                {
                    libc::sigaddset(&mut ours, sig);
                }
            }
            while libc::sigtimedwait(&ours, ptr::null_mut(), &zero) > 0 {}
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, ptr::null_mut());
        }
    }
}

/// Types whose all-zero bit pattern is a valid value, so they can live in fresh mappings.
///
/// # Safety
/// Implement only for types for which zeroed memory is a valid, initialised value.
pub unsafe trait Zeroed {}
// SAFETY: atomics of integers are valid when zero.
unsafe impl Zeroed for AtomicU32 {}
// SAFETY: as above.
unsafe impl Zeroed for AtomicI32 {}
// SAFETY: every field is an atomic integer.
unsafe impl Zeroed for Slot {}

/// An array in a `MAP_SHARED` anonymous mapping, created before `fork`, so that forked
/// children and the caller see the same memory (threads see it too). Elements are atomics:
/// all access goes through them.
pub struct Shared<T: Zeroed> {
    base: *mut T,
    len: usize,
}

// SAFETY: elements are atomics in shared memory; concurrent access goes through them only.
unsafe impl<T: Zeroed + Sync> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Zeroed + Sync> Sync for Shared<T> {}

impl<T: Zeroed> Shared<T> {
    pub fn new(len: usize) -> Result<Self> {
        let bytes = len.max(1) * mem::size_of::<T>();
        // SAFETY: fresh anonymous shared mapping; zero-filled memory is a valid T (Zeroed).
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
        Ok(Shared {
            base: p.cast(),
            len,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        (0..self.len).map(|i| &self[i])
    }
}

impl<T: Zeroed> std::ops::Index<usize> for Shared<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        assert!(i < self.len);
        // SAFETY: i < len, inside the mapping.
        unsafe { &*self.base.add(i) }
    }
}

impl<T: Zeroed> Drop for Shared<T> {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `new` mapped.
        unsafe { libc::munmap(self.base.cast(), self.len.max(1) * mem::size_of::<T>()) };
    }
}

/// What a participant reports back to the caller, one per participant.
#[repr(C, align(64))]
pub struct Slot {
    /// Thread id once the participant is ready (0 before).
    pub tid: AtomicI32,
    pub cpu: AtomicI32,
    pub checksum: AtomicU64,
    pub passes: AtomicU64,
    /// The participant's exit code once it has left (-1 while running).
    pub exit: AtomicI32,
    /// Voluntary and involuntary context switches of its thread over its life (rusage).
    pub nvcsw: AtomicU64,
    pub nivcsw: AtomicU64,
    /// What failed when the participant left with `EXIT_ERRNO` (a `token::Step`, 0 before),
    /// and its errno.
    pub failed_step: AtomicI32,
    pub errno: AtomicI32,
    /// KiB of its work array resident and its own once it stopped (`Workload::resident_kb`);
    /// -1 until reported, or where pagemap cannot be read.
    pub resident_kb: AtomicI64,
}

/// (voluntary, involuntary) context switches of the calling thread so far. Raw syscall.
pub fn thread_switches() -> (u64, u64) {
    // SAFETY: rusage is plain data; RUSAGE_THREAD reports on the calling thread.
    unsafe {
        let mut ru: libc::rusage = mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
        (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
    }
}

// SAFETY: AtomicU64 is valid when zero.
unsafe impl Zeroed for AtomicU64 {}

/// The calling thread's kernel id (raw syscall).
pub fn gettid() -> i32 {
    // SAFETY: no arguments.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Signal-mask guards released in reverse order, so that the mask each restores is the one
/// it saw (the first guard's, the original, comes back last).
#[derive(Default)]
pub struct Guards(pub Vec<Blocked>);

impl Guards {
    /// `Blocked::until_exit` for each.
    pub fn until_exit(mut self) {
        self.0.drain(..).for_each(Blocked::until_exit);
    }
}

impl Drop for Guards {
    fn drop(&mut self) {
        while self.0.pop().is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soft_nofile() -> libc::rlim_t {
        // SAFETY: rlimit is plain data.
        let mut lim: libc::rlimit = unsafe { mem::zeroed() };
        // SAFETY: valid pointer.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        lim.rlim_cur
    }

    #[test]
    fn the_fd_limit_stays_raised_while_any_raise_lives_and_comes_back_after_the_last() {
        let open = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
        let first = soft_nofile();
        // SAFETY: as above.
        let mut lim: libc::rlimit = unsafe { mem::zeroed() };
        // SAFETY: valid pointer.
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
        if lim.rlim_max < first + 200 {
            return; // no room to raise here; nothing to check
        }
        let a = ensure_fds(first + 50 - open).unwrap();
        let b = ensure_fds(first + 150 - open).unwrap();
        let raised = soft_nofile();
        assert!(raised > first + 150, "{raised}");
        // The first raise ends first: the second still needs its descriptors.
        drop(a);
        assert_eq!(soft_nofile(), raised);
        drop(b);
        let raises = FD_RAISES.lock().unwrap();
        if raises.live == 0 {
            assert_eq!(soft_nofile(), first, "restored once no raise lives");
        }
    }

    #[test]
    fn blocked_signals_are_drained_and_the_mask_restored() {
        let sigs = [libc::SIGRTMIN() + 3, libc::SIGSTKFLT];
        let before = Blocked::all(&[]);
        {
            let _g = Blocked::all(&sigs);
            for &s in &sigs {
                // SAFETY: signalling this thread; both signals are blocked here.
                unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), gettid(), s) };
            }
        }
        // Unblocked again, and nothing of ours is pending (it would have killed us).
        // SAFETY: reading this thread's mask and pending set into local values.
        unsafe {
            let mut mask: libc::sigset_t = mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, ptr::null(), &mut mask);
            let mut pending: libc::sigset_t = mem::zeroed();
            libc::sigpending(&mut pending);
            for &s in &sigs {
                assert_eq!(libc::sigismember(&mask, s), 0);
                assert_eq!(libc::sigismember(&pending, s), 0);
            }
        }
        drop(before);
    }
}
