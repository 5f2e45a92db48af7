//! The policy checks against fixture trees (what this machine cannot show: no RT runtime,
//! a cgroup without one, missing privileges), and policies applied to threads and read back.

use super::*;
use std::fs;

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ctxbench-sched-{}-{n}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A /proc of fixture files: sched_rt_runtime_us, and this process in cpu group `group` of a
/// cgroup v1 cpu hierarchy mounted at `<root>/cpu`, whose cpu.rt_runtime_us is `group_rt`.
fn fixture(rt_runtime: &str, group_rt: Option<&str>) -> (TempDir, Host) {
    let root = TempDir::new();
    let proc_root = root.path().join("proc");
    fs::create_dir_all(proc_root.join("sys/kernel")).unwrap();
    fs::create_dir_all(proc_root.join("self")).unwrap();
    fs::write(proc_root.join("sys/kernel/sched_rt_runtime_us"), rt_runtime).unwrap();
    let mount = root.path().join("cpu");
    fs::create_dir_all(mount.join("bench/inner")).unwrap();
    if let Some(v) = group_rt {
        fs::write(mount.join("bench/inner/cpu.rt_runtime_us"), v).unwrap();
    }
    fs::write(
        proc_root.join("self/cgroup"),
        "4:memory:/\n1:cpu,cpuacct:/bench/inner\n0::/\n",
    )
    .unwrap();
    fs::write(
        proc_root.join("self/mountinfo"),
        format!(
            "30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
             31 25 0:27 / {} rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n",
            mount.display()
        ),
    )
    .unwrap();
    let host = Host {
        proc_root,
        cap_sys_nice: true,
        rtprio: 0,
        rlimit_nice: 0,
    };
    (root, host)
}

fn fifo(priority: i64) -> Sched {
    Sched::new(Policy::Fifo, Some(priority), None, [None; 3]).unwrap()
}

fn denied(s: &Sched, host: &Host) -> String {
    let e = check(s, host).unwrap_err();
    assert_eq!(e.errno(), Some(libc::EPERM), "{e}");
    e.to_string()
}

#[test]
fn a_permitted_policy_passes() {
    let (_root, host) = fixture("950000", Some("950000"));
    assert!(check(&fifo(10), &host).is_ok());
    let (_root, host) = fixture("-1", None);
    assert!(check(&fifo(99), &host).is_ok());
}

#[test]
fn no_real_time_runtime_is_refused_naming_the_sysctl() {
    let (_root, host) = fixture("0", None);
    let e = denied(&fifo(10), &host);
    assert!(
        e.contains("/proc/sys/kernel/sched_rt_runtime_us is 0"),
        "{e}"
    );
    // Fair policies need no real-time time.
    let batch = Sched::new(Policy::Batch, None, Some(3), [None; 3]).unwrap();
    assert!(check(&batch, &host).is_ok());
}

#[test]
fn a_cgroup_without_rt_runtime_is_refused_naming_its_file() {
    let (root, host) = fixture("950000", Some("0"));
    let e = denied(&fifo(10), &host);
    let file = root.path().join("cpu/bench/inner/cpu.rt_runtime_us");
    assert!(e.contains(&format!("{} is 0", file.display())), "{e}");
    let rr = Sched::new(Policy::Rr, Some(5), None, [None; 3]).unwrap();
    assert!(denied(&rr, &host).contains("cpu.rt_runtime_us is 0"));
}

#[test]
fn without_cap_sys_nice_rtprio_and_nice_limits_are_named() {
    let (_root, mut host) = fixture("950000", None);
    host.cap_sys_nice = false;
    host.rtprio = 5;
    assert!(check(&fifo(5), &host).is_ok());
    let e = denied(&fifo(6), &host);
    assert!(
        e.contains("CAP_SYS_NICE") && e.contains("RLIMIT_RTPRIO of at least 6 (it is 5"),
        "{e}"
    );
    let dl = Sched::new(Policy::Deadline, None, None, [None; 3]).unwrap();
    assert!(denied(&dl, &host).contains("SCHED_DEADLINE needs CAP_SYS_NICE"));
    let nice = Sched::new(Policy::Other, None, Some(-5), [None; 3]).unwrap();
    let e = denied(&nice, &host);
    assert!(e.contains("RLIMIT_NICE of at least 25 (it is 0)"), "{e}");
    host.rlimit_nice = 25;
    assert!(check(&nice, &host).is_ok());
}

