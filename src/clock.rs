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
    let (t0, c0) = (Instant::now(), ticks());
    while t0.elapsed() < Duration::from_millis(20) {
        std::hint::spin_loop();
    }
    let (ns, c1) = (t0.elapsed().as_nanos() as f64, ticks());
    let mut pairs: Vec<u64> = (0..1001)
        .map(|_| {
            let a = ticks();
            ticks() - a
        })
        .collect();
    pairs.sort_unstable();
    Ok(Tsc {
        ghz: (c1 - c0) as f64 / ns,
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
}
