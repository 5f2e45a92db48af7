//! The measuring functions: each converts its arguments into a request, makes one core call
//! with the GIL released, and hands the record back as it is (`pythonize`); the Python side
//! restores the arrays (`ctxbench.record.decode`). Nothing here decides anything.

use super::convert::{request, to_py};
use crate::error::Error;
use crate::record::measure::{self as core, Interrupt, Progress};
use crate::record::RingConfigRecord;
use crate::request::{Door, Request};
use crate::stats::EarlierRun;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pythonize::pythonize;
use std::sync::Mutex;

/// Runs `f` without the GIL; between repetitions it re-takes the GIL just long enough to see
/// whether Ctrl-C (or another signal handler) raised, and if so the run is torn down and
/// that exception re-raised. `progress(done, of)`, where given, hears of each step; an
/// exception it raises stops the run and is raised again.
fn measure<T: Send>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    f: impl FnOnce(Interrupt, Progress) -> Result<T, Error> + Send,
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

type Runs = Vec<Option<Vec<EarlierRun>>>;
type Asked<'py> = (Option<Bound<'py, PyDict>>, Option<Bound<'py, PyAny>>);

/// `kwargs` less a `history` that is a function, and that function: it is asked for the
/// earlier runs of the points the request resolves to, by their identities, so that a call
/// is one trip (a sequence of runs, or None, is the request's own parameter).
fn history_asked<'py>(kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Asked<'py>> {
    let Some(kwargs) = kwargs else {
        return Ok((None, None));
    };
    match kwargs.get_item("history")? {
        Some(f) if f.is_callable() => {
            let rest = kwargs.copy()?;
            rest.del_item("history")?;
            Ok((Some(rest), Some(f)))
        }
        _ => Ok((Some(kwargs.clone()), None)),
    }
}

/// The earlier runs `history` returns for the points `ids` names (None: none asked, or
/// none known).
fn earlier(history: Option<Bound<'_, PyAny>>, ids: Vec<String>) -> PyResult<Option<Runs>> {
    let Some(f) = history else {
        return Ok(None);
    };
    let runs = f.call1((ids,))?;
    if runs.is_none() {
        return Ok(None);
    }
    super::convert::history(&runs).map(Some)
}

/// Runs the token ring for each process count; see `ctxbench.ring` for the arguments.
#[pyfunction]
#[pyo3(signature = (procs, **kwargs))]
fn ring<'py>(
    py: Python<'py>,
    procs: &Bound<'py, PyAny>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (kwargs, history) = history_asked(kwargs)?;
    let cfg = request(Door::Ring, &[("procs", Some(procs))], kwargs.as_ref())?.ring()?;
    let runs = earlier(history, core::point_ids(&cfg))?;
    let cfg = core::with_history(cfg, runs.as_deref())?;
    let ring = measure(py, None, |interrupt, _| core::ring(&cfg, interrupt))?;
    Ok(pythonize(py, &ring)?)
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
    let cfg = request(Door::Ring, &[("procs", Some(procs))], kwargs)?.ring()?;
    Ok(pythonize(py, &RingConfigRecord::from(&cfg))?)
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
    let cfg = request(Door::Ring, &[("procs", Some(procs))], kwargs)?.ring()?;
    Ok(pythonize(py, &core::ring_check(&cfg)?)?)
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
    let (kwargs, history) = history_asked(kwargs)?;
    let cfg = request(Door::Pingpong, &[("loops", loops)], kwargs.as_ref())?.pingpong()?;
    let runs = earlier(history, core::point_ids(&cfg))?;
    let cfg = core::with_history(cfg, runs.as_deref())?;
    let pingpong = measure(py, None, |interrupt, _| core::pingpong(&cfg, interrupt))?;
    Ok(pythonize(py, &pingpong)?)
}

/// What `pingpong` would record of what was asked (engine, transport, placement resolved).
#[pyfunction]
#[pyo3(signature = (loops=None, **kwargs))]
fn pingpong_config<'py>(
    py: Python<'py>,
    loops: Option<&Bound<'py, PyAny>>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = request(Door::Pingpong, &[("loops", loops)], kwargs)?.pingpong()?;
    Ok(pythonize(py, &RingConfigRecord::from(&cfg))?)
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
        &[("procs", Some(procs)), ("sizes_kb", Some(sizes_kb))],
        kwargs,
    )?
    .cache()?;
    let sweep = measure(py, progress, |interrupt, heard| {
        core::cache_sweep(&c, interrupt, heard)
    })?;
    Ok(pythonize(py, &sweep)?)
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
    let cfg = request(Door::Matrix, &[("cpus", cpus)], kwargs)?.matrix()?;
    let measured = measure(py, progress, |interrupt, heard| {
        core::matrix(&cfg, interrupt, heard)
    })?;
    Ok(pythonize(py, &measured)?)
}

/// One side of an A/B run (`name` "a" or "b"): ("ring" or "pingpong", its keyword
/// arguments).
fn side(name: &'static str, kind: &str, kwargs: &Bound<'_, PyDict>) -> PyResult<Request> {
    let door = Door::of_ab_side(name, kind)?;
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
    let asked = request(Door::Ab, &[], kwargs)?.ab(&a, &b)?;
    let outcome = measure(py, progress, |interrupt, heard| {
        core::ab(&asked, interrupt, heard)
    })?;
    Ok(pythonize(py, &outcome)?)
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
