//! One point's lifecycle, for each participant count: start the participants, drive every
//! ring under the watchdog and its observer, pick the first failure, assemble the `Point`;
//! everything is torn down on every path. Plus `instance` (one fresh instance: `ab`'s
//! rounds) and `pingpong` (perf's loop).

use crate::cgroups;
use crate::config::{Config, Plan};
use crate::counters::{self, Counters, Totals};
use crate::engine::{self, Engine, Group, Members, Report, Ring};
use crate::error::{Error, Result};
use crate::hops;
use crate::host::restrictions::{self, Kind};
use crate::interference::{Achieved, Neighbours};
use crate::measure::barrier::Barrier;
use crate::measure::{run_driver, DriverRun, PointRun, Seat, Series, Timing, Unwatched};
use crate::memory;
use crate::observer::{Accounting, Observer, Watcher};
use crate::placement::{self, Resolved};
use crate::sched;
use crate::stop::Stop;
use crate::sys;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub use crate::engine::Interrupt;
pub use crate::measure::Phases;
pub use point::{Point, Rusage};
pub use run::run;

mod own_thread;
mod point;
mod precise;
mod run;
pub mod tasks;
pub mod watchdog;

/// One fresh ring instance of `cfg`'s first participant count, measuring `blocks` blocks back
/// to back as precision mode does, and nothing more (no evidence instance): `ab`'s rounds.
pub fn instance(cfg: &Config, blocks: usize, interrupt: Interrupt) -> Result<Point> {
    let placements = check(cfg)?;
    let (procs, cpus) = &placements[0];
    let _sigpipe = sys::Blocked::new(libc::SIGPIPE);
    let waited = counters::settle(&mut *interrupt)?;
    let mut p = point(cfg, *procs, cpus, Instance::First(&|_| blocks), interrupt)?;
    p.phase_s.observer_wait = waited;
    Ok(p)
}

/// Everything `run` refuses on this host before it starts a participant (the request
/// checked the configuration itself): the policy against this host's limits, every point's
/// placement against this thread's affinity mask, and (before forking anything, not
/// halfway through a sweep) the memory the largest point needs and the tasks it starts
/// (`tasks::check_rings`: a process limit). Returns each participant count with where its
/// participants run.
pub fn check(cfg: &Config) -> Result<Vec<(usize, Resolved)>> {
    if let Some(s) = &cfg.sched {
        sched::check(s, &sched::Host::this())?;
    }
    if let Some(cg) = &cfg.cgroups {
        let s = cfg.sched.map_or_else(|| sched::get(0), Ok)?;
        cgroups::check_policy(cg, &s)?;
    }
    let allowed = sys::allowed_cpus()?;
    let mut placements = Vec::with_capacity(cfg.procs.len());
    for &procs in &cfg.procs {
        let cpus = cfg.placement.resolve(&allowed, procs, cfg.parallel);
        let cpus = cpus.map_err(|e| restrictions::naming(e, Kind::Cpuset))?;
        placement::check_one_cpu(cfg.transport, &cpus)?;
        placements.push((procs, cpus));
    }
    let largest = cfg.procs.iter().max().copied().unwrap_or(0);
    let (need, what) = rings_need(cfg.engine, largest, cfg.parallel, cfg.size_kb);
    let groups = cfg
        .cgroups
        .as_ref()
        .map(|cg| cgroups::kernel_need(cg, largest));
    let (kernel, in_groups) = groups.unwrap_or_default();
    memory::check(need.saturating_add(kernel), &format!("{what}{in_groups}"))?;
    tasks::check_rings(cfg.engine, largest, cfg.parallel)?;
    if let Some(i) = &cfg.interference {
        tasks::check(i.tasks() as u64, "the interference neighbours")?;
    }
    Ok(placements)
}

/// Bytes `parallel` rings of `procs` participants of `engine` with `size_kb` arrays need,
/// budgeted from the caller's footprint now (each fork copies its page tables), and the
/// words that name them in a `MemoryError`.
pub fn rings_need(engine: Engine, procs: usize, parallel: usize, size_kb: usize) -> (u64, String) {
    let page_tables = if engine.forks() {
        memory::page_table_bytes()
    } else {
        0
    };
    let each = engine.participant_bytes(page_tables);
    let forked = if engine.forks() {
        format!(
            ", each forked one copying this process's {:.1} MiB of page tables",
            page_tables as f64 / f64::from(1 << 20)
        )
    } else {
        String::new()
    };
    (
        memory::ring_bytes(each, procs, parallel, size_kb),
        format!("{parallel} x {procs} participants with {size_kb} KiB each{forked}"),
    )
}

