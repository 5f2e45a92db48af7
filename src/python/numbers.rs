//! The core's statistics and small questions, for the Python side: a point's estimate, a
//! comparison's word, a judgement against a series, a run level, a plan, a workload's checksum, a placement's name.

use super::convert::{int, request};
use crate::request::{Door, Kind};
use crate::stats::{self, EarlierRun, Layout, RunLevel};
use crate::verdict::RunSide;
use crate::{judge, verdict};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pythonize::{depythonize, pythonize};

/// The run level earlier runs of one point give (`stats::run_level`): their ln figures,
/// relative standard errors and ages in seconds. None below `MIN_RUNS` usable runs, else
/// {"sd", "runs_seen"} as a ring's stats name them.
#[pyfunction]
fn run_level(
    py: Python<'_>,
    log_figures: Vec<f64>,
    rel_se: Vec<f64>,
    ages_s: Vec<f64>,
) -> PyResult<Bound<'_, PyAny>> {
    let level = stats::run_level(&EarlierRun::series(&log_figures, &rel_se, &ages_s)?);
    Ok(pythonize(py, &level)?)
}

/// The checksum one pass of the workload over `size_kb` KiB produces.
#[pyfunction]
#[pyo3(signature = (size_kb, stride_bytes=None))]
fn workload_checksum(
    size_kb: &Bound<'_, PyAny>,
    stride_bytes: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let size_kb = int(size_kb, "size_kb", Kind::Count(crate::workload::SIZE_KB))?;
    let stride = stride_bytes
        .map(|s| int(s, "stride_bytes", Kind::Stride))
        .transpose()?;
    Ok(crate::workload::Shape::checksum(size_kb, stride)?)
}

/// The figure and uncertainty of one point under the variance model (`stats::estimate`):
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
) -> PyResult<Bound<'py, PyAny>> {
    let layout = Layout::new(&samples, block, &instance_blocks)?;
    let run = RunLevel::recorded(run_sd, runs_seen);
    Ok(pythonize(py, &stats::estimate(&layout, run.as_ref()))?)
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
) -> PyResult<Bound<'py, PyAny>> {
    let layout = Layout::new(&samples, block, &instance_blocks)?;
    let earlier = RunLevel::recorded(run_sd, runs_seen);
    let (side, run_level) = verdict::Side::of_run(&layout, earlier.as_ref(), runnable_per_cpu);
    Ok(pythonize(py, &RunSide { side, run_level })?)
}

/// The estimate from whole runs' figures of one point: their mean, the spread between runs
/// its uncertainty (`stats::runs_estimate`).
#[pyfunction]
fn runs_estimate<'py>(py: Python<'py>, figures: Vec<f64>) -> PyResult<Bound<'py, PyAny>> {
    let estimate = stats::runs_estimate(&figures)?;
    Ok(pythonize(py, &estimate)?)
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
) -> PyResult<Bound<'py, PyAny>> {
    let side = |name: &str, d: &Bound<'py, PyDict>, replicated| -> PyResult<verdict::Side> {
        let side: verdict::Side = depythonize(d)
            .map_err(|e| PyValueError::new_err(format!("{name}: an estimate dict: {e}")))?;
        Ok(verdict::Side { replicated, ..side })
    };
    let c = verdict::compare(
        &side("base", base, base_replicated)?,
        &side("new", new, new_replicated)?,
        threshold,
    );
    Ok(pythonize(py, &c)?)
}

/// A point as `judge_series` takes it: the series' figures and relative standard errors, the
/// new runs' figures and theirs.
type SeriesPoint = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);

/// Each point's new runs judged against its series (`judge::series::judge`): per point a tuple of
/// the series' figures in µs (oldest first; the newest `SERIES_WINDOW` are read), their
/// relative standard errors (or an empty list), the new runs' figures and their relative
/// standard errors (or an empty list); `threshold` as in `compare_estimates`, `family_alpha`
/// the chance of any false call among all the points (Holm). One dict per point.
#[pyfunction]
#[pyo3(signature = (points, threshold, family_alpha=crate::judge::FAMILY_ALPHA))]
fn judge_series(
    py: Python<'_>,
    points: Vec<SeriesPoint>,
    threshold: f64,
    family_alpha: f64,
) -> PyResult<Bound<'_, PyAny>> {
    let family: Vec<judge::series::Point> = points
        .iter()
        .map(|(baseline, rel_se, new, new_rel_se)| judge::series::Point {
            baseline,
            baseline_rel_se: rel_se,
            new,
            new_rel_se,
        })
        .collect();
    let judged = judge::series::judge(&family, threshold, family_alpha)?;
    Ok(pythonize(py, &judged)?)
}

