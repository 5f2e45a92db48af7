//! The measured loop of one ring, run by its participant 0: pin, calibrate, warm up, then
//! timed ring repetitions in blocks, each block paired with an overhead repetition, inside
//! windows whose edges the observer sees, in the order `steps` gives; or, in an evidence
//! instance, one untimed repetition with perf counters on.

use crate::clock;
use crate::config::{Config, Plan};
use crate::engine::{Interrupt, Ring};
use crate::error::{Error, Result};
pub use crate::observer::{Unwatched, Watch};
use crate::stop::Stopped;
use crate::sys;
use barrier::Barrier;
use std::time::Instant;

pub mod barrier;

/// Long repetitions are cut into chunks of about this many seconds so that Ctrl-C and an
/// aborted run are noticed.
const CHECK_EVERY_S: f64 = 0.1;
/// The same for a fixed plan, in trips; also the most trips the evidence repetition makes.
const FIXED_CHUNK_TRIPS: u64 = 10_000;
/// Untimed trips before timed ring repetitions that follow an overhead repetition or the
/// warm-up: the ring idled meanwhile, and an idle ring of hundreds of participants comes
/// back slowly; four trips bring it back to speed (docs: accuracy, "Hundreds of
/// processes"). lmbench and the C ring run their repetitions back to back and measure the
/// overhead apart, so they need none.
const REWARM_DIVISOR: u64 = 8;
const REWARM_MIN_TRIPS: u64 = 4;

/// Seconds spent in calibration, warm-up, the timed repetitions, and start/teardown (the
/// evidence instance's included); and waiting, before the run's first timed window, for the
/// kernel's perf hooks to go off (`counters::settle`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Phases {
    pub calibration: f64,
    pub warmup: f64,
    pub measure: f64,
    pub setup_teardown: f64,
    pub observer_wait: f64,
}

/// What every driver of one point shares: the configuration, the ring size, the blocks this
/// ring instance measures in precision mode, and the barrier that keeps them in step and,
/// once broken, stops them all.
pub struct PointRun<'a> {
    pub cfg: &'a Config,
    pub procs: usize,
    pub blocks: usize,
    pub barrier: Barrier,
}

impl<'a> PointRun<'a> {
    pub fn new(cfg: &'a Config, procs: usize, blocks: usize, rings: usize) -> Self {
        PointRun {
            cfg,
            procs,
            blocks,
            barrier: Barrier::new(rings),
        }
    }
}

/// Each timed repetition's per-hop time, in ns and TSC cycles, of the ring and of its
/// overhead loop: one entry per repetition.
#[derive(Debug, Default)]
pub struct Series {
    pub raw_ns: Vec<f64>,
    pub overhead_ns: Vec<f64>,
    pub raw_cycles: Vec<f64>,
    pub overhead_cycles: Vec<f64>,
}

/// What one driver measured.
pub struct DriverRun {
    pub series: Series,
    /// Why the timed repetitions ended (the same for every ring of a point).
    pub stopped: Stopped,
    /// Trips per ring repetition and overhead rounds per overhead repetition.
    pub trips: u64,
    pub rounds: u64,
    /// The CPU participant 0 was on at the end.
    pub cpu: i32,
    pub phases: Phases,
    /// Trips of the evidence repetition, and its raw per-hop time in ns (0 and NaN in a
    /// timed instance).
    pub counted_trips: u64,
    pub counted_ns: f64,
    /// Trips the ring made inside the timed windows (the observer's windows).
    pub window_trips: u64,
}

/// Where a driver runs, and what it takes over from the point's first ring instance.
#[derive(Debug, Clone, Copy)]
pub struct Seat {
    /// The CPU to pin participant 0 to, if any.
    pub cpu: Option<usize>,
    /// A later instance of a point: the first instance's trips and rounds. It then skips
    /// calibration and the overhead warm-up, which makes an instance cheap enough to measure
    /// many.
    pub known: Option<Timing>,
    /// An evidence instance: no timed repetitions, one repetition with perf counters on.
    pub evidence: bool,
}

