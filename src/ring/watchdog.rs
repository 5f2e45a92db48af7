//! The watchdog of one point: a stopped or starved participant must end in an error, never a
//! hang.

use crate::engine::Members;
use crate::measure::barrier::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the watchdog looks at the rings' progress and the participants.
const TICK: Duration = Duration::from_millis(20);

/// Until `done` (set by the caller, who then unparks this thread), aborts the run when the
/// caller was `interrupted` (Ctrl-C: a driver waiting in a trip that never ends would not see
/// it), when a participant left mid-run (`casualty`), or when no ring made `progress` for
/// `timeout` seconds: the barrier is broken so the drivers stop, and the members are
/// unblocked with the reason. Nothing happens when a driver already aborted.
pub fn watch(
    progress: &[Arc<AtomicU64>],
    timeout: f64,
    barrier: &Barrier,
    done: &AtomicBool,
    interrupted: &AtomicBool,
    members: &dyn Members,
) {
    let give_up = |why: &str| {
        if barrier.abort() {
            members.abort(why);
        }
    };
    let read = || {
        progress
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .collect::<Vec<_>>()
    };
    let mut last = read();
    let mut since = Instant::now();
    loop {
        // Parked, not asleep: whoever sets `done` unparks this thread, so a point does not
        // wait out the rest of a tick at its end (precision mode runs many short instances).
        std::thread::park_timeout(TICK);
        if done.load(Ordering::Acquire) {
            break;
        }
        let now = read();
        if interrupted.load(Ordering::Relaxed) {
            give_up("interrupted");
        } else if let Some(why) = members.casualty() {
            give_up(&why);
        } else if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed().as_secs_f64() > timeout {
            let why = members
                .lost_wakeup()
                .unwrap_or_else(|| "a participant hung or was stopped".into());
            give_up(&format!("no token moved for {timeout} s (timeout): {why}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Report;
    use std::sync::Mutex;

    /// Members that never die on their own (unless told to) and remember why they were
    /// aborted.
    #[derive(Default)]
    struct Fake {
        dead: Option<String>,
        why: Mutex<Option<String>>,
    }

    impl Members for Fake {
        fn tids(&self) -> Vec<(usize, libc::pid_t)> {
            Vec::new()
        }
        fn casualty(&self) -> Option<String> {
            self.dead.clone()
        }
        fn abort(&self, why: &str) {
            self.why.lock().unwrap().get_or_insert(why.to_string());
        }
        fn finish(self: Box<Self>, _clean: bool) -> Report {
            Report::default()
        }
    }

    /// Runs the watchdog over a ring that never moves until it breaks the barrier (which a
    /// waiting driver sees as an error), and returns why the members were aborted.
    fn abort_reason(members: Fake, timeout: f64, interrupted: bool) -> Option<String> {
        let progress = [Arc::new(AtomicU64::new(7))];
        let (barrier, done) = (Barrier::new(2), AtomicBool::new(false));
        let interrupted = AtomicBool::new(interrupted);
        std::thread::scope(|s| {
            let dog =
                s.spawn(|| watch(&progress, timeout, &barrier, &done, &interrupted, &members));
            assert!(barrier.wait().is_err(), "the watchdog breaks the barrier");
            done.store(true, Ordering::Release);
            dog.join().unwrap();
        });
        members.why.into_inner().unwrap()
    }

    #[test]
    fn no_progress_aborts_with_the_timeout_message() {
        let why = abort_reason(Fake::default(), 0.05, false).unwrap();
        assert!(why.contains("no token moved for 0.05 s (timeout)"), "{why}");
    }

    #[test]
    fn a_casualty_aborts_with_its_description() {
        let members = Fake {
            dead: Some("participant 1 of ring 0 was killed".into()),
            ..Fake::default()
        };
        let why = abort_reason(members, 3600.0, false).unwrap();
        assert_eq!(why, "participant 1 of ring 0 was killed");
    }

    #[test]
    fn an_interrupt_aborts_a_ring_that_makes_no_progress_before_the_timeout() {
        let why = abort_reason(Fake::default(), 3600.0, true).unwrap();
        assert_eq!(why, "interrupted");
    }
}
