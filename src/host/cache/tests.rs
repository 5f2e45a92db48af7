//! The cache sweep's defaults on described hosts (`tests/hosts.py`): per-CPU shares, every
//! default within the core's limits and the budgets, and what bounded one said.

use super::*;
use crate::config::SIZE_KB;
use crate::request::{Door, Request, Value};
use crate::topology::tests::Described;

const GIB: u64 = 1 << 30;

fn asked(procs: &[i64], more: &[(&str, Value)]) -> CacheRequest {
    let mut r = Request::new(Door::Cache);
    r.set("procs", Value::Ints(procs.to_vec())).unwrap();
    for (name, value) in more {
        r.set(name, value.clone()).unwrap();
    }
    r.cache().unwrap()
}

fn on(host: &str, c: &CacheRequest, memory_bytes: u64) -> CachePlan {
    let topo = Described::new(host).topology();
    plan_on(&topo, c, Some((memory_bytes, "a test's budget".into()))).unwrap()
}

fn has(plan: &CachePlan, part: &str) -> bool {
    plan.notes.iter().any(|n| n.contains(part))
}

/// What every default plan keeps to, whatever the host.
fn bounded(plan: &CachePlan, c: &CacheRequest, memory_bytes: u64) {
    for grid in &plan.sizes_kb {
        assert_eq!(grid[0], 0);
        assert!(grid.windows(2).all(|w| w[0] < w[1]), "{grid:?}");
        assert!(grid.iter().all(|&kb| kb as u64 <= SIZE_KB.hi), "{grid:?}");
    }
    assert!((1..=STREAM_KB.hi).contains(&(plan.stream_kb as u64)));
    assert!(LINE_BYTES.check(plan.line_bytes as u64).is_ok());
    assert!(plan.memory_bytes <= memory_bytes, "{plan:?}");
    assert!(plan.estimated_s <= TIME_BUDGET_S, "{plan:?}");
    assert_eq!(plan.sizes_kb.len(), c.base.procs.len());
}

#[test]
fn the_intel_guest_counts_its_cpus_share_of_a_480_mib_l3_and_stays_bounded() {
    let c = asked(&[2, 8], &[]);
    let plan = on("intel-xeon-guest", &c, 16 * GIB);
    assert_eq!(plan.cpus, [0], "a single CPU: the cache sweep's placement");
    // The L3 of 491520K is shared by both vCPUs: one CPU counts half of it.
    let kb: Vec<(&str, u64)> = plan.caches.iter().map(|(n, k)| (n.as_str(), *k)).collect();
    assert_eq!(
        kb,
        [("L1d", 48), ("L1i", 32), ("L2", 2048), ("L3", 245_760)]
    );
    assert_eq!(plan.line_bytes, 64);
    assert_eq!(plan.stream_kb as u64, REACH * 245_760);
    bounded(&plan, &c, 16 * GIB);
    // Each ring size's grid reaches 4 x the share or says what stopped it.
    for (&p, grid) in c.base.procs.iter().zip(&plan.sizes_kb) {
        let reached = (p * grid.last().unwrap()) as u64 >= REACH * 245_760;
        assert!(reached || has(&plan, &format!("the grid of {p} processes stops")));
    }
}

#[test]
fn a_cache_shared_by_k_cpus_counts_a_kth_per_cpu_used_never_the_machines_sum() {
    // Two SMT siblings of one core: L1 and L2 once between them, a quarter of the socket's L3.
    let c = asked(&[2], &[("placement", Value::Ints(vec![0, 8]))]);
    let plan = on("intel-2s-smt2", &c, 16 * GIB);
    assert_eq!(plan.cpus, [0, 8]);
    let kb: Vec<(&str, u64)> = plan.caches.iter().map(|(n, k)| (n.as_str(), *k)).collect();
    assert_eq!(kb, [("L1d", 48), ("L1i", 32), ("L2", 2048), ("L3", 7680)]);
    // One CPU of each socket: a share of each L3, not two whole ones.
    let c = asked(&[2], &[("placement", Value::Ints(vec![0, 4]))]);
    let plan = on("intel-2s-smt2", &c, 16 * GIB);
    assert_eq!(plan.caches.last().unwrap(), &("L3".to_string(), 7680));
}

#[test]
fn the_memory_budget_bounds_the_grid_and_the_streaming_read_and_says_so() {
    let c = asked(&[2], &[]);
    let budget = 256 << 20;
    let plan = on("intel-xeon-guest", &c, budget);
    bounded(&plan, &c, budget);
    assert_eq!(plan.stream_kb, 128 << 10, "half the budget");
    assert!(has(
        &plan,
        "the streaming read sums 131072 KiB, bounded by half the memory"
    ));
    assert!(has(&plan, "bounded by the memory budget (a test's budget)"));
}

