//! What a ring needs against what this process can still get. Checked before anything is
//! forked or mapped: a ring too big for the machine or its memory cgroup is a `MemoryError`
//! naming both figures, not an OOM kill of the caller or of a participant halfway through.
//!
//! Every bound counts: `MemAvailable`, and each memory cgroup above this process (v2:
//! `memory.max - memory.current`; v1: `memory.limit_in_bytes - memory.usage_in_bytes`),
//! found through `/proc/self/cgroup` and `/proc/self/mountinfo`.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Left for the caller itself (its interpreter, the results) when judging what fits.
const RESERVE_BYTES: u64 = 64 << 20;

/// Bytes a point of `parallel` rings of `procs` participants needs: every participant's
/// private array (participant 0's included), plus what each participant the engine starts
/// costs besides (`each`, the engine's figure: `Engine::participant_bytes`); participant 0
/// of each ring is the caller's own thread.
pub fn ring_bytes(each: u64, procs: usize, parallel: usize, size_kb: usize) -> u64 {
    let rings = parallel as u64;
    let arrays = (procs as u64).saturating_mul(rings);
    let started = (procs as u64).saturating_sub(1).saturating_mul(rings);
    arrays
        .saturating_mul(size_kb as u64 * 1024)
        .saturating_add(started.saturating_mul(each))
}

/// The tightest bound on memory this process can still use, and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Headroom {
    pub bytes: u64,
    pub source: String,
}

/// The least headroom any bound leaves; `None` where no bound can be read.
pub fn headroom() -> Option<Headroom> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let mut bounds: Vec<Headroom> = Vec::new();
    if let Some(kb) = read("/proc/meminfo").and_then(|t| meminfo_available_kb(&t)) {
        bounds.push(Headroom {
            bytes: kb * 1024,
            source: "MemAvailable in /proc/meminfo".into(),
        });
    }
    for dir in cgroups("memory") {
        bounds.extend(cgroup_headroom(&dir));
    }
    bounds.into_iter().min_by_key(|b| b.bytes)
}

/// This process's cgroup directories of `controller` ("memory", "pids") and every ancestor
/// up to its mount's root, v1 and v2; none where `/proc` does not say.
pub(crate) fn cgroups(controller: &str) -> Vec<CgroupDir> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    match (read("/proc/self/cgroup"), read("/proc/self/mountinfo")) {
        (Some(cgroups), Some(mounts)) => cgroup_dirs(&cgroups, &mounts, controller),
        _ => Vec::new(),
    }
}

/// Refuses a point that cannot fit, naming what it needs and what bounds it.
pub fn check(need: u64, what: &str) -> Result<()> {
    match headroom() {
        Some(room) if need.saturating_add(RESERVE_BYTES) > room.bytes => Err(Error::Memory {
            need,
            available: room.bytes,
            context: format!("{what} ({})", room.source),
        }),
        _ => Ok(()),
    }
}

/// This process's page tables in bytes (`VmPTE` in /proc/self/status), which every `fork`
/// copies; 0 where it cannot be read.
pub fn page_table_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| status_kb(&t, "VmPTE:"))
        .map_or(0, |kb| kb * 1024)
}

/// What `RLIMIT_AS` (`ulimit -v`) leaves this process's address space (`VmSize` in
/// /proc/self/status), where a limit is set: every mapping counts against it.
pub fn address_space_headroom() -> Option<Headroom> {
    use nix::sys::resource::{getrlimit, Resource};
    let (soft, _) = getrlimit(Resource::RLIMIT_AS).ok()?;
    if soft == libc::RLIM_INFINITY {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = status_kb(&status, "VmSize:")?.saturating_mul(1024);
    Some(Headroom {
        bytes: soft.saturating_sub(used),
        source: format!(
            "RLIMIT_AS ({} MiB) - VmSize in /proc/self/status",
            soft >> 20
        ),
    })
}

fn status_kb(status: &str, field: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// OOM kills so far on this machine (`oom_kill` in /proc/vmstat): a participant killed by
/// SIGKILL while this count rose was most likely killed for memory.
pub fn oom_kills() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/vmstat").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|v| v.trim().parse().ok())
}

fn meminfo_available_kb(meminfo: &str) -> Option<u64> {
    status_kb(meminfo, "MemAvailable:")
}

/// A cgroup directory of this process, or an ancestor up to its mount's root.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CgroupDir {
    pub path: PathBuf,
    pub v2: bool,
}

impl CgroupDir {
    /// The number one of its files holds; None where the file is missing or holds no
    /// number (a limit of "max": none).
    pub fn number(&self, file: &str) -> Option<u64> {
        std::fs::read_to_string(self.path.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

/// Where this process's cgroups of `controller` are: the v2 group (`0::/path`) under the
/// cgroup2 mount, the v1 group of that controller under its v1 mount, each with its
/// ancestors.
fn cgroup_dirs(proc_cgroup: &str, mountinfo: &str, controller: &str) -> Vec<CgroupDir> {
    let mut dirs = Vec::new();
    for line in proc_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let v2 = id == "0" && controllers.is_empty();
        if !v2 && !controllers.split(',').any(|c| c == controller) {
            continue;
        }
        let Some((root, mount)) = mount_of(mountinfo, v2, controller) else {
            continue;
        };
        // The mount shows the hierarchy from `root` down; a path outside it is not visible.
        let Ok(inside) = Path::new(path).strip_prefix(&root) else {
            continue;
        };
        let mut dir = mount.join(inside);
        loop {
            dirs.push(CgroupDir {
                path: dir.clone(),
                v2,
            });
            if dir == mount || !dir.pop() {
                break;
            }
        }
    }
    dirs
}

/// (root inside the hierarchy, mount point) of the cgroup2 mount or the v1 mount of
/// `controller`.
fn mount_of(mountinfo: &str, v2: bool, controller: &str) -> Option<(PathBuf, PathBuf)> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let fields: Vec<&str> = left.split_whitespace().collect();
        let mut fs = right.split_whitespace();
        let (fstype, _source, options) = (fs.next()?, fs.next()?, fs.next().unwrap_or(""));
        let wanted = if v2 {
            fstype == "cgroup2"
        } else {
            fstype == "cgroup" && options.split(',').any(|o| o == controller)
        };
        (wanted && fields.len() >= 5).then(|| (PathBuf::from(fields[3]), PathBuf::from(fields[4])))
    })
}

