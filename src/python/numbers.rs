//! The core's statistics and small questions, for the Python side: a point's estimate, a
//! comparison's word, a run level, a plan, a workload's checksum, a placement's name.

use super::convert::{core_err, earlier_runs, int, value};
use crate::config;
use crate::engine::Engine;
use crate::placement::{Named, Placement};
use crate::request::{params, Door, Kind, Value};
use crate::stats::{self, Estimate, Level, Uncertainty};
use crate::stop;
use crate::verdict;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The run level earlier runs of one point give (`stats::run_level`): their ln figures,
/// relative standard errors and ages in seconds. None below `MIN_RUNS` usable runs, else
/// {"sd", "runs_seen"} as a ring's stats name them.
#[pyfunction]
fn run_level(
    py: Python<'_>,
    log_figures: Vec<f64>,
    rel_se: Vec<f64>,
    ages_s: Vec<f64>,
) -> PyResult<Option<Bound<'_, PyDict>>> {
    let Some(level) = stats::run_level(&earlier_runs(log_figures, rel_se, ages_s)?) else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item("sd", level.sd)?;
    d.set_item("runs_seen", level.df + 1.0)?;
    Ok(Some(d))
}

/// The checksum one pass of the workload over `size_kb` KiB produces.
#[pyfunction]
#[pyo3(signature = (size_kb, stride_bytes=None))]
fn workload_checksum(
    size_kb: &Bound<'_, PyAny>,
    stride_bytes: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let count = |obj: &Bound<'_, PyAny>, limit: config::Limit<u64>| -> PyResult<usize> {
        let v = int(obj, limit.param, Kind::Count(limit))?;
        limit.count(v).map_err(core_err)
    };
    let stride = match stride_bytes {
        Some(s) => crate::workload::check_stride(int(s, "stride_bytes", Kind::Stride)?)
            .map_err(core_err)?,
        None => crate::workload::DEFAULT_STRIDE_BYTES,
    };
    let size_kb = count(size_kb, config::SIZE_KB)?;
    let shape = crate::workload::Shape::new(size_kb, stride).map_err(core_err)?;
    Ok(shape.expected_sum())
}

/// The figure and uncertainty of one point under the variance model (`stop::estimate`):
/// its samples in measuring order, `block` repetitions per block, `instance_blocks` blocks
/// per ring instance, and the run level its run knew of (`run_sd`, relative, over
/// `runs_seen` earlier runs). A dict {"center", "se", "df", "level"}.
#[pyfunction]
#[pyo3(signature = (samples, block, instance_blocks, run_sd=None, runs_seen=None))]
fn estimate<'py>(
    py: Python<'py>,
    samples: Vec<f64>,
    block: usize,
    instance_blocks: Vec<usize>,
    run_sd: Option<f64>,
    runs_seen: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let layout = layout(&samples, block, &instance_blocks)?;
    let run = recorded_run_level(run_sd, runs_seen);
    estimate_dict(py, &stop::estimate(&layout, run.as_ref()))
}

/// A point's samples in their levels, checked.
fn layout<'a>(
    samples: &'a [f64],
    block: usize,
    instance_blocks: &'a [usize],
) -> PyResult<stats::Layout<'a>> {
    finite_values("samples", samples)?;
    if block == 0 {
        return Err(PyValueError::new_err("block: must be at least 1, got 0"));
    }
    Ok(stats::Layout {
        samples,
        block,
        instance_blocks,
    })
}

