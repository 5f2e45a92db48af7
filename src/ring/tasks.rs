//! The tasks (processes and threads) a ring starts against what this process may still
//! start. Checked before anything is started: a ring that would reach a process limit
//! halfway through its forks, after a sweep has measured for seconds, is refused at once
//! with the limit named.
//!
//! Every bound counts: each pids cgroup above this process (`pids.max - pids.current`, v1 and
//! v2), and `RLIMIT_NPROC` (`ulimit -u`) against the tasks of this user that `/proc` shows,
//! unless the kernel exempts the caller (root, `CAP_SYS_RESOURCE`, `CAP_SYS_ADMIN`). Tasks of
//! the user that this `/proc` cannot see (another pid namespace) are not counted: the check
//! may pass a ring the fork then refuses, never the other way round.

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::memory::{self, CgroupDir};
use std::mem;

/// capabilities(7) numbers of the two capabilities that lift `RLIMIT_NPROC`.
const CAP_SYS_ADMIN: u32 = 21;
const CAP_SYS_RESOURCE: u32 = 24;

/// The tightest bound on tasks this process can still start, and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Headroom {
    pub tasks: u64,
    pub source: String,
}

/// The least headroom any bound leaves; `None` where nothing bounds it.
pub fn headroom() -> Option<Headroom> {
    let mut bounds: Vec<Headroom> = memory::cgroups("pids")
        .iter()
        .filter_map(cgroup_headroom)
        .collect();
    bounds.extend(nproc_headroom());
    bounds.into_iter().min_by_key(|b| b.tasks)
}

/// Refuses `need` more tasks when a bound leaves fewer, naming it (an `EAGAIN` error, as
/// the fork that would fail).
pub fn check(need: u64, what: &str) -> Result<()> {
    match headroom() {
        Some(room) if need > room.tasks => Err(Error::os(
            libc::EAGAIN,
            format!(
                "{what} start {need} tasks (processes or threads) but {} leaves {}",
                room.source, room.tasks
            ),
        )),
        _ => Ok(()),
    }
}

/// Refuses `parallel` rings of `procs` participants of `engine` when a bound leaves fewer
/// tasks than they start besides the caller's thread: every participant the engine starts,
/// every ring's driver (ring 0's on the point's own thread), the watchdog.
pub fn check_rings(engine: Engine, procs: usize, parallel: usize) -> Result<()> {
    let each = if engine.starts_tasks() {
        procs as u64 - 1
    } else {
        0
    };
    let tasks = (each + 1).saturating_mul(parallel as u64) + 1;
    check(
        tasks,
        &format!("{parallel} x {procs} {} participants", engine.name()),
    )
}

/// `pids.max - pids.current` of one cgroup directory, when it has a limit.
fn cgroup_headroom(dir: &CgroupDir) -> Option<Headroom> {
    // "max" is no number: no limit.
    let limit = dir.number("pids.max")?;
    let current = dir.number("pids.current").unwrap_or(0);
    Some(Headroom {
        tasks: limit.saturating_sub(current),
        source: format!(
            "pids.max {limit} - pids.current {current} in {}",
            dir.path.display()
        ),
    })
}

/// What `RLIMIT_NPROC` leaves this user, unless the kernel exempts the caller.
fn nproc_headroom() -> Option<Headroom> {
    // SAFETY: rlimit is plain data; a valid pointer to it.
    let mut lim: libc::rlimit = unsafe { mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uid = real_uid(&status)?;
    if uid == 0 || exempt(&status) {
        return None;
    }
    let tasks = user_tasks(uid);
    Some(Headroom {
        tasks: lim.rlim_cur.saturating_sub(tasks),
        source: format!(
            "RLIMIT_NPROC (ulimit -u) {} - the {tasks} tasks of uid {uid}",
            lim.rlim_cur
        ),
    })
}

/// The real uid in a `/proc/PID/status`.
fn real_uid(status: &str) -> Option<u32> {
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Whether the effective capabilities in a `/proc/self/status` hold `CAP_SYS_RESOURCE` or
/// `CAP_SYS_ADMIN`, which lift `RLIMIT_NPROC`.
fn exempt(status: &str) -> bool {
    let caps = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    caps & (1 << CAP_SYS_RESOURCE | 1 << CAP_SYS_ADMIN) != 0
}

/// Tasks (threads included) whose real uid is `uid`, as this `/proc` shows them.
fn user_tasks(uid: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(|e| {
            let name = e.ok()?.file_name();
            name.to_str()?.parse::<u32>().ok()?;
            let status =
                std::fs::read_to_string(format!("/proc/{}/status", name.to_str()?)).ok()?;
            (real_uid(&status)? == uid).then(|| threads(&status))
        })
        .sum()
}

fn threads(status: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\tx\nUid:\t1000\t1000\t1000\t1000\nThreads:\t7\n\
                          CapEff:\t0000000000000000\n";

    #[test]
    fn a_status_gives_its_real_uid_threads_and_exemption() {
        assert_eq!(real_uid(STATUS), Some(1000));
        assert_eq!(threads(STATUS), 7);
        assert!(!exempt(STATUS));
        assert!(exempt(
            &STATUS.replace("0000000000000000", "0000000001000000")
        ));
        assert!(exempt(
            &STATUS.replace("0000000000000000", "0000000000200000")
        ));
    }

    #[test]
    fn a_pids_cgroup_leaves_its_max_minus_current() {
        let dir = std::env::temp_dir().join(format!("ctxbench-pids-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("pids.max"), "12\n").unwrap();
        std::fs::write(dir.join("pids.current"), "5\n").unwrap();
        let group = CgroupDir {
            path: dir.clone(),
            v2: true,
        };
        assert_eq!(cgroup_headroom(&group).unwrap().tasks, 7);
        std::fs::write(dir.join("pids.max"), "max\n").unwrap();
        assert!(cgroup_headroom(&group).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_need_above_no_bound_passes() {
        // Whatever bounds this test process, one task fits (it runs at all).
        check(1, "a ring").unwrap();
    }
}
