//! How far apart two CPUs' clocks may be. A hop's wake-to-run time is a stamp taken on the
//! waker's CPU subtracted from one taken on the wakee's, so across CPUs it is only as good as
//! the agreement of their clocks (the TSC, read through the vDSO's CLOCK_MONOTONIC, which
//! the kernel keeps in step but a hypervisor may not).
//!
//! Two threads pinned to CPUs a and b bounce a cache line. Each round, a stamps t1, pings, b
//! stamps t2 on seeing the ping and answers, a stamps t3 on seeing the answer. b's read
//! happened between a's two reads, so the offset θ = clock_b − clock_a lies in
//! [t2 − t3, t2 − t1]; intersected over all rounds this is the interval `[low_ns, high_ns]`.
//! A round delayed by preemption only gives a looser interval, never a wrong one. The bound
//! is the largest |θ| the interval allows; an empty interval (clocks that disagree with
//! causality) has no bound.

use crate::error::{Error, Result};
use crate::hops::now_ns;
use crate::sys;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Round trips per estimate: a few hundred µs on a quiet pair.
const ROUNDS: u64 = 256;
/// Give up waiting on a CPU that does not answer (a preempted vCPU) after this long.
const BUDGET: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OffsetBound {
    pub low_ns: f64,
    pub high_ns: f64,
    /// Round trips that completed.
    pub rounds: u64,
}

impl OffsetBound {
    /// The same clock: no offset.
    pub fn none() -> Self {
        OffsetBound {
            low_ns: 0.0,
            high_ns: 0.0,
            rounds: 0,
        }
    }

    /// The largest offset the observations allow; infinite when they allow none or none
    /// were made.
    pub fn bound_ns(&self) -> f64 {
        if self.low_ns > self.high_ns {
            f64::INFINITY
        } else {
            self.low_ns.abs().max(self.high_ns.abs())
        }
    }

    /// Narrows the interval with one round: a stamped t1 and t3, b stamped t2.
    fn add(&mut self, t1: u64, t2: u64, t3: u64) {
        let (t1, t2, t3) = (t1 as f64, t2 as f64, t3 as f64);
        self.low_ns = self.low_ns.max(t2 - t3);
        self.high_ns = self.high_ns.min(t2 - t1);
        self.rounds += 1;
    }
}

#[repr(align(64))]
struct Line(AtomicU64);

/// What the two threads share, each word on a cache line of its own.
struct Pair {
    ping: Line,
    pong: Line,
    stamp: Line,
    quit: AtomicBool,
}

/// Spins until `done` or the deadline (checked every 256 spins); false on the deadline.
fn spin_until(deadline: Instant, done: &dyn Fn() -> bool) -> bool {
    let mut n = 0u32;
    while !done() {
        std::hint::spin_loop();
        n = n.wrapping_add(1);
        if n % 256 == 0 && Instant::now() > deadline {
            return false;
        }
    }
    true
}

fn pin(cpu: usize, pair: &Pair) -> Result<()> {
    if sys::set_affinity(&sys::cpu_set(cpu)) != 0 {
        pair.quit.store(true, Ordering::Release);
        return Err(Error::last_os(format!(
            "pinning the clock-offset check to CPU {cpu}"
        )));
    }
    Ok(())
}

/// The interval of clock_b − clock_a. `a == b` is one clock: no offset.
pub fn estimate(a: usize, b: usize) -> Result<OffsetBound> {
    if a == b {
        return Ok(OffsetBound::none());
    }
    let pair = Pair {
        ping: Line(AtomicU64::new(0)),
        pong: Line(AtomicU64::new(0)),
        stamp: Line(AtomicU64::new(0)),
        quit: AtomicBool::new(false),
    };
    let deadline = Instant::now() + BUDGET;
    // Both sides on threads of their own: the caller's affinity stays as it was.
    std::thread::scope(|s| {
        let answer = s.spawn(|| answer(&pair, b, deadline));
        let ask = s.spawn(|| {
            let asked = ask(&pair, a, deadline);
            pair.quit.store(true, Ordering::Release);
            asked
        });
        let panicked = || Error::Peer("the clock-offset check panicked".into());
        let answered = answer.join().map_err(|_| panicked()).and_then(|r| r);
        let asked = ask.join().map_err(|_| panicked()).and_then(|r| r);
        answered.and(asked)
    })
}

/// CPU a's side: stamp, ping, wait for the answer, stamp.
fn ask(pair: &Pair, cpu: usize, deadline: Instant) -> Result<OffsetBound> {
    pin(cpu, pair)?;
    let mut bound = OffsetBound {
        low_ns: f64::NEG_INFINITY,
        high_ns: f64::INFINITY,
        rounds: 0,
    };
    for k in 1..=ROUNDS {
        let t1 = now_ns();
        pair.ping.0.store(k, Ordering::Release);
        if !spin_until(deadline, &|| pair.pong.0.load(Ordering::Acquire) == k) {
            break;
        }
        let t3 = now_ns();
        bound.add(t1, pair.stamp.0.load(Ordering::Relaxed), t3);
    }
    Ok(bound)
}

/// CPU b's side: on each ping, stamp and answer.
fn answer(pair: &Pair, cpu: usize, deadline: Instant) -> Result<()> {
    pin(cpu, pair)?;
    let mut last = 0;
    loop {
        let seen =
            || pair.quit.load(Ordering::Acquire) || pair.ping.0.load(Ordering::Acquire) != last;
        if !spin_until(deadline, &seen) || pair.quit.load(Ordering::Acquire) {
            return Ok(());
        }
        let t2 = now_ns();
        last = pair.ping.0.load(Ordering::Acquire);
        pair.stamp.0.store(t2, Ordering::Relaxed);
        pair.pong.0.store(last, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_narrow_the_interval() {
        let mut b = OffsetBound {
            low_ns: f64::NEG_INFINITY,
            high_ns: f64::INFINITY,
            rounds: 0,
        };
        assert_eq!(b.bound_ns(), f64::INFINITY);
        // b's clock 100 ns ahead; round trips of 300 and 40 ns.
        b.add(1_000, 1_250, 1_300);
        assert_eq!((b.low_ns, b.high_ns), (-50.0, 250.0));
        b.add(2_000, 2_120, 2_040);
        assert_eq!((b.low_ns, b.high_ns), (80.0, 120.0));
        assert_eq!(b.bound_ns(), 120.0);
        // A stamp that contradicts causality empties the interval.
        b.add(3_000, 2_000, 3_010);
        assert_eq!(b.bound_ns(), f64::INFINITY);
        assert_eq!(OffsetBound::none().bound_ns(), 0.0);
    }

    #[test]
    fn this_machines_cpus_agree_within_a_bound() {
        let cpus = sys::allowed_cpus().unwrap();
        let (a, b) = (cpus[0], *cpus.last().unwrap());
        let e = estimate(a, b).unwrap();
        assert_eq!(estimate(a, a).unwrap(), OffsetBound::none());
        if a != b && e.rounds > 0 {
            // The kernel keeps CLOCK_MONOTONIC in step across CPUs: the interval holds 0
            // unless a round was measured wrongly.
            assert!(e.low_ns <= e.high_ns, "{e:?}");
            assert!(e.low_ns <= 0.0 && e.high_ns >= 0.0, "{e:?}");
        }
    }
}
