//! Change points over time (`crate::changes`) for the Python side: series of ln figures in,
//! each series' report out (`changes::Report`, `changes::AtReport`) as it is (`pythonize`).
//! Every default, range and word is the core's.

use crate::changes::{self, Series, Settings};
use pyo3::prelude::*;
use pythonize::pythonize;

/// The change points of each series (`changes::change_points`): `series` as (key, ln
/// figures oldest first) pairs; the chance of any false change point in the whole scan held
/// at `level` (Holm). One dict per series: {"status": "scanned" | "too short", "runs",
/// "changes": [...], and the scan's "level" and "min_runs"} in the order given.
#[pyfunction]
#[pyo3(signature = (series, level=None, min_runs=None, permutations=None, seed=None))]
fn change_points<'py>(
    py: Python<'py>,
    series: Vec<(String, Vec<f64>)>,
    level: Option<f64>,
    min_runs: Option<i64>,
    permutations: Option<i64>,
    seed: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let s = Settings::given(level, min_runs, permutations, seed)?;
    let all: Vec<Series<'_>> = series
        .iter()
        .map(|(key, xs)| Series { key, ln_values: xs })
        .collect();
    let scans = py.detach(|| changes::change_points(&all, s))?;
    let reports: Vec<changes::Report> = scans
        .into_iter()
        .zip(&series)
        .map(|(scan, (_, xs))| scan.report(xs.len(), &s))
        .collect();
    Ok(pythonize(py, &reports)?)
}

/// Is run `index` of the series `ln_values` a change point of it (`changes::change_at`)?
/// {"status": "change" | "none found" | "too few runs", "change": the change or None,
/// "changes": the series' change points, "runs_before", "runs_after"}.
#[pyfunction]
#[pyo3(signature = (key, ln_values, index, level=None, min_runs=None, permutations=None, seed=None))]
#[allow(clippy::too_many_arguments)]
fn change_at<'py>(
    py: Python<'py>,
    key: String,
    ln_values: Vec<f64>,
    index: usize,
    level: Option<f64>,
    min_runs: Option<i64>,
    permutations: Option<i64>,
    seed: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let s = Settings::given(level, min_runs, permutations, seed)?;
    let series = Series {
        key: &key,
        ln_values: &ln_values,
    };
    let at = py.detach(|| changes::change_at(&series, index, s))?;
    Ok(pythonize(py, &at.report(index, ln_values.len()))?)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(change_points, m)?)?;
    m.add_function(wrap_pyfunction!(change_at, m)?)?;
    Ok(())
}
