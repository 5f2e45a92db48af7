//! The pyo3 binding, `ctxbench._core`: Python objects into requests (`convert`), one core
//! call per function (`measuring`, `numbers`, `topo`), records back as Python dicts and lists.
//! It converts; it does not decide: every default and mode is the request's
//! (`crate::request`), every word and figure the core's.

mod convert;
mod host;
mod measuring;
mod numbers;
mod topo;

use crate::engine::Engine;
use crate::observer::Observer;
use crate::placement as placements;
use crate::request::{Door, Fallback, Kind, Preset, PARAMS};
use crate::{config, stats, stop, verdict};
use numpy::IntoPyArray;
use pyo3::exceptions::PyImportError;
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
        d.set_item("kind", kind_name(p.kind))?;
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

/// A kind's name for the stub and the CLI: how a value of it is typed.
fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Counts => "counts",
        Kind::Count(_) => "count",
        Kind::Stride => "count",
        Kind::OptCount(_) => "count?",
        Kind::OptInt(_) => "int?",
        Kind::Real(_) => "real",
        Kind::OptReal(_) => "real?",
        Kind::Switch => "switch",
        Kind::Choice(_) => "choice",
        Kind::OptChoice(_) => "choice?",
        Kind::Placement => "placement",
        Kind::Cpu => "cpu",
        Kind::Cpus => "cpus",
        Kind::Sizes => "sizes",
        Kind::Memory => "memory",
        Kind::History => "history",
        Kind::Interference => "interference",
    }
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    load_numpy(m.py())?;
    host::register(m)?;
    measuring::register(m)?;
    numbers::register(m)?;
    topo::register(m)?;
    m.add("PARAMETERS", parameters(m.py())?)?;
    m.add(
        "DOORS",
        PyTuple::new(m.py(), Door::ALL.iter().map(|d| d.name()))?,
    )?;
    let presets = PyDict::new(m.py());
    for preset in Preset::ALL {
        let figures = PyDict::new(m.py());
        figures.set_item("precision", preset.precision())?;
        figures.set_item("max_time", preset.max_time())?;
        presets.set_item(preset.name(), figures)?;
    }
    m.add("PRESETS", presets)?;
    m.add("MIN_RUNS", stats::MIN_RUNS)?;
    m.add("FIXED_MIN_TIME", stop::FIXED_MIN_TIME)?;
    m.add("PRECISION_MIN_TIME", stop::PRECISION_MIN_TIME)?;
    m.add("DEFAULT_ROUNDS", crate::cache::DEFAULT_ROUNDS)?;
    m.add("REFILL_ABOVE_STREAM", crate::cache::ABOVE_STREAM)?;
    m.add("DEFAULT_TIMEOUT", config::DEFAULT_TIMEOUT)?;
    m.add("DEFAULT_PRECISION", stop::DEFAULT_PRECISION)?;
    m.add("ASSUMED_RUN_SD", crate::stats::ASSUMED_RUN_LEVEL.sd)?;
    m.add("LOADED_RUNNABLE", crate::verdict::LOADED_RUNNABLE)?;
    m.add("DEFAULT_MAX_TIME", stop::DEFAULT_MAX_TIME)?;
    m.add("DEFAULT_MAX_REPETITIONS", stop::DEFAULT_MAX_REPETITIONS)?;
    m.add("CONFIDENCE", stop::CONFIDENCE)?;
    m.add("BLOCK_REPETITIONS", stop::BLOCK_REPETITIONS)?;
    m.add("MAX_PROCS", config::MAX_PROCS)?;
    m.add("MAX_POINTS", config::MAX_POINTS)?;
    m.add("MAX_CPUS", crate::sys::MAX_CPUS)?;
    m.add(
        "ENGINES",
        PyTuple::new(m.py(), Engine::ALL.iter().map(|e| e.name()))?,
    )?;
    let transports = PyDict::new(m.py());
    for &engine in Engine::ALL {
        let names: Vec<&str> = engine.transports().iter().map(|t| t.name()).collect();
        transports.set_item(engine.name(), PyTuple::new(m.py(), names)?)?;
    }
    m.add("TRANSPORTS", transports)?;
    m.add("PLACEMENTS", PyTuple::new(m.py(), placements::policies())?)?;
    m.add("COUNTERS", PyTuple::new(m.py(), Observer::NAMES)?)?;
    m.add(
        "POLICIES",
        PyTuple::new(m.py(), crate::sched::Policy::NAMES)?,
    )?;
    // Each key of `interference=` with the value it takes where not given.
    let interference = PyDict::new(m.py());
    for key in crate::interference::KEYS {
        let default = match key {
            "duty" => crate::interference::DEFAULT_DUTY,
            _ => 0.0,
        };
        interference.set_item(key, default)?;
    }
    m.add("INTERFERENCE", interference)?;
    m.add("CHANGES", PyTuple::new(m.py(), verdict::Change::NAMES)?)?;
    m.add("AB_STOPS", PyTuple::new(m.py(), crate::ab::Stopped::NAMES)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("COMPILER", env!("CTXBENCH_RUSTC"))?;
    Ok(())
}
