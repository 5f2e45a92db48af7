//! Opt-in per-hop latency: the sender stamps the time it hands the token over, the receiver
//! the time it holds it, and the difference (wake-to-run, the switch as one participant
//! sees it) goes into a fixed log-linear histogram in shared memory. Bounded memory however
//! long the run; nothing allocated after `fork`; a few nanoseconds and two clock reads a hop.

use crate::error::Result;
use crate::sys::Shared;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// 32 sub-buckets per power of two: every bucket is within 3.1% of the values in it.
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
/// Values below 2*SUB ns get a bucket each; above, up to 2^41 ns (about 37 minutes).
const TOP_BIT: u32 = 41;
pub const BUCKETS: usize = (2 * SUB + (TOP_BIT - 1 - SUB_BITS) as u64 * SUB) as usize;

/// Hops are counted in two lanes by who receives them: participant 0 (the driver, which
/// times the ring) and every other participant. A log's counts are the lanes one after the
/// other (`LANES` × `BUCKETS`); `merged` folds them into one histogram. In a ring of two
/// pinned to CPUs i (the driver) and j, `Lane::Others` holds the i→j wake-ups and
/// `Lane::Driver` the j→i ones: the matrix's per-direction percentiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    Driver = 0,
    Others = 1,
}

pub const LANES: usize = 2;

impl Lane {
    fn of(receiver: usize) -> Self {
        if receiver == 0 {
            Lane::Driver
        } else {
            Lane::Others
        }
    }
}

/// One lane of a log's counts (a single histogram of `BUCKETS` is its own every lane).
pub fn lane(counts: &[u64], lane: Lane) -> &[u64] {
    if counts.len() < LANES * BUCKETS {
        return counts;
    }
    let at = lane as usize * BUCKETS;
    &counts[at..at + BUCKETS]
}

/// Every lane of a log's counts added up into one histogram.
pub fn merged(counts: &[u64]) -> Vec<u64> {
    let mut out = vec![0; BUCKETS.min(counts.len())];
    for chunk in counts.chunks(BUCKETS) {
        out.iter_mut().zip(chunk).for_each(|(o, c)| *o += c);
    }
    out
}

pub fn bucket(ns: u64) -> usize {
    let v = ns.min((1 << TOP_BIT) - 1);
    if v < 2 * SUB {
        return v as usize;
    }
    let shift = 63 - v.leading_zeros() - SUB_BITS;
    (2 * SUB + u64::from(shift - 1) * SUB + ((v >> shift) - SUB)) as usize
}

/// Lowest value (ns) that falls into bucket `j`; `lower(BUCKETS)` closes the last one.
pub fn lower(j: usize) -> u64 {
    let j = j as u64;
    if j < 2 * SUB {
        return j;
    }
    let shift = (j - 2 * SUB) / SUB + 1;
    ((j - 2 * SUB) % SUB + SUB) << shift
}

/// One ring's log, in memory shared by all its participants.
pub struct HopLog {
    /// When the token was put into each participant's inbox (ns, CLOCK_MONOTONIC).
    sent: Shared<AtomicU64>,
    counts: Shared<AtomicU64>,
    max: Shared<AtomicU64>,
    /// Non-zero while the timed repetitions run: only they are recorded.
    on: Shared<AtomicU32>,
}

/// CLOCK_MONOTONIC in ns: the vDSO, no syscall, safe after `fork`. The clock of every
/// hop stamp (and of the matrix's cross-CPU offset check).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl HopLog {
    pub fn new(n: usize) -> Result<Self> {
        Ok(HopLog {
            sent: Shared::new(n)?,
            counts: Shared::new(LANES * BUCKETS)?,
            max: Shared::new(1)?,
            on: Shared::new(1)?,
        })
    }

    pub fn record(&self, on: bool) {
        self.on[0].store(u32::from(on), Ordering::Release);
    }

    /// Just before putting the token into participant `to`'s inbox.
    #[inline]
    pub fn sending(&self, to: usize) {
        if self.on[0].load(Ordering::Relaxed) != 0 {
            self.sent[to].store(now_ns(), Ordering::Relaxed);
        }
    }

    /// Just after participant `i` got the token.
    #[inline]
    pub fn received(&self, i: usize) {
        if self.on[0].load(Ordering::Relaxed) == 0 {
            return;
        }
        let sent = self.sent[i].swap(0, Ordering::Relaxed);
        // 0: the hop began before recording was switched on.
        if sent != 0 {
            let ns = now_ns().saturating_sub(sent);
            let at = Lane::of(i) as usize * BUCKETS + bucket(ns);
            self.counts[at].fetch_add(1, Ordering::Relaxed);
            self.max[0].fetch_max(ns, Ordering::Relaxed);
        }
    }

    /// The lanes' counts, one after the other (see `Lane`).
    pub fn counts(&self) -> Vec<u64> {
        self.counts
            .iter()
            .map(|c| c.load(Ordering::Acquire))
            .collect()
    }

    pub fn max_ns(&self) -> u64 {
        self.max[0].load(Ordering::Acquire)
    }
}

