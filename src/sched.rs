//! The scheduling policy and priority every task of a ring runs under: what a caller asks
//! (`Sched`), the limits that would refuse it, checked before anything starts (`check`), and
//! `sched_setattr`/`sched_getattr` to apply it to a task and read back what the task really
//! has, so that a result records the kernel's word, not the request. Never silently another
//! policy: a task that reads back anything but what was asked fails the point.

use crate::error::{Error, Limit, Result};
use crate::placement::Placement;
use crate::transport::TransportKind;
use std::path::{Path, PathBuf};

/// A Linux scheduling policy, by the name callers give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl Policy {
    pub const ALL: [Policy; 6] = [
        Policy::Other,
        Policy::Batch,
        Policy::Idle,
        Policy::Fifo,
        Policy::Rr,
        Policy::Deadline,
    ];
    pub const NAMES: [&'static str; 6] = ["other", "batch", "idle", "fifo", "rr", "deadline"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                Error::invalid(
                    "policy",
                    format!("unknown policy {name:?}; expected one of {:?}", Self::NAMES),
                )
            })
    }

    /// The kernel's number (`SCHED_*` of sched.h).
    fn number(self) -> u32 {
        match self {
            Policy::Other => 0,
            Policy::Fifo => 1,
            Policy::Rr => 2,
            Policy::Batch => 3,
            Policy::Idle => 5,
            Policy::Deadline => 6,
        }
    }

    fn from_number(n: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.number() == n)
    }

    /// Runs ahead of every fair task, within the kernel's real-time throttle.
    pub fn realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr | Policy::Deadline)
    }

    /// Takes a static priority (1..=99); every other policy takes 0.
    pub fn prioritised(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    /// Scheduled by the fair class.
    pub fn fair(self) -> bool {
        matches!(self, Policy::Other | Policy::Batch | Policy::Idle)
    }

    /// Takes a nice: SCHED_IDLE runs at the idle weight whatever its nice, and the kernel
    /// keeps a nice asked with it aside (it would read back as the nice the task had).
    pub fn takes_nice(self) -> bool {
        matches!(self, Policy::Other | Policy::Batch)
    }
}

/// SCHED_FIFO and SCHED_RR priorities on Linux (`sched_get_priority_min/max`).
pub const PRIORITY: Limit<u64> = Limit::between("priority", 1, 99);
/// What the parameter takes at all: 0 is the priority of every other policy.
pub const ANY_PRIORITY: Limit<u64> = Limit::between("priority", 0, 99);
pub const NICE: Limit<i64> = Limit::between("nice", -20, 19);
/// SCHED_DEADLINE's runtime, and its deadline and period, in µs: the kernel takes a runtime
/// of at least 1024 ns and a period of at most `sched_deadline_period_max_us` (4 s by
/// default) and at least `sched_deadline_period_min_us` (100 µs).
pub const DL_RUNTIME_US: Limit<u64> = Limit::between("dl_runtime_us", 2, 4_000_000);
pub const DL_DEADLINE_US: Limit<u64> = Limit::between("dl_deadline_us", 100, 4_000_000);
pub const DL_PERIOD_US: Limit<u64> = Limit::between("dl_period_us", 100, 4_000_000);
/// A participant under SCHED_DEADLINE by default: 200 µs of every 1 ms (20 % of a CPU), so
/// that 8 participants and the driver fit the kernel's default bandwidth on 2 CPUs.
pub const DEFAULT_DL_RUNTIME_US: u64 = 200;
pub const DEFAULT_DL_PERIOD_US: u64 = 1000;

/// A policy with its parameters, as asked or as read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sched {
    pub policy: Policy,
    /// 1..=99 for fifo and rr, else 0.
    pub priority: u32,
    /// other's and batch's nice; 0 under the other policies.
    pub nice: i32,
    /// SCHED_DEADLINE's runtime, deadline and period in ns; zeros under the others.
    pub dl_ns: [u64; 3],
}

/// SCHED_OTHER at nice 0, as a task starts unless told otherwise.
impl Default for Sched {
    fn default() -> Self {
        Sched {
            policy: Policy::Other,
            priority: 0,
            nice: 0,
            dl_ns: [0; 3],
        }
    }
}

