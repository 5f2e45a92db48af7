//! The measurement: for each participant count, start the rings, calibrate, warm up, then
//! alternate timed ring repetitions with overhead repetitions so that machine drift hits both
//! alike, and tear everything down on every path.

use crate::clock;
use crate::config::{self, Config, Plan};
use crate::counters::{Counters, Totals};
use crate::engine::{self, Engine, Group, Ring, TransportKind};
use crate::error::{Error, Result};
use crate::memory;
use crate::placement::Placement;
use crate::sys;
use crate::workload::Workload;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

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
    /// Kernel counters over one extra, counted repetition, and the hops observed tasks made.
    pub counters: Totals,
    pub observed_hops: u64,
    /// Raw per-hop time of that counted repetition (ring 0): what counting costs shows
    /// against `raw_ns`.
    pub counted_ns: f64,
    /// Merged hop histogram (counts per `hops::bucket`) and the largest hop in ns, when
    /// recording.
    pub hops: Option<(Vec<u64>, u64)>,
    /// Lifetime rusage of the participants other than participant 0.
    pub rusage: Rusage,
    /// Seconds spent in calibration, warm-up, the timed repetitions, and start/teardown.
    pub phase_s: Phases,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Rusage {
    pub voluntary: u64,
    pub involuntary: u64,
    /// Hops those participants made over the same lifetime.
    pub passes: u64,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Phases {
    pub calibration: f64,
    pub warmup: f64,
    pub measure: f64,
    pub setup_teardown: f64,
}

/// Asked between repetitions; true means stop now (Ctrl-C).
pub type Interrupt<'a> = &'a mut (dyn FnMut() -> bool + 'a);

/// Runs the whole configuration, one point per participant count.
pub fn run(cfg: &Config, interrupt: Interrupt) -> Result<Vec<Point>> {
    cfg.validate()?;
    let allowed = sys::allowed_cpus()?;
    // Every point's placement is checked before the first is measured.
    let mut placements = Vec::with_capacity(cfg.procs.len());
    for &procs in &cfg.procs {
        let cpus = cfg.placement.resolve(&allowed, procs, cfg.parallel)?;
        let first = cpus[0][0];
        let one_cpu =
            allowed.len() == 1 || (first.is_some() && cpus.iter().flatten().all(|&c| c == first));
        if cfg.transport.single_cpu_only() && !one_cpu {
            return Err(Error::invalid(
                "placement",
                format!(
                    "transport {:?} needs every participant on one CPU: use placement='single'",
                    cfg.transport.name()
                ),
            ));
        }
        placements.push((procs, cpus));
    }
    // Refuse what cannot fit before forking anything, not halfway through the sweep.
    let largest = cfg.procs.iter().max().copied().unwrap_or(0);
    let need = memory::ring_bytes(cfg.engine, largest, cfg.parallel, cfg.size_kb);
    memory::check(
        need,
        &format!(
            "{} x {largest} participants with {} KiB each",
            cfg.parallel, cfg.size_kb
        ),
    )?;
    let _sigpipe = sys::Blocked::new(libc::SIGPIPE);
    let mut points = Vec::with_capacity(cfg.procs.len());
    for (procs, cpus) in placements {
        if interrupt() {
            return Err(Error::Interrupted);
        }
        points.push(point(cfg, procs, &cpus, interrupt)?);
    }
    Ok(points)
}

/// `perf bench sched pipe`: two participants bounce the token `loops` times; one op is one
/// round trip (two switches). Timed as one run, as perf does; no overhead is subtracted.
#[derive(Debug, Clone)]
pub struct PingPong {
    pub loops: u64,
    pub elapsed_s: f64,
    pub usecs_per_op: f64,
    pub ops_per_sec: f64,
    pub usecs_per_switch: f64,
    /// TSC cycles per switch where the TSC is a clock (see `clock::tsc`).
    pub cycles_per_switch: Option<f64>,
    /// CPU each of the two participants was last on.
    pub cpus: Vec<i32>,
}

pub fn pingpong(
    engine: Engine,
    transport: TransportKind,
    placement: Placement,
    loops: u64,
    timeout: f64,
    interrupt: Interrupt,
) -> Result<PingPong> {
    config::LOOPS.check(loops)?;
    let cfg = Config {
        engine,
        transport,
        placement,
        repetitions: 1,
        warmup: 0,
        timeout,
        plan: Plan::Fixed(loops),
        ..Config::lat_ctx(vec![2])
    };
    let p = run(&cfg, interrupt)?.remove(0);
    let elapsed_s = p.raw_ns[0][0] * 2.0 * loops as f64 / 1e9;
    Ok(PingPong {
        loops,
        elapsed_s,
        usecs_per_op: elapsed_s * 1e6 / loops as f64,
        ops_per_sec: loops as f64 / elapsed_s,
        usecs_per_switch: elapsed_s * 1e6 / loops as f64 / 2.0,
        cycles_per_switch: clock::tsc().ok().map(|_| p.raw_cycles[0][0]),
        cpus: p.cpus[0].clone(),
    })
}

fn point(
    cfg: &Config,
    procs: usize,
    cpus: &[Vec<Option<usize>>],
    interrupt: Interrupt,
) -> Result<Point> {
    let t0 = Instant::now();
    let Group { mut rings, members } = engine::spawn(
        cfg.engine,
        cfg.transport,
        procs,
        cfg.size_kb,
        cfg.record_hops,
        cpus,
    )?;
    // Every task the kernel schedules: the participants, and participant 0 of ring 0 (this
    // thread; the drivers of other rings are not observed).
    let mut tasks = members.tids();
    tasks.push((0, sys::gettid()));
    // Counters are evidence, not the measurement: without the descriptors for them, they
    // report themselves unavailable (EMFILE) and the run goes on.
    let fd_limit = sys::ensure_fds(Counters::FDS_PER_TASK * tasks.len() as u64)
        .ok()
        .flatten();
    let tids: Vec<libc::pid_t> = tasks.iter().map(|t| t.1).collect();
    let mut counters = None;
    let mut totals = Totals::default();
    let ctx = Ctx {
        cfg,
        procs,
        abort: AtomicBool::new(false),
        barrier: Barrier::new(rings.len()),
    };
    let done = AtomicBool::new(false);
    let progress: Vec<_> = rings.iter().map(|r| r.progress()).collect();
    let outcome: Vec<Result<Drive>> = std::thread::scope(|s| {
        let watchdog = s.spawn(|| watch(&progress, &ctx, &done, &*members));
        let (first, rest) = rings.split_first_mut().expect("at least one ring");
        let others: Vec<_> = rest
            .iter_mut()
            .enumerate()
            .map(|(k, ring)| {
                let (ctx, cpu) = (&ctx, cpus[k + 1][0]);
                s.spawn(move || drive(ring.as_mut(), ctx, cpu, &mut || false, &mut |_| {}))
            })
            .collect();
        let mut window = |open: bool| {
            if open {
                counters.insert(Counters::open(&tids)).start();
            } else if let Some(mut c) = counters.take() {
                totals = c.stop();
            }
        };
        let mut all = vec![drive(
            first.as_mut(),
            &ctx,
            cpus[0][0],
            interrupt,
            &mut window,
        )];
        all.extend(
            others
                .into_iter()
                .map(|h| h.join().expect("driver thread panicked")),
        );
        done.store(true, Ordering::Release);
        watchdog.join().expect("watchdog panicked");
        all
    });
    drop(counters);
    if let Some(old) = fd_limit {
        sys::restore_fd_limit(old);
    }

    let stopped = outcome.iter().all(Result::is_ok);
    let work: Vec<(u64, u64)> = rings.iter().map(|r| r.work_done()).collect();
    let driver_hops = rings[0].driver_hops_per_trip();
    let hops = rings
        .iter()
        .filter_map(|r| r.hops())
        .reduce(|(mut a, m), (b, n)| {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            (a, m.max(n))
        });
    drop(rings);
    let report = members.finish(stopped);
    if !stopped {
        let first = outcome
            .into_iter()
            .find_map(Result::err)
            .unwrap_or_else(|| Error::Peer("the ring did not stop cleanly".into()));
        return Err(match (first, report.failure) {
            (Error::Interrupted, _) => Error::Interrupted,
            (Error::Peer(msg), Some(cause)) => Error::Peer(format!("{cause} ({msg})")),
            (e, _) => e,
        });
    }
    let drives: Vec<Drive> = outcome.into_iter().map(|r| r.expect("checked")).collect();

    let expected = Workload::expected_sum(cfg.size_kb);
    let check = |&(passes, sum): &(u64, u64)| sum == passes.wrapping_mul(expected) && passes > 0;
    let work_verified = work.iter().all(check) && report.work.iter().flatten().all(check);
    // Each observed task receives the token once per trip of its ring in every repetition.
    // Each observed task receives the token once per trip of the counted repetition.
    let observed_hops = drives[0].counted_trips * driver_hops
        + tasks[..tasks.len() - 1]
            .iter()
            .map(|&(r, _)| drives[r].counted_trips)
            .sum::<u64>();

    let mut phase_s = Phases::default();
    for d in &drives {
        phase_s.calibration = phase_s.calibration.max(d.phases.calibration);
        phase_s.warmup = phase_s.warmup.max(d.phases.warmup);
        phase_s.measure = phase_s.measure.max(d.phases.measure);
    }
    phase_s.setup_teardown =
        (t0.elapsed().as_secs_f64() - phase_s.calibration - phase_s.warmup - phase_s.measure)
            .max(0.0);
    // Each driver kept its own series; a point holds them as [repetition][ring].
    let by_rep = |series: fn(&Drive) -> &Vec<f64>| -> Vec<Vec<f64>> {
        (0..cfg.repetitions)
            .map(|k| drives.iter().map(|d| series(d)[k]).collect())
            .collect()
    };
    Ok(Point {
        procs,
        raw_ns: by_rep(|d| &d.raw_ns),
        overhead_ns: by_rep(|d| &d.overhead_ns),
        raw_cycles: by_rep(|d| &d.raw_cycles),
        overhead_cycles: by_rep(|d| &d.overhead_cycles),
        trips: drives.iter().map(|d| d.trips).collect(),
        overhead_rounds: drives.iter().map(|d| d.rounds).collect(),
        cpus: drives
            .iter()
            .zip(&report.cpus)
            .map(|(d, rest)| std::iter::once(d.cpu).chain(rest.iter().copied()).collect())
            .collect(),
        work_verified,
        counters: totals,
        observed_hops,
        counted_ns: drives[0].counted_ns,
        hops,
        rusage: Rusage {
            voluntary: report.voluntary,
            involuntary: report.involuntary,
            passes: report.passes,
        },
        phase_s,
    })
}

/// What every driver of one point shares.
struct Ctx<'a> {
    cfg: &'a Config,
    procs: usize,
    abort: AtomicBool,
    barrier: Barrier,
}

/// One driver failed: the others stop at their next repetition boundary. Nobody is killed
/// yet, so that `finish` can still tell which participant died first.
fn fail(abort: &AtomicBool, barrier: &Barrier) {
    abort.store(true, Ordering::Release);
    barrier.abort();
}

/// Kills the ring when no driver has made progress for `timeout` seconds: a stopped or
/// starved participant must end in an error, never a hang.
fn watch(progress: &[Arc<AtomicU64>], ctx: &Ctx, done: &AtomicBool, members: &dyn engine::Members) {
    let timeout = ctx.cfg.timeout;
    let give_up = |why: &str| {
        if !ctx.abort.swap(true, Ordering::AcqRel) {
            ctx.barrier.abort();
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
    while !done.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(20));
        let now = read();
        if let Some(why) = members.casualty() {
            give_up(&why);
        } else if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed().as_secs_f64() > timeout {
            give_up(&format!(
                "no token moved for {timeout} s (timeout): a participant hung or was stopped"
            ));
        }
    }
}

struct Drive {
    raw_ns: Vec<f64>,
    overhead_ns: Vec<f64>,
    trips: u64,
    rounds: u64,
    cpu: i32,
    phases: Phases,
    counted_trips: u64,
    counted_ns: f64,
    raw_cycles: Vec<f64>,
    overhead_cycles: Vec<f64>,
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

/// Participant 0's side of one point: pin, calibrate, warm up, time the repetitions (with
/// `window(true)`/`window(false)` around them), stop the ring. On error, the other drivers are
/// told to stop at their next repetition boundary.
fn drive(
    ring: &mut dyn Ring,
    ctx: &Ctx,
    cpu: Option<usize>,
    interrupt: Interrupt,
    window: &mut dyn FnMut(bool),
) -> Result<Drive> {
    let r = measure(ring, ctx, cpu, interrupt, window);
    if r.is_err() {
        fail(&ctx.abort, &ctx.barrier);
    }
    r
}

fn measure(
    ring: &mut dyn Ring,
    ctx: &Ctx,
    cpu: Option<usize>,
    interrupt: Interrupt,
    window: &mut dyn FnMut(bool),
) -> Result<Drive> {
    let (cfg, abort, barrier) = (ctx.cfg, &ctx.abort, &ctx.barrier);
    let _restore = match cpu {
        Some(c) => {
            let old = sys::get_affinity()?;
            if sys::set_affinity(&sys::cpu_set(c)) != 0 {
                return Err(Error::last_os(format!("pinning participant 0 to CPU {c}")));
            }
            AffinityGuard(Some(old))
        }
        None => AffinityGuard(None),
    };
    let mut check = |abort: &AtomicBool| {
        if interrupt() {
            abort.store(true, Ordering::Release);
            return Err(Error::Interrupted);
        }
        if abort.load(Ordering::Acquire) {
            return Err(Error::Peer("the run was aborted".into()));
        }
        Ok(())
    };
    // Signal masks are per thread: register on the thread that drives, until it stops.
    let _registered = ring.attach();
    let mut phases = Phases::default();
    let t = Instant::now();
    let (trips, rounds) = match cfg.plan {
        Plan::Calibrated => (
            calibrate(cfg.min_time, &mut |n| ring.trips(n), &mut || check(abort))?,
            calibrate(cfg.min_time, &mut |n| ring.overhead(n), &mut || {
                check(abort)
            })?,
        ),
        Plan::Fixed(trips) => (trips, 0),
    };
    phases.calibration = t.elapsed().as_secs_f64();
    // Long repetitions are cut into chunks of about 0.1 s so that Ctrl-C is noticed.
    let chunks = match cfg.plan {
        Plan::Calibrated => (cfg.min_time / CHECK_EVERY_S).ceil().max(1.0) as u64,
        Plan::Fixed(trips) => trips.div_ceil(FIXED_CHUNK_TRIPS),
    };
    let t = Instant::now();
    for _ in 0..cfg.warmup {
        check(abort)?;
        ring.trips(trips)?;
        ring.overhead(rounds)?;
    }
    phases.warmup = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let hops = ctx.procs as u64;
    let mut raw_ns = Vec::with_capacity(cfg.repetitions);
    let mut overhead_ns = Vec::with_capacity(cfg.repetitions);
    let mut raw_cycles = Vec::with_capacity(cfg.repetitions);
    let mut overhead_cycles = Vec::with_capacity(cfg.repetitions);
    for k in 0..cfg.repetitions {
        barrier.wait()?;
        check(abort)?;
        if k == 0 {
            ring.record(true);
        }
        let span = timed(&mut |n| ring.trips(n), trips, chunks, &mut || check(abort))?;
        raw_ns.push(span.ns / (trips * hops) as f64);
        raw_cycles.push(span.ticks / (trips * hops) as f64);
        let span = if rounds == 0 {
            Span {
                ns: 0.0,
                ticks: 0.0,
            }
        } else {
            timed(&mut |n| ring.overhead(n), rounds, chunks, &mut || {
                check(abort)
            })?
        };
        let per = (rounds * hops).max(1) as f64;
        overhead_ns.push(span.ns / per);
        overhead_cycles.push(span.ticks / per);
    }
    ring.record(false);
    phases.measure = t.elapsed().as_secs_f64();
    // One more repetition with the kernel counters attached, kept out of the samples:
    // counting costs time on every switch, so the timed repetitions run without it.
    let counted_trips = match cfg.plan {
        Plan::Calibrated => trips,
        Plan::Fixed(_) => trips.min(FIXED_CHUNK_TRIPS),
    };
    barrier.wait()?;
    check(abort)?;
    window(true);
    let ns = timed(&mut |n| ring.trips(n), counted_trips, chunks, &mut || {
        check(abort)
    })?
    .ns;
    window(false);
    ring.stop()?;
    Ok(Drive {
        raw_ns,
        overhead_ns,
        raw_cycles,
        overhead_cycles,
        trips,
        rounds,
        counted_trips,
        counted_ns: ns / (counted_trips * hops) as f64,
        cpu: sys::current_cpu(),
        phases,
    })
}

const CHECK_EVERY_S: f64 = 0.1;
const FIXED_CHUNK_TRIPS: u64 = 10_000;

/// Runs `total` iterations in `chunks` pieces, checking for Ctrl-C between them; returns ns.
fn timed(
    run: &mut dyn FnMut(u64) -> Result<()>,
    total: u64,
    chunks: u64,
    check: &mut dyn FnMut() -> Result<()>,
) -> Result<Span> {
    let step = total.div_ceil(chunks.max(1)).max(1);
    let (t, c) = (Instant::now(), clock::ticks());
    let mut left = total;
    while left > 0 {
        let k = left.min(step);
        run(k)?;
        left -= k;
        if left > 0 {
            check()?;
        }
    }
    let (ns, c1) = (t.elapsed().as_nanos() as f64, clock::ticks());
    let ticks = clock::tsc().map_or(0.0, |tsc| (c1 - c) as f64 - tsc.read_cost);
    Ok(Span { ns, ticks })
}

/// A timed interval: ns from CLOCK_MONOTONIC and, where the TSC is a clock, its ticks minus
/// the cost of reading it (0 elsewhere).
struct Span {
    ns: f64,
    ticks: f64,
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

/// A barrier that keeps parallel rings in step between repetitions and can be broken, so that
/// one failing ring does not leave the others waiting forever.
struct Barrier {
    state: Mutex<(usize, u64, bool)>,
    cv: Condvar,
    n: usize,
}

impl Barrier {
    fn new(n: usize) -> Self {
        Barrier {
            state: Mutex::new((0, 0, false)),
            cv: Condvar::new(),
            n,
        }
    }

    fn wait(&self) -> Result<()> {
        let aborted = || Error::Peer("the run was aborted".into());
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

    fn abort(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).2 = true;
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick(procs: Vec<usize>) -> Config {
        Config {
            min_time: 0.005,
            repetitions: 3,
            ..Config::lat_ctx(procs)
        }
    }

    #[test]
    fn ring_measures_every_count() {
        let cfg = Config {
            size_kb: 16,
            ..quick(vec![2, 3, 8])
        };
        let points = run(&cfg, &mut || false).unwrap();
        assert_eq!(points.len(), 3);
        for (p, &n) in points.iter().zip(&cfg.procs) {
            assert_eq!(p.procs, n);
            assert_eq!(p.raw_ns.len(), 3);
            assert!(p.raw_ns.iter().flatten().all(|&x| x.is_finite() && x > 0.0));
            assert!(p
                .overhead_ns
                .iter()
                .flatten()
                .all(|&x| x.is_finite() && x > 0.0));
            assert!(p.work_verified);
            assert_eq!(p.cpus[0].len(), n);
            assert!(p.cpus[0].iter().all(|&c| c >= 0));
        }
    }

    #[test]
    fn single_placement_pins_everyone() {
        let cfg = Config {
            placement: Placement::Single(None),
            parallel: 2,
            ..quick(vec![4])
        };
        let first = sys::allowed_cpus().unwrap()[0] as i32;
        let p = &run(&cfg, &mut || false).unwrap()[0];
        assert_eq!(p.cpus.len(), 2);
        assert!(p.cpus.iter().flatten().all(|&c| c == first), "{:?}", p.cpus);
    }

    #[test]
    fn interrupt_stops_and_reaps() {
        let mut calls = 0;
        let e = run(&quick(vec![4]), &mut || {
            calls += 1;
            calls > 2
        })
        .unwrap_err();
        assert_eq!(e, Error::Interrupted);
    }
}