/// One run of a point as a side of a comparison (`verdict::Side::of_run`): `estimate`'s
/// arguments, and the run level added to it, from earlier runs where the run knew one, else
/// the one assumed for a run alone; `runnable_per_cpu`, the other tasks runnable per CPU just
/// before the run. `estimate`'s dict, plus "replicated", "loaded" (one run under load, with
/// no earlier runs of such conditions) and "run_level" (where its run level came from:
/// "earlier runs", "assumed", or "unknown" for one sample).
#[pyfunction]
#[pyo3(signature = (samples, block, instance_blocks, run_sd=None, runs_seen=None, runnable_per_cpu=None))]
fn run_side<'py>(
    py: Python<'py>,
    samples: Vec<f64>,
    block: usize,
    instance_blocks: Vec<usize>,
    run_sd: Option<f64>,
    runs_seen: Option<f64>,
    runnable_per_cpu: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let layout = layout(&samples, block, &instance_blocks)?;
    let earlier = recorded_run_level(run_sd, runs_seen);
    let (side, source) = verdict::Side::of_run(&layout, earlier.as_ref(), runnable_per_cpu);
    let out = estimate_dict(py, &side.estimate)?;
    out.set_item("replicated", side.replicated)?;
    out.set_item("loaded", side.loaded)?;
    out.set_item("run_level", source.as_str())?;
    Ok(out)
}

/// The run level a run recorded (its `sd_run` over `runs_seen` earlier runs), if usable.
fn recorded_run_level(run_sd: Option<f64>, runs_seen: Option<f64>) -> Option<stats::RunLevel> {
    match (run_sd, runs_seen) {
        (Some(sd), Some(runs)) if sd.is_finite() && sd >= 0.0 && runs >= 2.0 => {
            Some(stats::RunLevel { sd, df: runs - 1.0 })
        }
        _ => None,
    }
}

/// The estimate from whole runs' figures of one point: their mean, the spread between runs
/// its uncertainty (`stats::runs_estimate`).
#[pyfunction]
fn runs_estimate<'py>(py: Python<'py>, figures: Vec<f64>) -> PyResult<Bound<'py, PyDict>> {
    finite_values("figures", &figures)?;
    estimate_dict(py, &stats::runs_estimate(&figures))
}

/// `new` against `base`, each an `estimate` dict (a `run_side` dict's "loaded" read where
/// present) and whether it reaches the level that differs between runs, at ± `threshold` (`verdict::compare`): the word, why, the ratio
/// with its interval and equivalence interval, and what would decide it.
#[pyfunction]
fn compare_estimates<'py>(
    py: Python<'py>,
    base: &Bound<'py, PyDict>,
    base_replicated: bool,
    new: &Bound<'py, PyDict>,
    new_replicated: bool,
    threshold: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let side = |d: &Bound<'py, PyDict>, replicated| -> PyResult<verdict::Side> {
        let loaded = match d.get_item("loaded")? {
            Some(v) => v.extract()?,
            None => false,
        };
        Ok(verdict::Side {
            estimate: estimate_of(d)?,
            replicated,
            loaded,
        })
    };
    let c = verdict::compare(
        &side(base, base_replicated)?,
        &side(new, new_replicated)?,
        threshold,
    );
    let out = PyDict::new(py);
    out.set_item("verdict", c.change.as_str())?;
    out.set_item("why", c.why.as_str())?;
    out.set_item("ratio", c.difference.ratio)?;
    out.set_item("low", c.difference.low)?;
    out.set_item("high", c.difference.high)?;
    out.set_item("equivalent_low", c.equivalent_low)?;
    out.set_item("equivalent_high", c.equivalent_high)?;
    out.set_item("p_value", c.difference.p_value)?;
    out.set_item("df", c.difference.df)?;
    out.set_item("half_width", c.half_width)?;
    out.set_item("needed_half_width", c.needed_half_width)?;
    out.set_item("data_factor", c.data_factor)?;
    Ok(out)
}

/// Runs per side a comparison needs to tell a change of `detect` with probability `power`
/// when one run's ln figure scatters by `spread` (`verdict::runs_to_detect`; None: more than
/// `MAX_PLANNED`).
#[pyfunction]
#[pyo3(signature = (spread, detect, power=0.8))]
fn runs_to_detect(spread: f64, detect: f64, power: f64) -> PyResult<Option<usize>> {
    plan_args(spread, detect, power)?;
    Ok(verdict::runs_to_detect(spread, detect, power))
}

