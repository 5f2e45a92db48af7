//! No wake-up path at all: every participant stays runnable on one CPU and calls
//! `sched_yield` until its word is filled, so a hop is the scheduler picking the next task.

use super::word::{Wake, WordRing};
use super::{Hop, Scope};
use crate::error::Result;
use std::sync::atomic::AtomicU32;

pub struct YieldWake;
pub type Yield = WordRing<YieldWake>;

impl Wake for YieldWake {
    const NAME: &'static str = "yield";
    const SINGLE_CPU_ONLY: bool = true;
    const BUSY_WAITS: bool = true;

    fn new(_n: usize, _scope: Scope) -> Result<Self> {
        Ok(YieldWake)
    }

    fn wait(&self, _i: usize, _word: &AtomicU32) -> Hop<()> {
        // SAFETY: no arguments; cannot fail on Linux.
        unsafe { libc::sched_yield() };
        Ok(())
    }

    fn wake(&self, _i: usize, _word: &AtomicU32) -> Hop<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::Yield;

    #[test]
    fn round_trip() {
        checks::round_trip::<Yield>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<Yield>();
    }
}
