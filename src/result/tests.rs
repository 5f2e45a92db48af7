//! Tests of a point's result: net samples, the switch model per engine and transport,
//! flags for what cannot be true, hop histograms.
use super::ring::summarize_with;
use super::*;
use crate::counters::Totals;
use crate::ring::{Phases, Rusage};
use crate::stop::Stopped;

/// A point of `procs` participants and one ring whose repetitions took `raw` and
/// `overhead` ns per hop.
fn point(procs: usize, raw: &[f64], overhead: &[f64]) -> Point {
    let column = |v: &[f64]| v.iter().map(|&x| vec![x]).collect::<Vec<_>>();
    Point {
        procs,
        raw_ns: column(raw),
        overhead_ns: column(overhead),
        raw_cycles: column(raw),
        overhead_cycles: column(overhead),
        trips: vec![100],
        overhead_rounds: vec![200],
        cpus: vec![vec![0; procs]],
        work_verified: true,
        accounting: Err("not read in this test".into()),
        counters: Totals {
            switches: Some(150),
            ..Totals::default()
        },
        observed_hops: 100,
        counted_ns: 2500.0,
        hops: None,
        rusage: Rusage::default(),
        phase_s: Phases::default(),
        stopped: Stopped::Repetitions,
        block: 1,
        instance_blocks: vec![raw.len()],
        resident_kb: Some(0),
        one_cpu: true,
        sched: crate::sched::Sched::default(),
        interference: None,
        throttled: None,
    }
}

fn fixed() -> Config {
    Config {
        stop: Stop::Fixed(3),
        ..Config::lat_ctx(vec![2])
    }
}

#[test]
fn net_samples_are_raw_minus_overhead_per_repetition() {
    let p = point(2, &[3000.0, 4000.0, 5000.0], &[1000.0, 1000.0, 2000.0]);
    let s = summarize_with(&[p], Model::Blocking, &fixed());
    assert_eq!(s.samples_us, vec![vec![2.0], vec![3.0], vec![3.0]]);
    assert_eq!((s.latency_us[0], s.stats.median[0]), (3.0, 3.0));
    assert_eq!((s.min_us[0], s.stats.min[0]), (2.0, 2.0));
    assert_eq!(s.raw_us, vec![4.0]);
    assert_eq!(s.overhead_point_us, vec![1.0]);
    assert_eq!(s.overhead_us, 1.0);
    assert_eq!(s.ring_us, vec![vec![3.0]]);
    assert_eq!(s.below_resolution, vec![false]);
    assert_eq!(s.counted_us, vec![2.5]);
    assert_eq!((s.trips[0], s.overhead_rounds[0]), (100, 200));
    assert_eq!(s.switches_per_hop, vec![1.5]);
    assert_eq!(s.switch_source, vec!["perf"]);
    assert!(s.warnings.is_empty());
    assert!(s.hop_percentiles_us.is_none() && s.hop_histogram.is_none());
}

#[test]
fn a_switch_below_the_overhead_is_flagged_not_dropped() {
    let s = summarize_with(&[point(2, &[1000.0], &[1500.0])], Model::Blocking, &fixed());
    assert_eq!(s.latency_us[0], -0.5);
    assert_eq!(s.below_resolution, vec![true]);
}

#[test]
fn a_point_a_quota_throttled_is_flagged_throttled_and_warned_whatever_its_spread() {
    let steady = [3000.0, 3000.0, 3000.0];
    let mut p = point(2, &steady, &[1000.0; 3]);
    let quiet = summarize_with(std::slice::from_ref(&p), Model::Blocking, &fixed());
    let throttled = Verdict::Throttled.as_str();
    assert_ne!(quiet.stats.verdict[0], throttled);
    p.throttled = Some(0);
    let none = summarize_with(std::slice::from_ref(&p), Model::Blocking, &fixed());
    assert_eq!(
        none.stats.verdict[0], quiet.stats.verdict[0],
        "a quota, never hit"
    );
    assert!(none.warnings.is_empty(), "{:?}", none.warnings);
    p.throttled = Some(3);
    let hit = summarize_with(&[p], Model::Blocking, &fixed());
    assert_eq!(hit.stats.verdict[0], throttled);
    let said = hit.warnings.join("\n");
    assert!(
        said.contains("2 procs: throttled: the CPU quota stopped this run's groups in 3 periods"),
        "{said}"
    );
    assert!(
        said.contains("restriction cpu_quota") && said.contains("is not a switch's"),
        "{said}"
    );
}