/// Rounds `ab` needs for the same (`sequential::rounds_to_detect`), when one round's ln
/// ratio scatters by `spread`.
#[pyfunction]
#[pyo3(signature = (spread, detect, power=0.8))]
fn rounds_to_detect(spread: f64, detect: f64, power: f64) -> PyResult<Option<usize>> {
    plan_args(spread, detect, power)?;
    let alpha = 1.0 - stop::CONFIDENCE;
    Ok(crate::sequential::rounds_to_detect(
        spread,
        detect,
        alpha,
        power,
        verdict::MAX_PLANNED,
    ))
}

/// What `ab` would have said of rounds already measured (`ab::replay`): each round's
/// figures of A and B in µs and the seconds since the start at its end. The bench of the
/// verdicts' error and power replays rounds resampled from real runs through it.
#[pyfunction]
#[pyo3(signature = (a_us, b_us, end_s, *, budget=params::DEFAULT_BUDGET_S, threshold=params::DEFAULT_THRESHOLD))]
fn ab_replay(
    py: Python<'_>,
    a_us: Vec<f64>,
    b_us: Vec<f64>,
    end_s: Vec<f64>,
    budget: f64,
    threshold: f64,
) -> PyResult<Bound<'_, PyDict>> {
    let n = a_us.len();
    if b_us.len() != n || end_s.len() != n {
        return Err(PyValueError::new_err(format!(
            "a_us, b_us, end_s: one entry per round each, got {n}, {} and {}",
            b_us.len(),
            end_s.len()
        )));
    }
    for (name, xs) in [("a_us", &a_us), ("b_us", &b_us), ("end_s", &end_s)] {
        if xs.iter().any(|x| !x.is_finite()) {
            return Err(PyValueError::new_err(format!("{name}: must be finite")));
        }
    }
    let plan = crate::ab::Plan {
        budget_s: params::BUDGET.check(budget).map_err(core_err)?,
        threshold: params::THRESHOLD.check(threshold).map_err(core_err)?,
        seed: 0,
    };
    let rounds: Vec<crate::ab::Round> = (0..n)
        .map(|k| crate::ab::Round {
            a_us: a_us[k],
            b_us: b_us[k],
            a_first: false,
            end_s: end_s[k],
        })
        .collect();
    let out = crate::ab::replay(&rounds, &plan);
    let d = PyDict::new(py);
    d.set_item("rounds", out.rounds.len())?;
    d.set_item("ratio", out.ratio)?;
    d.set_item("ratio_low", out.low)?;
    d.set_item("ratio_high", out.high)?;
    d.set_item("verdict", out.change.as_str())?;
    d.set_item("decided", out.decided)?;
    d.set_item("stopped", out.stopped.as_str())?;
    d.set_item("elapsed_s", out.elapsed_s)?;
    d.set_item("data_factor", out.data_factor)?;
    Ok(d)
}

fn plan_args(spread: f64, detect: f64, power: f64) -> PyResult<()> {
    config::DETECT.check(detect).map_err(core_err)?;
    config::POWER.check(power).map_err(core_err)?;
    if !(spread.is_finite() && spread >= 0.0) {
        return Err(PyValueError::new_err(format!(
            "spread: must be a finite relative spread >= 0, got {spread}"
        )));
    }
    Ok(())
}

fn finite_values(param: &str, values: &[f64]) -> PyResult<()> {
    if values.is_empty() || values.iter().any(|x| !x.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{param}: must hold at least one value, all finite"
        )));
    }
    Ok(())
}

fn estimate_dict<'py>(py: Python<'py>, e: &Estimate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("center", e.center)?;
    d.set_item("se", e.uncertainty.se)?;
    d.set_item("df", e.uncertainty.df)?;
    d.set_item("level", e.uncertainty.level.as_str())?;
    Ok(d)
}

