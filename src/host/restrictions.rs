//! What a container, a batch node or a locked-down kernel takes away from a benchmark, each
//! restriction named once here with what it stops and what to do (`Kind::name`,
//! `Kind::hint`): `ctxbench info` and every result's metadata name them, and the features
//! they refuse quote them.
//!
//! The host is read from its description root (`Host`): the live machine (`/sys`, `/proc`,
//! `/boot`, and a probe of `io_uring_setup` where it can be asked), or a described one under
//! `CTXBENCH_SYSFS=ROOT`, whose `/proc` and `/boot` files are `ROOT/proc/...` and
//! `ROOT/boot/...` (a sysfs tree has no such directories) and whose groups are read at its
//! root unless `ROOT/proc/self/cgroup` says otherwise.

use crate::error::Error;
use crate::topology;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A kind of restriction: its name, and what it stops with what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Cpuset,
    CpuQuota,
    CgroupReadOnly,
    PerfParanoid,
    IoUringRefused,
    NoKernelConfig,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Cpuset,
        Kind::CpuQuota,
        Kind::CgroupReadOnly,
        Kind::PerfParanoid,
        Kind::IoUringRefused,
        Kind::NoKernelConfig,
    ];

    /// The name `ctxbench info`, the metadata and every refusal use.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cpuset => "cpuset",
            Kind::CpuQuota => "cpu_quota",
            Kind::CgroupReadOnly => "cgroup_read_only",
            Kind::PerfParanoid => "perf_event_paranoid",
            Kind::IoUringRefused => "io_uring_refused",
            Kind::NoKernelConfig => "no_kernel_config",
        }
    }

    /// What it does to a run, and what to do about it.
    pub fn hint(self) -> &'static str {
        match self {
            Kind::Cpuset => {
                "placements use only the CPUs the cpuset allows, and on one CPU every switch \
                 is a switch on that CPU: give the container more CPUs (docker run \
                 --cpuset-cpus) to measure across CPUs"
            }
            Kind::CpuQuota => {
                "a participant the quota throttles stalls for the rest of the period: a run \
                 that was throttled is flagged 'throttled', its figure is not a switch's; \
                 measure without a quota (docker run without --cpus; cpu.max 'max')"
            }
            Kind::CgroupReadOnly => {
                "the cgroups axis cannot make its groups: run where the cgroup file system is \
                 writable (a privileged container, or a delegated cgroup v2 subtree)"
            }
            Kind::PerfParanoid => {
                "perf counters (switches, migrations, cycles) are reported unavailable, never \
                 as zero, and the kernel's accounting counts switches instead: sysctl \
                 kernel.perf_event_paranoid=1, or grant CAP_PERFMON"
            }
            Kind::IoUringRefused => {
                "the io_uring transports (msg_ring, uring_futex, uring_read) are refused \
                 before anything starts: choose another (eventfd, futex), or allow \
                 io_uring (sysctl kernel.io_uring_disabled=0; a seccomp profile that permits \
                 io_uring_setup)"
            }
            Kind::NoKernelConfig => {
                "the kernel's build options (its preemption model, where debugfs is not \
                 mounted) are recorded as unknown: load the configs module (modprobe \
                 configs) or make the host's /boot readable"
            }
        }
    }
}

/// One restriction found, with what was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Restriction {
    pub kind: Kind,
    pub detail: String,
}

impl Restriction {
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    pub fn hint(&self) -> &'static str {
        self.kind.hint()
    }

    /// "name: detail", as a refusal quotes it.
    pub fn describe(&self) -> String {
        format!("{}: {}", self.name(), self.detail)
    }
}

/// A restriction as it is said: its name, what was read, what to do.
impl serde::Serialize for Restriction {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("Restriction", 3)?;
        out.serialize_field("name", self.name())?;
        out.serialize_field("detail", &self.detail)?;
        out.serialize_field("hint", self.hint())?;
        out.end()
    }
}

