//! The measuring functions: each converts its arguments into a request, makes one core call
//! with the GIL released, and hands the record back as it is (`pythonize`); the Python side
//! restores the arrays (`ctxbench.record.decode`). Nothing here decides anything.

use super::convert::{core_err, request, to_py};
use crate::config::Config;
use crate::error::Error;
use crate::record::{
    AbRecord, CacheRecord, MatrixRecord, PingpongRecord, RingConfigRecord, RingRecord,
};
use crate::request::{Door, Request};
use crate::result::{self, summarize};
use crate::ring as core;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pythonize::pythonize;
use serde::Serialize;
use std::sync::Mutex;

/// A record as Python dicts and lists.
fn record<'py, T: Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize(py, value).map_err(PyErr::from)
}

/// Runs `f` without the GIL; between repetitions it re-takes the GIL just long enough to see
/// whether Ctrl-C (or another signal handler) raised, and if so the run is torn down and
/// that exception re-raised. `progress(done, of)`, where given, hears of each step; an
/// exception it raises stops the run and is raised again.
fn measure<T: Send>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    f: impl FnOnce(
            core::Interrupt,
            &mut (dyn FnMut(usize, usize) -> crate::error::Result<()> + Send),
        ) -> Result<T, Error>
        + Send,
) -> PyResult<T> {
    let pending: Mutex<Option<PyErr>> = Mutex::new(None);
    let keep = |e: PyErr| {
        *pending.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
        Error::Interrupted
    };
    let outcome = py.detach(|| {
        let mut interrupt = || Python::attach(|py| py.check_signals().map_err(keep).is_err());
        let mut heard = |done: usize, of: usize| match &progress {
            None => Ok(()),
            Some(f) => Python::attach(|py| f.call1(py, (done, of)).map(drop).map_err(keep)),
        };
        f(&mut interrupt, &mut heard)
    });
    let pending = pending.into_inner().unwrap_or_else(|p| p.into_inner());
    outcome.map_err(|e| to_py(e, pending))
}

/// A ring's arguments as the core's configuration.
fn ring_request(procs: &Bound<'_, PyAny>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Config> {
    request(Door::Ring, &[("procs", procs)], kwargs)?
        .ring()
        .map_err(core_err)
}

/// A ping-pong's arguments as the core's configuration.
fn pingpong_request(
    loops: Option<&Bound<'_, PyAny>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Config> {
    let positional: Vec<(&str, &Bound<'_, PyAny>)> =
        loops.map(|l| ("loops", l)).into_iter().collect();
    request(Door::Pingpong, &positional, kwargs)?
        .pingpong()
        .map_err(core_err)
}

/// Runs the token ring for each process count; see `ctxbench.ring` for the arguments.
#[pyfunction]
#[pyo3(signature = (procs, **kwargs))]
fn ring<'py>(
    py: Python<'py>,
    procs: &Bound<'py, PyAny>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = ring_request(procs, kwargs)?;
    let points = measure(py, None, |interrupt, _| crate::run::run(&cfg, interrupt))?;
    record(py, &RingRecord::new(&cfg, summarize(&cfg, &points)))
}

/// What `ring` would record of what was asked (the defaults filled in), its arguments
/// checked as on any machine.
#[pyfunction]
#[pyo3(signature = (procs, **kwargs))]
fn ring_config<'py>(
    py: Python<'py>,
    procs: &Bound<'py, PyAny>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = ring_request(procs, kwargs)?;
    record(py, &RingConfigRecord::from(&cfg))
}

/// `ring_config`, checked as `ring` checks it here before it starts anything: the
/// placement against this thread's CPUs, the transports that need one CPU, the memory, the
/// tasks it would start.
#[pyfunction]
#[pyo3(signature = (procs, **kwargs))]
fn ring_check<'py>(
    py: Python<'py>,
    procs: &Bound<'py, PyAny>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = ring_request(procs, kwargs)?;
    core::check(&cfg).map_err(core_err)?;
    record(py, &RingConfigRecord::from(&cfg))
}

/// Two participants bounce the token, as `perf bench sched pipe` does: `loops` round trips
/// timed as one run (perf's form), or, without `loops`, until precise as a ring point.
#[pyfunction]
#[pyo3(signature = (loops=None, **kwargs))]
fn pingpong<'py>(
    py: Python<'py>,
    loops: Option<&Bound<'py, PyAny>>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = pingpong_request(loops, kwargs)?;
    let mut points = measure(py, None, |interrupt, _| crate::run::run(&cfg, interrupt))?;
    let p = result::pingpong(&cfg, &points.remove(0));
    record(py, &PingpongRecord::new(&cfg, p))
}

