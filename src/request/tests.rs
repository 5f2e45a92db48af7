//! Tests of the request: defaults (the table's are the ones resolving uses), presets, each
//! measurement's mode decisions, and errors that name the parameter.

use super::*;
use crate::engine::{Engine, TransportKind};
use crate::observer::Observer;
use crate::placement::Placement;
use crate::stop::{Precision, Stop};

fn ring(procs: &[i64]) -> Request {
    let mut r = Request::new(Door::Ring);
    r.set("procs", Value::Ints(procs.to_vec())).unwrap();
    r
}

fn with(mut r: Request, name: &str, value: Value) -> Request {
    r.set(name, value).unwrap();
    r
}

/// lmbench's choices (forked processes, pipes, 11 repetitions after one warm-up), every other
/// value the table's default: the ring the core's tests start from.
impl crate::config::Config {
    pub fn lat_ctx(procs: Vec<usize>) -> Self {
        let procs: Vec<i64> = procs.iter().map(|&n| n as i64).collect();
        with(ring(&procs), "repetitions", Value::Int(11))
            .ring()
            .unwrap()
    }
}

#[test]
fn an_empty_ring_request_is_lmbench_s_ring_in_precision_mode() {
    let cfg = ring(&[2, 8]).ring().unwrap();
    assert_eq!(
        (cfg.engine, cfg.transport),
        (Engine::Process, TransportKind::Pipe)
    );
    assert_eq!(cfg.procs, [2, 8]);
    assert_eq!(cfg.placement, Placement::Default);
    assert_eq!(cfg.observer, Observer::Evidence);
    assert_eq!(
        cfg.stop,
        Stop::Precise(Precision {
            target: 0.02,
            max_repetitions: 400,
            max_time: 0.2
        })
    );
    assert_eq!(cfg.min_time, crate::stop::PRECISION_MIN_TIME);
    let fixed = with(ring(&[2]), "repetitions", Value::Int(11))
        .ring()
        .unwrap();
    assert_eq!(fixed.stop, Stop::Fixed(11));
    assert_eq!(fixed.min_time, crate::stop::FIXED_MIN_TIME);
}

#[test]
fn a_preset_sets_precision_and_time_unless_they_are_named() {
    let fast = with(ring(&[2]), "preset", Value::Name("fast".into()));
    let Stop::Precise(Precision {
        target, max_time, ..
    }) = fast.ring().unwrap().stop
    else {
        panic!("precision mode")
    };
    assert_eq!((target, max_time), (0.05, 0.1));
    let named = with(fast, "precision", Value::Real(0.03));
    let Stop::Precise(Precision {
        target, max_time, ..
    }) = named.ring().unwrap().stop
    else {
        panic!("precision mode")
    };
    assert_eq!((target, max_time), (0.03, 0.1));
    // The same preset means the same in every measurement.
    let mut m = Request::new(Door::Matrix);
    m.set("preset", Value::Name("rigorous".into())).unwrap();
    let cell = m.matrix().unwrap().ring.stop;
    assert_eq!(
        cell,
        Stop::Precise(Precision {
            target: 0.01,
            max_repetitions: 400,
            max_time: 2.0
        })
    );
}