impl Sched {
    /// `policy` with its parameters, each checked against its policy: a priority only for
    /// fifo and rr (1 where none is given), a nice only for other and batch, runtime,
    /// deadline and period only for deadline (runtime <= deadline <= period).
    pub fn new(
        policy: Policy,
        priority: Option<i64>,
        nice: Option<i64>,
        dl_us: [Option<i64>; 3],
    ) -> Result<Self> {
        let name = policy.name();
        let priority = match (policy.prioritised(), priority) {
            (true, p) => PRIORITY.count(p.unwrap_or(1))? as u32,
            (false, None | Some(0)) => 0,
            (false, Some(p)) => {
                return Err(Error::invalid(
                    "priority",
                    format!("policy {name:?} takes no priority (only fifo and rr do), got {p}"),
                ))
            }
        };
        let nice = match (policy.takes_nice(), nice) {
            (true, n) => NICE.check(n.unwrap_or(0))? as i32,
            (false, None | Some(0)) => 0,
            (false, Some(n)) => {
                let idle = match policy {
                    Policy::Idle => ": SCHED_IDLE runs at the idle weight whatever the nice",
                    _ => "",
                };
                return Err(Error::invalid(
                    "nice",
                    format!("policy {name:?} has no nice (only other and batch do{idle}), got {n}"),
                ));
            }
        };
        Ok(Sched {
            policy,
            priority,
            nice,
            dl_ns: deadline_ns(policy, dl_us)?,
        })
    }

    /// In words, for errors and results: "fifo 10", "other nice 5", "deadline 200/1000/1000 µs".
    pub fn describe(&self) -> String {
        let name = self.policy.name();
        match self.policy {
            Policy::Fifo | Policy::Rr => format!("{name} {}", self.priority),
            Policy::Deadline => {
                let [r, d, p] = self.dl_ns.map(|ns| ns / 1000);
                format!("{name} {r}/{d}/{p} µs")
            }
            _ if self.nice != 0 => format!("{name} nice {}", self.nice),
            _ => name.to_string(),
        }
    }

    /// What of a task's read-back must equal the request: nice only where it applies.
    fn matches(&self, seen: &Sched) -> bool {
        self.policy == seen.policy
            && self.priority == seen.priority
            && (!self.policy.takes_nice() || self.nice == seen.nice)
            && self.dl_ns == seen.dl_ns
    }
}

fn deadline_ns(policy: Policy, dl_us: [Option<i64>; 3]) -> Result<[u64; 3]> {
    const NAMES: [&str; 3] = ["dl_runtime_us", "dl_deadline_us", "dl_period_us"];
    if policy != Policy::Deadline {
        if let Some(k) = dl_us.iter().position(Option::is_some) {
            return Err(Error::invalid(
                NAMES[k],
                format!(
                    "applies to policy \"deadline\" only, not {:?}",
                    policy.name()
                ),
            ));
        }
        return Ok([0; 3]);
    }
    let runtime = DL_RUNTIME_US.count(dl_us[0].unwrap_or(DEFAULT_DL_RUNTIME_US as i64))? as u64;
    let period = DL_PERIOD_US.count(dl_us[2].unwrap_or(DEFAULT_DL_PERIOD_US as i64))? as u64;
    let deadline = DL_DEADLINE_US.count(dl_us[1].unwrap_or(period as i64))? as u64;
    if !(runtime <= deadline && deadline <= period) {
        return Err(Error::invalid(
            "dl_runtime_us",
            format!(
                "SCHED_DEADLINE needs runtime <= deadline <= period, got {runtime} / \
                 {deadline} / {period} µs"
            ),
        ));
    }
    Ok([runtime * 1000, deadline * 1000, period * 1000])
}

/// `struct sched_attr` of the kernel's first version (48 bytes).
#[repr(C)]
#[derive(Default)]
struct Attr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
}

const ATTR_SIZE: u32 = std::mem::size_of::<Attr>() as u32;

/// Sets `s` on task `tid` (0: the calling thread); the errno where the kernel refuses.
pub fn set(tid: libc::pid_t, s: &Sched) -> std::result::Result<(), i32> {
    let attr = Attr {
        size: ATTR_SIZE,
        policy: s.policy.number(),
        nice: s.nice,
        priority: s.priority,
        runtime: s.dl_ns[0],
        deadline: s.dl_ns[1],
        period: s.dl_ns[2],
        ..Attr::default()
    };
    // SAFETY: a valid sched_attr of the size it states; the kernel only reads it.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, tid, &attr as *const Attr, 0u32) };
    if rc == 0 {
        Ok(())
    } else {
        Err(crate::error::errno())
    }
}