/// `perf bench sched pipe` as a configuration of `base` (a ring of two as the request
/// resolved it, no workload: a ping-pong takes no size): two participants bounce the token,
/// with no overhead subtracted; one op is one round trip (two switches). With `loops`,
/// perf's form: that many round trips timed as one run. Without, repetitions of `base`'s
/// `min_time` in ring instances until its `stop`, like a ring point, so that a ping-pong has
/// an interval and compares. `run` measures it.
pub fn pingpong_config(base: Config, loops: Option<u64>) -> Config {
    let (stop, plan, warmup) = match loops {
        Some(n) => (Stop::Fixed(1), Plan::Fixed(n), 0),
        None => (base.stop, Plan::Calibrated { overhead: false }, 1),
    };
    Config {
        procs: vec![2],
        stop,
        warmup,
        plan,
        ..base
    }
}

/// Which ring instance of a point `point` starts.
#[derive(Clone, Copy)]
pub(crate) enum Instance<'a> {
    /// The first: it calibrates, and measures as many blocks as this says given the seconds
    /// starting its participants took.
    First(&'a (dyn Fn(f64) -> usize + Sync)),
    /// A later one: the first's timing per ring, and its blocks.
    Later(&'a [Timing], usize),
    /// The evidence instance, with the first's timing per ring: no timed repetition.
    Evidence(&'a [Timing]),
}

/// One participant count's ring instance, on a thread of its own that ends with it
/// (`on_own_thread`, which meanwhile asks `interrupt` and hands the answer on). Ring 0's
/// driver (participant 0: it times the ring and is observed) runs there under the policy
/// asked, so the calling thread is never changed and nothing needs putting back, which an
/// unprivileged caller could not do once lowered (RLIMIT_NICE).
pub(crate) fn point(
    cfg: &Config,
    procs: usize,
    cpus: &Resolved,
    instance: Instance,
    interrupt: Interrupt,
) -> Result<Point> {
    #[cfg(test)]
    let never_written = crate::config::NEVER_WRITTEN.get();
    let body = |asked: &AtomicBool| {
        #[cfg(test)]
        crate::config::NEVER_WRITTEN.set(never_written);
        point_here(cfg, procs, cpus, instance, asked)
    };
    own_thread::on_own_thread("ctxbench-point", body, interrupt)?
}

/// `point` on the thread it runs on: start, drive, tear down, assemble. `asked`: whether
/// the caller was interrupted.
fn point_here(
    cfg: &Config,
    procs: usize,
    cpus: &Resolved,
    instance: Instance,
    asked: &AtomicBool,
) -> Result<Point> {
    let interrupt = &mut || asked.load(Ordering::Relaxed);
    let t0 = Instant::now();
    // Before the participants, so that none of them inherits a neighbour's descriptors.
    let mut neighbours = match &cfg.interference {
        Some(asked) => Some(Neighbours::start(asked, &measured_cpus(cpus))?),
        None => None,
    };
    let start = engine::Start {
        procs,
        shape: cfg.shape()?,
        record: cfg.record_hops,
        cpus,
        timeout: cfg.timeout,
        interrupt: &mut *interrupt,
    };
    let Group { mut rings, members } = engine::spawn(cfg.engine, cfg.transport, start)?;
    // Every task the kernel schedules: the participants, and participant 0 of ring 0 (this
    // thread; the drivers of other rings are not observed).
    let mut tasks = members.tids();
    // Before the first token releases them; the drivers take it in `drive_all`.
    let sched = match sched::participants(cfg.sched.as_ref(), &tasks) {
        Ok(s) => s,
        Err(e) => return Err(unreleased(e, "the policy could not be set", rings, members)),
    };
    tasks.push((0, sys::gettid()));
    // Placed in their groups before any is released; out of them once every one has left.
    let groups = match &cfg.cgroups {
        Some(cg) => match cgroups::place(cg, &tasks.iter().map(|t| t.1).collect::<Vec<_>>()) {
            Ok(placed) => Some(placed),
            Err(e) => {
                return Err(unreleased(
                    e,
                    "the cgroups could not be made",
                    rings,
                    members,
                ))
            }
        },
        None => None,
    };
    // This thread is ring 0's participant 0 until every participant is gone: a token signal
    // sent late (a participant upstream, or the watchdog's STOP after the driver returned)
    // stays blocked here and is discarded when the guard drops, after `finish`.
    let _late_tokens = rings[0].attach();
    let (known, blocks, evidence) = match instance {
        Instance::First(blocks) => (None, blocks(t0.elapsed().as_secs_f64()), false),
        Instance::Later(known, blocks) => (Some(known), blocks, false),
        Instance::Evidence(known) => (Some(known), 0, true),
    };
    let run = PointRun::new(cfg, procs, blocks, rings.len());
    let seats: Vec<Seat> = cpus
        .iter()
        .enumerate()
        .map(|(k, ring)| Seat {
            cpu: ring[0],
            known: known.map(|t| t[k]),
            evidence,
        })
        .collect();
    if let Some(n) = neighbours.as_mut() {
        n.mark();
    }
    let throttle = crate::host::restrictions::Throttle::start();
    let (outcome, watched) = drive_all(&mut rings, &*members, &run, &seats, &tasks, asked);
    let throttled = throttle.periods();
    let interference = neighbours.as_ref().map(Neighbours::achieved);
    drop(neighbours);
    let stopped = outcome.iter().all(Result::is_ok);
    let totals = RingTotals::read(&rings);
    drop(rings);
    let report = members.finish(stopped);
    drop(groups);
    if !stopped {
        if asked.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        return Err(first_failure(outcome, report.failure));
    }
    let drivers = outcome.into_iter().collect::<Result<Vec<_>>>()?;
    for (r, (sent, work)) in totals.sent.iter().zip(&report.work).enumerate() {
        if let Some(sent) = *sent {
            let received: Vec<u64> = work.iter().map(|&(passes, _)| passes).collect();
            crate::token::check_receipts(r, sent, &received)?;
        }
    }
    let evidence = Evidence {
        interference,
        sched,
        report,
        rings: totals,
        watched,
        throttled,
    };
    Ok(assemble(&run, &drivers, evidence, &tasks, t0, cpus.one_cpu))
}

/// `e`, met after the participants started and before the first token released them, once
/// every participant is torn down (told `why`). Where a task was already gone (ESRCH), a
/// participant left on its own (a syscall it was refused, say by seccomp): its account,
/// which names its own errno, is the cause.
fn unreleased(e: Error, why: &str, rings: Vec<Box<dyn Ring>>, members: Box<dyn Members>) -> Error {
    let gone = match e.errno() {
        Some(libc::ESRCH) => members.casualty(),
        _ => None,
    };
    members.abort(why);
    drop(rings);
    members.finish(false);
    gone.map_or(e, |cause| {
        Error::Peer(format!("while starting the ring: {cause}"))
    })
}

/// What ring 0's observer saw: the kernel's accounting of the timed windows, and perf's count.
type Watched = (std::result::Result<Accounting, String>, Totals);

/// Drives every ring at once, ring 0 from this thread (the only one observed: `Watcher`) and
/// each other ring from a thread of its own, under the watchdog. Returns each driver's outcome
/// in ring order, and what the observer saw.
fn drive_all(
    rings: &mut [Box<dyn Ring>],
    members: &dyn Members,
    run: &PointRun,
    seats: &[Seat],
    tasks: &[(usize, libc::pid_t)],
    asked: &AtomicBool,
) -> (Vec<Result<DriverRun>>, Watched) {
    // Counters are evidence, not the measurement: without the descriptors for them, they
    // report themselves unavailable (EMFILE) and the run goes on.
    let fd_limit = sys::ensure_fds(Counters::FDS_PER_TASK * tasks.len() as u64).ok();
    let tids: Vec<libc::pid_t> = tasks.iter().map(|t| t.1).collect();
    let mut watcher = Watcher::new(run.cfg.observer, &tids);
    let done = AtomicBool::new(false);
    let progress: Vec<_> = rings.iter().map(|r| r.progress()).collect();
    let timeout = run.cfg.timeout;
    let outcome = std::thread::scope(|s| {
        let spawn_failed = |what: &str, e: std::io::Error| {
            // Whoever started already stops at its next check; the caller tears down.
            run.barrier.abort();
            Err(Error::os(
                e.raw_os_error().unwrap_or(libc::EAGAIN),
                format!("starting a thread for {what}"),
            ))
        };
        let watchdog = std::thread::Builder::new()
            .name("ctxbench-watchdog".into())
            .spawn_scoped(s, || {
                watchdog::watch(&progress, timeout, &run.barrier, &done, asked, members)
            });
        let watchdog = match watchdog {
            Ok(handle) => handle,
            Err(e) => return vec![spawn_failed("the watchdog", e)],
        };
        let (first, rest) = rings.split_first_mut().expect("at least one ring");
        let mut others = Vec::with_capacity(rest.len());
        let mut failed = None;
        for (k, ring) in rest.iter_mut().enumerate() {
            let seat = seats[k + 1];
            let driver = std::thread::Builder::new()
                .name(format!("ctxbench-ring-{}", k + 1))
                .spawn_scoped(s, move || {
                    // Participants may still send to this thread as it exits (see
                    // `Blocked::until_exit`); ring 0's thread holds `_late_tokens` instead.
                    ring.attach().until_exit();
                    let who = format!("the driver of ring {}", k + 1);
                    if let Err(e) = sched::this_thread(run.cfg.sched.as_ref(), &who) {
                        run.barrier.abort();
                        return Err(e);
                    }
                    run_driver(ring.as_mut(), run, seat, &mut || false, &mut Unwatched)
                });
            match driver {
                Ok(handle) => others.push(handle),
                Err(e) => {
                    failed = Some(spawn_failed(&format!("the driver of ring {}", k + 1), e));
                    break;
                }
            }
        }
        let mut all = vec![match failed {
            Some(e) => e,
            None => drive_first(first.as_mut(), run, seats[0], asked, &mut watcher),
        }];
        all.extend(others.into_iter().map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Error::Peer("a driver thread panicked".into())))
        }));
        done.store(true, Ordering::Release);
        watchdog.thread().unpark();
        // The watchdog only reads atomics and sleeps; a panic there is a bug, not a result.
        let _ = watchdog.join();
        all
    });
    let watched = watcher.finish();
    drop(fd_limit);
    (outcome, watched)
}