/// Where a host's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub sys: PathBuf,
    pub proc: PathBuf,
    pub boot: PathBuf,
    /// This machine: its syscalls can be probed and its process's capabilities count.
    pub live: bool,
}

impl Host {
    /// The host `sysfs` describes: the live one where it is `/sys`, else a described one.
    pub fn at(sysfs: &Path) -> Host {
        let live = std::fs::canonicalize(sysfs).is_ok_and(|p| p == Path::new(super::LIVE_SYSFS));
        let (proc, boot) = match live {
            true => (PathBuf::from("/proc"), PathBuf::from("/boot")),
            false => (sysfs.join("proc"), sysfs.join("boot")),
        };
        Host {
            sys: sysfs.to_path_buf(),
            proc,
            boot,
            live,
        }
    }

    /// A host whose /proc and /boot are where given (a copied tree's); live where these are
    /// this machine's `/sys` and `/proc`.
    pub fn with_roots(sys: &Path, proc: &Path, boot: &Path) -> Host {
        let live = Host::at(sys).live
            && std::fs::canonicalize(proc).is_ok_and(|p| p == Path::new("/proc"));
        Host {
            sys: sys.to_path_buf(),
            proc: proc.to_path_buf(),
            boot: boot.to_path_buf(),
            live,
        }
    }

    /// The host `sysfs` describes (None: `sysfs_root()`'s), its /proc and /boot where given
    /// (else the live ones for `/sys`, else under `sysfs`).
    pub fn given(sysfs: Option<&Path>, proc: Option<&Path>, boot: Option<&Path>) -> Host {
        let at = sysfs.map_or_else(Host::this, Host::at);
        Host::with_roots(&at.sys, proc.unwrap_or(&at.proc), boot.unwrap_or(&at.boot))
    }

    /// The host `sysfs_root()` describes.
    pub fn this() -> Host {
        Host::at(&super::sysfs_root())
    }

    fn read(&self, path: &Path) -> Option<String> {
        read_small(path)
    }

    fn proc_file(&self, rel: &str) -> Option<String> {
        self.read(&self.proc.join(rel))
    }
}

/// A regular file's text, trimmed; `None` for anything else (a FIFO would hang the read).
fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return None;
    }
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Every restriction `host` is under, in `Kind::ALL`'s order.
pub fn detect(host: &Host) -> Vec<Restriction> {
    let found = [
        cpuset(host),
        quota(host).map(|q| q.detail()),
        read_only_cgroups(host),
        perf_paranoid(host),
        io_uring(host),
        kernel_config(host),
    ];
    Kind::ALL
        .into_iter()
        .zip(found)
        .filter_map(|(kind, detail)| detail.map(|detail| Restriction { kind, detail }))
        .collect()
}

/// The restriction of `kind` on `host`, if it is under it.
pub fn find(host: &Host, kind: Kind) -> Option<Restriction> {
    detect(host).into_iter().find(|r| r.kind == kind)
}

fn cpuset(host: &Host) -> Option<String> {
    let t = topology::read(&host.sys).ok()?;
    let online = t.online();
    let set = t.cpuset.as_ref()?;
    let allowed: Vec<usize> = online.iter().copied().filter(|c| set.contains(c)).collect();
    (allowed.len() < online.len()).then(|| {
        format!(
            "our cgroup's cpuset allows {} of the {} online CPUs ({})",
            allowed.len(),
            online.len(),
            cpu_list(&allowed)
        )
    })
}

