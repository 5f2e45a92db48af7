//! A whole configuration, one point per participant count: the stopping rule picks the loop
//! once (lmbench's fixed repetitions here, precision mode's in `precise`), then every point's
//! evidence instance after all the timed windows of the run.

use super::precise;
use super::{check, point, Instance, Interrupt, Point};
use crate::config::Config;
use crate::counters::{self, Totals};
use crate::error::{Error, Result};
use crate::observer::Observer;
use crate::placement::Resolved;
use crate::sys;
use std::time::Instant;

/// Runs the whole configuration, one point per participant count: every point's timed
/// instances, then, after all of them, its evidence instance (`evidence`). No timed window
/// starts within a second of one of our perf events closing (`observer::settle`).
pub fn run(cfg: &Config, interrupt: Interrupt) -> Result<Vec<Point>> {
    let placements = check(cfg)?;
    let _sigpipe = sys::Blocked::new(libc::SIGPIPE);
    let waited = counters::settle(&mut *interrupt)?;
    let mut points = if let Some(rule) = cfg.stop.rule() {
        precise::points(cfg, rule, &placements, interrupt)?
    } else {
        let mut points = Vec::with_capacity(cfg.procs.len());
        for (procs, cpus) in &placements {
            if interrupt() {
                return Err(Error::Interrupted);
            }
            points.push(point(
                cfg,
                *procs,
                cpus,
                Instance::First(&|_| 1),
                interrupt,
            )?);
        }
        points
    };
    evidence(cfg, &placements, &mut points, interrupt)?;
    if let Some(first) = points.first_mut() {
        first.phase_s.observer_wait = waited;
    }
    Ok(points)
}

/// The evidence phase: one untimed instance per point with perf counters on, after every
/// timed window of the run, where the observer is `Evidence` and this CPU lets us count
/// hardware events. Without hardware counters there is nothing to add: the kernel's
/// accounting counted the switches and migrations of the timed windows themselves, and perf's
/// software counters would only slow the next second of switches (`observer`).
fn evidence(
    cfg: &Config,
    placements: &[(usize, Resolved)],
    points: &mut [Point],
    interrupt: Interrupt,
) -> Result<()> {
    let why_not = match cfg.observer {
        Observer::Timed => return Ok(()),
        Observer::Off => Err("counters='off': no perf event was opened".to_string()),
        Observer::Evidence => counters::hardware(),
    };
    if let Err(why) = why_not {
        for p in points.iter_mut() {
            p.counters = Totals::unavailable(&why);
        }
        return Ok(());
    }
    for ((procs, cpus), p) in placements.iter().zip(points.iter_mut()) {
        if interrupt() {
            return Err(Error::Interrupted);
        }
        let t = Instant::now();
        let known = p.timing();
        let e = point(cfg, *procs, cpus, Instance::Evidence(&known), interrupt)?;
        p.counters = e.counters;
        p.observed_hops = e.observed_hops;
        p.counted_ns = e.counted_ns;
        p.phase_s.setup_teardown += t.elapsed().as_secs_f64();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Engine, TransportKind};
    use crate::placement::Placement;
    use crate::stop::Stop;

    #[test]
    fn ring_measures_every_count() {
        let cfg = Config {
            size_kb: 16,
            ..Config::quick(vec![2, 3, 8])
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
            ..Config::quick(vec![4])
        };
        let first = sys::allowed_cpus().unwrap()[0] as i32;
        let p = &run(&cfg, &mut || false).unwrap()[0];
        assert_eq!(p.cpus.len(), 2);
        assert!(p.cpus.iter().flatten().all(|&c| c == first), "{:?}", p.cpus);
    }

    #[test]
    fn interrupt_stops_and_reaps() {
        // A second of repetitions: the point's thread is asked several times meanwhile.
        let long = Config {
            min_time: 0.05,
            stop: Stop::Fixed(20),
            ..Config::quick(vec![4])
        };
        let mut calls = 0;
        let e = run(&long, &mut || {
            calls += 1;
            calls > 2
        })
        .unwrap_err();
        assert_eq!(e, Error::Interrupted);
    }

    #[test]
    fn condvar_runs_for_processes_and_threads() {
        for engine in [Engine::Process, Engine::Thread] {
            let cfg = Config {
                engine,
                transport: TransportKind::Condvar,
                ..Config::quick(vec![2, 4])
            };
            let points = run(&cfg, &mut || false).unwrap();
            assert!(points.iter().all(|p| p.work_verified), "{engine:?}");
        }
    }
}