#[test]
fn counts_outside_the_model_warn() {
    let mut p = point(8, &[3000.0], &[1000.0]);
    p.counters.switches = Some(10);
    let s = summarize_with(&[p.clone()], Model::Blocking, &fixed());
    assert_eq!(s.warnings.len(), 1);
    assert!(
        s.warnings[0].contains("switches_per_hop=0.10"),
        "{:?}",
        s.warnings
    );
    assert_eq!(s.one_cpu, vec![true]);
    // Across CPUs a receiver may find the token without sleeping: no warning.
    let spread = Point {
        one_cpu: false,
        ..p.clone()
    };
    assert!(summarize_with(&[spread], Model::Blocking, &fixed())
        .warnings
        .is_empty());
    p.counters.switches = Some(0);
    assert!(summarize_with(&[p.clone()], Model::Invisible, &fixed())
        .warnings
        .is_empty());
    // The kernel's accounting of the timed windows comes before perf's count.
    p.accounting = Ok(crate::observer::Accounting {
        switches: 40,
        migrations: Some(3),
        cpu_ns: Some(160_000),
        runq_ns: Some(8_000),
        hops: 80,
        ..Default::default()
    });
    let s = summarize_with(&[p.clone()], Model::Blocking, &fixed());
    assert_eq!((s.switches_per_hop[0], s.switch_source[0]), (0.5, "kernel"));
    assert_eq!(s.migrations[0], 3);
    assert_eq!((s.cpu_us_per_hop[0], s.runq_wait_us_per_hop[0]), (2.0, 0.1));
    assert!(s.cpu_user_us_per_hop[0].is_nan(), "not shown: NaN, never 0");
    p.accounting = Err("unreadable".into());
    p.counters.switches = None;
    p.rusage = Rusage {
        voluntary: 30,
        involuntary: 10,
        passes: 20,
    };
    let s = summarize_with(&[p], Model::Yielding, &fixed());
    assert_eq!((s.switches_per_hop[0], s.switch_source[0]), (2.0, "rusage"));
}

#[test]
fn the_model_follows_engine_and_transport() {
    use TransportKind::*;
    assert_eq!(Model::of(Engine::Fiber, Resume), Model::Invisible);
    assert_eq!(Model::of(Engine::Thread, Yield), Model::Yielding);
    assert_eq!(Model::of(Engine::Process, Pipe), Model::Blocking);
    assert_eq!(Model::of(Engine::Process, Futex), Model::Blocking);
    // The io_uring and futex2 paths block the receiver until the sender wakes it, too:
    // a completion posted (MSG_RING, a read of a pipe) or a futex woken from a ring or by
    // futex_waitv.
    for t in [MsgRing, UringFutex, FutexWaitv, UringRead] {
        for engine in [Engine::Process, Engine::Thread] {
            assert_eq!(Model::of(engine, t), Model::Blocking, "{engine:?} {t:?}");
        }
    }
}

#[test]
fn hop_histograms_are_trimmed_and_summarised() {
    let mut counts = vec![0u64; hops::BUCKETS];
    let (fast, slow) = (hops::bucket(1_000), hops::bucket(9_000));
    counts[fast] = 99;
    counts[slow] = 1;
    let mut a = point(2, &[3000.0], &[1000.0]);
    a.hops = Some((counts, 9_100));
    let mut b = a.clone();
    b.hops = Some((vec![0; hops::BUCKETS], 0));
    let s = summarize_with(&[a.clone(), b], Model::Blocking, &fixed());
    let h = s.hop_histogram.expect("both points recorded");
    assert_eq!(h.counts.len(), 2);
    assert_eq!(h.counts[0].len(), slow + 1);
    assert_eq!(h.edges_us.len(), slow + 2);
    assert_eq!(h.counts[0].iter().sum::<u64>(), 100);
    let percentiles = s.hop_percentiles_us.expect("both points recorded");
    let names: Vec<&str> = percentiles.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["p50", "p90", "p99", "p99.9", "max"]);
    let p50 = percentiles[0].1[0];
    assert!((0.9..=1.1).contains(&p50), "p50 {p50} µs");
    assert_eq!(percentiles[4].1, vec![9.1, 0.0]);
    // A point that did not record: no histogram at all, not a partial one.
    let s = summarize_with(&[a, point(2, &[1.0], &[0.5])], Model::Blocking, &fixed());
    assert!(s.hop_histogram.is_none() && s.hop_percentiles_us.is_none());
}

#[test]
fn an_array_never_written_is_caught_for_every_engine() {
    use crate::config::NEVER_WRITTEN;
    use crate::stop::Stop;
    for &engine in Engine::ALL {
        let cfg = Config {
            engine,
            transport: engine.default_transport(),
            size_kb: 256,
            min_time: 0.002,
            stop: Stop::Fixed(2),
            ..Config::lat_ctx(vec![2, 3])
        };
        let written = summarize(&cfg, &crate::ring::run(&cfg, &mut || false).unwrap());
        assert_eq!(written.resident_kb, vec![256; 2], "{engine:?}");
        assert!(
            !written.warnings.iter().any(|w| w.contains("resident_kb")),
            "{engine:?}: {:?}",
            written.warnings
        );
        NEVER_WRITTEN.set(true);
        let points = crate::ring::run(&cfg, &mut || false);
        NEVER_WRITTEN.set(false);
        let zero_page = summarize(&cfg, &points.unwrap());
        assert_eq!(zero_page.resident_kb, vec![0; 2], "{engine:?}");
        assert!(zero_page.work_verified.iter().all(|&v| v), "{engine:?}");
        for procs in [2, 3] {
            let want = format!("{procs} participants: resident_kb=0 < size_kb=256");
            assert!(
                zero_page.warnings.iter().any(|w| w.starts_with(&want)),
                "{engine:?}: {:?}",
                zero_page.warnings
            );
        }
    }
}
