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

use crate::request::{known, Fallback, Kind, Known, PARAMS};
use numpy::IntoPyArray;
use pyo3::exceptions::{PyImportError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// Every parameter as the table declares it (`request::params`): name, kind in words,
/// default (None where none, or where derived: then `derived` says how), range, the
/// measurements that take it, its flags and help. The stub, the API's signatures and the
/// CLI's flags are written or checked from it.
fn parameters(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    let rows = PARAMS.iter().map(|p| -> PyResult<Bound<'_, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("name", p.name)?;
        d.set_item("kind", p.kind.name())?;
        d.set_item("expected", crate::request::expected(p.kind))?;
        let (default, derived): (Option<Bound<'_, PyAny>>, Option<&str>) = match p.default {
            Fallback::None => (None, None),
            Fallback::Int(i) => (Some(i.into_pyobject(py)?.into_any()), None),
            Fallback::Real(x) => (Some(x.into_pyobject(py)?.into_any()), None),
            Fallback::Switch(b) => (
                Some(pyo3::types::PyBool::new(py, b).to_owned().into_any()),
                None,
            ),
            Fallback::Name(n) => (Some(n.into_pyobject(py)?.into_any()), None),
            Fallback::Ints(v) => (Some(PyTuple::new(py, v)?.into_any()), None),
            Fallback::Derived(how) => (None, Some(how)),
        };
        d.set_item("default", default)?;
        d.set_item("derived", derived)?;
        let (lo, hi) = match p.kind {
            Kind::Count(l) | Kind::OptCount(l) => (Some(l.lo as f64), Some(l.hi as f64)),
            Kind::OptInt(l) => (Some(l.lo as f64), Some(l.hi as f64)),
            Kind::Real(l) | Kind::OptReal(l) => (Some(l.lo), Some(l.hi)),
            _ => (None, None),
        };
        d.set_item("lo", lo)?;
        d.set_item("hi", hi)?;
        let choices = match p.kind {
            Kind::Choice(n) | Kind::OptChoice(n) => Some(PyTuple::new(py, n.names())?),
            _ => None,
        };
        d.set_item("choices", choices)?;
        d.set_item("doors", PyTuple::new(py, p.doors.iter().map(|d| d.name()))?)?;
        d.set_item("flags", PyTuple::new(py, p.flags)?)?;
        d.set_item("help", p.help)?;
        Ok(d)
    });
    PyTuple::new(py, rows.collect::<PyResult<Vec<_>>>()?)
}

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

/// A value the core exports, as Python holds it.
fn known_object<'py>(py: Python<'py>, k: &Known) -> PyResult<Bound<'py, PyAny>> {
    Ok(match k {
        Known::Int(i) => i.into_pyobject(py)?.into_any(),
        Known::Real(x) => x.into_pyobject(py)?.into_any(),
        Known::Text(t) => t.into_pyobject(py)?.into_any(),
        Known::Names(names) => PyTuple::new(py, names)?.into_any(),
        Known::ByName(entries) => {
            let d = PyDict::new(py);
            for (name, value) in entries {
                d.set_item(name, known_object(py, value)?)?;
            }
            d.into_any()
        }
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    load_numpy(m.py())?;
    changes::register(m)?;
    host::register(m)?;
    measuring::register(m)?;
    numbers::register(m)?;
    topo::register(m)?;
    m.add("PARAMETERS", parameters(m.py())?)?;
    let records = crate::record::table::records().map_err(PyValueError::new_err)?;
    m.add("RECORDS", pythonize::pythonize(m.py(), &records)?)?;
    for (name, value) in known() {
        m.add(name, known_object(m.py(), &value)?)?;
    }
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("COMPILER", env!("CTXBENCH_RUSTC"))?;
    Ok(())
}