#[test]
fn parameters_belong_to_their_policy() {
    let bad = |r: Result<Sched>, param: &str| match r {
        Err(Error::Invalid { param: p, message }) => {
            assert_eq!(p, param, "{message}");
            message
        }
        other => panic!("expected a {param} error, got {other:?}"),
    };
    let none = [None; 3];
    bad(Sched::new(Policy::Fifo, Some(0), None, none), "priority");
    bad(Sched::new(Policy::Rr, Some(100), None, none), "priority");
    bad(Sched::new(Policy::Other, Some(3), None, none), "priority");
    bad(Sched::new(Policy::Fifo, None, Some(1), none), "nice");
    bad(Sched::new(Policy::Idle, None, Some(20), none), "nice");
    let m = bad(Sched::new(Policy::Idle, None, Some(-20), none), "nice");
    assert!(m.contains("only other and batch do: SCHED_IDLE"), "{m}");
    assert_eq!(
        Sched::new(Policy::Idle, None, Some(0), none).unwrap().nice,
        0
    );
    let m = bad(
        Sched::new(Policy::Other, None, None, [Some(100), None, None]),
        "dl_runtime_us",
    );
    assert!(m.contains("policy \"deadline\" only"), "{m}");
    let m = bad(
        Sched::new(Policy::Deadline, None, None, [Some(500), None, Some(400)]),
        "dl_runtime_us",
    );
    assert!(m.contains("runtime <= deadline <= period"), "{m}");
    assert_eq!(
        Sched::new(Policy::Fifo, None, None, none).unwrap().priority,
        1
    );
    let dl = Sched::new(Policy::Deadline, None, None, none).unwrap();
    assert_eq!(dl.dl_ns, [200_000, 1_000_000, 1_000_000]);
    assert_eq!(dl.describe(), "deadline 200/1000/1000 µs");
    assert!(Policy::parse("sporadic").is_err());
}

/// On a thread of its own, so that the test runner's threads keep their policy.
fn on_a_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| s.spawn(f).join().unwrap())
}

#[test]
fn a_fair_policy_is_applied_and_read_back() {
    on_a_thread(|| {
        let asked = Sched::new(Policy::Batch, None, Some(7), [None; 3]).unwrap();
        let tid = crate::sys::gettid();
        let seen = apply(Some(&asked), &[("this thread".into(), tid)]).unwrap();
        assert_eq!(seen, asked);
        assert_eq!(get(0).unwrap(), asked);
        // Nothing asked: what the task has, read back.
        assert_eq!(apply(None, &[("this thread".into(), tid)]).unwrap(), asked);
    });
}

#[test]
fn a_thread_of_a_point_takes_the_policy_asked_and_nothing_asked_leaves_it() {
    on_a_thread(|| {
        let before = get(0).unwrap();
        this_thread(None, "this thread").unwrap();
        assert_eq!(get(0).unwrap(), before);
        let idle = Sched::new(Policy::Idle, None, None, [None; 3]).unwrap();
        this_thread(Some(&idle), "this thread").unwrap();
        assert_eq!(get(0).unwrap().policy, Policy::Idle);
    });
}

#[test]
fn tasks_under_different_policies_are_an_error_not_a_record() {
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let other = std::thread::spawn(move || {
        let batch = Sched::new(Policy::Batch, None, None, [None; 3]).unwrap();
        set(0, &batch).unwrap();
        tx.send(crate::sys::gettid()).unwrap();
        done_rx.recv().unwrap();
    });
    let tid = rx.recv().unwrap();
    let e = on_a_thread(|| {
        let me = crate::sys::gettid();
        apply(None, &[("task a".into(), me), ("task b".into(), tid)]).unwrap_err()
    });
    done_tx.send(()).unwrap();
    other.join().unwrap();
    let text = e.to_string();
    assert!(text.contains("task b runs under batch"), "{text}");
}

#[test]
fn a_refusal_by_the_kernel_names_the_task_and_the_limit() {
    // SCHED_DEADLINE on a task pinned to one CPU of several: the kernel refuses (EPERM).
    let cpus = crate::sys::allowed_cpus().unwrap();
    if cpus.len() < 2 || !Host::this().cap_sys_nice {
        return;
    }
    on_a_thread(|| {
        assert_eq!(crate::sys::set_affinity(&crate::sys::cpu_set(cpus[0])), 0);
        let dl = Sched::new(Policy::Deadline, None, None, [None; 3]).unwrap();
        let e = apply(Some(&dl), &[("participant x".into(), 0)]).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("setting deadline 200/1000/1000 µs on participant x")
                && text.contains("root domain"),
            "{text}"
        );
    });
}

#[test]
fn a_real_time_task_that_holds_a_cpu_is_named() {
    // A SCHED_FIFO spinner pinned to this thread's first CPU, while this thread looks from
    // another: it is named with its policy and CPU.
    let cpus = crate::sys::allowed_cpus().unwrap();
    if cpus.len() < 2 || !Host::this().cap_sys_nice {
        return;
    }
    let (cpu, spin) = (cpus[0], std::sync::atomic::AtomicBool::new(true));
    let (tx, rx) = std::sync::mpsc::channel();
    let named = std::thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(crate::sys::set_affinity(&crate::sys::cpu_set(cpu)), 0);
            this_thread(Some(&fifo(1)), "the spinner").unwrap();
            tx.send(crate::sys::gettid()).unwrap();
            while spin.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        let tid = rx.recv().unwrap();
        let named = realtime_holders(&[cpu]);
        spin.store(false, std::sync::atomic::Ordering::Relaxed);
        (tid, named)
    });
    let (tid, named) = named;
    let want = (
        format!("task {tid} ("),
        format!(") under fifo 1 on CPU {cpu}"),
    );
    assert!(
        named
            .iter()
            .any(|n| n.starts_with(&want.0) && n.ends_with(&want.1)),
        "{named:?}"
    );
}
