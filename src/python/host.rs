//! The binding of the host's defaults: `cache_plan`, what a cache sweep would measure here
//! (`host::cache::plan`), as the `CachePlanDict` of `_core.pyi`; `matrix_plan`, the cells of
//! a matrix (`host::matrix::plan`), as its `MatrixPlanDict`; `ring_estimate`, the seconds a
//! ring call takes at most; `restrictions`, what the host is restricted in
//! (`host::restrictions`), as `RestrictionDict`s, and `cpu_quota`, its CPU quota's figure.

use super::convert::{core_err, request};
use crate::host::restrictions::{detect, quota, Host};
use crate::request::Door;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::Path;

/// What `cache_sweep(procs, sizes_kb, **kwargs)` would measure on the host (`sizes_kb` None:
/// each ring size's automatic grid), and what it would hold and take.
#[pyfunction]
#[pyo3(signature = (procs, sizes_kb=None, **kwargs))]
fn cache_plan<'py>(
    py: Python<'py>,
    procs: &Bound<'py, PyAny>,
    sizes_kb: Option<&Bound<'py, PyAny>>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let none = py.None().into_bound(py);
    let sizes = sizes_kb.unwrap_or(&none);
    let c = request(
        Door::Cache,
        &[("procs", procs), ("sizes_kb", sizes)],
        kwargs,
    )?
    .cache()
    .map_err(core_err)?;
    let plan = crate::host::cache::plan(&c).map_err(core_err)?;
    let d = PyDict::new(py);
    d.set_item("sysfs", plan.sysfs.to_string_lossy())?;
    d.set_item("cpus", plan.cpus)?;
    let caches = PyDict::new(py);
    for (name, kb) in plan.caches {
        caches.set_item(name, kb)?;
    }
    d.set_item("caches", caches)?;
    d.set_item("line_bytes", plan.line_bytes)?;
    d.set_item("stream_kb", plan.stream_kb)?;
    d.set_item("sizes_kb", plan.sizes_kb)?;
    d.set_item("memory_bytes", plan.memory_bytes)?;
    d.set_item("estimated_s", plan.estimated_s)?;
    d.set_item("notes", plan.notes)?;
    Ok(d)
}

/// The cells `matrix(cpus, **kwargs)` would measure on the host (`sysfs`: that tree, else
/// `CTXBENCH_SYSFS`'s or /sys), and what it would hold and take.
#[pyfunction]
#[pyo3(signature = (cpus=None, *, sysfs=None, **kwargs))]
fn matrix_plan<'py>(
    py: Python<'py>,
    cpus: Option<&Bound<'py, PyAny>>,
    sysfs: Option<std::path::PathBuf>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let positional: Vec<(&str, &Bound<'py, PyAny>)> =
        cpus.map(|c| ("cpus", c)).into_iter().collect();
    let cfg = request(Door::Matrix, &positional, kwargs)?
        .matrix()
        .map_err(core_err)?;
    let plan = match sysfs {
        Some(root) => {
            crate::topology::read(&root).and_then(|topo| crate::host::matrix::plan_on(&topo, &cfg))
        }
        None => crate::host::matrix::plan(&cfg),
    }
    .map_err(core_err)?;
    let d = PyDict::new(py);
    d.set_item("sysfs", plan.sysfs.to_string_lossy())?;
    d.set_item("cpus", plan.cpus)?;
    d.set_item("per_class", plan.per_class)?;
    let classes = plan
        .classes
        .iter()
        .map(|(class, pairs, cells)| {
            let c = PyDict::new(py);
            c.set_item("relation", class.relation.name())?;
            c.set_item("numa_distance", class.distance)?;
            c.set_item("name", class.name())?;
            c.set_item("pairs", pairs)?;
            c.set_item("cells", cells)?;
            Ok(c)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("classes", classes)?;
    d.set_item("cells", plan.cells)?;
    d.set_item("full_cells", plan.full_cells)?;
    d.set_item("cell_s", plan.cell_s)?;
    d.set_item("estimated_s", plan.estimated_s)?;
    d.set_item("full_estimated_s", plan.full_estimated_s)?;
    d.set_item("memory_bytes", plan.memory_bytes)?;
    d.set_item("notes", plan.notes)?;
    Ok(d)
}

/// Seconds `ring(procs, **kwargs)` takes at most (each point at its cap): what a budget and
/// a plan count (`host::time::ring_s`).
#[pyfunction]
#[pyo3(signature = (procs, **kwargs))]
fn ring_estimate<'py>(
    procs: &Bound<'py, PyAny>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<f64> {
    let cfg = request(Door::Ring, &[("procs", procs)], kwargs)?
        .ring()
        .map_err(core_err)?;
    Ok(crate::host::time::ring_s(&cfg))
}

/// The host `sysfs` describes (default: `host::sysfs_root`), its /proc and /boot where
/// given (default: the live ones for `/sys`, else under `sysfs`).
fn host(sysfs: Option<&str>, proc: Option<&str>, boot: Option<&str>) -> Host {
    let at = sysfs.map_or_else(Host::this, |root| Host::at(Path::new(root)));
    Host::with_roots(
        &at.sys,
        proc.map_or(at.proc.as_path(), Path::new),
        boot.map_or(at.boot.as_path(), Path::new),
    )
}

/// Every restriction of the host (`host`), each its name, what was read and what to do.
#[pyfunction]
#[pyo3(signature = (sysfs=None, proc=None, boot=None))]
fn restrictions<'py>(
    py: Python<'py>,
    sysfs: Option<&str>,
    proc: Option<&str>,
    boot: Option<&str>,
) -> PyResult<Bound<'py, PyList>> {
    let host = host(sysfs, proc, boot);
    let list = PyList::empty(py);
    for r in detect(&host) {
        let d = PyDict::new(py);
        d.set_item("name", r.name())?;
        d.set_item("detail", &r.detail)?;
        d.set_item("hint", r.hint())?;
        list.append(d)?;
    }
    Ok(list)
}

/// The tightest CPU quota on this process's groups on the host (`host`), in CPUs (quota /
/// period): the reading the restriction `cpu_quota` names; None where no limit is found.
#[pyfunction]
#[pyo3(signature = (sysfs=None, proc=None, boot=None))]
fn cpu_quota(sysfs: Option<&str>, proc: Option<&str>, boot: Option<&str>) -> Option<f64> {
    quota(&host(sysfs, proc, boot)).map(|q| q.cpus())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cpu_quota, m)?)?;
    m.add_function(wrap_pyfunction!(ring_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(cache_plan, m)?)?;
    m.add_function(wrap_pyfunction!(matrix_plan, m)?)?;
    m.add_function(wrap_pyfunction!(restrictions, m)?)
}