/// Each point's two groups of runs compared (`judge::groups::judge`): per point a
/// tuple of the base runs' figures and the new runs' (µs, one a run); `threshold` and
/// `family_alpha` as `judge_series` takes them (Holm across the points). One dict per point.
#[pyfunction]
#[pyo3(signature = (points, threshold, family_alpha=crate::judge::FAMILY_ALPHA))]
fn judge_groups(
    py: Python<'_>,
    points: Vec<(Vec<f64>, Vec<f64>)>,
    threshold: f64,
    family_alpha: f64,
) -> PyResult<Bound<'_, PyAny>> {
    let family: Vec<judge::groups::Groups> = points
        .iter()
        .map(|(base, new)| judge::groups::Groups { base, new })
        .collect();
    let judged = judge::groups::judge(&family, threshold, family_alpha)?;
    Ok(pythonize(py, &judged)?)
}

/// One run's spread (ln, pooled over groups of runs' figures in µs) and the runs it rests
/// on (`judge::groups::run_spread`); None where no group holds two runs.
#[pyfunction]
fn run_spread(groups: Vec<Vec<f64>>) -> Option<(f64, usize)> {
    let groups: Vec<&[f64]> = groups.iter().map(|g| g.as_slice()).collect();
    judge::groups::run_spread(&groups)
}

/// Runs per side a comparison needs to tell a change of `detect` with probability `power`
/// (None: `verdict::DEFAULT_POWER`) when one run's ln figure scatters by `spread`
/// (`verdict::runs_to_detect`; None: more than `MAX_PLANNED`).
#[pyfunction]
#[pyo3(signature = (spread, detect, power=None))]
fn runs_to_detect(spread: f64, detect: f64, power: Option<f64>) -> PyResult<Option<usize>> {
    Ok(verdict::planned(spread, detect, power, false)?)
}

/// Rounds `ab` needs for the same (`verdict::rounds_to_detect`), when one round's ln ratio
/// scatters by `spread`.
#[pyfunction]
#[pyo3(signature = (spread, detect, power=None))]
fn rounds_to_detect(spread: f64, detect: f64, power: Option<f64>) -> PyResult<Option<usize>> {
    Ok(verdict::planned(spread, detect, power, true)?)
}

/// What `ab` would have said of rounds already measured (`ab::replay`): each round's
/// figures of A and B in µs and the seconds since the start at its end. The bench of the
/// verdicts' error and power replays rounds resampled from real runs through it.
#[pyfunction]
#[pyo3(signature = (a_us, b_us, end_s, *, budget=crate::ab::DEFAULT_BUDGET_S, threshold=crate::ab::DEFAULT_THRESHOLD))]
fn ab_replay(
    py: Python<'_>,
    a_us: Vec<f64>,
    b_us: Vec<f64>,
    end_s: Vec<f64>,
    budget: f64,
    threshold: f64,
) -> PyResult<Bound<'_, PyAny>> {
    let out = crate::ab::replay_columns(&a_us, &b_us, &end_s, budget, threshold)?;
    Ok(pythonize(py, &out)?)
}

/// The name a result records for this placement (as `ring` would): "single", "[0, 1]", ...
#[pyfunction]
#[pyo3(signature = (placement=None, cpu=None))]
fn placement_name(
    placement: Option<&Bound<'_, PyAny>>,
    cpu: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let asked = request(Door::Ring, &[("placement", placement), ("cpu", cpu)], None)?;
    Ok(asked.placement()?.name())
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
    let asked = request(Door::Ring, &[("placement", placement), ("cpu", cpu)], None)?;
    Ok(asked.placement()?.cpus_here(procs, parallel)?)
}

/// ns per resume+suspend pair of a bare corosensei coroutine: the peer for fiber hops.
#[pyfunction]
fn fiber_baseline_ns(py: Python<'_>, pairs: &Bound<'_, PyAny>) -> PyResult<f64> {
    let pairs = int(pairs, "pairs", Kind::Stride)?;
    Ok(py.detach(|| crate::record::measure::fiber_baseline_ns(pairs))?)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(workload_checksum, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(runs_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(run_side, m)?)?;
    m.add_function(wrap_pyfunction!(compare_estimates, m)?)?;
    m.add_function(wrap_pyfunction!(judge_series, m)?)?;
    m.add_function(wrap_pyfunction!(judge_groups, m)?)?;
    m.add_function(wrap_pyfunction!(run_spread, m)?)?;
    m.add_function(wrap_pyfunction!(run_level, m)?)?;
    m.add_function(wrap_pyfunction!(runs_to_detect, m)?)?;
    m.add_function(wrap_pyfunction!(rounds_to_detect, m)?)?;
    m.add_function(wrap_pyfunction!(ab_replay, m)?)?;
    m.add_function(wrap_pyfunction!(fiber_baseline_ns, m)?)?;
    m.add_function(wrap_pyfunction!(placement_name, m)?)?;
    m.add_function(wrap_pyfunction!(placement_cpus, m)?)?;
    Ok(())
}
