//! Who watches the timed windows, and at what cost: the kernel's own per-task accounting read
//! at each window's edges (nothing on the timed path), perf counters in untimed evidence
//! repetitions after every timed one, or perf counters attached through the timed windows
//! (kept to show what they cost). `Watcher` is ring 0's observer.
//!
//! Why perf stays out of the timed windows: while any per-task perf event exists anywhere on
//! the machine, the kernel runs its perf hooks at every context switch (the `perf_sched_events`
//! static key), and it turns them off only one second after the last such event closed
//! (`counters::settle`). A ring measured meanwhile reads several per cent slower (docs:
//! accuracy, "The observer").

use crate::counters::{Counters, Totals};
use crate::error::{Error, Result};
use std::io::Read;
use std::time::Instant;

/// How the timed windows are observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observer {
    /// The kernel's accounting at the windows' edges; perf counters (hardware ones, where
    /// the CPU exposes them) in an untimed evidence repetition of each point after all timed
    /// windows of the run.
    Evidence,
    /// No perf event at all; the kernel's accounting still counts the windows.
    Off,
    /// perf counters attached to every task through the timed windows: what the figures
    /// read with the observer on the timed path.
    Timed,
}

impl Observer {
    pub const NAMES: [&'static str; 3] = ["evidence", "off", "timed"];

    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "evidence" => Ok(Observer::Evidence),
            "off" => Ok(Observer::Off),
            "timed" => Ok(Observer::Timed),
            _ => Err(Error::invalid(
                "counters",
                format!(
                    "must be one of {}, got {name:?}",
                    Self::NAMES.map(|n| format!("{n:?}")).join(", ")
                ),
            )),
        }
    }

    /// The observer of a measurement that reports no perf counts (a matrix cell, a cache
    /// sweep's point): the kernel's accounting is all `Evidence` has to show there, so no
    /// evidence instance, and no second of slower switches after it.
    pub fn without_evidence(self) -> Self {
        match self {
            Observer::Evidence => Observer::Off,
            other => other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Observer::Evidence => "evidence",
            Observer::Off => "off",
            Observer::Timed => "timed",
        }
    }
}

/// What the kernel counted for the observed tasks over the timed windows, and the hops they
/// made meanwhile.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Accounting {
    /// Context switches, voluntary and involuntary.
    pub switches: u64,
    /// CPU migrations, where the kernel shows them (`/proc/<tid>/sched`).
    pub migrations: Option<u64>,
    /// CPU time the tasks ran, in ns, where shown.
    pub cpu_ns: Option<u64>,
    /// Of it, user and system time (`/proc/<tid>/stat`, in clock ticks: the kernel splits
    /// the exact runtime by its tick samples), in ns.
    pub user_ns: Option<u64>,
    pub sys_ns: Option<u64>,
    /// Time the tasks waited runnable on a run queue (`/proc/<tid>/schedstat`), in ns.
    pub runq_ns: Option<u64>,
    /// Wall-clock time the windows lasted, in ns, and how many tasks were read: the CPU
    /// time and the wait are at most their product.
    pub elapsed_ns: u64,
    pub tasks: u64,
    pub hops: u64,
}

/// Two sets of windows as one.
impl std::ops::Add for Accounting {
    type Output = Accounting;

    fn add(self, other: Accounting) -> Accounting {
        let sum = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a + b);
        Accounting {
            switches: self.switches + other.switches,
            migrations: sum(self.migrations, other.migrations),
            cpu_ns: sum(self.cpu_ns, other.cpu_ns),
            user_ns: sum(self.user_ns, other.user_ns),
            sys_ns: sum(self.sys_ns, other.sys_ns),
            runq_ns: sum(self.runq_ns, other.runq_ns),
            elapsed_ns: self.elapsed_ns + other.elapsed_ns,
            tasks: self.tasks.max(other.tasks),
            hops: self.hops + other.hops,
        }
    }
}

/// CPU time and run-queue wait per hop, in µs, of every observed task together; NaN where
/// the kernel did not show it or no hop was made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerHop {
    pub cpu_us: f64,
    pub user_us: f64,
    pub sys_us: f64,
    pub runq_wait_us: f64,
}

