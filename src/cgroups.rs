//! cgroups as an axis: every participant of a point placed, before it is released, in groups
//! made for it N deep under a group ctxbench owns, all in one leaf (`Same`) or each in its own
//! (`Split`, so that every hop crosses groups), in the hierarchy that holds the cpu
//! controller (cgroup v1's `cpu`, or v2's unified one). The groups are removed when the point
//! ends; those a killed run left behind are removed by the next run (`sweep`): their owner's
//! pid is in their name.

use crate::engine::Engine;
use crate::error::{Error, Limit, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub const DEPTH: Limit<u64> = Limit::between("cgroup_depth", 1, 16);
/// `cpu.weight`'s range (v2); v1's `cpu.shares` is `weight * 1024 / 100`, as systemd maps it.
pub const WEIGHT: Limit<u64> = Limit::between("cgroup_weight", 1, 10_000);
pub const NAMES: [&str; 2] = ["same", "split"];
/// What the groups ctxbench makes are called: `ctxbench-<owner pid>.<its start time>-<sequence>`
/// (the start time tells the owner from a later process given its pid; names from before
/// it lack it).
const PREFIX: &str = "ctxbench-";
/// Groups one point may make (its parent and each leaf's chain): each costs the kernel
/// memory, and 4,000 participants split 16 deep made 64,001 (kernel memory 37 MB to 922 MB).
pub const MAX_GROUPS: usize = 4096;

/// How participants are placed in groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroups {
    /// Each participant in a leaf of its own.
    pub split: bool,
    pub depth: usize,
    pub weight: Option<u64>,
    pub hierarchy: Hierarchy,
}

impl Cgroups {
    pub fn layout(&self) -> &'static str {
        NAMES[self.split as usize]
    }

    /// Whether the layout `name` (one of `NAMES`) puts each participant in a group of its own.
    pub fn splits(name: &str) -> Result<bool> {
        match NAMES.iter().position(|&n| n == name) {
            Some(k) => Ok(k == 1),
            None => Err(Error::invalid(
                "cgroups",
                format!("unknown cgroups {name:?}; expected one of {NAMES:?}"),
            )),
        }
    }

    /// What a request asks: each participant in a group of its own (`split`) or all in one,
    /// in the hierarchy found on this machine; `depth` and `weight` within `DEPTH` and
    /// `WEIGHT`, as the request parsed them.
    pub fn new(split: bool, depth: usize, weight: Option<u64>) -> Result<Cgroups> {
        Ok(Cgroups {
            split,
            depth,
            weight,
            hierarchy: Hierarchy::find()?,
        })
    }
}

/// What placing in groups cannot go with: fibers are one task, so nothing to split; the
/// drivers of parallel rings start after the groups are made.
pub fn check(cg: &Cgroups, engine: Engine, parallel: usize, procs: usize) -> Result<()> {
    let groups = groups(cg, procs);
    if groups > MAX_GROUPS {
        return Err(Error::invalid(
            "cgroup_depth",
            format!(
                "{procs} participants {} at depth {} make {groups} groups, more than the \
                 {MAX_GROUPS} a point may (each costs the kernel memory): lower cgroup_depth \
                 or procs, or use \"same\"",
                if cg.split { "split" } else { "in one leaf" },
                cg.depth
            ),
        ));
    }
    if cg.split && engine == Engine::Fiber {
        return Err(Error::invalid(
            "cgroups",
            "\"split\" needs participants the kernel schedules apart (engine \"process\" or \
             \"thread\"); fibers are one task: use \"same\"",
        ));
    }
    if parallel > 1 {
        return Err(Error::invalid(
            "cgroups",
            format!("places one ring's participants: parallel must be 1, got {parallel}"),
        ));
    }
    Ok(())
}

/// Refuses a real-time policy `s` (asked, or the caller's, which every task inherits) where
/// the kernel schedules real-time tasks per group (cgroup v1's `cpu.rt_runtime_us`,
/// CONFIG_RT_GROUP_SCHED): a group ctxbench makes has 0 µs of real-time runtime and the
/// kernel refuses a real-time task in it (EINVAL). A share of the caller's group's runtime
/// would throttle each group apart (split: 1/n each, while participant 0 alone runs the
/// overhead loop), so the figure would be the throttle's: refused, before anything starts.
pub fn check_policy(cg: &Cgroups, s: &crate::sched::Sched) -> Result<()> {
    let file = cg.hierarchy.base.join("cpu.rt_runtime_us");
    if !s.policy.realtime() || cg.hierarchy.v2 || !file.exists() {
        return Ok(());
    }
    Err(Error::Os {
        errno: libc::EINVAL,
        context: format!(
            "cgroups with policy {}: this kernel gives real-time tasks CPU time per group \
             ({} exists: RT group scheduling), a group ctxbench makes has none, and the \
             kernel refuses a real-time task in it",
            s.describe(),
            file.display()
        ),
        hint: "measure the groups under a fair policy (other, batch), or the real-time \
               policy without cgroups",
    })
}