#[test]
fn the_time_budget_bounds_a_grid_and_says_so() {
    // Slow repetitions: every size's instance is long, so the grid stops early.
    let c = asked(&[2], &[("min_time", Value::Real(0.5))]);
    let plan = on("amd-epyc-guest", &c, 16 * GIB);
    bounded(&plan, &c, 16 * GIB);
    assert!(has(&plan, "bounded by the time budget"), "{:?}", plan.notes);
}

#[test]
fn without_cache_sizes_the_default_grid_is_used_within_the_budgets() {
    let c = asked(&[2], &[]);
    let plan = on("vm-no-caches", &c, 16 * GIB);
    assert_eq!(plan.sizes_kb[0], DEFAULT_GRID_KB);
    assert_eq!(plan.stream_kb as u64, MIN_STREAM_KB);
    assert!(has(&plan, "sysfs has no cache sizes for CPUs [0]"));
    assert!(
        has(&plan, "refills count lines of 64 bytes"),
        "no caches, no line"
    );
    bounded(&plan, &c, 16 * GIB);
}

#[test]
fn a_line_size_sysfs_cannot_give_falls_back_to_64_and_a_named_one_is_kept() {
    let c = asked(&[2], &[]);
    for (text, line) in [
        ("0", 64),
        ("-1", 64),
        ("1e23", 64),
        ("96", 64),
        ("8192", 64),
        ("128", 128),
    ] {
        let host = Described::new("intel-xeon-guest");
        let file = host
            .root
            .join("devices/system/cpu/cpu0/cache/index0/coherency_line_size");
        std::fs::write(file, format!("{text}\n")).unwrap();
        let plan = plan_on(&host.topology(), &c, None).unwrap();
        assert_eq!(plan.line_bytes, line, "{text}");
        assert_eq!(
            has(&plan, "refills count lines of 64 bytes"),
            line == 64,
            "{text}"
        );
    }
    let c = asked(&[2], &[("line_bytes", Value::Int(32))]);
    assert_eq!(on("intel-xeon-guest", &c, 16 * GIB).line_bytes, 32);
}

#[test]
fn named_sizes_and_a_named_stream_are_kept_as_given() {
    let sizes = Value::Ints(vec![16, 4]);
    let c = asked(
        &[2, 3],
        &[("sizes_kb", sizes), ("stream_kb", Value::Int(1024))],
    );
    let plan = on("intel-xeon-guest", &c, 16 * GIB);
    assert_eq!(plan.sizes_kb, [vec![0, 4, 16], vec![0, 4, 16]]);
    assert_eq!(plan.grid().unwrap(), [0, 4, 16]);
    assert_eq!(plan.stream_kb, 1024);
    // Left to the host, two ring sizes have two grids: one core sweep cannot take both.
    let plan = on("intel-xeon-guest", &asked(&[2, 8], &[]), 16 * GIB);
    assert!(plan
        .grid()
        .unwrap_err()
        .to_string()
        .starts_with("sizes_kb: name the sizes"));
}

#[test]
fn a_stream_outside_its_own_limit_is_refused_naming_stream_kb() {
    for bad in [0, -5, (STREAM_KB.hi + 1) as i64] {
        let mut r = Request::new(Door::Cache);
        let e = r.set("stream_kb", Value::Int(bad)).unwrap_err().to_string();
        assert!(
            e.starts_with("stream_kb: must be between 1 and 1048576"),
            "{e}"
        );
    }
}

#[test]
fn an_absurd_l3_is_not_taken_and_the_grid_follows_what_is_known() {
    let host = Described::new("intel-xeon-guest");
    for cpu in [0, 1] {
        let size = host
            .root
            .join(format!("devices/system/cpu/cpu{cpu}/cache/index3/size"));
        std::fs::write(size, "1073741824K\n").unwrap();
    }
    let c = asked(&[2], &[]);
    let plan = plan_on(&host.topology(), &c, Some((16 * GIB, "a test's".into()))).unwrap();
    assert!(plan.caches.iter().all(|(name, _)| name != "L3"));
    // Up to 4 x the L2 for a ring of two: 4096 KiB per participant.
    assert_eq!(plan.sizes_kb[0].last(), Some(&4096));
    bounded(&plan, &c, 16 * GIB);
}
