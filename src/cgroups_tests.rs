//! Tests of placing tasks in cgroups: the plans as data (v1 and v2 fixtures), and where
//! this process may make groups, real placement, removal and the sweep of stale groups.

use super::*;

const V1_MOUNTS: &str = "\
35 26 0:30 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu
36 26 0:31 / /sys/fs/cgroup/cpuacct rw,relatime shared:10 - cgroup cgroup rw,cpuacct
44 26 0:39 / /sys/fs/cgroup/unified rw,relatime shared:18 - cgroup2 cgroup2 rw
";
const V1_MEMBERSHIP: &str = "2:cpuacct:/\n1:cpu:/jobs/a\n0::/\n";

fn hierarchy(base: &Path, v2: bool) -> Hierarchy {
    Hierarchy {
        mount: base.to_path_buf(),
        v2,
        base: base.to_path_buf(),
    }
}

fn cgroups(split: bool, depth: usize, weight: Option<u64>, h: Hierarchy) -> Cgroups {
    Cgroups {
        split,
        depth,
        weight,
        hierarchy: h,
    }
}

fn writes(ops: &[Op]) -> Vec<(String, String)> {
    ops.iter()
        .filter_map(|op| match op {
            Op::Write(f, v) => Some((f.display().to_string(), v.clone())),
            Op::Mkdir(_) => None,
        })
        .collect()
}

fn mkdirs(ops: &[Op]) -> Vec<String> {
    ops.iter()
        .filter_map(|op| match op {
            Op::Mkdir(d) => Some(d.display().to_string()),
            Op::Write(..) => None,
        })
        .collect()
}