/// What task `tid` (0: the calling thread) runs under now.
pub fn get(tid: libc::pid_t) -> Result<Sched> {
    let mut attr = Attr::default();
    // SAFETY: the kernel writes at most ATTR_SIZE bytes into `attr`.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            tid,
            &mut attr as *mut Attr,
            ATTR_SIZE,
            0u32,
        )
    };
    if rc != 0 {
        return Err(Error::last_os(format!(
            "reading the scheduling policy of task {tid} (sched_getattr)"
        )));
    }
    let policy = Policy::from_number(attr.policy).ok_or_else(|| {
        Error::Peer(format!(
            "task {tid} runs under scheduling policy {}, which ctxbench does not know",
            attr.policy
        ))
    })?;
    Ok(Sched {
        policy,
        priority: attr.priority,
        nice: if policy.takes_nice() { attr.nice } else { 0 },
        // Newer kernels report a fair task's slice as its runtime: not a deadline parameter.
        dl_ns: if policy == Policy::Deadline {
            [attr.runtime, attr.deadline, attr.period]
        } else {
            [0; 3]
        },
    })
}

/// Applies `asked` (None: leave every task as it inherited) to each task, `who` naming
/// them, then reads every one back: an error naming the task where the kernel refused, or
/// where one runs under anything other than what was asked (or, with nothing asked, than the
/// first; with no task at all, the calling thread's). Returns what they all have.
pub fn apply(asked: Option<&Sched>, tasks: &[(String, libc::pid_t)]) -> Result<Sched> {
    if let Some(s) = asked {
        for (who, tid) in tasks {
            set(*tid, s).map_err(|errno| refused(errno, s, who))?;
        }
    }
    let mut common: Option<Sched> = asked.copied();
    for (who, tid) in tasks {
        let seen = get(*tid)?;
        match common {
            None => common = Some(seen),
            Some(c) if c.matches(&seen) => {}
            Some(c) => {
                return Err(Error::Peer(format!(
                    "{who} runs under {} where {} was {}; ctxbench measures one policy at a \
                     time",
                    seen.describe(),
                    c.describe(),
                    if asked.is_some() {
                        "asked"
                    } else {
                        "inherited by the others"
                    }
                )))
            }
        }
    }
    common.map_or_else(|| get(0), Ok)
}

/// `asked` applied to every participant (ring, task id) the kernel schedules, and read back:
/// what they all run under. With nothing asked, the calling thread (ring 0's driver, on its
/// point's thread) is read with them, so that the record holds what every task inherited.
pub fn participants(asked: Option<&Sched>, tasks: &[(usize, libc::pid_t)]) -> Result<Sched> {
    let mut named: Vec<(String, libc::pid_t)> = tasks
        .iter()
        .map(|&(r, tid)| (format!("a participant of ring {r} (task {tid})"), tid))
        .collect();
    if asked.is_none() {
        let driver = "the driver of ring 0 (participant 0, on the point's thread)";
        named.push((driver.into(), crate::sys::gettid()));
    }
    apply(asked, &named)
}

/// The kernel's refusal of `s` for `who`, with the limit that most likely caused it.
fn refused(errno: i32, s: &Sched, who: &str) -> Error {
    let why = match (errno, s.policy) {
        (libc::EBUSY, Policy::Deadline) => {
            "the deadline bandwidth is spent: the runtime/period of every SCHED_DEADLINE task \
             together exceeds sched_rt_runtime_us/sched_rt_period_us of each CPU \
             (/proc/sys/kernel); lower dl_runtime_us, raise dl_period_us, or run fewer procs"
        }
        (libc::EPERM, Policy::Deadline) => {
            "SCHED_DEADLINE needs CAP_SYS_NICE and a task free to run on every CPU of its \
             root domain (placement \"default\", no taskset or cpuset narrower than the machine)"
        }
        (libc::EPERM, _) => {
            "not permitted: CAP_SYS_NICE, RLIMIT_RTPRIO, RLIMIT_NICE or the cpu cgroup's \
             cpu.rt_runtime_us forbids it"
        }
        _ => "",
    };
    Error::Os {
        errno,
        context: format!("setting {} on {who} (sched_setattr)", s.describe()),
        hint: why,
    }
}