/// The cgroup hierarchy with the cpu controller, and the caller's group in it (where
/// ctxbench's groups are made).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    pub mount: PathBuf,
    pub v2: bool,
    pub base: PathBuf,
}

impl Hierarchy {
    /// "v1:<mount>" or "v2:<mount>", as results record it.
    pub fn describe(&self) -> String {
        format!(
            "{}:{}",
            if self.v2 { "v2" } else { "v1" },
            self.mount.display()
        )
    }

    /// Where this process's cgroups are, from the kernel's own tables.
    pub fn find() -> Result<Hierarchy> {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map_err(|e| refusal(e.raw_os_error(), format!("reading {p}: {e}")))
        };
        let found = Self::find_in(&read("/proc/self/mountinfo")?, &read("/proc/self/cgroup")?)?;
        if !found.base.is_dir() {
            let why = format!("{}: not a directory", found.base.display());
            return Err(refusal(Some(libc::ENOENT), why));
        }
        Ok(found)
    }

    /// The v1 mount with the cpu option, else a cgroup2 mount whose root offers cpu.
    pub fn find_in(mountinfo: &str, membership: &str) -> Result<Hierarchy> {
        let mounts: Vec<(&str, &str, &str)> = mountinfo
            .lines()
            .filter_map(|line| {
                let (left, right) = line.split_once(" - ")?;
                let mut r = right.split_whitespace();
                let (fstype, _source, options) = (r.next()?, r.next()?, r.next().unwrap_or(""));
                Some((fstype, left.split_whitespace().nth(4)?, options))
            })
            .collect();
        let group_of = |v1_controller: Option<&str>| {
            membership.lines().find_map(|line| {
                let mut f = line.splitn(3, ':');
                let (id, controllers, path) = (f.next()?, f.next()?, f.next()?);
                let hit = match v1_controller {
                    Some(c) => controllers.split(',').any(|x| x == c),
                    None => id == "0" && controllers.is_empty(),
                };
                hit.then(|| path.trim_start_matches('/').to_string())
            })
        };
        for &(fstype, mount, options) in &mounts {
            if fstype == "cgroup" && options.split(',').any(|o| o == "cpu") {
                let path = group_of(Some("cpu")).unwrap_or_default();
                return Ok(Hierarchy {
                    mount: mount.into(),
                    v2: false,
                    base: Path::new(mount).join(path),
                });
            }
        }
        for &(fstype, mount, _) in &mounts {
            let controllers = Path::new(mount).join("cgroup.controllers");
            let has_cpu = std::fs::read_to_string(&controllers)
                .is_ok_and(|c| c.split_whitespace().any(|x| x == "cpu"));
            if fstype == "cgroup2" && has_cpu {
                let path = group_of(None).unwrap_or_default();
                return Ok(Hierarchy {
                    mount: mount.into(),
                    v2: true,
                    base: Path::new(mount).join(path),
                });
            }
        }
        Err(refusal(
            Some(libc::ENOENT),
            "no cpu controller: no cgroup v1 hierarchy mounted with it, and no cgroup2 \
             hierarchy whose cgroup.controllers offers it"
                .to_string(),
        ))
    }
}

/// An OSError saying why groups cannot be made here; a read-only cgroup file system is a
/// restriction of the host, with its own hint.
fn refusal(errno: Option<i32>, why: String) -> Error {
    let errno = errno.unwrap_or(libc::EIO);
    let context = format!("cgroups: {why}");
    match errno {
        libc::EROFS => Error::Os {
            errno,
            context,
            hint: crate::host::restrictions::Kind::CgroupReadOnly.hint(),
        },
        _ => Error::os(errno, context),
    }
}

/// One step of placing the participants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Mkdir(PathBuf),
    Write(PathBuf, String),
}

/// The groups a point of `procs` participants makes: its parent and each leaf's chain.
pub fn groups(cg: &Cgroups, procs: usize) -> usize {
    let leaves = if cg.split { procs } else { 1 };
    leaves.saturating_mul(cg.depth).saturating_add(1)
}

/// Kernel memory one group costs, charged to the memory cgroup of whoever makes it: what the
/// cgroups accuracy page measured, rounded up (docs/accuracy/2026-12-03-cgroups.md).
pub const GROUP_BYTES: u64 = 16 << 10;

