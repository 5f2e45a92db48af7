//! The binding of the host's defaults: `cache_plan`, what a cache sweep would measure here
//! (`host::cache::plan`), as the `CachePlanDict` of `_core.pyi`.

use super::convert::{core_err, request};
use crate::request::Door;
use pyo3::prelude::*;
use pyo3::types::PyDict;

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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cache_plan, m)?)
}
