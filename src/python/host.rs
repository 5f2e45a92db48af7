//! The binding of the host's defaults: `cache_plan`, what a cache sweep would measure here
//! (`host::cache::plan`), as the `CachePlanDict` of `_core.pyi`; and `restrictions`, what
//! the host is restricted in (`host::restrictions`), as `RestrictionDict`s.

use super::convert::{core_err, request};
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

/// Every restriction of the host `sysfs` describes (default: `host::sysfs_root`), its
/// /proc and /boot where given (default: the live ones for `/sys`, else under `sysfs`),
/// each its name, what was read and what to do.
#[pyfunction]
#[pyo3(signature = (sysfs=None, proc=None, boot=None))]
fn restrictions<'py>(
    py: Python<'py>,
    sysfs: Option<&str>,
    proc: Option<&str>,
    boot: Option<&str>,
) -> PyResult<Bound<'py, PyList>> {
    use crate::host::restrictions::{detect, Host};
    let at = sysfs.map_or_else(Host::this, |root| Host::at(Path::new(root)));
    let host = Host::with_roots(
        &at.sys,
        proc.map_or(at.proc.as_path(), Path::new),
        boot.map_or(at.boot.as_path(), Path::new),
    );
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cache_plan, m)?)?;
    m.add_function(wrap_pyfunction!(restrictions, m)?)
}