/// Ring 0's driver on this thread (the point's own), under the policy asked, once every
/// other thread of the point (the watchdog, the other drivers) is started: they keep the
/// caller's own policy, so that the watchdog can act on a ring that runs ahead of it (a
/// thread under SCHED_DEADLINE could not start them at all).
fn drive_first(
    ring: &mut dyn Ring,
    run: &PointRun,
    seat: Seat,
    asked: &AtomicBool,
    watcher: &mut Watcher,
) -> Result<DriverRun> {
    let who = "the driver of ring 0 (participant 0, on the point's thread)";
    sched::this_thread(run.cfg.sched.as_ref(), who).inspect_err(|_| {
        run.barrier.abort();
    })?;
    run_driver(
        ring,
        run,
        seat,
        &mut || asked.load(Ordering::Relaxed),
        watcher,
    )
}

/// What the rings' drivers hold once they stopped, read before the rings are dropped.
struct RingTotals {
    /// Each driver's (workload passes, checksum).
    work: Vec<(u64, u64)>,
    /// Each driver's trips sent (`Ring::sent`).
    sent: Vec<Option<u64>>,
    driver_hops_per_trip: u64,
    /// The rings' merged hop histogram and largest hop, when recording.
    hops: Option<(Vec<u64>, u64)>,
    /// The smallest resident KiB of the drivers' arrays.
    resident_kb: Option<u64>,
}

