//! The binding of the host's defaults: `cache_plan`, what a cache sweep would measure here
//! (`host::cache::plan`), as the `CachePlanDict` of `_core.pyi`; `matrix_plan`, the cells of
//! a matrix (`host::matrix::plan`), as its `MatrixPlanDict`; `ring_estimate`, the seconds a
//! ring call takes at most; `restrictions`, what the host is restricted in
//! (`host::restrictions`), as `RestrictionDict`s, and `cpu_quota`, its CPU quota's figure.
//! Each as the core says it (`pythonize`).

use super::convert::request;
use crate::host::restrictions::{detect, quota, Host};
use crate::request::Door;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pythonize::pythonize;
use std::path::PathBuf;

/// What `cache_sweep(procs, sizes_kb, **kwargs)` would measure on the host (`sizes_kb` None:
/// each ring size's automatic grid), and what it would hold and take.
#[pyfunction]
#[pyo3(signature = (procs, sizes_kb=None, **kwargs))]
fn cache_plan<'py>(
    py: Python<'py>,
    procs: &Bound<'py, PyAny>,
    sizes_kb: Option<&Bound<'py, PyAny>>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let c = request(
        Door::Cache,
        &[("procs", Some(procs)), ("sizes_kb", sizes_kb)],
        kwargs,
    )?
    .cache()?;
    let plan = crate::host::cache::plan(&c)?;
    Ok(pythonize(py, &plan)?)
}

/// The cells `matrix(cpus, **kwargs)` would measure on the host (`sysfs`: that tree, else
/// `CTXBENCH_SYSFS`'s or /sys), and what it would hold and take.
#[pyfunction]
#[pyo3(signature = (cpus=None, *, sysfs=None, **kwargs))]
fn matrix_plan<'py>(
    py: Python<'py>,
    cpus: Option<&Bound<'py, PyAny>>,
    sysfs: Option<PathBuf>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = request(Door::Matrix, &[("cpus", cpus)], kwargs)?.matrix()?;
    let plan = crate::host::matrix::plan(&cfg, sysfs.as_deref())?;
    Ok(pythonize(py, &plan)?)
}

/// Seconds `ring(procs, **kwargs)` takes at most (each point at its cap): what a budget and
/// a plan count (`host::time::ring_s`).
#[pyfunction]
#[pyo3(signature = (procs, **kwargs))]
fn ring_estimate<'py>(
    procs: &Bound<'py, PyAny>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<f64> {
    let cfg = request(Door::Ring, &[("procs", Some(procs))], kwargs)?.ring()?;
    Ok(crate::host::time::ring_s(&cfg))
}

/// Every restriction of the host `sysfs` describes (default: `host::sysfs_root`), its
/// /proc and /boot where given (default: the live ones for `/sys`, else under `sysfs`),
/// each its name, what was read and what to do.
#[pyfunction]
#[pyo3(signature = (sysfs=None, proc=None, boot=None))]
fn restrictions<'py>(
    py: Python<'py>,
    sysfs: Option<PathBuf>,
    proc: Option<PathBuf>,
    boot: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let host = Host::given(sysfs.as_deref(), proc.as_deref(), boot.as_deref());
    Ok(pythonize(py, &detect(&host))?)
}

/// The tightest CPU quota on this process's groups on the host (roots as `restrictions`
/// takes them), in CPUs (quota / period): the reading the restriction `cpu_quota` names;
/// None where no limit is found.
#[pyfunction]
#[pyo3(signature = (sysfs=None, proc=None, boot=None))]
fn cpu_quota(sysfs: Option<PathBuf>, proc: Option<PathBuf>, boot: Option<PathBuf>) -> Option<f64> {
    let host = Host::given(sysfs.as_deref(), proc.as_deref(), boot.as_deref());
    quota(&host).map(|q| q.cpus())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cpu_quota, m)?)?;
    m.add_function(wrap_pyfunction!(ring_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(cache_plan, m)?)?;
    m.add_function(wrap_pyfunction!(matrix_plan, m)?)?;
    m.add_function(wrap_pyfunction!(restrictions, m)?)
}
