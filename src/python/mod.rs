//! The pyo3 binding, `ctxbench._core`: Python objects into requests (`convert`), one core
//! call per function (`measuring`, `numbers`, `topo`), records back as Python dicts and lists.
//! It converts; it does not decide: every default and mode is the request's
//! (`crate::request`), every word and figure the core's.

mod changes;
mod convert;
mod host;
mod measuring;
mod numbers;
mod topo;

use crate::request::{known, params::Tuple, PARAMS};
use numpy::IntoPyArray;
use pyo3::exceptions::{PyImportError, PyValueError};
use pyo3::prelude::*;
use pythonize::pythonize;

/// rust-numpy loads numpy's C-API capsule when the first array is made and panics if that
/// fails; loading it runs Python code (numpy's version check), where a pending Ctrl-C raises
/// `KeyboardInterrupt`, which would surface as a `PanicException`. So it is loaded here, once,
/// on a thread of our own: CPython runs signal handlers on the main thread only, so nothing
/// can interrupt it there, and no later array can fail this way. What can still fail (numpy
/// missing, its capsule absent) raises as itself first; a panic left (an ABI mismatch) is an
/// `ImportError`. numpy itself is imported first, on the caller's thread (an interrupt there
/// is a plain `KeyboardInterrupt` from the import): the threads its BLAS starts then belong
/// to the caller, not to ours, whose name they would carry.
fn load_numpy(py: Python<'_>) -> PyResult<()> {
    py.import("numpy")?;
    let load = || {
        Python::attach(|py| {
            capsule_reachable(py)?;
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // The capsule, and the type that owns a Vec's buffer inside an array.
                Vec::<f64>::new().into_pyarray(py);
            }))
            .map_err(|panic| {
                let why = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                PyImportError::new_err(format!("numpy's C API could not be loaded: {why}"))
            })
        })
    };
    let outcome = py.detach(|| {
        std::thread::Builder::new()
            .name("ctxbench-numpy".into())
            .spawn(load)
            .map(|thread| thread.join())
    });
    match outcome {
        Ok(Ok(loaded)) => loaded,
        Ok(Err(_)) => Err(PyImportError::new_err("numpy's C API could not be loaded")),
        // No thread to be had (a process limit): load it here, as rust-numpy would later.
        Err(_) => load(),
    }
}

/// The steps of rust-numpy's capsule load that run Python code, with their errors returned:
/// numpy, its version (`numpy._core` since 2.0) and the capsule's module.
fn capsule_reachable(py: Python<'_>) -> PyResult<()> {
    let version = py.import("numpy")?.getattr("__version__")?;
    let parsed = py
        .import("numpy.lib")?
        .getattr("NumpyVersion")?
        .call1((version,))?;
    let core = match parsed.getattr("major")?.extract::<u8>()? {
        0 | 1 => "numpy.core.multiarray",
        _ => "numpy._core.multiarray",
    };
    py.import(core)?.getattr("_ARRAY_API")?;
    Ok(())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    load_numpy(m.py())?;
    changes::register(m)?;
    host::register(m)?;
    measuring::register(m)?;
    numbers::register(m)?;
    topo::register(m)?;
    // Every parameter as the table declares it (`request::Param`), a tuple of dicts.
    m.add("PARAMETERS", pythonize(m.py(), &Tuple(PARAMS))?)?;
    let records = crate::record::table::records().map_err(PyValueError::new_err)?;
    m.add("RECORDS", pythonize(m.py(), &records)?)?;
    let returns = crate::record::table::returns().map_err(PyValueError::new_err)?;
    m.add("RETURNS", pythonize(m.py(), &returns)?)?;
    for (name, value) in known() {
        m.add(name, pythonize(m.py(), &value)?)?;
    }
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("COMPILER", env!("CTXBENCH_RUSTC"))?;
    Ok(())
}