impl Default for PerHop {
    fn default() -> Self {
        PerHop {
            cpu_us: f64::NAN,
            user_us: f64::NAN,
            sys_us: f64::NAN,
            runq_wait_us: f64::NAN,
        }
    }
}

impl Accounting {
    /// Every task's CPU time and wait over the windows, divided by the hops made in them.
    pub fn per_hop(&self) -> PerHop {
        let each = |ns: Option<u64>| match ns {
            Some(ns) if self.hops > 0 => ns as f64 / 1e3 / self.hops as f64,
            _ => f64::NAN,
        };
        PerHop {
            cpu_us: each(self.cpu_ns),
            user_us: each(self.user_ns),
            sys_us: each(self.sys_ns),
            runq_wait_us: each(self.runq_ns),
        }
    }
}

/// Every known field of a window's accounting, before its hops are counted.
fn known() -> Accounting {
    Accounting {
        migrations: Some(0),
        cpu_ns: Some(0),
        user_ns: Some(0),
        sys_ns: Some(0),
        runq_ns: Some(0),
        ..Accounting::default()
    }
}

/// One task's counts at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Sample {
    switches: u64,
    migrations: Option<u64>,
    cpu_ns: Option<u64>,
    user_ns: Option<u64>,
    sys_ns: Option<u64>,
    runq_ns: Option<u64>,
}

/// The kernel's accounting of a set of tasks over windows: read each task at a window's
/// start and end (outside the timed interval), sum the differences. A task whose counts
/// cannot be read makes the whole set unknown, with the reason: a partial sum is not a total.
pub struct Windows {
    tids: Vec<libc::pid_t>,
    start: Vec<Sample>,
    opened: Option<Instant>,
    total: Accounting,
    unavailable: Option<String>,
    buf: Vec<u8>,
}

impl Windows {
    pub fn new(tids: Vec<libc::pid_t>) -> Self {
        Windows {
            start: Vec::with_capacity(tids.len()),
            tids,
            opened: None,
            total: known(),
            unavailable: None,
            buf: Vec::with_capacity(4096),
        }
    }

    fn read_all(&mut self) -> Option<Vec<Sample>> {
        let mut out = Vec::with_capacity(self.tids.len());
        for &tid in &self.tids {
            match read_task(tid, &mut self.buf) {
                Ok(s) => out.push(s),
                Err(why) => {
                    self.unavailable.get_or_insert(why);
                    return None;
                }
            }
        }
        Some(out)
    }

    /// A window starts now.
    pub fn open(&mut self) {
        if self.unavailable.is_none() {
            self.start = self.read_all().unwrap_or_default();
            self.opened = Some(Instant::now());
        }
    }

    /// The window that `open` started ends now (its hops are the caller's to count).
    pub fn close(&mut self) {
        if self.unavailable.is_some() {
            return;
        }
        let elapsed_ns = self
            .opened
            .take()
            .map_or(0, |t| t.elapsed().as_nanos() as u64);
        let Some(end) = self.read_all() else { return };
        let mut window = Accounting {
            elapsed_ns,
            tasks: self.tids.len() as u64,
            ..known()
        };
        let add = |sum: &mut Option<u64>, a: Option<u64>, b: Option<u64>| {
            *sum = sum.zip(a.zip(b)).map(|(s, (a, b))| s + b.saturating_sub(a));
        };
        for (a, b) in self.start.iter().zip(&end) {
            window.switches += b.switches.saturating_sub(a.switches);
            add(&mut window.migrations, a.migrations, b.migrations);
            add(&mut window.cpu_ns, a.cpu_ns, b.cpu_ns);
            add(&mut window.user_ns, a.user_ns, b.user_ns);
            add(&mut window.sys_ns, a.sys_ns, b.sys_ns);
            add(&mut window.runq_ns, a.runq_ns, b.runq_ns);
        }
        self.total = self.total + window;
    }

    /// The sum over every closed window, or why the kernel's accounting could not be read.
    pub fn total(&self) -> std::result::Result<Accounting, String> {
        match &self.unavailable {
            Some(why) => Err(why.clone()),
            None => Ok(self.total),
        }
    }
}

/// What participant 0 of ring 0 tells the point's observer: where each timed window starts
/// and ends (outside the timed interval), and where the evidence repetition runs. The
/// drivers of other rings tell nobody (`Unwatched`).
pub trait Watch {
    fn window_start(&mut self) {}
    fn window_end(&mut self) {}
    fn evidence(&mut self, _on: bool) {}
}

