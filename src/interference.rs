//! Calibrated interference: neighbour processes started before a ring instance on the CPUs
//! its participants may run on, so that a switch is measured on a CPU that is not idle
//! around it. CPU-bound hogs run a duty cycle, a thrasher walks a private buffer line by
//! line, a neighbour ring bounces a byte between two processes over pipes, and queued tasks
//! spin under SCHED_IDLE: they lengthen the run queue the scheduler picks from at every
//! switch while taking as little of the CPU as the kernel lets them (Gooch 1998 measured
//! the switch against run-queue length this way, with the switching pair real-time). What
//! they achieved (CPU time over the span the ring measured, how many queued tasks were
//! still runnable at its end, the thrasher's resident KiB) is read from /proc by the caller
//! before and after the ring is driven, never inside a timed window.
//! Neighbours are fair tasks: a real-time caller's policy, which the ring inherits, is not
//! theirs (one of the ring's priority would hold its CPU until it blocks, and the ring could
//! not start): they run under SCHED_OTHER at the caller's nice, queued tasks under
//! SCHED_IDLE; a fair caller's policy is theirs too.
//! Every neighbour is prepared before `fork` and makes raw syscalls only after it; each is
//! killed and reaped when its `Neighbours` drops, on every path (an error, an interrupt, a
//! hung ring); PR_SET_PDEATHSIG takes it down if the caller dies first.

use crate::error::{Error, Result};
use crate::fields::record;
use std::time::{Duration, Instant};

/// CPU-bound hogs at most: a few per CPU of a large placement.
pub const HOGS_MAX: u64 = 64;
/// Neighbour rings (two processes each) at most.
pub const RINGS_MAX: u64 = 16;
/// Queued SCHED_IDLE tasks at most: a run queue 64 deep is past any a pick searches today
/// (the fair class's tree is O(log n)), and each is a fork of the caller.
pub const QUEUED_MAX: u64 = 64;
/// The thrasher's buffer at most, in KiB: 1 GiB is past any last-level cache.
pub const THRASH_KB_MAX: u64 = 1 << 20;
/// The hogs' duty cycle by default: always running.
pub const DEFAULT_DUTY: f64 = 1.0;
/// One hog period: long against a hop, short against a timed repetition, so that every
/// repetition sees the asked fraction of interference.
pub const PERIOD_NS: u64 = 10_000_000;
/// Bytes the thrasher steps by: one cache line.
const LINE: usize = 64;
/// How long a neighbour killed with SIGKILL may take to be reaped.
const REAP_BOUND: Duration = Duration::from_secs(2);
/// The same where a queued task is still under SCHED_IDLE when killed: dying takes CPU time,
/// and on a CPU busy with other work such a task gets a few ms of it a second.
const QUEUED_REAP_BOUND: Duration = Duration::from_secs(30);

record! {
    /// What interference a ring asked for, every key resolved (as a record says it).
    #[derive(Copy, PartialEq)]
    pub struct Interference as "InterferenceAskedDict" {
        pub hogs: usize = "min=0",
        /// Fraction of each period every hog spins, in (0, 1].
        pub duty: f64 = "min=0",
        pub thrash_kb: usize = "min=0",
        pub rings: usize = "min=0",
        /// Runnable SCHED_IDLE spinners: run-queue length without a fair share of the CPU.
        pub queued: usize = "min=0 optional",
    }
}

/// The keys `interference=` takes: the record's fields, in its order.
pub fn keys() -> Vec<&'static str> {
    Interference::FIELDS.iter().map(|f| f.name).collect()
}

impl Interference {
    /// The interference `pairs` (key, number) name: every key one of `keys()`, each at most
    /// once, each in its range; a ValueError naming `interference`, the key and the range.
    pub fn from_pairs(pairs: &[(String, f64)]) -> Result<Self> {
        let mut asked = Interference {
            hogs: 0,
            duty: DEFAULT_DUTY,
            thrash_kb: 0,
            rings: 0,
            queued: 0,
        };
        for (k, (key, value)) in pairs.iter().enumerate() {
            if pairs[..k].iter().any(|(earlier, _)| earlier == key) {
                return Err(invalid(format!("{key:?} is given twice")));
            }
            let value = *value;
            match key.as_str() {
                "hogs" => asked.hogs = count(key, value, HOGS_MAX)?,
                "rings" => asked.rings = count(key, value, RINGS_MAX)?,
                "queued" => asked.queued = count(key, value, QUEUED_MAX)?,
                "thrash_kb" => asked.thrash_kb = count(key, value, THRASH_KB_MAX)?,
                "duty" if value > 0.0 && value <= 1.0 => asked.duty = value,
                "duty" => {
                    return Err(invalid(format!(
                        "\"duty\" must be > 0 and <= 1 (a fraction of each {} ms period), \
                         got {value}",
                        PERIOD_NS / 1_000_000
                    )))
                }
                _ => {
                    return Err(invalid(format!(
                        "unknown key {key:?}; expected some of {:?}",
                        keys()
                    )))
                }
            }
        }
        Ok(asked)
    }