/// "0-3,8", as the kernel prints a CPU list.
fn cpu_list(ids: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(match i == j {
            true => ids[i].to_string(),
            false => format!("{}-{}", ids[i], ids[j]),
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The groups this process is in, per hierarchy: (cgroup v2's path, cgroup v1 cpu's path),
/// each "/" where the host does not say.
fn memberships(host: &Host) -> (String, String) {
    let text = host.proc_file("self/cgroup").unwrap_or_default();
    let find = |pick: &dyn Fn(&str, &str) -> bool| {
        text.lines()
            .find_map(|line| {
                let mut f = line.splitn(3, ':');
                let (id, controllers, path) = (f.next()?, f.next()?, f.next()?);
                pick(id, controllers).then(|| path.to_string())
            })
            .unwrap_or_else(|| "/".into())
    };
    (
        find(&|id, c| id == "0" && c.is_empty()),
        find(&|_, c| c.split(',').any(|x| x == "cpu")),
    )
}

/// `path` and each of its ancestors up to the root of `base`, innermost first.
fn chain(base: &Path, path: &str) -> Vec<PathBuf> {
    let mut dirs = vec![base.to_path_buf()];
    let mut dir = base.to_path_buf();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        dir.push(part);
        dirs.push(dir.clone());
    }
    dirs.reverse();
    dirs
}

/// Every group directory of this process that may hold a CPU limit: its v2 group and the
/// ancestors (at `fs/cgroup`, or `fs/cgroup/unified` where v1 and v2 are mounted side by
/// side), then its v1 cpu group and the ancestors; each directory once.
fn cpu_groups(host: &Host) -> Vec<(bool, PathBuf)> {
    let (v2, v1) = memberships(host);
    let cg = host.sys.join("fs/cgroup");
    let mut seen = BTreeSet::new();
    let v2_dirs = ["", "unified"].map(|b| (true, cg.join(b), &v2));
    let v1_dirs = ["cpu", "cpu,cpuacct", "cpuacct,cpu"].map(|b| (false, cg.join(b), &v1));
    let mut groups = Vec::new();
    for (is_v2, base, path) in v2_dirs.into_iter().chain(v1_dirs) {
        for dir in chain(&base, path) {
            let key = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
            if dir.is_dir() && seen.insert(key) {
                groups.push((is_v2, dir));
            }
        }
    }
    groups
}

/// `e`, a refusal a restriction of `kind` may explain (a placement beyond the cpuset), with
/// that restriction of this machine named where it is under one.
pub fn naming(e: Error, kind: Kind) -> Error {
    match (e, find(&Host::at(Path::new(super::LIVE_SYSFS)), kind)) {
        (Error::Invalid { param, message }, Some(r)) => Error::Invalid {
            param,
            message: format!("{message} (restriction {})", r.describe()),
        },
        (e, _) => e,
    }
}

/// A CPU bandwidth limit: the tightest on this process's groups.
#[derive(Debug, Clone, PartialEq)]
pub struct Quota {
    pub quota_us: u64,
    pub period_us: u64,
    /// The file that sets it (`cpu.max`, or v1's `cpu.cfs_quota_us`).
    pub file: PathBuf,
}

impl Quota {
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us as f64
    }

    fn detail(&self) -> String {
        format!(
            "{:.2} CPU: {} µs every {} µs ({})",
            self.cpus(),
            self.quota_us,
            self.period_us,
            self.file.display()
        )
    }
}

/// The limit a group sets, if any: v2's `cpu.max` ("max 100000": none), v1's
/// `cpu.cfs_quota_us` (-1: none) over `cpu.cfs_period_us`.
fn group_quota(v2: bool, dir: &Path) -> Option<Quota> {
    let num = |s: &str| s.trim().parse::<u64>().ok().filter(|&n| n > 0);
    let (quota_us, period_us, file) = if v2 {
        let file = dir.join("cpu.max");
        let text = read_small(&file)?;
        let (q, p) = text.split_once(' ')?;
        (num(q)?, num(p)?, file)
    } else {
        let file = dir.join("cpu.cfs_quota_us");
        let q = num(&read_small(&file)?)?;
        (q, num(&read_small(&dir.join("cpu.cfs_period_us"))?)?, file)
    };
    Some(Quota {
        quota_us,
        period_us,
        file,
    })
}

/// The tightest CPU limit on this process's groups.
pub fn quota(host: &Host) -> Option<Quota> {
    cpu_groups(host)
        .into_iter()
        .filter_map(|(v2, dir)| group_quota(v2, &dir))
        .min_by(|a, b| a.cpus().total_cmp(&b.cpus()))
}

/// Periods in which a CPU limit on this process's groups throttled them, summed over the
/// groups (`nr_throttled` of `cpu.stat`: each group counts its own limit's); `None` where
/// no group has a limit (nothing to throttle) or none of their counts could be read.
pub fn throttled_periods(host: &Host) -> Option<u64> {
    let limited: Vec<PathBuf> = cpu_groups(host)
        .into_iter()
        .filter(|(v2, dir)| group_quota(*v2, dir).is_some())
        .map(|(_, dir)| dir)
        .collect();
    let counts = limited.iter().filter_map(|dir| {
        let stat = read_small(&dir.join("cpu.stat"))?;
        stat.lines().find_map(|l| {
            let (key, value) = l.split_once(' ')?;
            (key == "nr_throttled").then(|| value.trim().parse::<u64>().ok())?
        })
    });
    counts.reduce(|a, b| a + b)
}

/// The throttling of this machine's groups from a start: what a timed window reads before
/// and after (a run is measured here whatever host `CTXBENCH_SYSFS` describes).
pub struct Throttle {
    host: Host,
    start: Option<u64>,
}

impl Throttle {
    pub fn start() -> Throttle {
        let host = Host::at(Path::new(super::LIVE_SYSFS));
        let start = throttled_periods(&host);
        Throttle { host, start }
    }

    /// Periods throttled since `start`; `None` where no group has a limit.
    pub fn periods(&self) -> Option<u64> {
        Some(throttled_periods(&self.host)?.saturating_sub(self.start?))
    }
}

/// What a run's result says of a point the quota throttled: how often, the limit, and the
/// restriction's hint (that its figure is no switch's, and what to do).
pub fn throttled_warning(procs: usize, periods: u64) -> String {
    let kind = Kind::CpuQuota;
    let quota = quota(&Host::at(Path::new(super::LIVE_SYSFS)));
    let limit = quota.map_or_else(String::new, |q| format!(": {}", q.detail()));
    format!(
        "{procs} procs: throttled: the CPU quota stopped this run's groups in {periods} \
         period{} while it was timed (restriction {}{limit}): {}",
        if periods == 1 { "" } else { "s" },
        kind.name(),
        kind.hint()
    )
}

/// Which cgroup mounts are read-only (`ro` among a mount's own options in mountinfo).
fn read_only_cgroups(host: &Host) -> Option<String> {
    let text = host.proc_file("self/mountinfo")?;
    let ro: Vec<&str> = text
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split_whitespace().collect();
            let (mount, options) = (*fields.get(4)?, *fields.get(5)?);
            let fstype = right.split_whitespace().next()?;
            let cgroup = fstype == "cgroup" || fstype == "cgroup2" || mount == "/sys/fs/cgroup";
            (cgroup && options.split(',').any(|o| o == "ro")).then_some(mount)
        })
        .collect();
    (!ro.is_empty()).then(|| format!("mounted read-only: {}", ro.join(", ")))
}

