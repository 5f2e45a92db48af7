//! Tests of the interference neighbours: the keys' ranges, the duty schedule, merged spans,
//! and real neighbours started, measured and reaped.

use super::*;

fn pairs(p: &[(&str, f64)]) -> Vec<(String, f64)> {
    p.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn ranges_are_refused_naming_the_key() {
    for (bad, words) in [
        (
            pairs(&[("hogs", 65.0)]),
            "\"hogs\" must be an integer between 0 and 64",
        ),
        (pairs(&[("hogs", 1.5)]), "\"hogs\""),
        (
            pairs(&[("rings", -1.0)]),
            "\"rings\" must be an integer between 0 and 16",
        ),
        (pairs(&[("thrash_kb", 2e6)]), "between 0 and 1048576"),
        (pairs(&[("duty", 0.0)]), "\"duty\" must be > 0 and <= 1"),
        (pairs(&[("duty", 1.01)]), "\"duty\""),
        (pairs(&[("duty", f64::NAN)]), "\"duty\""),
        (pairs(&[("cores", 1.0)]), "unknown key \"cores\""),
        (
            pairs(&[("queued", 65.0)]),
            "\"queued\" must be an integer between 0 and 64",
        ),
        (pairs(&[("hogs", 1.0), ("hogs", 2.0)]), "given twice"),
    ] {
        let e = Interference::from_pairs(&bad).unwrap_err().to_string();
        assert!(e.starts_with("interference: "), "{e}");
        assert!(e.contains(words), "{e} lacks {words}");
    }
}

#[test]
fn defaults_and_tasks() {
    let i = Interference::from_pairs(&pairs(&[("hogs", 2.0), ("rings", 1.0)])).unwrap();
    assert_eq!(i.duty, DEFAULT_DUTY);
    assert_eq!(i.tasks(), 4);
    let q = Interference::from_pairs(&pairs(&[("queued", 3.0)])).unwrap();
    assert!(!q.is_empty());
    assert_eq!(q.tasks(), 3);
    assert!(Interference::from_pairs(&[]).unwrap().is_empty());
}

#[test]
fn the_schedule_splits_one_period() {
    assert_eq!(schedule(1.0), (PERIOD_NS, 0));
    let (spin, sleep) = schedule(0.25);
    assert_eq!(spin + sleep, PERIOD_NS);
    assert_eq!(spin, PERIOD_NS / 4);
}

#[test]
fn spans_merge_weighted_by_their_length() {
    let a = Achieved {
        span_s: 1.0,
        hog_duty: vec![0.2],
        thrash_duty: None,
        thrash_resident_kb: Some(64),
        ring_duty: vec![],
        queued_duty: vec![0.0],
        queued_runnable: 2,
    };
    let b = Achieved {
        span_s: 3.0,
        hog_duty: vec![0.6],
        thrash_resident_kb: Some(32),
        ..a.clone()
    };
    let m = a.merge(&b);
    assert_eq!(m.span_s, 4.0);
    assert!((m.hog_duty[0] - 0.5).abs() < 1e-12);
    assert_eq!(m.thrash_resident_kb, Some(32));
}

#[test]
fn neighbours_run_and_are_reaped() {
    let asked = Interference {
        hogs: 1,
        duty: 0.5,
        thrash_kb: 64,
        rings: 1,
        queued: 0,
    };
    let mut n = Neighbours::start(&asked, &[]).unwrap();
    n.mark();
    std::thread::sleep(Duration::from_millis(50));
    let a = n.achieved();
    assert_eq!(a.hog_duty.len(), 1);
    assert_eq!(a.ring_duty.len(), 1);
    assert!(a.thrash_resident_kb.is_some_and(|kb| kb <= 64));
    let pids = n.pids();
    drop(n);
    for pid in pids {
        // SAFETY: probing a pid with signal 0.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        assert!(!alive, "{pid} still there");
    }
}

#[test]
fn queued_tasks_spin_under_sched_idle_and_stay_runnable() {
    // Two queued spinners on this thread's first CPU: each runs under SCHED_IDLE, is
    // runnable at the span's end, and got at most the span's CPU time.
    let cpu = crate::sys::allowed_cpus().unwrap()[0];
    let asked = Interference::from_pairs(&pairs(&[("queued", 2.0)])).unwrap();
    let mut n = Neighbours::start(&asked, &[cpu]).unwrap();
    // SAFETY: asking the policy of our own children.
    let policies = || -> Vec<i32> {
        let each = n.pids().into_iter();
        each.map(|pid| unsafe { libc::sched_getscheduler(pid) })
            .collect()
    };
    // Each sets its own policy once it first runs: on a loaded machine that may be long
    // after the start (a fixed 20 ms wait failed there), so wait for it, bounded.
    let deadline = Instant::now() + Duration::from_secs(10);
    while policies() != [libc::SCHED_IDLE; 2] && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(policies(), [libc::SCHED_IDLE; 2]);
    n.mark();
    std::thread::sleep(Duration::from_millis(100));
    let a = n.achieved();
    assert_eq!((a.queued_duty.len(), a.queued_runnable), (2, 2));
    assert!(
        a.queued_duty.iter().all(|d| (0.0..=1.05).contains(d)),
        "{a:?}"
    );
    assert!(a.hog_duty.is_empty());
    let pids = n.pids();
    drop(n);
    assert!(!pids.into_iter().any(runnable));
}

#[test]
fn neighbours_of_a_real_time_caller_leave_its_policy() {
    // A caller under SCHED_FIFO (which needs CAP_SYS_NICE): its hog, thrasher and neighbour
    // ring run under SCHED_OTHER, its queued task under SCHED_IDLE; none keeps FIFO.
    if !crate::sched::Host::this().cap_sys_nice {
        return;
    }
    let asked = Interference {
        hogs: 1,
        duty: 0.1,
        thrash_kb: 64,
        rings: 1,
        queued: 1,
    };
    // In the order started: hogs, the thrasher, queued tasks, the rings' two processes.
    let (other, idle) = (libc::SCHED_OTHER, libc::SCHED_IDLE);
    let want = vec![other, other, idle, other, other];
    let seen = std::thread::scope(|s| {
        s.spawn(|| {
            let fifo = crate::sched::Sched::new(crate::sched::Policy::Fifo, None, None, [None; 3]);
            crate::sched::this_thread(Some(&fifo.unwrap()), "the test's thread").unwrap();
            let n = Neighbours::start(&asked, &[]).unwrap();
            // SAFETY: asking the policy of our own children.
            let policies = || -> Vec<i32> {
                let each = n.pids().into_iter();
                each.map(|pid| unsafe { libc::sched_getscheduler(pid) })
                    .collect()
            };
            // Each sets its own policy once it runs; a loaded machine may take a while.
            let deadline = Instant::now() + Duration::from_secs(10);
            while policies() != want && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            policies()
        })
        .join()
        .unwrap()
    });
    assert_eq!(seen, want);
}
