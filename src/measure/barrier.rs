//! How the drivers of one point stay in step and stop together.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

/// A barrier that keeps parallel rings in step between repetitions and can be broken, so that
/// one failing ring does not leave the others waiting forever. Once broken it stays broken:
/// the drivers also check it between chunks of a repetition.
pub struct Barrier {
    /// (arrived, generation, broken).
    state: Mutex<(usize, u64, bool)>,
    cv: Condvar,
    n: usize,
    /// `state`'s broken flag, readable without the lock on the measured path.
    broken: AtomicBool,
}

impl Barrier {
    /// What a driver returns when it stops because another broke the barrier: a consequence,
    /// never the cause a failed point reports while another error is known.
    pub fn aborted_error() -> Error {
        Error::Peer("the run was aborted".into())
    }

    pub fn new(n: usize) -> Self {
        Barrier {
            state: Mutex::new((0, 0, false)),
            cv: Condvar::new(),
            n,
            broken: AtomicBool::new(false),
        }
    }

    /// Waits until all `n` have arrived; an error once the barrier is broken.
    pub fn wait(&self) -> Result<()> {
        let aborted = Self::aborted_error;
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if g.2 {
            return Err(aborted());
        }
        g.0 += 1;
        if g.0 == self.n {
            g.0 = 0;
            g.1 += 1;
            self.cv.notify_all();
            return Ok(());
        }
        let generation = g.1;
        while g.1 == generation && !g.2 {
            g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        if g.2 {
            Err(aborted())
        } else {
            Ok(())
        }
    }

    /// Breaks the barrier, waking every waiter. True for the first caller only, so that
    /// whoever broke it first can say why.
    pub fn abort(&self) -> bool {
        let first = !self.broken.swap(true, Ordering::AcqRel);
        self.state.lock().unwrap_or_else(|p| p.into_inner()).2 = true;
        self.cv.notify_all();
        first
    }

    pub fn aborted(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_everyone_once_all_arrive() {
        let b = Barrier::new(3);
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..2).map(|_| s.spawn(|| b.wait())).collect();
            assert!(b.wait().is_ok());
            for w in waiters {
                assert!(w.join().unwrap().is_ok());
            }
        });
        assert!(!b.aborted());
    }

    #[test]
    fn abort_wakes_waiters_and_stays_broken() {
        let b = Barrier::new(3);
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..2).map(|_| s.spawn(|| b.wait())).collect();
            assert!(b.abort());
            for w in waiters {
                assert!(matches!(w.join().unwrap(), Err(Error::Peer(_))));
            }
        });
        assert!(!b.abort(), "only the first abort is first");
        assert!(b.aborted());
        assert!(b.wait().is_err());
    }
}
