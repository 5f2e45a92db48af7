//! perf counters on every participant: software ones (context switches, CPU migrations) and,
//! where the CPU and hypervisor expose them, hardware ones (cycles, instructions, misses).
//! They are the observer of an evidence repetition, or of the timed windows where asked
//! (`observer`); after one closes, `settle` keeps the next timed window out of the second the
//! kernel's perf hooks stay on. Built on `perf-event2`, a maintained binding of
//! perf_event_open.
//!
//! Counting must include the kernel: a context switch happens in kernel mode, so a
//! user-only counter (all that perf_event_paranoid=2 allows an unprivileged user) reads 0.
//! Such a counter is reported unavailable, with the reason, never as zero.

use crate::error::{Error, Result};
use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Software};
use perf_event::{Builder, Counter, Group};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Totals over the window between `start` and `stop`, for all observed tasks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub switches: Option<u64>,
    pub migrations: Option<u64>,
    pub cycles: Option<u64>,
    pub instructions: Option<u64>,
    /// Last-level cache misses and data-TLB read misses, where the CPU counts them.
    pub cache_misses: Option<u64>,
    pub dtlb_misses: Option<u64>,
    /// Why software counters are missing (`None` when present).
    pub software_unavailable: Option<String>,
    /// Why hardware counters are missing.
    pub hardware_unavailable: Option<String>,
}

/// Two windows' totals as one (a count is known only where both are).
impl std::ops::Add for Totals {
    type Output = Totals;

    fn add(self, other: Totals) -> Totals {
        let sum = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a + b);
        Totals {
            switches: sum(self.switches, other.switches),
            migrations: sum(self.migrations, other.migrations),
            cycles: sum(self.cycles, other.cycles),
            instructions: sum(self.instructions, other.instructions),
            cache_misses: sum(self.cache_misses, other.cache_misses),
            dtlb_misses: sum(self.dtlb_misses, other.dtlb_misses),
            software_unavailable: self.software_unavailable.or(other.software_unavailable),
            hardware_unavailable: self.hardware_unavailable.or(other.hardware_unavailable),
        }
    }
}

impl Totals {
    /// Nothing counted, for the reason given.
    pub fn unavailable(why: &str) -> Totals {
        Totals {
            software_unavailable: Some(why.to_string()),
            hardware_unavailable: Some(why.to_string()),
            ..Totals::default()
        }
    }
}

/// Whether this CPU and hypervisor let this process count cycles, kernel side included:
/// asked once per process (the asking opens and closes one counter on this thread).
pub fn hardware() -> std::result::Result<(), String> {
    static HARDWARE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    HARDWARE
        .get_or_init(|| {
            let probe = Builder::new(Hardware::CPU_CYCLES)
                .observe_self()
                .any_cpu()
                .include_kernel()
                .build();
            match probe {
                Ok(counter) => {
                    drop(counter);
                    perf_closed();
                    Ok(())
                }
                Err(e) => Err(reason("hardware counters", &e)),
            }
        })
        .clone()
}

/// How long the kernel keeps its perf hooks on the context-switch path after the last
/// per-task event closed (one second, `HZ` jiffies, from a delayed work item), with a margin
/// for that work item to run.
pub const HOOKS_LINGER: Duration = Duration::from_millis(1100);

/// When the last perf event this process opened on a task closed.
static LAST_PERF_CLOSE: Mutex<Option<Instant>> = Mutex::new(None);

/// Remembers that a perf event of ours on a task closed just now.
pub fn perf_closed() {
    *LAST_PERF_CLOSE.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
}

/// Waits, before a timed window, until the hooks our last perf event turned on are off again
/// (nothing when none of ours closed in the last `HOOKS_LINGER`). Returns the seconds waited;
/// checks `interrupt` every 50 ms.
pub fn settle(interrupt: &mut dyn FnMut() -> bool) -> Result<f64> {
    let last = *LAST_PERF_CLOSE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(closed) = last else { return Ok(0.0) };
    let start = Instant::now();
    while closed.elapsed() < HOOKS_LINGER {
        if interrupt() {
            return Err(Error::Interrupted);
        }
        std::thread::sleep((HOOKS_LINGER - closed.elapsed()).min(Duration::from_millis(50)));
    }
    Ok(start.elapsed().as_secs_f64())
}

struct Task {
    software: Option<(Group, Counter, Counter)>,
    hardware: Option<(Group, Counter, Counter)>,
    memory: Option<(Group, Counter, Counter)>,
}

pub struct Counters {
    tasks: Vec<Task>,
    start: Vec<[u64; 6]>,
    software_unavailable: Option<String>,
    hardware_unavailable: Option<String>,
    memory_unavailable: Option<String>,
}

fn reason(what: &str, e: &std::io::Error) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            let kind = crate::host::restrictions::Kind::PerfParanoid;
            format!(
                "{what}: not permitted (restriction {}: kernel.perf_event_paranoid = \
                 {paranoid}; counting kernel-side events needs <= 1 or CAP_PERFMON): {}",
                kind.name(),
                kind.hint()
            )
        }
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
            format!("{what}: not supported by this CPU or hypervisor")
        }
        Some(libc::ENOSYS) => format!("{what}: perf_event_open is not available (seccomp?)"),
        _ => format!("{what}: {e}"),
    }
}