#[test]
fn what_a_measurement_does_not_take_is_a_type_error_and_a_range_names_the_parameter() {
    let mut r = Request::new(Door::Ring);
    let e = r.set("loops", Value::Int(5)).unwrap_err();
    assert_eq!(
        e,
        Error::Type("ring() got an unexpected keyword argument \"loops\"".into())
    );
    let e = r.set("size_kb", Value::Name("big".into())).unwrap_err();
    assert!(
        matches!(e, Error::Type(ref m) if m.starts_with("size_kb: expected an int")),
        "{e}"
    );
    let e = r.set("size_kb", Value::Int(-1)).unwrap_err().to_string();
    assert!(e.starts_with("size_kb: must be between 0 and"), "{e}");
    let e = r
        .set("engine", Value::Name("green".into()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("engine: unknown engine \"green\"; expected one of [\"process\", \"thread\""),
        "{e}"
    );
    let e = r.set("procs", Value::Ints(vec![])).unwrap_err().to_string();
    assert!(e.contains("procs: must name at least one"), "{e}");
    assert!(r.set("procs", Value::Ints(vec![1])).is_err());
    let most = crate::config::MAX_POINTS;
    let e = r.set("procs", Value::Ints(vec![2; most + 1])).unwrap_err();
    let want = format!("procs: lists more than {most} process counts");
    assert_eq!(e.to_string(), want);
    assert_eq!(ring(&[2, 8]).ring().unwrap().procs, [2, 8]);
    let e = ring(&[2])
        .set("counters", Value::None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("counters: expected one of"), "{e}");
}

#[test]
fn every_range_is_checked_as_the_value_is_given() {
    let refused = |name: &str, value: Value| {
        let e = ring(&[2]).set(name, value).unwrap_err();
        assert!(
            matches!(e, Error::Invalid { param, .. } if param == name),
            "{name}"
        );
    };
    refused("repetitions", Value::Int(0));
    refused("precision", Value::Real(0.0));
    refused("precision", Value::Real(f64::NAN));
    refused("max_repetitions", Value::Int(15));
    refused("max_time", Value::Real(0.0));
    let precise = with(ring(&[2]), "precision", Value::Real(0.01));
    assert!(with(precise, "max_time", Value::Real(1.0)).ring().is_ok());
    // A sweep of one round has no interval: its rounds are refused here, not by the sweep.
    let one_round = Request::new(Door::Cache).set("rounds", Value::Int(1)).err();
    assert!(matches!(
        one_round,
        Some(Error::Invalid {
            param: "rounds",
            ..
        })
    ));
}

#[test]
fn ping_pong_picks_its_engine_from_threads_and_refuses_a_contradiction() {
    let mut p = Request::new(Door::Pingpong);
    assert_eq!(p.pingpong().unwrap().engine, Engine::Process);
    p.set("threads", Value::Switch(true)).unwrap();
    assert_eq!(p.pingpong().unwrap().engine, Engine::Thread);
    p.set("engine", Value::Name("fiber".into())).unwrap();
    let e = p.pingpong().unwrap_err().to_string();
    assert!(e.contains("threads: True means engine=\"thread\""), "{e}");
    let mut fixed = Request::new(Door::Pingpong);
    fixed.set("loops", Value::Int(1000)).unwrap();
    assert_eq!(fixed.pingpong().unwrap().stop, Stop::Fixed(1));
}

#[test]
fn the_matrix_measures_threads_over_futexes_by_default() {
    let m = Request::new(Door::Matrix).matrix().unwrap();
    assert_eq!(
        (m.ring.engine, m.ring.transport),
        (Engine::Thread, TransportKind::Futex)
    );
    assert_eq!((m.cpus, m.per_class, m.passes), (None, None, 1));
    let refused = |name: &str, value: &str| {
        let mut r = Request::new(Door::Matrix);
        r.set(name, Value::Name(value.into())).unwrap();
        r.matrix().unwrap_err().to_string()
    };
    assert!(refused("engine", "fiber").starts_with("engine: fibers all run on one thread"));
    assert!(refused("policy", "deadline").starts_with("policy: the matrix pins"));
}

/// Every defaulted parameter of `door`, given its table default explicitly.
fn defaults_given(door: Door, base: Request) -> Request {
    let mut r = base;
    for p in params::of(door) {
        if let Some(v) = p.default.value() {
            r.set(p.name, v).unwrap();
        }
    }
    r
}

#[test]
fn the_table_s_defaults_are_the_ones_resolve_uses() {
    let same = |a: String, b: String| assert_eq!(a, b);
    same(
        format!("{:?}", ring(&[2]).ring().unwrap()),
        format!(
            "{:?}",
            defaults_given(Door::Ring, ring(&[2])).ring().unwrap()
        ),
    );
    let empty = |door| Request::new(door);
    same(
        format!("{:?}", empty(Door::Pingpong).pingpong().unwrap()),
        format!(
            "{:?}",
            defaults_given(Door::Pingpong, empty(Door::Pingpong))
                .pingpong()
                .unwrap()
        ),
    );
    same(
        format!("{:?}", empty(Door::Matrix).matrix().unwrap()),
        format!(
            "{:?}",
            defaults_given(Door::Matrix, empty(Door::Matrix))
                .matrix()
                .unwrap()
        ),
    );
    let mut cache = Request::new(Door::Cache);
    let sizes = cache.clone();
    assert_eq!(
        sizes.cache().unwrap().base.procs,
        [2, 8],
        "the table's ring sizes"
    );
    assert_eq!(sizes.cache().unwrap().sizes_kb, None, "left to the host");
    cache.set("sizes_kb", Value::Ints(vec![0, 64])).unwrap();
    same(
        format!("{:?}", cache.cache().unwrap()),
        format!(
            "{:?}",
            defaults_given(Door::Cache, cache.clone()).cache().unwrap()
        ),
    );
}

#[test]
fn an_ab_request_resolves_both_sides_and_refuses_a_matrix() {
    let mut ab = Request::new(Door::Ab);
    ab.set("seed", Value::Int(7)).unwrap();
    let pp = Request::new(Door::Pingpong);
    let r = ab.ab(&ring(&[2]), &pp).unwrap();
    assert_eq!(
        (r.plan.seed, r.plan.budget_s, r.plan.threshold),
        (7, 30.0, 0.02)
    );
    assert_eq!(r.b.procs, [2]);
    assert_eq!(r.measures, ["ring", "pingpong"]);
    let e = ab.ab(&ring(&[2]), &Request::new(Door::Matrix)).unwrap_err();
    assert!(e.to_string().starts_with("b: an A/B side is"), "{e}");
}