/// The capabilities of this process that lift `perf_event_paranoid` (CAP_PERFMON, 38, or
/// CAP_SYS_ADMIN, 21), from `CapEff` of its status.
fn perf_privileged(host: &Host) -> bool {
    let status = host.proc_file("self/status").unwrap_or_default();
    let caps = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or(0);
    caps & (1 << 38 | 1 << 21) != 0
}

/// perf_event_paranoid at 2 or more, unless this (live) process has a capability that lifts
/// it: then it restricts nothing here.
fn perf_paranoid(host: &Host) -> Option<String> {
    let level: i64 = host
        .proc_file("sys/kernel/perf_event_paranoid")?
        .parse()
        .ok()?;
    let stops = match level {
        ..=1 => return None,
        2 => {
            "a process without CAP_PERFMON counts user-space events only, and a switch is \
              the kernel's"
        }
        _ => "a process without CAP_PERFMON may open no perf event at all",
    };
    if host.live && perf_privileged(host) {
        return None;
    }
    Some(format!("kernel.perf_event_paranoid = {level}: {stops}"))
}

/// `kernel.io_uring_disabled`, as the host's /proc has it.
fn io_uring_disabled(host: &Host) -> Option<i64> {
    host.proc_file("sys/kernel/io_uring_disabled")?.parse().ok()
}