/// `limit - usage` of one cgroup directory, when it has a limit.
fn cgroup_headroom(dir: &CgroupDir) -> Option<Headroom> {
    let (limit_file, usage_file) = if dir.v2 {
        ("memory.max", "memory.current")
    } else {
        ("memory.limit_in_bytes", "memory.usage_in_bytes")
    };
    // "max" (v2) is no number; v1 writes "no limit" as a number near i64::MAX.
    let limit = dir.number(limit_file).filter(|&l| l < (1 << 62))?;
    let usage = dir.number(usage_file).unwrap_or(0);
    Some(Headroom {
        bytes: limit.saturating_sub(usage),
        source: format!("{} - {} in {}", limit_file, usage_file, dir.path.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn a_point_needs_every_array_and_every_participant() {
        let kib = |k: u64| k * 1024;
        assert_eq!(
            ring_bytes(kib(512), 8, 2, 1024),
            16 * kib(1024) + 14 * kib(512)
        );
        assert_eq!(ring_bytes(kib(8), 10_000, 1, 0), 9_999 * kib(8));
        assert!(ring_bytes(kib(512), 64, 1, 1 << 20) > 64 << 30);
    }

    #[test]
    fn page_tables_are_read_from_vmpte() {
        let status = "VmRSS:\t 33572 kB\nVmPTE:\t     176 kB\nVmSwap: 0 kB\n";
        assert_eq!(status_kb(status, "VmPTE:"), Some(176));
        assert!(page_table_bytes() > 0, "a running process has page tables");
    }

    #[test]
    fn meminfo_is_read_in_kib() {
        let text = "MemTotal:  100 kB\nMemFree: 5 kB\nMemAvailable:   42 kB\n";
        assert_eq!(meminfo_available_kb(text), Some(42));
        assert_eq!(meminfo_available_kb("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn cgroup_dirs_walk_up_both_hierarchies() {
        let cgroups = "4:memory:/jobs/a\n1:cpu:/\n0::/user.slice/x\n";
        let dirs = cgroup_dirs(cgroups, MOUNTINFO, "memory");
        let v1: Vec<_> = dirs.iter().filter(|d| !d.v2).map(|d| &d.path).collect();
        let v2: Vec<_> = dirs.iter().filter(|d| d.v2).map(|d| &d.path).collect();
        assert_eq!(
            v1,
            [
                "/sys/fs/cgroup/memory/jobs/a",
                "/sys/fs/cgroup/memory/jobs",
                "/sys/fs/cgroup/memory"
            ]
            .map(PathBuf::from)
            .iter()
            .collect::<Vec<_>>()
        );
        assert_eq!(v2[0], &PathBuf::from("/sys/fs/cgroup/unified/user.slice/x"));
        assert_eq!(
            v2.last().unwrap(),
            &&PathBuf::from("/sys/fs/cgroup/unified")
        );
    }

    #[test]
    fn cgroup_dirs_find_the_controller_asked() {
        let dirs = cgroup_dirs("5:pids:/jobs/a\n4:memory:/other\n", MOUNTINFO, "pids");
        let paths: Vec<_> = dirs.iter().map(|d| d.path.clone()).collect();
        assert_eq!(
            paths,
            [
                "/sys/fs/cgroup/pids/jobs/a",
                "/sys/fs/cgroup/pids/jobs",
                "/sys/fs/cgroup/pids"
            ]
            .map(PathBuf::from)
        );
    }

    #[test]
    fn a_container_sees_its_cgroup_from_the_mount_root() {
        let mounts = "41 31 0:38 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let dirs = cgroup_dirs("0::/kubepods/pod1/c\n", mounts, "memory");
        assert_eq!(dirs[0].path, PathBuf::from("/sys/fs/cgroup/c"));
        assert_eq!(dirs.len(), 2);
        assert!(cgroup_dirs("0::/elsewhere\n", mounts, "memory").is_empty());
    }

    #[test]
    fn headroom_is_the_tightest_bound() {
        let dir = std::env::temp_dir().join(format!("ctxbench-mem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("memory.max"), "3000\n").unwrap();
        std::fs::write(dir.join("memory.current"), "1000\n").unwrap();
        let room = cgroup_headroom(&CgroupDir {
            path: dir.clone(),
            v2: true,
        })
        .unwrap();
        assert_eq!(room.bytes, 2000);
        std::fs::write(dir.join("memory.max"), "max\n").unwrap();
        assert!(cgroup_headroom(&CgroupDir {
            path: dir.clone(),
            v2: true
        })
        .is_none());
        std::fs::remove_dir_all(&dir).unwrap();
        let here = headroom().expect("MemAvailable is readable on Linux");
        assert!(here.bytes > 0);
        assert!(check(u64::MAX / 2, "a huge ring").is_err());
        assert!(check(0, "nothing").is_ok());
    }
}