pub struct Unwatched;

impl Watch for Unwatched {}

/// Ring 0's observer: the kernel's accounting of every observed task over the timed windows;
/// perf counters through them too where the observer is `Timed`, or over the evidence
/// repetition. The perf counters close when it drops.
pub struct Watcher<'a> {
    observer: Observer,
    tids: &'a [libc::pid_t],
    windows: Windows,
    perf: Option<Counters>,
    totals: Option<Totals>,
}

impl<'a> Watcher<'a> {
    pub fn new(observer: Observer, tids: &'a [libc::pid_t]) -> Self {
        Watcher {
            observer,
            tids,
            windows: Windows::new(tids.to_vec()),
            perf: None,
            totals: None,
        }
    }

    /// What the kernel counted over the windows, and what perf counted.
    pub fn finish(self) -> (std::result::Result<Accounting, String>, Totals) {
        (
            self.windows.total(),
            self.totals.clone().unwrap_or_default(),
        )
    }

    fn count(&mut self) {
        if let Some(c) = self.perf.as_mut() {
            let now = c.stop();
            self.totals = Some(match self.totals.take() {
                Some(before) => before + now,
                None => now,
            });
        }
    }
}

impl Watch for Watcher<'_> {
    fn window_start(&mut self) {
        self.windows.open();
        if self.observer == Observer::Timed {
            let tids = self.tids;
            self.perf
                .get_or_insert_with(|| Counters::open(tids))
                .start();
        }
    }

    fn window_end(&mut self) {
        self.count();
        self.windows.close();
    }

    fn evidence(&mut self, on: bool) {
        if on {
            self.perf.insert(Counters::open(self.tids)).start();
        } else {
            self.count();
            self.perf = None;
        }
    }
}

/// One task's switches, migrations and CPU time: `/proc/<tid>/sched` where the kernel has it,
/// else the switches of `/proc/<tid>/status`; its run-queue wait from `/proc/<tid>/schedstat`
/// and its user and system time from `/proc/<tid>/stat`, where readable.
fn read_task(tid: libc::pid_t, buf: &mut Vec<u8>) -> std::result::Result<Sample, String> {
    let mut sample = read_switches(tid, buf)?;
    if read_file(&format!("/proc/{tid}/schedstat"), buf).is_ok() {
        sample.runq_ns = parse_schedstat(buf).map(|(_, wait)| wait);
    }
    if read_file(&format!("/proc/{tid}/stat"), buf).is_ok() {
        if let Some((user, sys)) = parse_stat(buf) {
            let ns = |ticks: u64| ticks.saturating_mul(1_000_000_000) / clock_ticks();
            (sample.user_ns, sample.sys_ns) = (Some(ns(user)), Some(ns(sys)));
        }
    }
    Ok(sample)
}

fn read_switches(tid: libc::pid_t, buf: &mut Vec<u8>) -> std::result::Result<Sample, String> {
    if read_file(&format!("/proc/{tid}/sched"), buf).is_ok() {
        if let Some(s) = parse_sched(buf) {
            return Ok(s);
        }
    }
    let path = format!("/proc/{tid}/status");
    read_file(&path, buf).map_err(|e| format!("the kernel's accounting: {path}: {e}"))?;
    parse_status(buf).ok_or_else(|| format!("the kernel's accounting: {path}: no switch counts"))
}

/// Clock ticks per second, the unit of `/proc/<tid>/stat`'s times.
fn clock_ticks() -> u64 {
    // SAFETY: sysconf reads a constant of the C library; no memory is passed.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(hz).ok().filter(|&hz| hz > 0).unwrap_or(100)
}

/// `/proc/<tid>/schedstat`: ns on the CPU, ns waiting on a run queue, timeslices.
pub fn parse_schedstat(buf: &[u8]) -> Option<(u64, u64)> {
    let mut it = std::str::from_utf8(buf).ok()?.split_ascii_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// `/proc/<tid>/stat`'s fields from the third (the state) on. The command name (field 2)
/// may hold spaces and parentheses: fields are counted after its last `)`.
fn stat_fields(buf: &[u8]) -> Option<std::str::SplitAsciiWhitespace<'_>> {
    let text = std::str::from_utf8(buf).ok()?;
    Some(text.rsplit_once(')')?.1.split_ascii_whitespace())
}