/// Participant 0's side of one point: pin, calibrate, warm up, time the repetitions in the
/// windows `watch` sees (or, in an evidence instance, run the evidence repetition between
/// `watch.evidence(true)` and `watch.evidence(false)`), stop the ring. On error the barrier
/// is broken, so the other drivers stop at their next check. Nobody is killed yet, so that
/// `Members::finish` can still tell which participant died first.
pub fn run_driver(
    ring: &mut dyn Ring,
    run: &PointRun,
    seat: Seat,
    interrupt: Interrupt,
    watch: &mut dyn Watch,
) -> Result<DriverRun> {
    let r = measure(ring, run, seat, interrupt, watch);
    if r.is_err() {
        run.barrier.abort();
    }
    r
}

fn measure(
    ring: &mut dyn Ring,
    run: &PointRun,
    seat: Seat,
    interrupt: Interrupt,
    watch: &mut dyn Watch,
) -> Result<DriverRun> {
    let (cfg, barrier) = (run.cfg, &run.barrier);
    let _restore = pin(seat.cpu)?;
    let mut check = || {
        if interrupt() {
            barrier.abort();
            return Err(Error::Interrupted);
        }
        if barrier.aborted() {
            return Err(Barrier::aborted_error());
        }
        Ok(())
    };
    // Signal masks are per thread: register on the thread that drives, until it stops.
    let _registered = ring.attach();
    let mut phases = Phases::default();
    let t = Instant::now();
    let Timing { trips, rounds } = match (seat.known, cfg.plan) {
        (Some(known), _) => known,
        (None, Plan::Calibrated { overhead }) => Timing {
            trips: calibrate(cfg.min_time, &mut |n| ring.trips(n), &mut check)?,
            rounds: if overhead {
                calibrate(cfg.min_time, &mut |n| ring.overhead(n), &mut check)?
            } else {
                0
            },
        },
        (None, Plan::Fixed(trips)) => Timing { trips, rounds: 0 },
    };
    phases.calibration = t.elapsed().as_secs_f64();
    let t = Instant::now();
    // A fresh instance's first trips fault in stacks and pipe buffers: the ring is warmed
    // every time; the overhead loop only runs in this (long-lived) thread.
    let warm_rounds = if seat.known.is_some() { 0 } else { rounds };
    for _ in 0..cfg.warmup {
        check()?;
        ring.trips(trips)?;
        ring.overhead(warm_rounds)?;
    }
    phases.warmup = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let timing = Timing { trips, rounds };
    let (mut series, mut window_trips, mut counted_trips, mut counted_ns) =
        (Series::default(), 0, 0, f64::NAN);
    // In precision mode how the point stopped is decided over instances, not here.
    let (shape, stopped) = (
        cfg.stop.instance_shape(run.blocks),
        cfg.stop.instance_stopped(),
    );
    if seat.evidence {
        counted_trips = match cfg.plan {
            Plan::Calibrated { .. } => trips,
            Plan::Fixed(_) => trips.min(FIXED_CHUNK_TRIPS),
        };
        counted_ns = counted(ring, run, counted_trips, watch, &mut check)?;
    } else {
        (series, window_trips) = timed_blocks(ring, run, shape, timing, watch, &mut check)?;
    }
    phases.measure = t.elapsed().as_secs_f64();
    ring.stop()?;
    Ok(DriverRun {
        series,
        stopped,
        trips,
        rounds,
        cpu: sys::current_cpu(),
        phases,
        counted_trips,
        counted_ns,
        window_trips,
    })
}

/// Restores the calling thread's affinity when the driver pinned it.
struct AffinityGuard(Option<libc::cpu_set_t>);

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        if let Some(set) = &self.0 {
            sys::set_affinity(set);
        }
    }
}