impl RingTotals {
    fn read(rings: &[Box<dyn Ring>]) -> Self {
        RingTotals {
            work: rings.iter().map(|r| r.work_done()).collect(),
            sent: rings.iter().map(|r| r.sent()).collect(),
            driver_hops_per_trip: rings[0].driver_hops_per_trip(),
            resident_kb: rings
                .iter()
                .map(|r| r.resident_kb())
                .try_fold(u64::MAX, |low, kb| Some(low.min(kb?))),
            hops: rings.iter().map(|r| r.hops()).fold(None, hops::merge),
        }
    }
}

/// The error a failed point reports: the first driver's, with the participants' account of
/// the cause when they have one.
fn first_failure(outcome: Vec<Result<DriverRun>>, cause: Option<String>) -> Error {
    // A driver that stopped because another broke the barrier says only that.
    let mut errors: Vec<Error> = outcome.into_iter().filter_map(Result::err).collect();
    let own = errors.iter().position(|e| *e != Barrier::aborted_error());
    let first = match own {
        Some(k) => errors.swap_remove(k),
        None => errors
            .pop()
            .unwrap_or_else(|| Error::Peer("the ring did not stop cleanly".into())),
    };
    match (first, cause) {
        (Error::Interrupted, _) => Error::Interrupted,
        // The participants' account is the cause; what the driver saw (EOF, a broken
        // protocol) is its consequence, and its guess at a cause may contradict it.
        (Error::Peer(_), Some(cause)) => Error::Peer(cause),
        (e, _) => e,
    }
}