/// `/proc/<tid>/stat`'s utime and stime (fields 14 and 15), in clock ticks.
fn parse_stat(buf: &[u8]) -> Option<(u64, u64)> {
    let mut it = stat_fields(buf)?.skip(11);
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// `/proc/<pid>/stat`'s start time (field 22), in clock ticks since boot: with the pid it
/// names one process, whose pid a later one may reuse.
pub fn parse_stat_start(buf: &[u8]) -> Option<u64> {
    stat_fields(buf)?.nth(19)?.parse().ok()
}

/// `/proc/<tid>/stat`'s state (field 3): R running or runnable, S sleeping, Z a zombie...
pub fn parse_stat_state(buf: &[u8]) -> Option<&str> {
    stat_fields(buf)?.next()
}

/// `/proc/<tid>/stat`'s command name (field 2), the CPU the task last ran on (39), its
/// real-time priority (40) and its policy's `SCHED_*` number (41).
pub fn parse_stat_sched(buf: &[u8]) -> Option<(&str, usize, u32, u32)> {
    let text = std::str::from_utf8(buf).ok()?;
    let comm = text.split_once('(')?.1.rsplit_once(')')?.0;
    let mut it = stat_fields(buf)?.skip(36);
    let mut next = || it.next()?.parse::<u64>().ok();
    let (cpu, priority, policy) = (next()?, next()?, next()?);
    Some((comm, cpu as usize, priority as u32, policy as u32))
}

fn read_file(path: &str, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    std::fs::File::open(path)?.read_to_end(buf).map(drop)
}

/// `name   :   value` lines of a /proc file: the value of `name`.
fn field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == name).then(|| v.trim())
    })
}

fn parse_sched(buf: &[u8]) -> Option<Sample> {
    let text = std::str::from_utf8(buf).ok()?;
    // se.sum_exec_runtime is in milliseconds with six decimals: nanoseconds exactly.
    let cpu_ns = field(text, "se.sum_exec_runtime").and_then(|v| {
        let (ms, frac) = v.split_once('.').unwrap_or((v, "0"));
        let frac = format!("{frac:0<6}");
        Some(ms.parse::<u64>().ok()? * 1_000_000 + frac.get(..6)?.parse::<u64>().ok()?)
    });
    Some(Sample {
        switches: field(text, "nr_switches")?.parse().ok()?,
        migrations: field(text, "se.nr_migrations").and_then(|v| v.parse().ok()),
        cpu_ns,
        ..Sample::default()
    })
}