/// Pins the driving thread to `cpu` until the guard drops.
fn pin(cpu: Option<usize>) -> Result<AffinityGuard> {
    let Some(c) = cpu else {
        return Ok(AffinityGuard(None));
    };
    let old = sys::get_affinity()?;
    if sys::set_affinity(&sys::cpu_set(c)) != 0 {
        return Err(Error::last_os(format!("pinning participant 0 to CPU {c}")));
    }
    Ok(AffinityGuard(Some(old)))
}

/// How many chunks a repetition is cut into (see `CHECK_EVERY_S`).
fn chunks(cfg: &Config) -> u64 {
    match cfg.plan {
        Plan::Calibrated { .. } => (cfg.min_time / CHECK_EVERY_S).ceil().max(1.0) as u64,
        Plan::Fixed(trips) => trips.div_ceil(FIXED_CHUNK_TRIPS),
    }
}

/// Trips per ring repetition and rounds per overhead repetition, as calibrated.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub trips: u64,
    pub rounds: u64,
}

impl Series {
    /// Appends one ring repetition's span.
    fn ring(&mut self, span: Span, trips: u64, hops: u64) {
        let per = (trips * hops) as f64;
        self.raw_ns.push(span.ns / per);
        self.raw_cycles.push(span.ticks / per);
    }

    /// Appends one overhead repetition's span, `times` times: once per ring repetition it
    /// stands for.
    fn overhead(&mut self, span: Span, rounds: u64, hops: u64, times: usize) {
        let per = (rounds * hops).max(1) as f64;
        for _ in 0..times {
            self.overhead_ns.push(span.ns / per);
            self.overhead_cycles.push(span.ticks / per);
        }
    }
}

/// One ring repetition (every ring starting it together) and its span.
fn ring_repetition(
    ring: &mut dyn Ring,
    run: &PointRun,
    trips: u64,
    check: &mut dyn FnMut() -> Result<()>,
) -> Result<Span> {
    run.barrier.wait()?;
    check()?;
    timed(&mut |n| ring.trips(n), trips, chunks(run.cfg), check)
}

/// One overhead repetition's span (nothing when the plan has none).
fn overhead_repetition(
    ring: &mut dyn Ring,
    run: &PointRun,
    rounds: u64,
    check: &mut dyn FnMut() -> Result<()>,
) -> Result<Span> {
    if rounds == 0 {
        return Ok(Span {
            ns: 0.0,
            ticks: 0.0,
        });
    }
    timed(&mut |n| ring.overhead(n), rounds, chunks(run.cfg), check)
}

/// The timed repetitions of one ring instance: `blocks` blocks of `per_block` ring
/// repetitions, each block paired with one overhead repetition that stands for its ring
/// repetitions. lmbench's way (`Stop::Fixed`) is blocks of one, each overhead
/// repetition right after its ring repetition. Precision mode's instance is `run.blocks`
/// blocks of `BLOCK_REPETITIONS` run back to back, then their overhead repetitions in the
/// same order: a ring that idles every few milliseconds while the overhead is measured
/// comes back in another scheduling regime than lmbench's ring, which runs without a
/// pause (fewer wake-ups preempt their waker: 1.07 switches per hop against 1.36 at 20
/// participants, and a figure 10-18 % lower; docs: accuracy, "Back to back"). The
/// ring starts with untimed trips (`rewarm`); hops are recorded during the timed
/// repetitions only; the observer's window spans the untimed trips and the ring
/// repetitions after them, never an overhead repetition; whether the point needs another
/// instance is `stop::decide`'s call. Returns the series and the trips made in windows.
fn timed_blocks(
    ring: &mut dyn Ring,
    run: &PointRun,
    (blocks, per_block): (usize, usize),
    timing: Timing,
    watch: &mut dyn Watch,
    check: &mut dyn FnMut() -> Result<()>,
) -> Result<(Series, u64)> {
    let mut s = Series::default();
    let mut trips = 0;
    for step in steps(run.cfg.stop.back_to_back(), blocks) {
        match step {
            Step::Window { blocks } => {
                trips += window(ring, run, (blocks, per_block), timing, watch, check, &mut s)?
            }
            Step::Overheads { count } => {
                overheads(ring, run, (count, per_block), timing, check, &mut s)?
            }
        }
    }
    Ok((s, trips))
}