/// Applies `asked` (None: nothing) to the calling thread, checked as `apply` checks a
/// participant. Nothing puts the thread's own policy back: it is for threads that end with
/// their point (each ring's driver), never the caller's, which an unprivileged caller could
/// not raise again once lowered.
pub fn this_thread(asked: Option<&Sched>, who: &str) -> Result<()> {
    match asked {
        Some(s) => apply(Some(s), &[(who.to_string(), 0)]).map(drop),
        None => Ok(()),
    }
}

/// Moves task `tid` to SCHED_OTHER at the nice it has, before it is killed: dying takes CPU
/// time, which a task of a real-time policy waiting behind one of a higher priority never
/// gets, and one under SCHED_IDLE on a busy CPU gets a few ms of a second. Leaving a
/// real-time policy needs no privilege; leaving SCHED_IDLE needs CAP_SYS_NICE or an
/// RLIMIT_NICE of 20 - nice. False where the kernel refuses.
pub fn to_fair(tid: libc::pid_t) -> bool {
    let fair = libc::sched_param { sched_priority: 0 };
    // SAFETY: a valid sched_param; sched_setscheduler keeps the task's nice.
    unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &fair) == 0 }
}

/// Refuses what `s` cannot run with, before anything starts: a transport whose waiting
/// participants stay runnable, under a real-time policy (each would hold its CPU against the
/// watchdog and every fair task until the kernel's real-time throttle, or for good where
/// sched_rt_runtime_us is -1); and SCHED_DEADLINE on pinned tasks, which the kernel takes
/// only for tasks free to run on every CPU of their root domain.
pub fn check_run(s: &Sched, transport: TransportKind, placement: &Placement) -> Result<()> {
    if s.policy.realtime() && transport.busy_waits() {
        return Err(Error::invalid(
            "policy",
            format!(
                "transport {:?} waits by staying runnable: under {:?} its participants \
                 would starve every other task of their CPU; use a transport that sleeps \
                 (pipe, eventfd, futex, ...) or a fair policy",
                transport.name(),
                s.policy.name()
            ),
        ));
    }
    if s.policy == Policy::Deadline && !matches!(placement, Placement::Default) {
        return Err(Error::invalid(
            "placement",
            format!(
                "policy \"deadline\" needs placement \"default\": the kernel refuses \
                 SCHED_DEADLINE for a task pinned to fewer CPUs than its root domain, got \
                 {:?}",
                placement.name()
            ),
        ));
    }
    Ok(())
}

/// Refuses SCHED_DEADLINE for the CPU matrix, which pins each cell's pair to its CPUs (the
/// kernel refuses it for pinned tasks, as `check_run` says of a placement).
pub fn check_matrix(s: Option<&Sched>) -> Result<()> {
    if s.is_some_and(|s| s.policy == Policy::Deadline) {
        return Err(Error::invalid(
            "policy",
            "the matrix pins each cell's pair to its CPUs, and the kernel refuses \
             SCHED_DEADLINE for pinned tasks",
        ));
    }
    Ok(())
}

/// What decides whether a policy is permitted here, read from the machine (`Host::this`)
/// or, in tests, from fixture files.
#[derive(Debug, Clone)]
pub struct Host {
    /// Where /proc is: its `sys/kernel/sched_rt_runtime_us`, `self/cgroup`, `self/mountinfo`.
    pub proc_root: PathBuf,
    pub cap_sys_nice: bool,
    /// The soft RLIMIT_RTPRIO and RLIMIT_NICE.
    pub rtprio: u64,
    pub rlimit_nice: u64,
}

/// CAP_SYS_NICE's bit in /proc/PID/status's CapEff.
const CAP_SYS_NICE: u32 = 23;

