//! What one participant count's ring instances measured: each repetition's raw and overhead
//! time per hop, the evidence beside them, and instances of one point merged into one.

use crate::counters::Totals;
use crate::hops;
use crate::interference::Achieved;
use crate::measure::{Phases, Timing};
use crate::observer::Accounting;
use crate::sched::Sched;
use crate::stop::Stopped;

/// Everything measured for one participant count.
#[derive(Debug, Clone)]
pub struct Point {
    pub procs: usize,
    /// Raw per-hop time of each timed repetition, `[repetition][ring]`, in ns.
    pub raw_ns: Vec<Vec<f64>>,
    /// Hot-cache overhead per hop, measured right after the same repetition, same layout.
    pub overhead_ns: Vec<Vec<f64>>,
    /// The same two in TSC cycles (zeros where `clock::tsc` is unavailable).
    pub raw_cycles: Vec<Vec<f64>>,
    pub overhead_cycles: Vec<Vec<f64>>,
    /// Trips per ring repetition, and overhead rounds per overhead repetition, per ring.
    pub trips: Vec<u64>,
    pub overhead_rounds: Vec<u64>,
    /// CPU each participant was last on, `[ring][participant]` (participant 0 included).
    pub cpus: Vec<Vec<i32>>,
    /// Every participant ran the workload on every pass and got the right checksum.
    pub work_verified: bool,
    /// What the kernel's own accounting counted for the observed tasks over the timed
    /// windows (their hops included), or why it could not be read.
    pub accounting: std::result::Result<Accounting, String>,
    /// perf counters over the evidence repetition, or over the timed windows where the
    /// observer is `Timed`, and the hops the observed tasks made meanwhile.
    pub counters: Totals,
    pub observed_hops: u64,
    /// Raw per-hop time of the evidence repetition (ring 0): what counting costs shows
    /// against `raw_ns`. NaN without one.
    pub counted_ns: f64,
    /// Hop histogram merged over the rings (counts per `hops::Lane` and bucket) and the
    /// largest hop in ns, when recording.
    pub hops: Option<(Vec<u64>, u64)>,
    /// Lifetime rusage of the participants other than participant 0.
    pub rusage: Rusage,
    /// Seconds spent in calibration, warm-up, the timed repetitions, and start/teardown.
    pub phase_s: Phases,
    /// Why the timed repetitions ended, how many consecutive ones form a block, and how
    /// many consecutive blocks each ring instance measured (the levels of
    /// `stats::Layout`).
    pub stopped: Stopped,
    pub block: usize,
    pub instance_blocks: Vec<usize>,
    /// The smallest KiB of any participant's work array found resident and its own after the
    /// point (`Workload::resident_kb`); `None` where pagemap could not be read.
    pub resident_kb: Option<u64>,
    /// Every participant ran on one CPU (`placement::Resolved::one_cpu`).
    pub one_cpu: bool,
    /// The scheduling policy every participant and driver ran under, read back.
    pub sched: Sched,
    /// What the interference neighbours achieved over the rings' driving, if any ran.
    pub interference: Option<Achieved>,
    /// Periods a CPU quota on our groups throttled them while the rings were driven
    /// (`host::restrictions::Throttle`); `None` where no group has a quota.
    pub throttled: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Rusage {
    pub voluntary: u64,
    pub involuntary: u64,
    /// Hops those participants made over the same lifetime.
    pub passes: u64,
}

impl Point {
    /// Each ring's trips and overhead rounds, for a later instance of the same point.
    pub(crate) fn timing(&self) -> Vec<Timing> {
        self.trips
            .iter()
            .zip(&self.overhead_rounds)
            .map(|(&trips, &rounds)| Timing { trips, rounds })
            .collect()
    }

    /// Net per-hop ns of each repetition, `[repetition][ring]`: its raw time minus the
    /// overhead repetition that stands for it.
    pub fn net_by_ring(&self) -> Vec<Vec<f64>> {
        net(&self.raw_ns, &self.overhead_ns)
    }

    /// Net per-hop ns of each repetition, averaged over the parallel rings.
    pub fn net_ns(&self) -> Vec<f64> {
        ring_mean(&self.net_by_ring())
    }

    /// The same in TSC cycles.
    pub fn net_cycles(&self) -> Vec<f64> {
        ring_mean(&net(&self.raw_cycles, &self.overhead_cycles))
    }

    /// Instances of one point as one: their repetitions in order, with the blocks each
    /// measured. The trip counts and the CPUs are the first instance's; what the observer
    /// counted, histograms, rusage and phase times add up.
    pub(crate) fn merge(instances: Vec<Point>, stopped: Stopped) -> Point {
        let mut rest = instances.into_iter();
        let mut p = rest.next().expect("at least one instance");
        for q in rest {
            p.raw_ns.extend(q.raw_ns);
            p.overhead_ns.extend(q.overhead_ns);
            p.raw_cycles.extend(q.raw_cycles);
            p.overhead_cycles.extend(q.overhead_cycles);
            p.instance_blocks.extend(q.instance_blocks);
            p.work_verified &= q.work_verified;
            p.accounting = match (p.accounting, q.accounting) {
                (Ok(a), Ok(b)) => Ok(a + b),
                (Err(why), _) | (_, Err(why)) => Err(why),
            };
            p.counters = p.counters + q.counters;
            p.observed_hops += q.observed_hops;
            p.hops = hops::merge(p.hops.take(), q.hops);
            p.rusage.voluntary += q.rusage.voluntary;
            p.rusage.involuntary += q.rusage.involuntary;
            p.rusage.passes += q.rusage.passes;
            p.phase_s.calibration += q.phase_s.calibration;
            p.phase_s.warmup += q.phase_s.warmup;
            p.phase_s.measure += q.phase_s.measure;
            p.phase_s.setup_teardown += q.phase_s.setup_teardown;
            p.resident_kb = p.resident_kb.zip(q.resident_kb).map(|(a, b)| a.min(b));
            p.interference = match (p.interference.take(), q.interference) {
                (Some(a), Some(b)) => Some(a.merge(&b)),
                (a, b) => a.or(b),
            };
            p.throttled = match (p.throttled, q.throttled) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
        }
        p.stopped = stopped;
        p
    }
}

/// `raw − overhead`, element by element, `[repetition][ring]`.
fn net(raw: &[Vec<f64>], overhead: &[Vec<f64>]) -> Vec<Vec<f64>> {
    raw.iter()
        .zip(overhead)
        .map(|(r, o)| r.iter().zip(o).map(|(r, o)| r - o).collect())
        .collect()
}

/// Each repetition's mean over the parallel rings.
fn ring_mean(by_ring: &[Vec<f64>]) -> Vec<f64> {
    by_ring
        .iter()
        .map(|rings| rings.iter().sum::<f64>() / rings.len() as f64)
        .collect()
}