/// Whether a seccomp filter is on this process (`Seccomp: 2` in its status).
fn seccomp_filtered(host: &Host) -> bool {
    let status = host.proc_file("self/status").unwrap_or_default();
    status
        .lines()
        .any(|l| l.strip_prefix("Seccomp:").is_some_and(|v| v.trim() == "2"))
}

/// What refuses io_uring_setup with `errno` on `host`, in words.
pub fn io_uring_cause(host: &Host, errno: i32) -> String {
    let disabled = io_uring_disabled(host);
    let filtered = seccomp_filtered(host);
    let sysctl = |v: i64| format!("kernel.io_uring_disabled = {v}");
    match (errno, disabled) {
        (libc::EPERM | libc::EACCES, Some(v @ 1..)) => {
            format!("io_uring_setup was refused ({}, EPERM)", sysctl(v))
        }
        (libc::ENOSYS, _) if !filtered => {
            "io_uring_setup does not exist (a kernel without CONFIG_IO_URING)".into()
        }
        (_, _) if filtered => format!(
            "io_uring_setup was refused by a seccomp filter ({}; Seccomp: 2 in /proc/self/status)",
            std::io::Error::from_raw_os_error(errno)
        ),
        _ => format!(
            "io_uring_setup was refused ({})",
            std::io::Error::from_raw_os_error(errno)
        ),
    }
}

/// Whether io_uring_setup is refused to this process now, with its errno: asked afresh each
/// time (named here; a transport asks `transport::probe::require`, once per process).
pub fn io_uring_errno() -> Option<i32> {
    let refused = io_uring::IoUring::new(2).err()?;
    Some(refused.raw_os_error().unwrap_or(libc::ENOSYS))
}

/// `uname -r`.
pub fn kernel_release() -> String {
    // SAFETY: utsname is plain data, filled by the syscall.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a local.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    // SAFETY: uname NUL-terminates the release.
    unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

fn io_uring(host: &Host) -> Option<String> {
    if host.live {
        let errno = io_uring_errno()?;
        return Some(io_uring_cause(host, errno));
    }
    match io_uring_disabled(host)? {
        2.. => {
            Some("kernel.io_uring_disabled = 2: io_uring_setup is refused to every process".into())
        }
        1 => Some(
            "kernel.io_uring_disabled = 1: io_uring_setup is refused to processes outside \
             kernel.io_uring_group without CAP_SYS_ADMIN"
                .into(),
        ),
        _ => None,
    }
}

/// Neither `/proc/config.gz` nor `/boot/config-<release>` is a readable file.
fn kernel_config(host: &Host) -> Option<String> {
    let gz = host.proc.join("config.gz");
    let release = match host.live {
        true => Some(kernel_release()),
        false => host.proc_file("sys/kernel/osrelease"),
    };
    let boot = release.map(|r| host.boot.join(format!("config-{r}")));
    let readable = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() > 0);
    if readable(&gz) || boot.as_deref().is_some_and(readable) {
        return None;
    }
    let boot = boot.map_or("/boot/config-<release>".into(), |b| b.display().to_string());
    Some(format!(
        "no {} (CONFIG_IKCONFIG_PROC) and no {boot}",
        gz.display()
    ))
}

#[cfg(test)]
#[path = "restrictions_tests.rs"]
mod tests;