/// One step of a ring instance's timed part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// An observer's window: untimed trips that bring the ring back to speed, then
    /// `blocks` blocks of ring repetitions.
    Window { blocks: usize },
    /// `count` overhead repetitions, one per block, in the blocks' order.
    Overheads { count: usize },
}

/// The steps of one ring instance's timed part, in the order `timed_blocks` runs them:
/// back to back (precision mode), every block in one window and then their overheads;
/// otherwise (lmbench's way) each block in its own window followed by its overhead.
///
/// ```
/// use ctxbench::measure::{order, steps};
/// use ctxbench::stop::BLOCK_REPETITIONS;
/// // Precision mode: blocks of 4 ring repetitions (T) back to back after the untimed
/// // trips (w) in one observer's window ([...]), then one overhead repetition (O) each.
/// assert_eq!(order(&steps(true, 3), BLOCK_REPETITIONS), "[w TTTT TTTT TTTT] O O O");
/// // -N 3, as lat_ctx: each ring repetition followed by its overhead repetition.
/// assert_eq!(order(&steps(false, 3), 1), "[w T] O [w T] O [w T] O");
/// ```
pub fn steps(back_to_back: bool, blocks: usize) -> Vec<Step> {
    if back_to_back {
        vec![Step::Window { blocks }, Step::Overheads { count: blocks }]
    } else {
        (0..blocks)
            .flat_map(|_| [Step::Window { blocks: 1 }, Step::Overheads { count: 1 }])
            .collect()
    }
}

/// `steps` in letters, blocks of `per_block` ring repetitions: `[` and `]` a window's
/// edges, `w` its untimed trips, `T` a timed ring repetition, `O` an overhead repetition.
pub fn order(steps: &[Step], per_block: usize) -> String {
    let words: Vec<String> = steps
        .iter()
        .map(|step| match *step {
            Step::Window { blocks } => {
                let block = "T".repeat(per_block);
                let inside: Vec<&str> = std::iter::once("w")
                    .chain((0..blocks).map(|_| block.as_str()))
                    .collect();
                format!("[{}]", inside.join(" "))
            }
            Step::Overheads { count } => vec!["O"; count].join(" "),
        })
        .collect();
    words.join(" ")
}

/// One observer's window: untimed trips, then `count` blocks; returns the trips it made.
fn window(
    ring: &mut dyn Ring,
    run: &PointRun,
    (count, per_block): (usize, usize),
    timing: Timing,
    watch: &mut dyn Watch,
    check: &mut dyn FnMut() -> Result<()>,
    s: &mut Series,
) -> Result<u64> {
    watch.window_start();
    let warm = rewarm(ring, run, timing.trips)?;
    for _ in 0..count {
        ring_block(ring, run, per_block, timing, check, s)?;
    }
    watch.window_end();
    Ok(warm + (count * per_block) as u64 * timing.trips)
}

/// `per_block` ring repetitions in a row, their hops recorded.
fn ring_block(
    ring: &mut dyn Ring,
    run: &PointRun,
    per_block: usize,
    timing: Timing,
    check: &mut dyn FnMut() -> Result<()>,
    s: &mut Series,
) -> Result<()> {
    ring.record(true);
    for _ in 0..per_block {
        let span = ring_repetition(ring, run, timing.trips, check)?;
        s.ring(span, timing.trips, run.procs as u64);
    }
    ring.record(false);
    Ok(())
}

