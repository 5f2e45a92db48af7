//! Change points over time (`crate::changes`) for the Python side: series of ln figures in,
//! each series' change points out as dicts. Every default and range is the core's.

use super::convert::core_err;
use crate::changes::{self, At, Change, Scan, Series, Settings, MIN_RUNS, PERMUTATIONS};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The scan's settings from what the caller gave (None: the core's default).
fn settings(
    level: Option<f64>,
    min_runs: Option<i64>,
    permutations: Option<i64>,
    seed: Option<u64>,
) -> PyResult<Settings> {
    let d = Settings::default();
    Ok(Settings {
        level: level.unwrap_or(d.level),
        min_runs: match min_runs {
            Some(n) => MIN_RUNS.count(n).map_err(core_err)?,
            None => d.min_runs,
        },
        permutations: permutations
            .map(|n| PERMUTATIONS.count(n))
            .transpose()
            .map_err(core_err)?,
        seed: seed.unwrap_or(d.seed),
    })
}

fn change_dict<'py>(py: Python<'py>, c: &Change) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("index", c.index)?;
    d.set_item("p", c.p)?;
    d.set_item("level", c.level)?;
    d.set_item("statistic", c.statistic)?;
    d.set_item("runs_before", c.runs_before)?;
    d.set_item("runs_after", c.runs_after)?;
    d.set_item("ratio", c.ratio)?;
    d.set_item("ratio_lo", c.ratio_lo)?;
    d.set_item("ratio_hi", c.ratio_hi)?;
    d.set_item("confidence", changes::SIZE_CONFIDENCE)?;
    Ok(d)
}

fn change_list<'py>(py: Python<'py>, found: &[Change]) -> PyResult<Bound<'py, PyList>> {
    PyList::new(
        py,
        found
            .iter()
            .map(|c| change_dict(py, c))
            .collect::<PyResult<Vec<_>>>()?,
    )
}

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
) -> PyResult<Bound<'py, PyList>> {
    let s = settings(level, min_runs, permutations, seed)?;
    let all: Vec<Series<'_>> = series
        .iter()
        .map(|(key, xs)| Series { key, ln_values: xs })
        .collect();
    let scans = py
        .detach(|| changes::change_points(&all, s))
        .map_err(core_err)?;
    let rows = scans.iter().zip(&series).map(|(scan, (_, xs))| {
        let d = PyDict::new(py);
        d.set_item("runs", xs.len())?;
        d.set_item("level", s.level)?;
        d.set_item("min_runs", s.min_runs)?;
        match scan {
            Scan::TooShort { .. } => {
                d.set_item("status", "too short")?;
                d.set_item("changes", PyList::empty(py))?;
            }
            Scan::Scanned { changes } => {
                d.set_item("status", "scanned")?;
                d.set_item("changes", change_list(py, changes)?)?;
            }
        }
        Ok(d)
    });
    PyList::new(py, rows.collect::<PyResult<Vec<_>>>()?)
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
) -> PyResult<Bound<'py, PyDict>> {
    let s = settings(level, min_runs, permutations, seed)?;
    let series = Series {
        key: &key,
        ln_values: &ln_values,
    };
    let at = py
        .detach(|| changes::change_at(&series, index, s))
        .map_err(core_err)?;
    let d = PyDict::new(py);
    d.set_item("runs_before", index)?;
    d.set_item("runs_after", ln_values.len() - index)?;
    match at {
        At::Change(c) => {
            d.set_item("status", "change")?;
            d.set_item("change", change_dict(py, &c)?)?;
            d.set_item("changes", PyList::empty(py))?;
        }
        At::NoneFound { changes } => {
            d.set_item("status", "none found")?;
            d.set_item("change", py.None())?;
            d.set_item("changes", change_list(py, &changes)?)?;
        }
        At::TooFewRuns { .. } => {
            d.set_item("status", "too few runs")?;
            d.set_item("change", py.None())?;
            d.set_item("changes", PyList::empty(py))?;
        }
    }
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(change_points, m)?)?;
    m.add_function(wrap_pyfunction!(change_at, m)?)?;
    Ok(())
}