    /// No neighbour at all.
    pub fn is_empty(&self) -> bool {
        self.hogs == 0 && self.thrash_kb == 0 && self.rings == 0 && self.queued == 0
    }

    /// The processes it starts.
    pub fn tasks(&self) -> usize {
        self.hogs + usize::from(self.thrash_kb > 0) + 2 * self.rings + self.queued
    }
}

fn invalid(message: String) -> Error {
    Error::invalid("interference", message)
}

fn count(key: &str, value: f64, max: u64) -> Result<usize> {
    if value.fract() == 0.0 && value >= 0.0 && value <= max as f64 {
        Ok(value as usize)
    } else {
        Err(invalid(format!(
            "{key:?} must be an integer between 0 and {max}, got {value}"
        )))
    }
}

/// A hog's duty schedule: ns spinning, then ns asleep, in each period.
pub fn schedule(duty: f64) -> (u64, u64) {
    let spin = ((duty.clamp(0.0, 1.0) * PERIOD_NS as f64).round() as u64).min(PERIOD_NS);
    (spin, PERIOD_NS - spin)
}

/// Which neighbour a process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Hog,
    Thrasher,
    /// One of neighbour ring k's two processes.
    Ring(usize),
    Queued,
}

/// What a forked neighbour runs until it is killed.
#[derive(Clone, Copy)]
enum Body {
    /// ns spinning and ns asleep per period.
    Hog(u64, u64),
    /// The shared buffer and its bytes.
    Thrash(*mut u8, usize),
    /// Inbox, outbox, and whether it sends first.
    Bounce(i32, i32, bool),
    /// Spins forever under SCHED_IDLE.
    Queued,
}

impl Body {
    fn run(self) -> ! {
        match self {
            Body::Hog(spin, sleep) => hog(spin, sleep),
            Body::Thrash(base, len) => thrash(base, len),
            Body::Bounce(inbox, outbox, first) => bounce(inbox, outbox, first),
            Body::Queued => queued(),
        }
    }
}

/// What the neighbours achieved over the span the ring was measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Achieved {
    /// Seconds between the two readings.
    pub span_s: f64,
    /// Each hog's CPU time over the span / the span (NaN where /proc did not show it).
    pub hog_duty: Vec<f64>,
    /// The thrasher's CPU time over the span / the span, and the KiB of its buffer resident.
    pub thrash_duty: Option<f64>,
    pub thrash_resident_kb: Option<u64>,
    /// Each neighbour ring's two processes' CPU time over the span / the span.
    pub ring_duty: Vec<f64>,
    /// Each queued task's CPU time over the span / the span.
    pub queued_duty: Vec<f64>,
    /// How many queued tasks were runnable (state R) at the span's end: all of them, unless
    /// one died. The kernel's run-queue wait (schedstat) is no proof: it is counted only
    /// when a task next runs, and a queued task under a real-time ring may never run.
    pub queued_runnable: usize,
}

impl Achieved {
    /// Two spans of the same neighbours as one: each figure weighted by its span, the
    /// smaller resident footprint.
    pub fn merge(&self, other: &Achieved) -> Achieved {
        let span = self.span_s + other.span_s;
        let mean = |a: f64, b: f64| {
            if span > 0.0 {
                (a * self.span_s + b * other.span_s) / span
            } else {
                f64::NAN
            }
        };
        let each = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(&a, &b)| mean(a, b)).collect();
        Achieved {
            span_s: span,
            hog_duty: each(&self.hog_duty, &other.hog_duty),
            thrash_duty: self
                .thrash_duty
                .zip(other.thrash_duty)
                .map(|(a, b)| mean(a, b)),
            thrash_resident_kb: self
                .thrash_resident_kb
                .zip(other.thrash_resident_kb)
                .map(|(a, b)| a.min(b)),
            ring_duty: each(&self.ring_duty, &other.ring_duty),
            queued_duty: each(&self.queued_duty, &other.queued_duty),
            queued_runnable: self.queued_runnable.min(other.queued_runnable),
        }
    }
}

