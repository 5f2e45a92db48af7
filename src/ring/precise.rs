//! Precision mode's loop: fresh ring instances of every point, round-robin, each sized by
//! what starting it cost, until each point's interval decides (`stop::decide`).

use super::{point, Instance, Interrupt, Point};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::placement::Resolved;
use crate::stats::RunLevel;
use crate::stop::{self, Precision, Stopped, BLOCK_REPETITIONS, MIN_BLOCKS, MIN_INSTANCES};
use std::time::Instant;

/// Precision mode: fresh ring instances of every point, round after round (one instance of
/// each point still measuring per round), until each point's interval of the median, built
/// from the spread between its blocks, is narrow enough or it reaches a cap. Round-robin
/// spreads every point's blocks over the whole run, so drift of the host over seconds shows
/// in the spread between blocks instead of between runs, and hits every point of a curve
/// alike. The first instance calibrates and carries the evidence; later ones reuse its
/// timing and measure as many blocks as their start-up cost warrants (`instance_blocks`).
/// Each point comes back as one `Point` holding its blocks in order.
pub fn points(
    cfg: &Config,
    rule: &Precision,
    placements: &[(usize, Resolved)],
    interrupt: Interrupt,
) -> Result<Vec<Point>> {
    let Precision {
        max_time,
        max_repetitions,
        ..
    } = *rule;
    // Before the first instance has measured, a block's time is estimated from `min_time`,
    // and stopping the instance from starting it (exiting costs about what forking did). It
    // measures its share of the blocks an interval needs, so that the second instance, the
    // first that lets the interval see the instance level, starts early.
    let first_blocks = |spawn_s: f64| {
        let block_s = (BLOCK_REPETITIONS + 1) as f64 * cfg.min_time;
        let left = stop::blocks_left(max_repetitions, 0);
        let blocks = stop::instance_blocks(2.0 * spawn_s, block_s, max_time, left);
        blocks.max((MIN_BLOCKS / MIN_INSTANCES).min(left))
    };
    let mut state: Vec<Precise> = (0..placements.len())
        .map(|j| Precise {
            run: cfg.run_level(j).copied(),
            ..Precise::default()
        })
        .collect();
    while state.iter().any(|p| p.stopped.is_none()) {
        for ((procs, cpus), p) in placements.iter().zip(&mut state) {
            if p.stopped.is_some() {
                continue;
            }
            if interrupt() {
                return Err(Error::Interrupted);
            }
            let t = Instant::now();
            let known = p.instances.first().map(Point::timing);
            let instance = match (p.next_blocks, known.as_deref()) {
                (Some(n), Some(known)) => Instance::Later(known, n),
                _ => Instance::First(&first_blocks),
            };
            let instance = point(cfg, *procs, cpus, instance, interrupt)?;
            p.add(instance, t.elapsed().as_secs_f64(), rule);
        }
    }
    Ok(state
        .into_iter()
        .map(|p| Point::merge(p.instances, p.stopped.unwrap_or(Stopped::Precision)))
        .collect())
}

/// One point's progress in precision mode.
#[derive(Default)]
struct Precise {
    instances: Vec<Point>,
    /// Net per-hop ns of every repetition so far, and the blocks each instance measured.
    samples: Vec<f64>,
    instance_blocks: Vec<usize>,
    /// What earlier runs of the point showed of the spread between runs.
    run: Option<RunLevel>,
    /// Blocks of the next instance: `None` before the first, which decides once its
    /// participants run.
    next_blocks: Option<usize>,
    spent: f64,
    stopped: Option<Stopped>,
}

impl Precise {
    /// Takes in an instance that took `wall` seconds: its samples, the size of the next
    /// instance, and whether the point has measured enough.
    fn add(&mut self, instance: Point, wall: f64, rule: &Precision) {
        let Precision {
            max_time,
            max_repetitions,
            ..
        } = *rule;
        self.spent += wall;
        let measuring = instance.phase_s.measure;
        let made = instance.raw_ns.len() / BLOCK_REPETITIONS;
        self.samples.extend(instance.net_ns());
        self.instance_blocks.push(made);
        self.instances.push(instance);
        let setup_s = wall - measuring;
        let block_s = measuring / made.max(1) as f64;
        let left = stop::blocks_left(max_repetitions, self.samples.len() / BLOCK_REPETITIONS);
        let next = stop::instance_blocks(setup_s, block_s, max_time - self.spent, left);
        self.next_blocks = Some(next);
        // No instance that would end more than halfway past the cap: a point then takes
        // about `max_time`, not up to a whole instance more.
        let halfway = self.spent + (setup_s + next as f64 * block_s) / 2.0;
        let run = self.run.as_ref();
        self.stopped = stop::decide(rule, &self.samples, &self.instance_blocks, run, halfway);
    }
}