/// What a point gathered besides the drivers' timings.
struct Evidence {
    report: Report,
    rings: RingTotals,
    watched: Watched,
    /// What every participant ran under (`sched::participants`).
    sched: sched::Sched,
    interference: Option<Achieved>,
    throttled: Option<u64>,
}

/// The `Point`: the drivers' series as `[repetition][ring]`, and the evidence beside them.
fn assemble(
    run: &PointRun,
    drivers: &[DriverRun],
    evidence: Evidence,
    tasks: &[(usize, libc::pid_t)],
    t0: Instant,
    one_cpu: bool,
) -> Point {
    let Evidence {
        report,
        rings,
        watched: (accounting, counters),
        sched,
        interference,
        throttled,
    } = evidence;
    let expected = run.cfg.shape().map_or(0, |s| s.expected_sum());
    let check = |&(passes, sum): &(u64, u64)| sum == passes.wrapping_mul(expected) && passes > 0;
    let work_verified = rings.work.iter().all(check) && report.work.iter().flatten().all(check);
    // Each observed task receives the token once per trip of its ring: participant 0 of ring
    // 0 as often as its engine says.
    let hops = |trips: fn(&DriverRun) -> u64| {
        trips(&drivers[0]) * rings.driver_hops_per_trip
            + tasks[..tasks.len() - 1]
                .iter()
                .map(|&(r, _)| trips(&drivers[r]))
                .sum::<u64>()
    };
    let window_hops = hops(|d| d.window_trips);
    let accounting = accounting.map(|a| Accounting {
        hops: window_hops,
        ..a
    });
    // perf counted the evidence repetition, or the windows where the observer is `Timed`.
    let observed_hops = match run.cfg.observer {
        Observer::Timed => window_hops,
        _ => hops(|d| d.counted_trips),
    };
    // Each driver kept its own series; a point holds them as [repetition][ring].
    let by_rep = |series: fn(&Series) -> &Vec<f64>| -> Vec<Vec<f64>> {
        (0..drivers[0].series.raw_ns.len())
            .map(|k| drivers.iter().map(|d| series(&d.series)[k]).collect())
            .collect()
    };
    Point {
        procs: run.procs,
        raw_ns: by_rep(|s| &s.raw_ns),
        overhead_ns: by_rep(|s| &s.overhead_ns),
        raw_cycles: by_rep(|s| &s.raw_cycles),
        overhead_cycles: by_rep(|s| &s.overhead_cycles),
        trips: drivers.iter().map(|d| d.trips).collect(),
        overhead_rounds: drivers.iter().map(|d| d.rounds).collect(),
        cpus: drivers
            .iter()
            .zip(&report.cpus)
            .map(|(d, rest)| std::iter::once(d.cpu).chain(rest.iter().copied()).collect())
            .collect(),
        work_verified,
        accounting,
        counters,
        observed_hops,
        counted_ns: drivers[0].counted_ns,
        hops: rings.hops,
        rusage: Rusage {
            voluntary: report.voluntary,
            involuntary: report.involuntary,
            passes: report.passes,
        },
        phase_s: phases(drivers, t0),
        stopped: drivers[0].stopped,
        block: run.cfg.stop.block(),
        instance_blocks: vec![drivers[0].series.raw_ns.len() / run.cfg.stop.block()],
        resident_kb: rings
            .resident_kb
            .zip(report.resident_kb)
            .map(|(a, b)| a.min(b)),
        one_cpu,
        sched,
        interference,
        throttled,
    }
}

/// The CPUs the participants are pinned to, each once; empty where the scheduler places
/// any of them (the neighbours then run wherever this thread may).
fn measured_cpus(cpus: &Resolved) -> Vec<usize> {
    let placed = cpus.cpus.concat();
    if placed.iter().any(Option::is_none) {
        return Vec::new();
    }
    let mut ids: Vec<usize> = placed.into_iter().flatten().collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The slowest driver's time in each phase; what else passed since `t0` was start and
/// teardown.
fn phases(drivers: &[DriverRun], t0: Instant) -> Phases {
    let mut p = Phases::default();
    for d in drivers {
        p.calibration = p.calibration.max(d.phases.calibration);
        p.warmup = p.warmup.max(d.phases.warmup);
        p.measure = p.measure.max(d.phases.measure);
    }
    p.setup_teardown = (t0.elapsed().as_secs_f64() - p.calibration - p.warmup - p.measure).max(0.0);
    p
}