fn pair(tid: libc::pid_t, a: Builder, b: Builder) -> std::io::Result<(Group, Counter, Counter)> {
    let mut group = Group::builder()
        .observe_pid(tid)
        .any_cpu()
        .include_kernel()
        .build_group()?;
    let mut open = |mut e: Builder| {
        e.observe_pid(tid)
            .any_cpu()
            .include_kernel()
            .build_with_group(&mut group)
    };
    let (x, y) = (open(a)?, open(b)?);
    group.enable()?;
    Ok((group, x, y))
}

impl Counters {
    /// Opens counters on every task (thread ids). Never fails: what cannot be opened is
    /// recorded with its reason, and the first failure stops further attempts of that kind.
    pub fn open(tids: &[libc::pid_t]) -> Self {
        let mut c = Counters {
            tasks: Vec::with_capacity(tids.len()),
            start: Vec::new(),
            software_unavailable: None,
            hardware_unavailable: None,
            memory_unavailable: None,
        };
        // After the first refusal of a kind, trying again per task would only cost syscalls.
        let attempt = |unavailable: &mut Option<String>, what, tid, a, b| {
            if unavailable.is_some() {
                return None;
            }
            pair(tid, a, b)
                .map_err(|e| *unavailable = Some(reason(what, &e)))
                .ok()
        };
        for &tid in tids {
            let software = attempt(
                &mut c.software_unavailable,
                "software counters",
                tid,
                Builder::new(Software::CONTEXT_SWITCHES),
                Builder::new(Software::CPU_MIGRATIONS),
            );
            let hardware = attempt(
                &mut c.hardware_unavailable,
                "hardware counters",
                tid,
                Builder::new(Hardware::CPU_CYCLES),
                Builder::new(Hardware::INSTRUCTIONS),
            );
            // Cache and TLB misses only where cycles could be counted: without hardware
            // counters at all, one reason says why for both.
            let memory = if hardware.is_some() {
                attempt(
                    &mut c.memory_unavailable,
                    "cache and dTLB miss counters",
                    tid,
                    Builder::new(Hardware::CACHE_MISSES),
                    Builder::new(Cache {
                        which: CacheId::DTLB,
                        operation: CacheOp::READ,
                        result: CacheResult::MISS,
                    }),
                )
            } else {
                None
            };
            c.tasks.push(Task {
                software,
                hardware,
                memory,
            });
        }
        c
    }

    /// Descriptors each observed task costs (for the RLIMIT_NOFILE budget).
    pub const FDS_PER_TASK: u64 = 9;

    fn read(&mut self) -> Vec<[u64; 6]> {
        let read = |g: &mut Option<(Group, Counter, Counter)>| -> Option<(u64, u64)> {
            let (group, a, b) = g.as_mut()?;
            let data = group.read().ok()?;
            Some((data.get(a)?.value(), data.get(b)?.value()))
        };
        self.tasks
            .iter_mut()
            .map(|t| {
                let (s0, s1) = read(&mut t.software).unwrap_or((0, 0));
                let (h0, h1) = read(&mut t.hardware).unwrap_or((0, 0));
                let (m0, m1) = read(&mut t.memory).unwrap_or((0, 0));
                [s0, s1, h0, h1, m0, m1]
            })
            .collect()
    }

    pub fn start(&mut self) {
        self.start = self.read();
    }

    /// Whether any counter is open on any task.
    fn any_open(&self) -> bool {
        self.tasks
            .iter()
            .any(|t| t.software.is_some() || t.hardware.is_some() || t.memory.is_some())
    }

    pub fn stop(&mut self) -> Totals {
        let end = self.read();
        let mut sum = [0u64; 6];
        for (a, b) in self.start.iter().zip(&end) {
            for k in 0..6 {
                sum[k] += b[k].saturating_sub(a[k]);
            }
        }
        // A partial set (some tasks opened, a later one refused) is not a total: drop it.
        let sw = self.software_unavailable.is_none() && !self.tasks.is_empty();
        let hw = self.hardware_unavailable.is_none() && !self.tasks.is_empty();
        let mem = hw && self.memory_unavailable.is_none();
        Totals {
            switches: sw.then_some(sum[0]),
            migrations: sw.then_some(sum[1]),
            cycles: hw.then_some(sum[2]),
            instructions: hw.then_some(sum[3]),
            cache_misses: mem.then_some(sum[4]),
            dtlb_misses: mem.then_some(sum[5]),
            software_unavailable: self.software_unavailable.clone(),
            hardware_unavailable: self
                .hardware_unavailable
                .clone()
                .or_else(|| self.memory_unavailable.clone()),
        }
    }
}

impl Drop for Counters {
    fn drop(&mut self) {
        if self.any_open() {
            // The counters close right after this, with the fields' own drops.
            perf_closed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settle_waits_out_the_hooks_after_a_close() {
        perf_closed();
        let t = Instant::now();
        assert!(settle(&mut || false).unwrap() > 0.0);
        assert!(t.elapsed() >= HOOKS_LINGER - Duration::from_millis(50));
        perf_closed();
        assert_eq!(settle(&mut || true).unwrap_err(), Error::Interrupted);
    }
}
