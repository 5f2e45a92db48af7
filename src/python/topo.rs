//! The binding of `topology`: the machine's table (`topology::Table`, declared with
//! `record!`) as it is (`pythonize`); `ctxbench._topology` restores its arrays as a matrix
//! record's topology is restored. The CPU x CPU relations, a square as large as the machine,
//! go over as one uint8 array.

use numpy::PyArray2;
use pyo3::prelude::*;
use pythonize::pythonize;
use std::path::PathBuf;

/// The machine's topology as sysfs under `sysfs` describes it (default: the host's,
/// `host::sysfs_root`).
#[pyfunction]
#[pyo3(signature = (sysfs=None))]
fn topology(py: Python<'_>, sysfs: Option<PathBuf>) -> PyResult<Bound<'_, PyAny>> {
    let mut table = crate::host::topology_of(sysfs.as_deref())?.table(true);
    let relations = table.relations.take().unwrap_or_default();
    let d = pythonize(py, &table)?;
    let square = match relations.is_empty() {
        true => PyArray2::zeros(py, [0, 0], false),
        false => PyArray2::from_vec2(py, &relations)?,
    };
    d.set_item("relations", square)?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(topology, m)?)?;
    Ok(())
}
