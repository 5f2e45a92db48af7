//! The binding of the host's defaults: `cache_plan`, what a cache sweep would measure here
//! (`host::cache::plan`), as the `CachePlanDict` of `_core.pyi`; `matrix_plan`, the cells of
//! a matrix (`host::matrix::plan`), as its `MatrixPlanDict`; `ring_estimate`, the seconds a
//! ring call takes at most.

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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ring_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(cache_plan, m)?)?;
    m.add_function(wrap_pyfunction!(matrix_plan, m)?)
}