fn parse_status(buf: &[u8]) -> Option<Sample> {
    let text = std::str::from_utf8(buf).ok()?;
    let count = |name| field(text, name)?.parse::<u64>().ok();
    Some(Sample {
        switches: count("voluntary_ctxt_switches")? + count("nonvoluntary_ctxt_switches")?,
        ..Sample::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn names_round_trip_and_a_wrong_one_is_named() {
        for name in Observer::NAMES {
            assert_eq!(Observer::parse(name).unwrap().as_str(), name);
        }
        let e = Observer::parse("on").unwrap_err().to_string();
        assert!(e.contains("counters") && e.contains("\"evidence\""), "{e}");
    }

    #[test]
    fn sched_and_status_are_parsed() {
        let sched = b"x (1, #threads: 1)\n---\nse.sum_exec_runtime                          :             0.214231\nse.nr_migrations                             :                    3\nnr_switches                                  :                   17\n";
        let s = parse_sched(sched).unwrap();
        assert_eq!(
            s,
            Sample {
                switches: 17,
                migrations: Some(3),
                cpu_ns: Some(214_231),
                ..Sample::default()
            }
        );
        let status = b"Name:\tx\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t2\n";
        assert_eq!(parse_status(status).unwrap().switches, 7);
        assert!(parse_sched(b"nothing: here\n").is_none());
    }

    #[test]
    fn a_window_counts_what_this_thread_did_in_it() {
        let mut w = Windows::new(vec![crate::sys::gettid()]);
        w.open();
        for _ in 0..20 {
            // Each sleep is a voluntary switch of this thread.
            std::thread::sleep(Duration::from_micros(200));
        }
        w.close();
        let total = w.total().unwrap();
        assert!(total.switches >= 20, "{total:?}");
        // Outside a window nothing is added.
        std::thread::sleep(Duration::from_millis(1));
        assert_eq!(w.total().unwrap(), total);
    }

    #[test]
    fn only_the_timed_observer_opens_perf_in_a_window() {
        let tids = [crate::sys::gettid()];
        for observer in [Observer::Evidence, Observer::Off] {
            let mut w = Watcher::new(observer, &tids);
            w.window_start();
            assert!(w.perf.is_none(), "{observer:?}");
            w.window_end();
            let (accounting, perf) = w.finish();
            assert!(
                accounting.is_ok() && perf.switches.is_none(),
                "{observer:?}"
            );
        }
        let mut w = Watcher::new(Observer::Timed, &tids);
        w.window_start();
        assert!(w.perf.is_some(), "perf counts the window");
        w.window_end();
        let (_, perf) = w.finish();
        // Where perf is permitted the window was counted by it; where not, it says why.
        assert!(perf.switches.is_some() || perf.software_unavailable.is_some());
    }

    #[test]
    fn schedstat_and_stat_are_parsed() {
        assert_eq!(
            parse_schedstat(b"140393 135665 2\n"),
            Some((140_393, 135_665))
        );
        assert_eq!(parse_schedstat(b"140393\n"), None);
        // A command name with spaces and parentheses does not shift the fields.
        let stat = b"23066 (a) b (c) R 1 2 3 0 -1 4194304 101 0 0 0 17 5 0 0 20 0 1 0 1406759\n";
        assert_eq!(parse_stat(stat), Some((17, 5)));
        assert_eq!(parse_stat(b"23066 (cat) R 1 2\n"), None);
        assert_eq!(parse_stat_state(b"23066 (a) b) R 1 2\n"), Some("R"));
        assert_eq!(parse_stat_state(b"23066 (cat\n"), None);
        let mut stat = b"23066 (a) b) R".to_vec();
        for field in 4..=41 {
            stat.extend(format!(" {}", field * 100).bytes());
        }
        assert_eq!(parse_stat_sched(&stat), Some(("a) b", 3900, 4000, 4100)));
        assert_eq!(parse_stat_sched(b"23066 (a) R 1 2"), None);
    }

    #[test]
    fn cpu_time_and_wait_are_bounded_by_the_windows() {
        let mut w = Windows::new(vec![crate::sys::gettid()]);
        w.open();
        let t = Instant::now();
        // Busy for a few clock ticks, so user time shows at tick resolution.
        while t.elapsed() < Duration::from_millis(50) {
            std::hint::black_box(t.elapsed());
        }
        w.close();
        let total = Accounting {
            hops: 10,
            ..w.total().unwrap()
        };
        assert_eq!(total.tasks, 1);
        let (cpu, runq) = (total.cpu_ns.unwrap(), total.runq_ns.unwrap());
        assert!(cpu > 0 && cpu <= total.elapsed_ns, "{total:?}");
        assert!(runq <= total.elapsed_ns, "{total:?}");
        // user and system time come in whole clock ticks, scaled by the kernel from the
        // task's lifetime samples, so neither their split nor (on a busy machine, by a few
        // ticks) their sum is the window's runtime: read, in ticks, and nothing more.
        let tick = 1_000_000_000 / clock_ticks();
        for part in [total.user_ns.unwrap(), total.sys_ns.unwrap()] {
            assert_eq!(part % tick, 0, "{total:?}");
        }
        let each = total.per_hop();
        assert_eq!(each.cpu_us, cpu as f64 / 1e3 / 10.0);
        assert!(each.runq_wait_us >= 0.0);
        let none = Accounting::default().per_hop();
        assert!(
            none.cpu_us.is_nan() && none.runq_wait_us.is_nan(),
            "no hops, no figure"
        );
    }

    #[test]
    fn a_task_that_cannot_be_read_makes_the_total_unknown() {
        let mut w = Windows::new(vec![crate::sys::gettid(), -5]);
        w.open();
        w.close();
        let why = w.total().unwrap_err();
        assert!(why.contains("/proc/-5/status"), "{why}");
    }
}
