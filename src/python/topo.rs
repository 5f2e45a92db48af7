//! The binding of `topology`: the machine's table (`topology::Table`) as the `TopologyDict`
//! of `_core.pyi`, each column a numpy array.

use numpy::{IntoPyArray, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;

/// The machine's topology as sysfs under `sysfs` describes it (default: the host's,
/// `host::sysfs_root`).
#[pyfunction]
#[pyo3(signature = (sysfs=None))]
fn topology<'py>(py: Python<'py>, sysfs: Option<PathBuf>) -> PyResult<Bound<'py, PyDict>> {
    let t = crate::host::topology_of(sysfs.as_deref())?;
    let table = t.table(true);
    let d = PyDict::new(py);
    d.set_item("sysfs", table.sysfs)?;
    d.set_item("cpus", table.cpus.into_pyarray(py))?;
    d.set_item("online", table.online.into_pyarray(py))?;
    d.set_item("allowed", table.allowed.into_pyarray(py))?;
    for (name, column) in [
        ("package", table.package),
        ("die", table.die),
        ("cluster", table.cluster),
        ("core", table.core),
        ("node", table.node),
        ("llc", table.llc),
    ] {
        d.set_item(name, column.into_pyarray(py))?;
    }
    d.set_item("core_type", table.core_type)?;
    for (name, lists) in [
        ("smt_siblings", table.smt_siblings),
        ("cpu_caches", table.cpu_caches),
    ] {
        d.set_item(name, arrays(py, lists)?)?;
    }
    let caches = PyList::empty(py);
    for c in table.caches {
        let e = pythonize::pythonize(py, &c)?;
        e.set_item("cpus", c.cpus.into_pyarray(py))?;
        caches.append(e)?;
    }
    d.set_item("caches", caches)?;
    let shares = PyDict::new(py);
    for (name, kb) in table.cache_share_kb {
        shares.set_item(name, kb.into_pyarray(py))?;
    }
    d.set_item("cache_share_kb", shares)?;
    d.set_item("nodes", table.nodes.into_pyarray(py))?;
    d.set_item("distances", square(py, &table.distances)?)?;
    d.set_item("order", table.order.into_pyarray(py))?;
    d.set_item("cpuset", table.cpuset.map(|c| c.into_pyarray(py)))?;
    d.set_item("affinity", table.affinity.map(|c| c.into_pyarray(py)))?;
    d.set_item("notes", table.notes)?;
    if let Some(relations) = table.relations {
        d.set_item("relations", square(py, &relations)?)?;
    }
    Ok(d)
}

/// Lists of integers as a list of int64 arrays.
fn arrays(py: Python<'_>, lists: Vec<Vec<i64>>) -> PyResult<Bound<'_, PyList>> {
    PyList::new(py, lists.into_iter().map(|v| v.into_pyarray(py)))
}

/// A square table as a 2-D array, (0, 0) when there is none.
fn square<'py, T: numpy::Element + Clone>(
    py: Python<'py>,
    rows: &[Vec<T>],
) -> PyResult<Bound<'py, PyArray2<T>>> {
    if rows.is_empty() {
        return Ok(PyArray2::zeros(py, [0, 0], false));
    }
    Ok(PyArray2::from_vec2(py, rows)?)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(topology, m)?)?;
    Ok(())
}