#[test]
fn the_hierarchy_with_the_cpu_controller_is_found() {
    let h = Hierarchy::find_in(V1_MOUNTS, V1_MEMBERSHIP).unwrap();
    assert_eq!(h.mount, Path::new("/sys/fs/cgroup/cpu"));
    assert_eq!(h.base, Path::new("/sys/fs/cgroup/cpu/jobs/a"));
    assert_eq!(h.describe(), "v1:/sys/fs/cgroup/cpu");
    // A unified hierarchy whose root offers cpu (a fixture: this machine's v2 has none).
    let root = std::env::temp_dir().join(format!("ctxbench-v2-fixture-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("cgroup.controllers"),
        "cpuset cpu io memory pids\n",
    )
    .unwrap();
    let mounts = format!(
        "44 26 0:39 / {} rw,relatime shared:18 - cgroup2 cgroup2 rw\n",
        root.display()
    );
    let h = Hierarchy::find_in(&mounts, "0::/user.slice\n").unwrap();
    assert!(h.v2 && h.base == root.join("user.slice"), "{h:?}");
    std::fs::write(root.join("cgroup.controllers"), "io memory\n").unwrap();
    let e = Hierarchy::find_in(&mounts, "0::/\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no cpu controller"), "{e}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn same_puts_everyone_in_one_leaf_and_split_each_in_its_own() {
    let h = hierarchy(Path::new("/cg"), false);
    let parent = Path::new("/cg/ctxbench-7-0");
    let ours = |_| true;
    let same = plan(
        &cgroups(false, 3, None, h.clone()),
        parent,
        &[10, 11],
        &ours,
        7,
    );
    assert_eq!(
        mkdirs(&same),
        [
            "/cg/ctxbench-7-0",
            "/cg/ctxbench-7-0/p0",
            "/cg/ctxbench-7-0/p0/l1",
            "/cg/ctxbench-7-0/p0/l1/l2"
        ]
    );
    let leaf = "/cg/ctxbench-7-0/p0/l1/l2/tasks";
    assert_eq!(
        writes(&same),
        [(leaf.into(), "10".into()), (leaf.into(), "11".into())]
    );
    let split = plan(&cgroups(true, 1, Some(100), h), parent, &[10, 11], &ours, 7);
    assert_eq!(
        writes(&split),
        [
            ("/cg/ctxbench-7-0/cpu.shares".into(), "1024".into()),
            ("/cg/ctxbench-7-0/p0/cpu.shares".into(), "1024".into()),
            ("/cg/ctxbench-7-0/p1/cpu.shares".into(), "1024".into()),
            ("/cg/ctxbench-7-0/p0/tasks".into(), "10".into()),
            ("/cg/ctxbench-7-0/p1/tasks".into(), "11".into()),
        ]
    );
}

#[test]
fn on_v2_the_subtree_is_threaded_with_cpu_enabled_on_the_way() {
    let h = hierarchy(Path::new("/u"), true);
    let parent = Path::new("/u/ctxbench-7-0");
    // 10 is a thread of this process; 20 a child process.
    let ours = |t| t == 10;
    let ops = plan(&cgroups(true, 2, Some(50), h), parent, &[10, 20], &ours, 7);
    let w = writes(&ops);
    let has = |f: &str, v: &str| w.iter().any(|(a, b)| a == f && b == v);
    assert!(has("/u/cgroup.subtree_control", "+cpu"));
    assert!(has("/u/ctxbench-7-0/cgroup.subtree_control", "+cpu"));
    assert!(has("/u/ctxbench-7-0/p1/cgroup.subtree_control", "+cpu"));
    assert!(has("/u/ctxbench-7-0/p1/l1/cgroup.type", "threaded"));
    assert!(has("/u/ctxbench-7-0/p0/cpu.weight", "50"));
    // The process joins the threaded domain, the child process too; then each thread its leaf.
    assert!(has("/u/ctxbench-7-0/cgroup.procs", "7") && has("/u/ctxbench-7-0/cgroup.procs", "20"));
    assert!(!has("/u/ctxbench-7-0/cgroup.procs", "10"));
    let tail: Vec<_> = w[w.len() - 2..].to_vec();
    assert_eq!(
        tail,
        [
            ("/u/ctxbench-7-0/p0/l1/cgroup.threads".into(), "10".into()),
            ("/u/ctxbench-7-0/p1/l1/cgroup.threads".into(), "20".into()),
        ]
    );
    // A group's type is set before the controller is enabled above it, and every group is
    // made before anything is moved.
    let pos = |f: &str| w.iter().position(|(a, _)| a == f).unwrap();
    assert!(pos("/u/ctxbench-7-0/p0/cgroup.type") < pos("/u/ctxbench-7-0/p0/l1/cgroup.type"));
    assert!(pos("/u/ctxbench-7-0/p1/l1/cgroup.type") < pos("/u/ctxbench-7-0/cgroup.procs"));
}

#[test]
fn the_owner_is_read_from_the_name() {
    assert_eq!(owner_of("ctxbench-123.98765-4"), Some((123, Some(98765))));
    assert_eq!(owner_of("ctxbench-123-4"), Some((123, None)));
    assert_eq!(owner_of("ctxbench-123"), None);
    assert_eq!(owner_of("ctxbench-123.x-4"), None);
    assert_eq!(owner_of("user.slice"), None);
    assert_eq!(owner_of("ctxbench-x-1"), None);
}

#[test]
fn an_owner_is_its_pid_and_start_time() {
    // This process's start time names it; another start time under its pid is another
    // (dead) owner whose pid was reused.
    let me = std::process::id();
    let start = started(me).expect("this process has a start time");
    assert!(start > 0 && started(me) == Some(start));
    assert_eq!(started(u32::MAX), None);
}

#[test]
fn the_groups_a_point_makes_are_bounded() {
    let cg = |split, depth| Cgroups {
        split,
        depth,
        weight: None,
        hierarchy: Hierarchy {
            v2: true,
            mount: "/sys/fs/cgroup".into(),
            base: "/sys/fs/cgroup".into(),
        },
    };
    assert_eq!(groups(&cg(true, 4), 8), 33);
    assert_eq!(groups(&cg(false, 16), 4000), 17);
    assert!(check(&cg(true, 4), Engine::Process, 1, 8).is_ok());
    let e = check(&cg(true, 16), Engine::Process, 1, 4000).unwrap_err();
    assert!(e.to_string().contains("64001 groups"), "{e}");
    // Their kernel memory, counted against the memory check before any group is made.
    let (bytes, said) = kernel_need(&cg(true, 16), 255);
    assert_eq!(bytes, 4081 * GROUP_BYTES);
    assert!(
        said.starts_with(", and 4081 cgroups (split at depth 16)"),
        "{said}"
    );
    assert_eq!(kernel_need(&cg(false, 1), 255).0, 2 * GROUP_BYTES);
}

fn root() -> bool {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn a_read_only_hierarchy_is_refused_naming_the_path_and_the_cause() {
    if !root() {
        eprintln!("skipped: mounting a read-only file system needs root");
        return;
    }
    let dir = std::env::temp_dir().join(format!("ctxbench-ro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = |s: &str| std::ffi::CString::new(s).unwrap();
    let (src, target, fs) = (c("tmpfs"), c(dir.to_str().unwrap()), c("tmpfs"));
    // SAFETY: valid NUL-terminated strings; no data argument.
    let rc = unsafe {
        libc::mount(
            src.as_ptr(),
            target.as_ptr(),
            fs.as_ptr(),
            libc::MS_RDONLY,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    let e = place(
        &cgroups(false, 1, None, hierarchy(&dir, false)),
        &[crate::sys::gettid()],
    );
    // SAFETY: the mount made above.
    unsafe { libc::umount(target.as_ptr()) };
    let _ = std::fs::remove_dir(&dir);
    let e = e.err().expect("refused").to_string();
    assert!(
        e.contains("read-only") && e.contains(dir.to_str().unwrap()),
        "{e}"
    );
    assert!(e.contains("(restriction cgroup_read_only)"), "{e}");
    assert!(
        e.contains("hint: the cgroups axis cannot make its groups"),
        "{e}"
    );
}

/// The real hierarchy of this machine, where this process may make groups in it.
fn writable() -> Option<Hierarchy> {
    let h = Hierarchy::find().ok()?;
    let probe = h
        .base
        .join(format!("ctxbench-probe-{}", std::process::id()));
    std::fs::create_dir(&probe).ok()?;
    std::fs::remove_dir(&probe).ok()?;
    Some(h)
}

fn group_of(tid: libc::pid_t, h: &Hierarchy) -> PathBuf {
    own_group(h, tid).unwrap()
}

#[test]
fn threads_are_placed_and_every_group_removed_after() {
    let Some(h) = writable().filter(|h| !h.v2) else {
        eprintln!("skipped: no writable cgroup v1 cpu hierarchy");
        return;
    };
    let me = crate::sys::gettid();
    let home = group_of(me, &h);
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let other = std::thread::spawn(move || {
        tx.send(crate::sys::gettid()).unwrap();
        stop_rx.recv().unwrap();
    });
    let peer = rx.recv().unwrap();
    let cg = cgroups(true, 2, Some(200), h.clone());
    let placed = place(&cg, &[me, peer]).unwrap();
    let (a, b) = (group_of(me, &h), group_of(peer, &h));
    assert!(
        a != b && a.ends_with("p0/l1") && b.ends_with("p1/l1"),
        "{a:?} {b:?}"
    );
    assert_eq!(
        std::fs::read_to_string(a.parent().unwrap().join("cpu.shares"))
            .unwrap()
            .trim(),
        "2048"
    );
    let parent = a.parent().unwrap().parent().unwrap().to_path_buf();
    // The peer leaves its group before the groups are removed, as participants do.
    stop_tx.send(()).unwrap();
    other.join().unwrap();
    drop(placed);
    assert_eq!(group_of(me, &h), home, "this thread is back home");
    assert!(!parent.exists(), "{parent:?} removed");
}

#[test]
fn groups_a_dead_run_left_are_swept() {
    let Some(h) = writable().filter(|h| !h.v2) else {
        eprintln!("skipped: no writable cgroup v1 cpu hierarchy");
        return;
    };
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = h.base.join(format!("{PREFIX}{dead}-0"));
    std::fs::create_dir_all(stale.join("p0").join("l1")).unwrap();
    // A group of a live owner (this test's parent, pid 1's) stays.
    let live = h.base.join(format!("{PREFIX}1-0"));
    std::fs::create_dir(&live).unwrap();
    sweep(&h.base);
    let (stale_gone, live_kept) = (!stale.exists(), live.exists());
    let _ = std::fs::remove_dir(&live);
    assert!(stale_gone && live_kept);
}

#[test]
fn a_real_time_policy_is_refused_where_groups_have_their_own_rt_runtime() {
    use crate::sched::{Policy, Sched};
    let dir = std::env::temp_dir().join(format!("ctxbench-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let v1 = cgroups(false, 1, None, hierarchy(&dir, false));
    let sched = |p, prio| Sched::new(p, prio, None, [None; 3]).unwrap();
    // No cpu.rt_runtime_us: no RT group scheduling, nothing to refuse.
    assert!(check_policy(&v1, &sched(Policy::Fifo, Some(10))).is_ok());
    std::fs::write(dir.join("cpu.rt_runtime_us"), "950000\n").unwrap();
    let e = check_policy(&v1, &sched(Policy::Rr, Some(3))).unwrap_err();
    let text = e.to_string();
    assert_eq!(e.errno(), Some(libc::EINVAL), "{text}");
    assert!(
        text.starts_with("cgroups with policy rr 3: ")
            && text.contains(&format!("{}", dir.join("cpu.rt_runtime_us").display()))
            && text.contains("fair policy"),
        "{text}"
    );
    assert!(check_policy(&v1, &sched(Policy::Batch, None)).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}
