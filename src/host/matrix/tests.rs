//! The matrix's default cells on described hosts (`tests/hosts.py`): every pair where that
//! fits the budget, else every class sampled with an interval's worth of cells, the whole
//! within the budget; planned, never measured.

use super::*;
use crate::request::{Door, Request, Value};
use crate::topology::tests::Described;

fn asked(more: &[(&str, Value)]) -> MatrixConfig {
    let mut r = Request::new(Door::Matrix);
    for (name, value) in more {
        r.set(name, value.clone()).unwrap();
    }
    r.matrix().unwrap()
}

fn on(host: &str, cfg: &MatrixConfig) -> MatrixPlan {
    plan_on(&Described::new(host).topology(), cfg).unwrap()
}

#[test]
fn a_small_host_measures_every_pair_by_default() {
    let plan = on("intel-xeon-guest", &asked(&[]));
    assert_eq!((plan.per_class, plan.cells, plan.full_cells), (None, 4, 4));
    assert!(plan.estimated_s < 60.0, "{plan:?}");
    // Two CPUs hold two pairs of each class: said, as no interval comes of them.
    assert_eq!(plan.notes.len(), 1, "{plan:?}");
    assert!(plan.notes[0].contains("same-cpu (2), shared-llc (2)"));
}

#[test]
fn a_384_cpu_two_socket_host_samples_every_class_within_the_budget() {
    let plan = on("xeon6-2s-snc3", &asked(&[]));
    assert_eq!(plan.cpus.len(), 384);
    assert_eq!(plan.full_cells, 384 * 384);
    let k = plan.per_class.expect("a sample, not every pair");
    assert!(k >= MIN_PER_CLASS, "{plan:?}");
    assert!(plan.estimated_s <= super::super::TIME_BUDGET_S, "{plan:?}");
    assert!(plan.estimated_s <= 300.0);
    assert!(plan.full_estimated_s > 3600.0, "{plan:?}");
    let names: Vec<String> = plan.classes.iter().map(|c| c.0.name()).collect();
    for want in [
        "same-cpu at distance 10",
        "smt-sibling at distance 10",
        "shared-llc at distance 10",
        "shared-llc at distance 12",
        "cross-package at distance 21",
    ] {
        assert!(names.iter().any(|n| n == want), "{want}: {names:?}");
    }
    assert!(
        plan.classes.iter().all(|c| c.2 >= MIN_PER_CLASS),
        "{plan:?}"
    );
    assert!(plan.notes.iter().any(|n| n.contains("--full")), "{plan:?}");
}

#[test]
fn full_and_per_class_are_what_was_asked_and_the_full_estimate_is_shown() {
    let full = on("xeon6-2s-snc3", &asked(&[("full", Value::Switch(true))]));
    assert_eq!((full.per_class, full.cells), (None, 384 * 384));
    assert_eq!(full.estimated_s, full.full_estimated_s);
    let six = asked(&[("per_class", Value::Int(6)), ("passes", Value::Int(2))]);
    let plan = on("intel-2s-smt2", &six);
    assert_eq!(plan.per_class, Some(6));
    assert_eq!(plan.cells, 2 * 6 * plan.classes.len());
    assert!(!plan.notes.iter().any(|n| n.contains("too few")));
    let few = on("intel-2s-smt2", &asked(&[("per_class", Value::Int(2))]));
    assert!(
        few.notes.iter().any(|n| n.contains("too few cells")),
        "{few:?}"
    );
}

#[test]
fn the_cpus_are_checked_as_a_run_checks_them_and_a_cpuset_bounds_the_matrix() {
    let one = on("container-cpuset1", &asked(&[]));
    assert_eq!((one.cpus.clone(), one.cells), (vec![5], 1));
    let topo = Described::new("container-cpuset1").topology();
    let cfg = asked(&[("cpus", Value::Ints(vec![0, 5]))]);
    let err = plan_on(&topo, &cfg).unwrap_err().to_string();
    assert!(err.contains("cpus") && err.contains("cpuset"), "{err}");
}

#[test]
fn a_hybrid_hosts_classes_tell_its_kinds_of_core_apart() {
    use crate::topology::CoreType::{Capacity, Efficiency, Performance};
    let laptop = Described::new("intel-hybrid-laptop").topology();
    let kinds: Vec<_> = laptop
        .core_types()
        .into_iter()
        .map(|(k, c)| (k, c.len()))
        .collect();
    assert_eq!(kinds, [(Performance, 8), (Efficiency, 8)]);
    let board = Described::new("rk3399-big-little").topology();
    let kinds = board.core_types();
    assert_eq!(
        kinds,
        [
            (Capacity(381), vec![0, 1, 2, 3]),
            (Capacity(1024), vec![4, 5])
        ]
    );
    let plan = plan_on(&laptop, &asked(&[])).unwrap();
    let names: Vec<String> = plan.classes.iter().map(|c| c.0.name()).collect();
    for want in [
        "smt-sibling, P-core to P-core",
        "shared-l2, E-core to E-core",
        "shared-llc, P-core to E-core",
        "shared-llc, E-core to P-core",
    ] {
        assert!(names.iter().any(|n| n == want), "{want}: {names:?}");
    }
    // Neither the AMD guest nor a plain host has kinds of core.
    for host in ["amd-epyc-guest", "arm-clusters"] {
        let t = Described::new(host).topology();
        assert!(t.core_types().is_empty() && t.cpus.iter().all(|c| c.core_type.is_none()));
    }
}