/// The running neighbours; killed and reaped on drop.
pub struct Neighbours {
    pids: Vec<(Role, libc::pid_t)>,
    /// The thrasher's buffer: shared, so that its residency is seen from here (`mincore`).
    buffer: Option<(*mut libc::c_void, usize)>,
    /// When the span began, with every neighbour's CPU ns then.
    mark: Option<(Instant, Vec<Option<u64>>)>,
    /// Each neighbour leaves the caller's policy for SCHED_OTHER (a real-time caller's).
    fair: bool,
}

// SAFETY: the buffer pointer is only unmapped by the owner and read by `mincore`.
unsafe impl Send for Neighbours {}

impl Neighbours {
    /// Forks `asked`'s neighbours pinned to `cpus` (empty: as this thread may run). An
    /// OSError (or, for the buffer, a MemoryError) with a hint where one cannot be started;
    /// whoever did start is killed and reaped first.
    pub fn start(asked: &Interference, cpus: &[usize]) -> Result<Self> {
        let mut set: libc::cpu_set_t = crate::sys::get_affinity()?;
        if !cpus.is_empty() {
            // SAFETY: plain data; CPU ids come from the placement, below CPU_SETSIZE.
            unsafe { libc::CPU_ZERO(&mut set) };
            for &c in cpus {
                // SAFETY: as above.
                unsafe { libc::CPU_SET(c, &mut set) };
            }
        }
        let mut n = Neighbours {
            pids: Vec::with_capacity(asked.tasks()),
            buffer: None,
            mark: None,
            fair: !crate::sched::get(0)?.policy.fair(),
        };
        let (spin, sleep) = schedule(asked.duty);
        for _ in 0..asked.hogs {
            n.fork(Role::Hog, &set, &[], Body::Hog(spin, sleep))?;
        }
        if asked.thrash_kb > 0 {
            let len = asked.thrash_kb * 1024;
            let base = map_buffer(len)?;
            n.buffer = Some((base, len));
            n.fork(Role::Thrasher, &set, &[], Body::Thrash(base.cast(), len))?;
        }
        for _ in 0..asked.queued {
            n.fork(Role::Queued, &set, &[], Body::Queued)?;
        }
        for k in 0..asked.rings {
            let (a, b) = (pipe()?, pipe()?);
            let fds = [a[0], a[1], b[0], b[1]];
            let forked = n
                .fork(Role::Ring(k), &set, &fds, Body::Bounce(b[0], a[1], true))
                .and_then(|()| n.fork(Role::Ring(k), &set, &fds, Body::Bounce(a[0], b[1], false)));
            for fd in fds {
                // SAFETY: our own descriptors; the children hold their copies.
                unsafe { libc::close(fd) };
            }
            forked?;
        }
        Ok(n)
    }

    /// Forks one neighbour running `body`, which never returns. `keep`: descriptors it holds.
    fn fork(&mut self, role: Role, set: &libc::cpu_set_t, keep: &[i32], body: Body) -> Result<()> {
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        let mut all = crate::sys::sigset(&[]);
        // SAFETY: filling a local signal set.
        unsafe { libc::sigfillset(&mut all) };
        // SAFETY: the child makes raw syscalls on values prepared before fork and `_exit`s.
        match unsafe { libc::fork() } {
            -1 => Err(Error::Os {
                errno: crate::error::errno(),
                context: format!("starting an interference neighbour ({role:?})"),
                hint: "ask fewer hogs, rings or queued tasks, or raise the process limit (`ulimit -u`)",
            }),
            0 => {
                // SAFETY: raw syscalls only, on values prepared before fork.
                unsafe {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != parent {
                        libc::_exit(1);
                    }
                    // Ctrl-C reaches the whole process group; the caller kills us itself.
                    libc::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
                    if crate::sys::set_affinity(set) != 0 {
                        libc::_exit(2);
                    }
                    // Lowering one's own policy needs no privilege; sched_setscheduler
                    // keeps the nice inherited.
                    let policy = match role {
                        Role::Queued => Some(libc::SCHED_IDLE),
                        _ if self.fair => Some(libc::SCHED_OTHER),
                        _ => None,
                    };
                    let param = libc::sched_param { sched_priority: 0 };
                    if policy.is_some_and(|p| libc::sched_setscheduler(0, p, &param) != 0) {
                        libc::_exit(4);
                    }
                    close_all_but(keep);
                }
                body.run()
            }
            pid => {
                self.pids.push((role, pid));
                Ok(())
            }
        }
    }

