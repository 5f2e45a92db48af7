//! What measuring a ring point costs at most, in seconds: the figure every time budget and
//! every plan counts (the matrix's cells, a sweep's points). At most, not typically: a
//! precise point often stops well before its cap.

use crate::config::Config;
use crate::stop::{Stop, BLOCK_REPETITIONS, MIN_INSTANCES};

// Starting and stopping a ring instance, as measured for the cache sweep (`host::cache`) on
// the project's 2-vCPU AMD EPYC guest at a load of 3 to 4, a third added: 10 ms, and 1.5 ms
// per participant.
const INSTANCE_S: f64 = 0.01;
const PER_TASK_S: f64 = 0.0015;

/// Seconds a point of `procs` participants of `ring` takes at most: the instances a point
/// needs at least (`stop::MIN_INSTANCES`) started and stopped, and measuring until its
/// stopping rule ends it.
pub fn point_s(ring: &Config, procs: usize) -> f64 {
    let tasks = (procs * ring.parallel.max(1)) as f64;
    MIN_INSTANCES as f64 * (INSTANCE_S + tasks * PER_TASK_S) + measuring_s(ring)
}

/// Seconds of measuring at most: in precision mode an instance may end halfway past
/// `max_time`, unless `max_repetitions` blocks of `min_time` (each repetition with its share
/// of the block's overhead repetition) end it first; a fixed count is each repetition beside
/// its overhead repetition, after the warm-up.
fn measuring_s(ring: &Config) -> f64 {
    match ring.stop {
        Stop::Fixed(n) => (ring.warmup + n) as f64 * 2.0 * ring.min_time,
        Stop::Precise(rule) => {
            let per_repetition = (1.0 + 1.0 / BLOCK_REPETITIONS as f64) * ring.min_time;
            (1.5 * rule.max_time).min(rule.max_repetitions as f64 * per_repetition)
        }
    }
}

/// Seconds a ring call of `ring` (each of its `procs`) takes at most.
pub fn ring_s(ring: &Config) -> f64 {
    ring.procs.iter().map(|&p| point_s(ring, p)).sum()
}

/// "45 s", "12.5 min", "3.2 h".
pub fn duration(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Door, Request, Value};

    fn ring(more: &[(&str, Value)]) -> Config {
        let mut r = Request::new(Door::Ring);
        r.set("procs", Value::Ints(vec![2, 8])).unwrap();
        for (name, value) in more {
            r.set(name, value.clone()).unwrap();
        }
        r.ring().unwrap()
    }

    #[test]
    fn a_point_costs_its_instances_and_its_cap() {
        let fixed = ring(&[
            ("repetitions", Value::Int(10)),
            ("min_time", Value::Real(0.01)),
        ]);
        let setup = |procs: f64| 2.0 * (0.01 + procs * 0.0015);
        let measuring = (fixed.warmup + 10) as f64 * 2.0 * 0.01;
        assert!((point_s(&fixed, 2) - (setup(2.0) + measuring)).abs() < 1e-9);
        assert!((ring_s(&fixed) - (setup(2.0) + setup(8.0) + 2.0 * measuring)).abs() < 1e-9);
        let precise = ring(&[("max_time", Value::Real(0.2))]);
        assert!((point_s(&precise, 2) - (setup(2.0) + 0.3)).abs() < 1e-9);
        let few = ring(&[
            ("max_time", Value::Real(10.0)),
            ("max_repetitions", Value::Int(16)),
        ]);
        assert!(point_s(&few, 2) < 1.0, "max_repetitions ends it first");
    }

    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(duration(45.0), "45 s");
        assert_eq!(duration(600.0), "10.0 min");
        assert_eq!(duration(9000.0), "2.5 h");
    }
}