/// What `pingpong` would record of what was asked (engine, transport, placement resolved).
#[pyfunction]
#[pyo3(signature = (loops=None, **kwargs))]
fn pingpong_config<'py>(
    py: Python<'py>,
    loops: Option<&Bound<'py, PyAny>>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = pingpong_request(loops, kwargs)?;
    record(py, &RingConfigRecord::from(&cfg))
}

/// The ring at every size of `sizes_kb` (which must hold 0), `rounds` times round-robin, and
/// the split of each point's cost; see `ctxbench.cache_sweep`. `progress(done, rounds)`
/// hears of each round.
#[pyfunction]
#[pyo3(signature = (procs, sizes_kb, *, progress=None, **kwargs))]
fn cache_sweep<'py>(
    py: Python<'py>,
    procs: &Bound<'py, PyAny>,
    sizes_kb: &Bound<'py, PyAny>,
    progress: Option<Py<PyAny>>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let c = request(
        Door::Cache,
        &[("procs", procs), ("sizes_kb", sizes_kb)],
        kwargs,
    )?
    .cache()
    .map_err(core_err)?;
    let plan = crate::host::cache::plan(&c).map_err(core_err)?;
    let grid = plan.grid().map_err(core_err)?;
    let sweep = measure(py, progress, |interrupt, heard| {
        crate::cache::sweep(&c.base, grid, c.rounds, plan.stream_kb, interrupt, heard)
    })?;
    record(
        py,
        &CacheRecord::new(&c.base, &sweep, c.rounds, plan.line_bytes),
    )
}

/// Measures the CPU×CPU matrix; see `ctxbench.matrix` for the arguments. `progress(done,
/// cells)` hears of each cell.
#[pyfunction]
#[pyo3(signature = (cpus=None, *, progress=None, **kwargs))]
fn matrix<'py>(
    py: Python<'py>,
    cpus: Option<&Bound<'py, PyAny>>,
    progress: Option<Py<PyAny>>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let positional: Vec<(&str, &Bound<'py, PyAny>)> =
        cpus.map(|c| ("cpus", c)).into_iter().collect();
    let cfg = request(Door::Matrix, &positional, kwargs)?
        .matrix()
        .map_err(core_err)?;
    let topo = crate::topology::read(std::path::Path::new("/sys")).map_err(core_err)?;
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let m = measure(py, progress, |interrupt, heard| {
        crate::matrix::run(&topo, &cfg, interrupt, &mut |done, of, _| heard(done, of))
    })?;
    let out = record(py, &MatrixRecord::new(&cfg, &m, started))?;
    out.set_item("topology", super::topo::topology_dict(py, &topo, false)?)?;
    Ok(out)
}

/// One side of an A/B run (`name` "a" or "b"): ("ring" or "pingpong", its keyword
/// arguments).
fn side(name: &'static str, kind: &str, kwargs: &Bound<'_, PyDict>) -> PyResult<Request> {
    let door = match kind {
        "ring" => Door::Ring,
        "pingpong" => Door::Pingpong,
        other => {
            return Err(core_err(Error::invalid(
                name,
                format!("an A/B side is \"ring\" or \"pingpong\", got {other:?}"),
            )))
        }
    };
    request(door, &[], Some(kwargs))
}

/// `a` against `b` in rounds of one fresh ring instance each, in a fresh random order, until
/// the ratio B/A is decided or the budget ends (`ab::run`). Each side is (kind, kwargs);
/// `progress(round, 0)` hears of each round.
#[pyfunction]
#[pyo3(signature = (a, b, *, progress=None, **kwargs))]
fn ab<'py>(
    py: Python<'py>,
    a: (String, Bound<'py, PyDict>),
    b: (String, Bound<'py, PyDict>),
    progress: Option<Py<PyAny>>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (a, b) = (side("a", &a.0, &a.1)?, side("b", &b.0, &b.1)?);
    let asked = request(Door::Ab, &[], kwargs)?
        .ab(&a, &b)
        .map_err(core_err)?;
    let outcome = measure(py, progress, |interrupt, heard| {
        let mut n = 0;
        crate::ab::run(&asked.a, &asked.b, &asked.plan, interrupt, &mut |_, _| {
            n += 1;
            heard(n, 0)
        })
    })?;
    record(py, &AbRecord::new(&asked, &outcome))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ring, m)?)?;
    m.add_function(wrap_pyfunction!(ring_config, m)?)?;
    m.add_function(wrap_pyfunction!(ring_check, m)?)?;
    m.add_function(wrap_pyfunction!(pingpong, m)?)?;
    m.add_function(wrap_pyfunction!(pingpong_config, m)?)?;
    m.add_function(wrap_pyfunction!(cache_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(matrix, m)?)?;
    m.add_function(wrap_pyfunction!(ab, m)?)?;
    Ok(())
}