/// Bytes of kernel memory the groups of a point of `procs` participants take, counted
/// against the memory check before any is made, and the words that name them (", and ...").
pub fn kernel_need(cg: &Cgroups, procs: usize) -> (u64, String) {
    let groups = groups(cg, procs);
    let said = format!(
        ", and {groups} cgroups ({} at depth {}) of about {} KiB of kernel memory each: lower \
         cgroup_depth or procs, or use \"same\"",
        cg.layout(),
        cg.depth,
        GROUP_BYTES >> 10
    );
    ((groups as u64).saturating_mul(GROUP_BYTES), said)
}

/// The steps that place `tasks` (thread ids; `ours` tells which are threads of this process,
/// `pid` its id) under `parent`: the groups, their weight, then the moves.
pub fn plan(
    cg: &Cgroups,
    parent: &Path,
    tasks: &[libc::pid_t],
    ours: &dyn Fn(libc::pid_t) -> bool,
    pid: libc::pid_t,
) -> Vec<Op> {
    let v2 = cg.hierarchy.v2;
    let leaves = if cg.split { tasks.len() } else { 1 };
    let mut ops = vec![Op::Mkdir(parent.to_path_buf())];
    let mut chains = Vec::with_capacity(leaves);
    for k in 0..leaves {
        let mut dir = parent.to_path_buf();
        let mut chain = Vec::with_capacity(cg.depth);
        for level in 0..cg.depth {
            dir = dir.join(if level == 0 {
                format!("p{k}")
            } else {
                format!("l{level}")
            });
            chain.push(dir.clone());
        }
        chains.push(chain);
    }
    let write = |dir: &Path, file: &str, value: String| Op::Write(dir.join(file), value);
    let weight = |dir: &Path| {
        cg.weight.map(|w| match v2 {
            true => write(dir, "cpu.weight", w.to_string()),
            false => write(dir, "cpu.shares", (w * 1024 / 100).max(2).to_string()),
        })
    };
    if v2 {
        // Threads of one process can sit in different groups only inside a threaded subtree:
        // the parent is its domain, every group below it threaded, cpu enabled on the way.
        ops.push(write(
            &cg.hierarchy.base,
            "cgroup.subtree_control",
            "+cpu".into(),
        ));
    }
    ops.extend(weight(parent));
    for chain in &chains {
        for (i, dir) in chain.iter().enumerate() {
            ops.push(Op::Mkdir(dir.clone()));
            if v2 {
                ops.push(write(dir, "cgroup.type", "threaded".into()));
                let above = if i == 0 {
                    parent
                } else {
                    chain[i - 1].as_path()
                };
                ops.push(write(above, "cgroup.subtree_control", "+cpu".into()));
            }
            ops.extend(weight(dir));
        }
    }
    if v2 {
        ops.push(write(parent, "cgroup.procs", pid.to_string()));
        for &t in tasks.iter().filter(|&&t| !ours(t)) {
            ops.push(write(parent, "cgroup.procs", t.to_string()));
        }
    }
    let file = if v2 { "cgroup.threads" } else { "tasks" };
    for (k, &t) in tasks.iter().enumerate() {
        let leaf = chains[if cg.split { k } else { 0 }]
            .last()
            .expect("depth >= 1");
        ops.push(write(leaf, file, t.to_string()));
    }
    ops
}

/// What the kernel's errno means here.
fn cause(e: &std::io::Error) -> &'static str {
    let why = match e.raw_os_error() {
        Some(libc::EROFS) => {
            "the cgroup file system is mounted read-only (restriction cgroup_read_only)"
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "not permitted: making cgroups needs root (or a delegated group)"
        }
        Some(libc::ENOENT) => "missing: no such group or control file (controller not enabled?)",
        Some(libc::EBUSY) => {
            "busy: cgroup v2 enables a controller only in a group without processes of its own"
        }
        Some(libc::EAGAIN) => "refused by a limit (pids.max, or the hierarchy's max depth)",
        Some(libc::EOPNOTSUPP) => "not supported by this hierarchy (threaded mode?)",
        _ => "the kernel refused",
    };
    // The errno's own words follow from `Error::os`.
    why
}

