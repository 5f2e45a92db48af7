//! Tests of the matrix: cell order, class selection, real cells on this machine, bad input.
use super::*;
use crate::engine::TransportKind;
use crate::stop::Stop;
use crate::topology::{self, tests::fixture, Relation};
use std::path::Path;

fn quick(cpus: Option<Vec<usize>>) -> MatrixConfig {
    MatrixConfig {
        cpus,
        ring: Config {
            engine: Engine::Thread,
            transport: TransportKind::Futex,
            stop: Stop::Fixed(2),
            warmup: 0,
            min_time: 0.001,
            ..Config::lat_ctx(vec![2])
        },
        per_class: None,
        full: false,
        passes: 1,
        memory: Memory::Auto,
    }
}

fn invalid(topo: &Topology, cfg: MatrixConfig) -> (&'static str, String) {
    match validate(topo, &cfg) {
        Err(Error::Invalid { param, message }) => (param, message),
        other => panic!("expected a ValueError, got {other:?}"),
    }
}

#[test]
fn bad_cpus_are_named() {
    let t = fixture("offline");
    let (param, msg) = invalid(&t, quick(Some(vec![0, 7])));
    assert_eq!((param, msg.as_str()), ("cpus", "CPU 7 is offline"));
    let (_, msg) = invalid(&t, quick(Some(vec![42])));
    assert!(msg.starts_with("CPU 42 does not exist"), "{msg}");
    let (_, msg) = invalid(&t, quick(Some(vec![1, 1])));
    assert_eq!(msg, "CPU 1 is named twice");
    assert_eq!(invalid(&t, quick(Some(vec![]))).0, "cpus");
    let t = fixture("cpuset");
    let (_, msg) = invalid(&t, quick(Some(vec![2])));
    assert!(
        msg.contains("CPU 2 is outside") && msg.contains("[0, 1, 3]"),
        "{msg}"
    );
    assert_eq!(validate(&t, &quick(None)).unwrap(), [0, 1, 3]);
    assert_eq!(validate(&t, &quick(Some(vec![3, 0]))).unwrap(), [0, 3]);
}

#[test]
fn transports_without_a_cross_cpu_wake_up_list_what_works() {
    let t = fixture("amd-1s-2ccx");
    let mut cfg = quick(Some(vec![0, 1]));
    cfg.ring.transport = TransportKind::Yield;
    let (param, msg) = invalid(&t, cfg.clone());
    assert_eq!(param, "transport");
    for name in ["\"yield\"", "\"pipe\"", "\"futex\"", "\"condvar\""] {
        assert!(msg.contains(name), "{name}: {msg}");
    }
    // On the diagonal alone, yield is a matrix of one cell.
    cfg.cpus = Some(vec![3]);
    assert!(validate(&t, &cfg).is_ok());
}

#[test]
fn other_parameters_are_checked_before_measuring() {
    let t = fixture("intel-2s-smt2");
    let with = |f: &dyn Fn(&mut MatrixConfig)| {
        let mut c = quick(None);
        f(&mut c);
        invalid(&t, c).0
    };
    assert_eq!(with(&|c| c.memory = Memory::Node(2)), "memory_node");
    assert!(Memory::parse("nearby").is_err());
}

#[test]
fn memory_goes_to_the_named_node() {
    let t = fixture("intel-2s-smt2");
    assert_eq!(Memory::Auto.node(&t, 0, 4), Some(0));
    assert_eq!(Memory::Auto.node(&t, 4, 0), Some(1));
    assert_eq!(Memory::Wakee.node(&t, 0, 4), Some(1));
    assert_eq!(Memory::Node(1).node(&t, 0, 8), Some(1));
    // One node: not placed unless asked.
    let one = fixture("amd-1s-2ccx");
    assert_eq!(Memory::Auto.node(&one, 0, 4), None);
    assert_eq!(Memory::Waker.node(&one, 0, 4), Some(0));
}

fn live() -> Topology {
    topology::read(Path::new("/sys")).unwrap()
}

#[test]
fn one_cpu_is_the_diagonal_with_a_hint() {
    let t = live();
    let c = t.allowed()[0];
    let m = run(&t, &quick(Some(vec![c])), &mut || false, &mut |_, _, _| {
        Ok(())
    })
    .unwrap();
    assert_eq!(m.cells.len(), 1);
    assert_eq!((m.cells[0].from, m.cells[0].to), (c, c));
    assert_eq!(m.cells[0].class.relation, Relation::SameCpu);
    assert!(
        m.warnings.iter().any(|w| w.contains("diagonal")),
        "{:?}",
        m.warnings
    );
}

#[test]
fn every_pair_of_this_machine_with_hops_memory_and_clock_checks() {
    let t = live();
    let cpus = t.allowed();
    let cfg = MatrixConfig {
        ring: Config {
            record_hops: true,
            ..quick(None).ring
        },
        memory: Memory::Node(0),
        ..quick(None)
    };
    let mut heard = Vec::new();
    let m = run(&t, &cfg, &mut || false, &mut |done, total, cell| {
        heard.push((done, total, cell.from, cell.to));
        Ok(())
    })
    .unwrap();
    let n = cpus.len();
    assert_eq!(m.cells.len(), n * n);
    assert_eq!(heard.len(), n * n);
    assert!(heard
        .iter()
        .enumerate()
        .all(|(i, h)| h.0 == i + 1 && h.1 == n * n));
    for c in &m.cells {
        assert_eq!(c.figures.cpus[0][0], [c.from as i32, c.to as i32]);
        assert!(c.figures.latency_us[0].is_finite());
        assert!(c.memory.unwrap().verified(), "{:?}", c.memory);
        let wake = c.wake.as_ref().expect("hops were recorded");
        assert!(wake.iter().sum::<u64>() > 0);
        let offset = c.offset.unwrap();
        if c.from == c.to {
            assert_eq!(offset.bound_ns(), 0.0);
            assert!(!c.offset_flagged);
        }
        assert!(c.started_s >= 0.0 && c.elapsed_s > 0.0);
    }
    let starts: Vec<f64> = m.cells.iter().map(|c| c.started_s).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn an_error_from_progress_stops_the_run() {
    let t = live();
    let e = run(&t, &quick(None), &mut || false, &mut |_, _, _| {
        Err(Error::Interrupted)
    })
    .err()
    .unwrap();
    assert_eq!(e, Error::Interrupted);
}