    /// Begins the span: every neighbour's CPU time now.
    pub fn mark(&mut self) {
        self.mark = Some((Instant::now(), self.cpu_ns()));
    }

    /// What the neighbours achieved since `mark`.
    pub fn achieved(&self) -> Achieved {
        let Some((t0, before)) = &self.mark else {
            return Achieved::default();
        };
        let span = t0.elapsed().as_secs_f64();
        let duty: Vec<(Role, f64)> = self
            .pids
            .iter()
            .zip(before.iter().zip(self.cpu_ns()))
            .map(|(&(role, _), (b, a))| {
                let d = match (b, a) {
                    (Some(b), Some(a)) if span > 0.0 => a.saturating_sub(*b) as f64 / 1e9 / span,
                    _ => f64::NAN,
                };
                (role, d)
            })
            .collect();
        let of =
            |role: Role| -> Vec<f64> { duty.iter().filter(|d| d.0 == role).map(|d| d.1).collect() };
        let mut ring_duty: Vec<f64> = Vec::new();
        for &(role, d) in &duty {
            if let Role::Ring(k) = role {
                ring_duty.resize(ring_duty.len().max(k + 1), 0.0);
                ring_duty[k] += d;
            }
        }
        Achieved {
            span_s: span,
            hog_duty: of(Role::Hog),
            thrash_duty: duty.iter().find(|(r, _)| *r == Role::Thrasher).map(|x| x.1),
            thrash_resident_kb: self.buffer.and_then(|(base, len)| resident_kb(base, len)),
            ring_duty,
            queued_duty: of(Role::Queued),
            queued_runnable: self
                .pids
                .iter()
                .filter(|&&(role, pid)| role == Role::Queued && runnable(pid))
                .count(),
        }
    }

    /// Each neighbour's CPU ns so far, from /proc/<pid>/schedstat.
    fn cpu_ns(&self) -> Vec<Option<u64>> {
        self.pids.iter().map(|&(_, pid)| cpu_ns(pid)).collect()
    }

    /// The neighbours' pids, in the order they were started.
    pub fn pids(&self) -> Vec<libc::pid_t> {
        self.pids.iter().map(|p| p.1).collect()
    }
}

impl Drop for Neighbours {
    fn drop(&mut self) {
        // Queued tasks back under the default policy first, where this process may raise
        // them (CAP_SYS_NICE, or an RLIMIT_NICE of 20), so that they die at once however
        // busy their CPU is: under two CPU hogs, SCHED_IDLE ones outlived a 2 s wait.
        let mut bound = REAP_BOUND;
        for &(role, pid) in &self.pids {
            if role == Role::Queued && !crate::sched::to_fair(pid) {
                bound = QUEUED_REAP_BOUND;
            }
        }
        for &(_, pid) in &self.pids {
            // SAFETY: our own child, not reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let deadline = Instant::now() + bound;
        for &(_, pid) in &self.pids {
            let mut status = 0;
            loop {
                // SAFETY: waiting for our own child with a valid status pointer.
                let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
                let again = rc == 0 || (rc == -1 && crate::error::errno() == libc::EINTR);
                if !again || Instant::now() > deadline {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        self.pids.clear();
        if let Some((base, len)) = self.buffer.take() {
            // SAFETY: our own mapping; its only other user, the thrasher, is gone.
            unsafe { libc::munmap(base, len) };
        }
    }
}

/// CPU ns a task has run, from /proc/<pid>/schedstat.
fn cpu_ns(pid: libc::pid_t) -> Option<u64> {
    let text = std::fs::read(format!("/proc/{pid}/schedstat")).ok()?;
    crate::observer::parse_schedstat(&text).map(|(ran, _)| ran)
}

/// Whether a task is running or on a run queue: its /proc/<pid>/stat state is R.
fn runnable(pid: libc::pid_t) -> bool {
    std::fs::read(format!("/proc/{pid}/stat"))
        .is_ok_and(|t| crate::observer::parse_stat_state(&t) == Some("R"))
}

fn map_buffer(len: usize) -> Result<*mut libc::c_void> {
    crate::memory::check(
        len as u64,
        &format!("the interference thrasher's {} KiB buffer", len / 1024),
    )?;
    // SAFETY: a fresh anonymous shared mapping.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(Error::Os {
            errno: crate::error::errno(),
            context: format!(
                "mapping the interference thrasher's {} KiB buffer",
                len / 1024
            ),
            hint: "lower thrash_kb, or raise the memory limit",
        });
    }
    Ok(p)
}

/// KiB of the buffer resident now.
fn resident_kb(base: *mut libc::c_void, len: usize) -> Option<u64> {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: our own mapping of `len` bytes; `vec` holds one byte per page.
    let rc = unsafe { libc::mincore(base, len, vec.as_mut_ptr()) };
    (rc == 0).then(|| vec.iter().filter(|&&b| b & 1 == 1).count() as u64 * page as u64 / 1024)
}

fn pipe() -> Result<[i32; 2]> {
    let mut fds = [0; 2];
    // SAFETY: a valid two-int array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::last_os("a pipe for an interference ring"));
    }
    Ok(fds)
}