/// Two hop logs (counts per bucket, largest hop in ns) as one: counts added, the larger
/// maximum; a side that recorded nothing leaves the other.
pub fn merge(a: Option<(Vec<u64>, u64)>, b: Option<(Vec<u64>, u64)>) -> Option<(Vec<u64>, u64)> {
    match (a, b) {
        (Some((mut counts, max)), Some((more, other))) => {
            counts.iter_mut().zip(more).for_each(|(x, y)| *x += y);
            Some((counts, max.max(other)))
        }
        (a, b) => a.or(b),
    }
}

/// The value (ns) below which `q` of the recorded hops fall, at bucket resolution (the
/// bucket's midpoint), from merged counts.
pub fn percentile(counts: &[u64], q: f64) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return f64::NAN;
    }
    let rank = (q * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (j, &c) in counts.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return if j < 2 * SUB as usize {
                lower(j) as f64
            } else {
                (lower(j) + lower(j + 1)) as f64 / 2.0
            };
        }
    }
    f64::NAN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut last = 0;
        for v in (0..5000).chain((12..41).map(|b| (1u64 << b) + 12345)) {
            let j = bucket(v);
            assert!(j >= last && j < BUCKETS, "{v} -> {j}");
            assert!(lower(j) <= v && v < lower(j + 1), "{v} not in bucket {j}");
            assert!((lower(j + 1) - lower(j)) as f64 <= (v as f64 / SUB as f64).max(1.0));
            last = j;
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn merged_logs_add_counts_and_keep_the_larger_maximum() {
        let a = Some((vec![1, 2, 0], 50));
        let b = Some((vec![0, 3, 4], 70));
        assert_eq!(merge(a.clone(), b), Some((vec![1, 5, 4], 70)));
        assert_eq!(merge(a.clone(), None), a);
        assert_eq!(merge(None, None), None);
    }

    #[test]
    fn percentiles_of_known_counts() {
        let mut counts = vec![0; BUCKETS];
        counts[bucket(10)] = 90;
        counts[bucket(1000)] = 9;
        counts[bucket(100_000)] = 1;
        assert_eq!(percentile(&counts, 0.5), 10.0);
        assert_eq!(percentile(&counts, 0.9), 10.0);
        let p99 = percentile(&counts, 0.99);
        assert!((p99 - 1000.0).abs() < 1000.0 / 32.0, "{p99}");
        let p999 = percentile(&counts, 0.999);
        assert!((p999 - 100_000.0).abs() < 100_000.0 / 32.0, "{p999}");
        assert!(percentile(&vec![0; BUCKETS], 0.5).is_nan());
    }

    #[test]
    fn lanes_split_by_receiver_and_merge() {
        let log = HopLog::new(2).unwrap();
        log.record(true);
        for (to, times) in [(1, 3), (0, 2)] {
            for _ in 0..times {
                log.sending(to);
                log.received(to);
            }
        }
        let counts = log.counts();
        assert_eq!(counts.len(), LANES * BUCKETS);
        let total = |c: &[u64]| c.iter().sum::<u64>();
        assert_eq!(total(lane(&counts, Lane::Others)), 3);
        assert_eq!(total(lane(&counts, Lane::Driver)), 2);
        assert_eq!(total(&merged(&counts)), 5);
        assert_eq!(merged(&counts).len(), BUCKETS);
        // A histogram of one lane is its own merge and its own every lane.
        let one = merged(&counts);
        assert_eq!(merged(&one), one);
        assert_eq!(lane(&one, Lane::Driver), &one[..]);
    }
}
