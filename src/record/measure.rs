//! Each measurement run and recorded, one call per front-door function: what a request
//! resolved to in, its record out. The matrix reads the host's topology and stamps its start
//! here, so that a front door only converts.

use super::{AbRecord, CacheRecord, MatrixRecord, PingpongRecord, RingConfigRecord, RingRecord};
use crate::config::Config;
use crate::error::Result;
use crate::matrix::MatrixConfig;
use crate::request::{AbRequest, CacheRequest};
use crate::stats::EarlierRun;

/// The bare-coroutine peer a fiber hop is compared against, ns per resume+suspend pair.
pub use crate::engine::fiber::baseline_switch_ns as fiber_baseline_ns;
pub use crate::ring::Interrupt;
/// Hears of each step done of how many (`0`: of an open number).
pub type Progress<'a> = &'a mut (dyn FnMut(usize, usize) -> Result<()> + Send);

/// Each point's canonical identity, as `cfg`'s record will carry it: what earlier runs of
/// it are found by.
pub fn point_ids(cfg: &Config) -> Vec<String> {
    super::point::identities(cfg, &super::SchedRecord::asked(cfg))
}

/// `cfg` with the run levels its points' earlier runs show (`history`: one entry per point,
/// None where none are known; None: nothing asked, `cfg` as it is).
pub fn with_history(cfg: Config, history: Option<&[Option<Vec<EarlierRun>>]>) -> Result<Config> {
    let Some(history) = history else {
        return Ok(cfg);
    };
    let cfg = Config {
        run_levels: crate::stats::run_levels(history),
        ..cfg
    };
    cfg.check_run_levels()?;
    Ok(cfg)
}

/// A ring's points, measured and recorded.
pub fn ring(cfg: &Config, interrupt: Interrupt) -> Result<RingRecord> {
    let points = crate::ring::run(cfg, interrupt)?;
    Ok(RingRecord::new(cfg, &points))
}

/// What `ring` records of what was asked, checked as `ring` checks it on this host before
/// it starts anything.
pub fn ring_check(cfg: &Config) -> Result<RingConfigRecord> {
    crate::ring::check(cfg)?;
    Ok(RingConfigRecord::from(cfg))
}

/// A ping-pong, measured and recorded.
pub fn pingpong(cfg: &Config, interrupt: Interrupt) -> Result<PingpongRecord> {
    let points = crate::ring::run(cfg, interrupt)?;
    Ok(PingpongRecord::new(cfg, &points[0]))
}

/// A cache sweep, measured and recorded; `progress` hears of each round.
pub fn cache_sweep(
    c: &CacheRequest,
    interrupt: Interrupt,
    progress: Progress,
) -> Result<CacheRecord> {
    let plan = crate::host::cache::plan(c)?;
    let grid = plan.grid()?;
    let sweep = crate::cache::sweep(&c.base, grid, c.rounds, plan.stream_kb, interrupt, progress)?;
    let largest = plan.largest_share_kb();
    Ok(CacheRecord::new(
        &c.base,
        &sweep,
        c.rounds,
        plan.line_bytes,
        largest,
    ))
}

/// The CPU matrix of this host (its topology from /sys), measured and recorded with the
/// topology it was measured on; `progress` hears of each cell.
pub fn matrix(
    cfg: &MatrixConfig,
    interrupt: Interrupt,
    progress: Progress,
) -> Result<MatrixRecord> {
    let topo = crate::topology::read(std::path::Path::new("/sys"))?;
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    // The cells the host's default chooses (every pair, or a sample by class), resolved.
    let planned = crate::host::matrix::plan_on(&topo, cfg)?;
    let cfg = &MatrixConfig {
        per_class: planned.per_class,
        full: planned.per_class.is_none(),
        ..cfg.clone()
    };
    let m = crate::matrix::run(&topo, cfg, interrupt, &mut |done, of, _| progress(done, of))?;
    Ok(MatrixRecord::new(cfg, &m, topo.table(false), started))
}

/// An A/B run, measured and recorded; `progress` hears of each round.
pub fn ab(asked: &AbRequest, interrupt: Interrupt, progress: Progress) -> Result<AbRecord> {
    let mut n = 0;
    let outcome = crate::ab::run(&asked.a, &asked.b, &asked.plan, interrupt, &mut |_, _| {
        n += 1;
        progress(n, 0)
    })?;
    Ok(AbRecord::new(asked, &outcome))
}