/// Groups made for one point: removed, and the caller's thread moved back, when dropped.
pub struct Placed {
    /// Every group made, in the order made.
    made: Vec<PathBuf>,
    /// Where this thread (or, on v2, this process) goes back to, and the file that moves it.
    home: Option<(PathBuf, String)>,
}

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Places `tasks` (the caller's thread among them) as `cg` asks; on failure, whatever was
/// made is removed again and the error names the path and the cause.
pub fn place(cg: &Cgroups, tasks: &[libc::pid_t]) -> Result<Placed> {
    let h = &cg.hierarchy;
    sweep(&h.base);
    let pid = std::process::id() as libc::pid_t;
    let seq = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let start = started(pid as u32).unwrap_or(0);
    let parent = h.base.join(format!("{PREFIX}{pid}.{start}-{seq}"));
    let me = crate::sys::gettid();
    let home = own_group(h, me).map(|dir| {
        let (file, id) = if h.v2 {
            ("cgroup.procs", pid)
        } else {
            ("tasks", me)
        };
        (dir.join(file), id.to_string())
    });
    let ours = |t: libc::pid_t| Path::new(&format!("/proc/self/task/{t}")).exists();
    let mut placed = Placed {
        made: Vec::new(),
        home,
    };
    for op in plan(cg, &parent, tasks, &ours, pid) {
        let done = match &op {
            Op::Mkdir(dir) => std::fs::create_dir(dir).map(|()| placed.made.push(dir.clone())),
            Op::Write(file, value) => write(file, value),
        };
        if let Err(e) = done {
            let (what, path) = match &op {
                Op::Mkdir(dir) => ("cannot make", dir),
                Op::Write(file, _) => ("cannot write", file),
            };
            return Err(refusal(
                e.raw_os_error(),
                format!("{what} {}: {}", path.display(), cause(&e)),
            ));
        }
    }
    Ok(placed)
}

fn write(file: &Path, value: &str) -> std::io::Result<()> {
    use std::io::Write;
    // Control files exist or the kernel refuses: never create one.
    let mut f = std::fs::OpenOptions::new().write(true).open(file)?;
    f.write_all(value.as_bytes())
}

/// This thread's group in `h`, from `/proc/self/task/<tid>/cgroup`.
fn own_group(h: &Hierarchy, tid: libc::pid_t) -> Option<PathBuf> {
    let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/cgroup")).ok()?;
    let want = |id: &str, controllers: &str| match h.v2 {
        true => id == "0" && controllers.is_empty(),
        false => controllers.split(',').any(|c| c == "cpu"),
    };
    text.lines().find_map(|line| {
        let mut f = line.splitn(3, ':');
        let (id, controllers, path) = (f.next()?, f.next()?, f.next()?);
        want(id, controllers).then(|| h.mount.join(path.trim_start_matches('/')))
    })
}

impl Drop for Placed {
    fn drop(&mut self) {
        if let Some((file, id)) = &self.home {
            let _ = write(file, id);
        }
        for dir in self.made.iter().rev() {
            remove(dir, 50);
        }
    }
}

/// Removes an empty group, waiting briefly (`tries` times 2 ms) for tasks still leaving it (a
/// reaped child's exit completes asynchronously in the cgroup core).
fn remove(dir: &Path, tries: usize) {
    for _ in 0..tries {
        match std::fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(2))
            }
            _ => return,
        }
    }
}

/// Removes the groups of ctxbench runs that are gone (their owner pid no longer exists), and
/// this process's own earlier ones that are empty now. A group still in use stays.
pub fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let me = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((owner, start)) = name.to_str().and_then(owner_of) else {
            continue;
        };
        // A dead owner's participants die with it (PR_SET_PDEATHSIG): wait for them to leave.
        // An owner whose pid another process now has is dead too.
        let alive = match start {
            Some(start) => started(owner) == Some(start),
            None => Path::new(&format!("/proc/{owner}")).exists(),
        };
        if !alive {
            remove_tree(&entry.path(), 50);
        } else if owner == me {
            remove_tree(&entry.path(), 1);
        }
    }
}

/// The owner pid in a name ctxbench gave a group, and its start time where the name has it.
fn owner_of(name: &str) -> Option<(u32, Option<u64>)> {
    let (owner, seq) = name.strip_prefix(PREFIX)?.split_once('-')?;
    seq.parse::<u64>().ok()?;
    match owner.split_once('.') {
        Some((pid, start)) => Some((pid.parse().ok()?, Some(start.parse().ok()?))),
        None => Some((owner.parse().ok()?, None)),
    }
}

/// When process `pid` started (`/proc/<pid>/stat`), None where it is gone.
fn started(pid: u32) -> Option<u64> {
    let buf = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    crate::observer::parse_stat_start(&buf)
}

/// A group and every group below it, deepest first (a cgroup directory holds only control
/// files besides its children, which rmdir takes with it).
fn remove_tree(dir: &Path, tries: usize) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&entry.path(), tries);
            }
        }
    }
    remove(dir, tries);
}

#[cfg(test)]
#[path = "cgroups_tests.rs"]
mod tests;
