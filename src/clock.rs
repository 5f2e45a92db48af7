//! Cycles from the time-stamp counter, where it is a clock: x86_64 with an invariant TSC
//! (`constant_tsc` and `nonstop_tsc`), calibrated against CLOCK_MONOTONIC. Elsewhere (other
//! architectures, or a TSC that stops or changes rate) only nanoseconds are reported, with the
//! reason, because a tick count would not be comparable between runs.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tsc {
    /// TSC ticks per nanosecond.
    pub ghz: f64,
    /// Ticks one pair of back-to-back reads costs (median), subtracted from every interval.
    pub read_cost: f64,
}

/// The calibrated TSC, or why there is none. Calibrated once per process (about 20 ms).
pub fn tsc() -> Result<Tsc, String> {
    static TSC: OnceLock<Result<Tsc, String>> = OnceLock::new();
    TSC.get_or_init(calibrate).clone()
}

/// The current TSC value; 0 where there is none.
#[inline]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// A moment on both clocks: CLOCK_MONOTONIC and the TSC read as one, so that the nanoseconds
/// and the ticks between two stamps time the same interval.
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    pub at: Instant,
    pub ticks: u64,
}

/// The widest TSC bracket around a read of CLOCK_MONOTONIC that counts as one moment: the
/// read itself takes well under a microsecond, and 20,000 ticks are 4-20 µs at any TSC rate.
/// A wider bracket held an interrupt or a preemption (milliseconds on a loaded machine), after
/// which the two clocks would disagree about the interval by that much.
const BRACKET_TICKS: u64 = 20_000;
/// Reads of a stamp before the narrowest one seen is taken as it is.
const STAMP_TRIES: usize = 64;

/// Now, on both clocks: the TSC read before and after CLOCK_MONOTONIC, the midpoint kept,
/// read again while the bracket is wider than `BRACKET_TICKS`.
pub fn stamp() -> Stamp {
    let mut narrowest: Option<(u64, Stamp)> = None;
    for _ in 0..STAMP_TRIES {
        let before = ticks();
        let at = Instant::now();
        let width = ticks().wrapping_sub(before);
        let stamp = Stamp {
            at,
            ticks: before + width / 2,
        };
        if width <= BRACKET_TICKS {
            return stamp;
        }
        if narrowest.is_none_or(|(w, _)| width < w) {
            narrowest = Some((width, stamp));
        }
    }
    narrowest.map_or_else(
        || Stamp {
            at: Instant::now(),
            ticks: ticks(),
        },
        |(_, stamp)| stamp,
    )
}

impl Stamp {
    /// Nanoseconds and ticks from `self` to `later`.
    pub fn to(self, later: Stamp) -> (f64, u64) {
        let ns = later.at.duration_since(self.at).as_nanos() as f64;
        (ns, later.ticks.wrapping_sub(self.ticks))
    }
}

fn calibrate() -> Result<Tsc, String> {
    if !cfg!(target_arch = "x86_64") {
        return Err(format!(
            "no TSC on {}: cycles are reported only on x86_64",
            std::env::consts::ARCH
        ));
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags: Vec<&str> = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    for needed in ["constant_tsc", "nonstop_tsc"] {
        if !flags.contains(&needed) {
            return Err(format!(
                "the TSC is not invariant (no {needed} flag): its ticks are not cycles of a \
                 fixed clock"
            ));
        }
    }
    let start = stamp();
    while start.at.elapsed() < Duration::from_millis(20) {
        std::hint::spin_loop();
    }
    let (ns, ticked) = start.to(stamp());
    let mut pairs: Vec<u64> = (0..1001)
        .map(|_| {
            let a = ticks();
            ticks() - a
        })
        .collect();
    pairs.sort_unstable();
    Ok(Tsc {
        ghz: ticked as f64 / ns,
        read_cost: pairs[pairs.len() / 2] as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsc_is_calibrated_or_explained() {
        match tsc() {
            Ok(t) => {
                assert!(t.ghz > 0.05 && t.ghz < 20.0, "{t:?}");
                assert!(t.read_cost >= 0.0 && t.read_cost < 10_000.0, "{t:?}");
                let (a, b) = (ticks(), ticks());
                assert!(b >= a);
            }
            Err(why) => assert!(!why.is_empty()),
        }
    }

    #[test]
    fn a_stamp_is_one_moment_on_both_clocks() {
        let first = stamp();
        std::thread::sleep(Duration::from_millis(2));
        let (ns, ticked) = first.to(stamp());
        assert!(ns >= 2e6, "{ns}");
        if let Ok(t) = tsc() {
            // Both clocks timed the same interval; a bracket's half-width of error at most
            // at each end, however the thread was preempted around the reads.
            let slack = BRACKET_TICKS as f64 + 0.001 * ns * t.ghz;
            assert!(
                (ticked as f64 - ns * t.ghz).abs() <= slack,
                "{ticked} ticks, {ns} ns"
            );
        }
    }
}