/// An `estimate` dict back: the level named by its word.
fn estimate_of(d: &Bound<'_, PyDict>) -> PyResult<Estimate> {
    let item = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(key)?
            .ok_or_else(|| PyValueError::new_err(format!("estimate: missing {key:?}")))
    };
    let word: String = item("level")?.extract()?;
    let level = [Level::Repetition, Level::Block, Level::Instance, Level::Run]
        .into_iter()
        .find(|l| l.as_str() == word)
        .ok_or_else(|| PyValueError::new_err(format!("estimate: unknown level {word:?}")))?;
    Ok(Estimate {
        center: item("center")?.extract()?,
        uncertainty: Uncertainty {
            se: item("se")?.extract()?,
            df: item("df")?.extract()?,
            level,
        },
    })
}

/// The name a result records for this placement (as `ring` would): "single", "[0, 1]", ...
#[pyfunction]
#[pyo3(signature = (placement=None, cpu=None))]
fn placement_name(
    placement: Option<&Bound<'_, PyAny>>,
    cpu: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    Ok(as_placement(placement, cpu)?.name())
}

/// The CPUs `parallel` rings of `procs` placed so may run on, each once (every allowed CPU
/// where the scheduler decides): what a cache sweep sizes its grid by, what a fleet worker
/// keeps its own threads off.
#[pyfunction]
#[pyo3(signature = (placement=None, cpu=None, procs=2, parallel=1))]
fn placement_cpus(
    placement: Option<&Bound<'_, PyAny>>,
    cpu: Option<&Bound<'_, PyAny>>,
    procs: usize,
    parallel: usize,
) -> PyResult<Vec<usize>> {
    let allowed = crate::sys::allowed_cpus().map_err(core_err)?;
    as_placement(placement, cpu)?
        .cpus_used(&allowed, procs.max(1), parallel.max(1))
        .map_err(core_err)
}

fn as_placement(
    placement: Option<&Bound<'_, PyAny>>,
    cpu: Option<&Bound<'_, PyAny>>,
) -> PyResult<Placement> {
    let given = |name: &str, obj: Option<&Bound<'_, PyAny>>| -> PyResult<Value> {
        let param = params::find(Door::Ring, name).expect("a ring's parameter");
        obj.map_or(Ok(Value::None), |o| value(param, o))
    };
    let cpu = match given("cpu", cpu)? {
        Value::Int(c) => Some(c),
        _ => None,
    };
    let placement = match given("placement", placement)? {
        Value::Name(name) => Placement::from_request(Some(Named::Policy(&name)), cpu),
        Value::Ints(ids) => Placement::from_request(Some(Named::Cpus(&ids)), cpu),
        _ => Placement::from_request(None, cpu),
    };
    placement.map_err(core_err)
}

/// The transport `ring` uses for `engine` when none is named.
#[pyfunction]
fn default_transport(engine: &str) -> PyResult<&'static str> {
    Ok(Engine::parse(engine)
        .map_err(core_err)?
        .default_transport()
        .name())
}

/// ns per resume+suspend pair of a bare corosensei coroutine: the peer for fiber hops.
#[pyfunction]
fn fiber_baseline_ns(py: Python<'_>, pairs: &Bound<'_, PyAny>) -> PyResult<f64> {
    let limit = config::BASELINE_PAIRS;
    let pairs = limit
        .check(int(pairs, limit.param, Kind::Count(limit))?.max(0) as u64)
        .map_err(core_err)?;
    py.detach(|| crate::engine::fiber::baseline_switch_ns(pairs))
        .map_err(core_err)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(workload_checksum, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(runs_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(run_side, m)?)?;
    m.add_function(wrap_pyfunction!(compare_estimates, m)?)?;
    m.add_function(wrap_pyfunction!(run_level, m)?)?;
    m.add_function(wrap_pyfunction!(runs_to_detect, m)?)?;
    m.add_function(wrap_pyfunction!(rounds_to_detect, m)?)?;
    m.add_function(wrap_pyfunction!(ab_replay, m)?)?;
    m.add_function(wrap_pyfunction!(fiber_baseline_ns, m)?)?;
    m.add_function(wrap_pyfunction!(default_transport, m)?)?;
    m.add_function(wrap_pyfunction!(placement_name, m)?)?;
    m.add_function(wrap_pyfunction!(placement_cpus, m)?)?;
    Ok(())
}