/// Closes every descriptor above stderr but `keep` (at most four).
unsafe fn close_all_but(keep: &[i32]) {
    let mut sorted = [i32::MAX; 4];
    sorted[..keep.len()].copy_from_slice(keep);
    sorted.sort_unstable();
    let mut lo = 3u32;
    for &k in &sorted {
        if k == i32::MAX || k < lo as i32 {
            continue;
        }
        if k as u32 > lo {
            libc::syscall(libc::SYS_close_range, lo, k as u32 - 1, 0);
        }
        lo = k as u32 + 1;
    }
    libc::syscall(libc::SYS_close_range, lo, u32::MAX, 0);
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec; vDSO or syscall.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Spins `spin` ns, sleeps `sleep` ns, forever; each period ends at a fixed deadline, so
/// that a hog preempted mid-spin does not make up for it.
fn hog(spin: u64, sleep: u64) -> ! {
    let mut start = now_ns();
    loop {
        while now_ns() < start + spin {
            std::hint::spin_loop();
        }
        start += spin + sleep;
        if sleep > 0 {
            let ts = libc::timespec {
                tv_sec: (start / 1_000_000_000) as libc::time_t,
                tv_nsec: (start % 1_000_000_000) as libc::c_long,
            };
            // SAFETY: a valid absolute deadline; EINTR only ends the sleep early.
            unsafe {
                libc::clock_nanosleep(
                    libc::CLOCK_MONOTONIC,
                    libc::TIMER_ABSTIME,
                    &ts,
                    std::ptr::null_mut(),
                )
            };
        }
        let now = now_ns();
        if now > start + PERIOD_NS {
            // Far behind (it was not scheduled): start the next period now.
            start = now;
        }
    }
}

/// Spins forever: always runnable, so always on its run queue (its policy, set after fork,
/// keeps it from a fair share of the CPU).
fn queued() -> ! {
    loop {
        std::hint::spin_loop();
    }
}

/// Writes one byte per line of the buffer, forever.
fn thrash(base: *mut u8, len: usize) -> ! {
    let mut pass = 0u8;
    loop {
        pass = pass.wrapping_add(1);
        let mut off = 0;
        while off < len {
            // SAFETY: inside the shared mapping of `len` bytes made before fork.
            unsafe { base.add(off).write_volatile(pass) };
            off += LINE;
        }
    }
}

/// One side of a neighbour ring: the first sends first; each reads a byte and sends it on.
fn bounce(inbox: i32, outbox: i32, first: bool) -> ! {
    let mut byte = [1u8];
    // SAFETY: raw reads and writes on descriptors held since before fork.
    unsafe {
        if first && libc::write(outbox, byte.as_ptr().cast(), 1) != 1 {
            libc::_exit(3);
        }
        loop {
            if libc::read(inbox, byte.as_mut_ptr().cast(), 1) != 1
                || libc::write(outbox, byte.as_ptr().cast(), 1) != 1
            {
                libc::_exit(3);
            }
        }
    }
}

#[cfg(test)]
#[path = "interference_tests.rs"]
mod tests;