impl Host {
    pub fn this() -> Host {
        let proc_root = PathBuf::from("/proc");
        let cap_sys_nice = std::fs::read_to_string(proc_root.join("self/status"))
            .ok()
            .and_then(|s| {
                let hex = s.lines().find_map(|l| l.strip_prefix("CapEff:"))?.trim();
                u64::from_str_radix(hex, 16).ok()
            })
            .is_some_and(|caps| caps >> CAP_SYS_NICE & 1 == 1);
        Host {
            proc_root,
            cap_sys_nice,
            rtprio: rlimit(libc::RLIMIT_RTPRIO),
            rlimit_nice: rlimit(libc::RLIMIT_NICE),
        }
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.proc_root.join(rel)).ok()
    }

    /// /proc/sys/kernel/sched_rt_runtime_us: -1 unthrottled, 0 no real-time time at all.
    fn rt_runtime_us(&self) -> Option<i64> {
        self.read("sys/kernel/sched_rt_runtime_us")?
            .trim()
            .parse()
            .ok()
    }

    /// cgroup v1's cpu.rt_runtime_us of the group this process is in, with its path; None
    /// where there is no such file (cgroup v2, or a kernel without RT group scheduling).
    fn group_rt_runtime_us(&self) -> Option<(PathBuf, i64)> {
        let cgroups = self.read("self/cgroup")?;
        let group = cgroups.lines().find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
            controllers.split(',').any(|c| c == "cpu").then_some(path)
        })?;
        let mountinfo = self.read("self/mountinfo")?;
        let dir = mountinfo.lines().find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let mut r = right.split_whitespace();
            let (fstype, _, options) = (r.next()?, r.next()?, r.next()?);
            if fstype != "cgroup" || !options.split(',').any(|o| o == "cpu") {
                return None;
            }
            let f: Vec<&str> = left.split_whitespace().collect();
            let (root, mount) = (*f.get(3)?, *f.get(4)?);
            let inside = group.strip_prefix(root).unwrap_or(group);
            Some(Path::new(mount).join(inside.trim_start_matches('/')))
        })?;
        let file = dir.join("cpu.rt_runtime_us");
        let value = std::fs::read_to_string(&file).ok()?.trim().parse().ok()?;
        Some((file, value))
    }
}

fn rlimit(resource: libc::__rlimit_resource_t) -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `r`.
    if unsafe { libc::getrlimit(resource, &mut r) } == 0 {
        r.rlim_cur
    } else {
        0
    }
}

/// Refuses `s` before any task starts where a limit of `host` would refuse it or leave it
/// no CPU time, naming the limit (`PermissionError`).
pub fn check(s: &Sched, host: &Host) -> Result<()> {
    let denied = |message: String| Error::Os {
        errno: libc::EPERM,
        context: format!("policy {}: {message}", s.describe()),
        hint: "",
    };
    if s.policy == Policy::Deadline && !host.cap_sys_nice {
        return Err(denied(
            "SCHED_DEADLINE needs CAP_SYS_NICE, which this process lacks".into(),
        ));
    }
    if s.policy.prioritised() && !host.cap_sys_nice && u64::from(s.priority) > host.rtprio {
        return Err(denied(format!(
            "priority {} needs CAP_SYS_NICE, which this process lacks, or RLIMIT_RTPRIO of \
             at least {} (it is {}; `ulimit -r` or `prlimit --rtprio` raise it)",
            s.priority, s.priority, host.rtprio
        )));
    }
    // RLIMIT_NICE allows nice down to 20 - limit without the capability.
    if s.nice < 0 && !host.cap_sys_nice && 20 - i64::from(s.nice) > host.rlimit_nice as i64 {
        return Err(denied(format!(
            "nice {} needs CAP_SYS_NICE, which this process lacks, or RLIMIT_NICE of at least \
             {} (it is {})",
            s.nice,
            20 - s.nice,
            host.rlimit_nice
        )));
    }
    if !s.policy.realtime() {
        return Ok(());
    }
    if host.rt_runtime_us() == Some(0) {
        return Err(denied(
            "/proc/sys/kernel/sched_rt_runtime_us is 0: real-time tasks get no CPU time".into(),
        ));
    }
    if let Some((file, 0)) = host.group_rt_runtime_us() {
        return Err(denied(format!(
            "{} is 0: this process's cpu cgroup gives real-time tasks no CPU time (give the \
             group a runtime, or run from a group that has one)",
            file.display()
        )));
    }
    Ok(())
}

mod holders;
pub use holders::realtime_holders;

#[cfg(test)]
mod tests;