/// `count` overhead repetitions, each standing for `per_block` ring repetitions.
fn overheads(
    ring: &mut dyn Ring,
    run: &PointRun,
    (count, per_block): (usize, usize),
    timing: Timing,
    check: &mut dyn FnMut() -> Result<()>,
    s: &mut Series,
) -> Result<()> {
    let hops = run.procs as u64;
    for _ in 0..count {
        let span = overhead_repetition(ring, run, timing.rounds, check)?;
        s.overhead(span, timing.rounds, hops, per_block);
    }
    Ok(())
}

/// Untimed trips that bring an idle ring back to speed (see `REWARM_DIVISOR`); returns how
/// many. Not for a fixed plan: `perf bench sched pipe` times its loop from the first trip.
fn rewarm(ring: &mut dyn Ring, run: &PointRun, trips: u64) -> Result<u64> {
    match run.cfg.plan {
        Plan::Calibrated { .. } => {
            let n = (trips / REWARM_DIVISOR).max(REWARM_MIN_TRIPS);
            ring.trips(n).map(|()| n)
        }
        Plan::Fixed(_) => Ok(0),
    }
}

/// The evidence repetition: `trips` trips with perf counters attached, in an instance that
/// times nothing else (counting slows every switch, and the kernel keeps slowing them for a
/// second after the counters close: `observer`). Returns its raw per-hop ns.
fn counted(
    ring: &mut dyn Ring,
    run: &PointRun,
    trips: u64,
    watch: &mut dyn Watch,
    check: &mut dyn FnMut() -> Result<()>,
) -> Result<f64> {
    rewarm(ring, run, trips)?;
    run.barrier.wait()?;
    check()?;
    watch.evidence(true);
    let span = timed(&mut |n| ring.trips(n), trips, chunks(run.cfg), check);
    watch.evidence(false);
    Ok(span?.ns / (trips * run.procs as u64) as f64)
}

/// A timed interval: ns from CLOCK_MONOTONIC and, where the TSC is a clock, its ticks minus
/// the cost of reading it (0 elsewhere).
#[derive(Debug)]
struct Span {
    ns: f64,
    ticks: f64,
}

/// Runs `total` iterations in `chunks` pieces, checking for Ctrl-C and an abort between them.
fn timed(
    run: &mut dyn FnMut(u64) -> Result<()>,
    total: u64,
    chunks: u64,
    check: &mut dyn FnMut() -> Result<()>,
) -> Result<Span> {
    let step = total.div_ceil(chunks.max(1)).max(1);
    let start = clock::stamp();
    let mut left = total;
    while left > 0 {
        let k = left.min(step);
        run(k)?;
        left -= k;
        if left > 0 {
            check()?;
        }
    }
    // Stamps, not two separate reads: a preemption between reading one clock and the other
    // would make the nanoseconds and the cycles of this repetition disagree by that much.
    let (ns, ticked) = start.to(clock::stamp());
    let ticks = clock::tsc().map_or(0.0, |tsc| ticked as f64 - tsc.read_cost);
    Ok(Span { ns, ticks })
}

/// Grows a trial run until it lasts a tenth of `min_time`, then scales to `min_time`.
fn calibrate(
    min_time: f64,
    run: &mut dyn FnMut(u64) -> Result<()>,
    check: &mut dyn FnMut() -> Result<()>,
) -> Result<u64> {
    let target = min_time / 10.0;
    let mut n = 1u64;
    loop {
        check()?;
        let t = Instant::now();
        run(n)?;
        let dt = t.elapsed().as_secs_f64();
        if dt >= target || n >= 1 << 40 {
            return Ok(((n as f64 * min_time / dt.max(1e-9)).ceil() as u64).max(1));
        }
        // Jump close to the target, but never by more than 100x on a tiny, noisy trial.
        let factor = (target / dt.max(1e-9) * 1.2).clamp(2.0, 100.0);
        n = (n as f64 * factor).ceil() as u64;
    }
}

#[cfg(test)]
mod tests;
