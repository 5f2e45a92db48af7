//! Tests of the measuring loop: the order of blocks and overhead repetitions, what each
//! repetition records, and how a ring instance ends.
use super::*;
use crate::stop::{Precision, Stop, BLOCK_REPETITIONS};
use std::time::Duration;

/// A ring that writes down what it was asked to do: `T` a run of trips, `O` overhead.
#[derive(Default)]
struct Script(std::sync::Arc<std::sync::Mutex<String>>);

impl Ring for Script {
    fn attach(&self) -> crate::sys::Guards {
        crate::sys::Guards(Vec::new())
    }
    fn trips(&mut self, _: u64) -> Result<()> {
        self.0.lock().unwrap().push('T');
        Ok(())
    }
    fn overhead(&mut self, _: u64) -> Result<()> {
        self.0.lock().unwrap().push('O');
        Ok(())
    }
    fn stop(&mut self) -> Result<()> {
        Ok(())
    }
    fn progress(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        Default::default()
    }
    fn work_done(&self) -> (u64, u64) {
        (0, 0)
    }
    fn resident_kb(&self) -> Option<u64> {
        None
    }
    fn record(&self, _: bool) {}
    fn hops(&self) -> Option<(Vec<u64>, u64)> {
        None
    }
}

/// An observer that writes its window edges, `[` and `]`, among the ring's calls.
struct Edges(std::sync::Arc<std::sync::Mutex<String>>);

impl Watch for Edges {
    fn window_start(&mut self) {
        self.0.lock().unwrap().push('[');
    }
    fn window_end(&mut self) {
        self.0.lock().unwrap().push(']');
    }
}

fn script(stop: Stop, blocks: usize, per_block: usize) -> (String, Series) {
    let cfg = Config {
        stop,
        min_time: CHECK_EVERY_S, // one chunk per repetition
        ..Config::lat_ctx(vec![2])
    };
    let run = PointRun::new(&cfg, 2, blocks, 1);
    let mut ring = Script::default();
    let timing = Timing {
        trips: 64,
        rounds: 64,
    };
    let mut watch = Edges(ring.0.clone());
    let (s, _) = timed_blocks(
        &mut ring,
        &run,
        (blocks, per_block),
        timing,
        &mut watch,
        &mut || Ok(()),
    )
    .unwrap();
    let calls = ring.0.lock().unwrap().clone();
    (calls, s)
}

#[test]
fn precision_blocks_run_back_to_back_and_their_overheads_follow() {
    // A ring that pauses every few milliseconds switches less per hop than lmbench's,
    // which never pauses: the blocks of an instance run without the overhead between.
    let stop = Stop::Precise(Precision {
        target: 0.02,
        max_repetitions: 400,
        max_time: 1.0,
    });
    let (calls, s) = script(stop, 3, BLOCK_REPETITIONS);
    // The observer's window spans the untimed trips and the blocks, no overhead.
    assert_eq!(
        calls,
        format!("[T{}]OOO", "T".repeat(3 * BLOCK_REPETITIONS))
    );
    assert_eq!(s.raw_ns.len(), 3 * BLOCK_REPETITIONS);
    assert_eq!(
        s.overhead_ns.len(),
        s.raw_ns.len(),
        "each block paired with one overhead"
    );
}

#[test]
fn fixed_repetitions_each_have_their_overhead_after_them() {
    let (calls, s) = script(Stop::Fixed(3), 3, 1);
    // lmbench's way: each repetition after its untimed trips, its overhead after it.
    assert_eq!(calls, "[TT]O".repeat(3));
    assert_eq!(s.overhead_ns.len(), 3);
}

#[test]
fn timed_splits_into_chunks_and_checks_between_them() {
    let (mut runs, mut checks) = (Vec::new(), 0);
    timed(
        &mut |k| {
            runs.push(k);
            Ok(())
        },
        10,
        3,
        &mut || {
            checks += 1;
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(runs, [4, 4, 2]);
    assert_eq!(checks, 2, "no check after the last chunk");
}

#[test]
fn timed_stops_on_a_check_error() {
    let mut runs = 0;
    let r = timed(
        &mut |_| {
            runs += 1;
            Ok(())
        },
        100,
        10,
        &mut || Err(Error::Interrupted),
    );
    assert_eq!(r.unwrap_err(), Error::Interrupted);
    assert_eq!(runs, 1);
}

#[test]
fn calibrate_grows_the_trial_and_scales_to_min_time() {
    // Each iteration sleeps at least UNIT, so `min_time / UNIT` iterations last at
    // least `min_time`: calibration can never ask for more.
    const UNIT: Duration = Duration::from_micros(50);
    let min_time = 0.01;
    let mut trials = Vec::new();
    let n = calibrate(
        min_time,
        &mut |n| {
            trials.push(n);
            std::thread::sleep(UNIT * n as u32);
            Ok(())
        },
        &mut || Ok(()),
    )
    .unwrap();
    assert!(
        n >= 1 && n <= (min_time / UNIT.as_secs_f64()).ceil() as u64,
        "{n}"
    );
    assert_eq!(trials[0], 1);
    assert!(trials.windows(2).all(|w| w[1] >= 2 * w[0]), "{trials:?}");
}

#[test]
fn calibrate_stops_on_a_check_error() {
    let mut runs = 0;
    let r = calibrate(
        1.0,
        &mut |_| {
            runs += 1;
            Ok(())
        },
        &mut || Err(Error::Peer("the run was aborted".into())),
    );
    assert!(r.is_err());
    assert_eq!(runs, 0);
}
