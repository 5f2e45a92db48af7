//! The pyo3 bindings: Python arguments in, numpy arrays out. Errors are mapped to Python
//! exceptions here and nowhere else.

mod topo;

use crate::config::{self, Config, Plan};
use crate::engine::{Engine, TransportKind};
use crate::error::Error;
use crate::observer::Observer;
use crate::placement::{self as placements, Named, Placement};
use crate::result::{self, summarize, HopSummary, PointStats, RingSummary};
use crate::ring as core;
use crate::ring::Phases;
use crate::stats::{self, Estimate, Level, Uncertainty};
use crate::stop::{self, Precision, Stop};
use crate::verdict;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{
    PyImportError, PyMemoryError, PyOSError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFrozenSet, PyInt, PyList, PyMemoryView, PySet,
    PyString, PyTuple,
};

fn to_py(e: Error, pending: Option<PyErr>) -> PyErr {
    match e {
        Error::Invalid { .. } => PyValueError::new_err(e.to_string()),
        Error::Type(_) => PyTypeError::new_err(e.to_string()),
        Error::Os { errno, .. } => PyOSError::new_err((errno, e.to_string())),
        Error::Memory { .. } => PyMemoryError::new_err(e.to_string()),
        Error::Peer(_) => PyRuntimeError::new_err(e.to_string()),
        Error::Interrupted => {
            pending.unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"))
        }
    }
}

/// The placement a Python caller named: a policy name, a sequence of CPU ids, or None.
fn placement(obj: Option<&Bound<'_, PyAny>>, cpu: Option<i64>) -> PyResult<Placement> {
    let (policy, cpus): (String, Vec<i64>);
    let named = match obj {
        None => None,
        Some(o) if o.is_instance_of::<PyString>() => {
            policy = o.extract()?;
            Some(Named::Policy(&policy))
        }
        Some(o) => {
            // One CPU per participant is the most a list can say.
            let ids = items(o, "placement", &placements::expected(), config::MAX_PROCS)?;
            if ids.len() > config::MAX_PROCS {
                return Err(PyValueError::new_err(format!(
                    "placement: lists more than {} CPU ids, one per participant at most",
                    config::MAX_PROCS
                )));
            }
            cpus = ids
                .iter()
                .map(|id| int_arg(id, "placement"))
                .collect::<PyResult<_>>()?;
            Some(Named::Cpus(&cpus))
        }
    };
    Placement::from_request(named, cpu).map_err(|e| to_py(e, None))
}

/// The items of an argument that lists things in order: a list, tuple, range, numpy array or
/// any other iterable but text, bytes and buffers (`bytearray(b"\x02")` is no list of counts)
/// and unordered collections (dict, set). At most `max` + 1 items are read, so that an endless
/// iterator ends in the caller's range error instead of filling memory; Ctrl-C is asked for
/// while reading.
fn items<'py>(
    obj: &Bound<'py, PyAny>,
    param: &str,
    expected: &str,
    max: usize,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let refused = obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyBytes>()
        || obj.is_instance_of::<PyByteArray>()
        || obj.is_instance_of::<PyMemoryView>()
        || obj.is_instance_of::<PyDict>()
        || obj.is_instance_of::<PySet>()
        || obj.is_instance_of::<PyFrozenSet>();
    let iter = if refused { None } else { obj.try_iter().ok() };
    let Some(iter) = iter else {
        return Err(PyTypeError::new_err(format!(
            "{param}: expected {expected}, got {}",
            type_name(obj)
        )));
    };
    let mut out = Vec::new();
    for item in iter {
        if out.len() % 1024 == 1023 {
            obj.py().check_signals()?;
        }
        out.push(item?);
        if out.len() > max {
            break;
        }
    }
    Ok(out)
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

fn engine_transport(engine: &str, transport: Option<&str>) -> PyResult<(Engine, TransportKind)> {
    let engine = Engine::parse(engine).map_err(|e| to_py(e, None))?;
    let transport = match transport {
        Some(t) => TransportKind::parse(t).map_err(|e| to_py(e, None))?,
        None => engine.default_transport(),
    };
    Ok((engine, transport))
}

/// An integer argument as a count within `limit`: anything with `__index__` (numpy integers
/// too) but `bool`, which Python counts as an int and no caller means as a count. Errors name
/// the parameter: a `TypeError` for the type, a `ValueError` for the range.
fn count_arg(obj: &Bound<'_, PyAny>, limit: config::Limit<u64>) -> PyResult<usize> {
    let counted = match int_value(obj, limit.param)? {
        Int::Fits(v) => limit.count(v),
        Int::TooWide(text) => Err(limit.outside(text)),
    };
    counted.map_err(|e| to_py(e, None))
}

fn int_arg(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<i64> {
    match int_value(obj, param)? {
        Int::Fits(v) => Ok(v),
        Int::TooWide(text) => Err(PyValueError::new_err(format!(
            "{param}: {text} is out of range"
        ))),
    }
}

/// An integer argument: one that fits 64 bits, or the text of one that does not (a value out
/// of range, not a wrong type).
enum Int {
    Fits(i64),
    TooWide(String),
}

fn int_value(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<Int> {
    let wrong =
        || PyTypeError::new_err(format!("{param}: expected an int, got {}", type_name(obj)));
    if obj.is_instance_of::<PyBool>() {
        return Err(wrong());
    }
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(Int::Fits(v));
    }
    match obj.call_method0("__index__") {
        Ok(wide) => Ok(Int::TooWide(wide.str()?.to_string())),
        Err(_) => Err(wrong()),
    }
}

/// A float argument (seconds, a fraction): an int or float, or anything with `__float__`
/// (numpy floats), but not `bool`, which no caller means as a number.
fn float_arg(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<f64> {
    let wrong = || {
        PyTypeError::new_err(format!(
            "{param}: expected a number, got {}",
            type_name(obj)
        ))
    };
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyString>() {
        return Err(wrong());
    }
    obj.extract::<f64>().map_err(|_| wrong())
}

/// `min_time=`: None (the stopping rule's default), or seconds.
fn min_time_arg(obj: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    if obj.is_none() {
        return Ok(None);
    }
    float_arg(obj, config::MIN_TIME.param).map(Some)
}

// pyo3's `from_py_with` takes a function's path, so each checked parameter gets one:
// `name: T => convert(what)` is `fn name(obj) -> PyResult<T>`, `convert(obj, what)`.
macro_rules! arguments {
    ($($name:ident: $t:ty => $convert:ident($what:expr)),* $(,)?) => {$(
        fn $name(obj: &Bound<'_, PyAny>) -> PyResult<$t> {
            $convert(obj, $what)
        }
    )*};
}

arguments! {
    size_kb_arg: usize => count_arg(config::SIZE_KB),
    repetitions_arg: usize => count_arg(config::REPETITIONS),
    max_repetitions_arg: usize => count_arg(config::MAX_REPETITIONS),
    warmup_arg: usize => count_arg(config::WARMUP),
    parallel_arg: usize => count_arg(config::PARALLEL),
    loops_arg: usize => count_arg(config::LOOPS),
    pairs_arg: usize => count_arg(config::BASELINE_PAIRS),
    rounds_arg: usize => count_arg(config::ROUNDS),
    // Their ranges are checked with the rest of the configuration (`Config::validate`).
    precision_arg: f64 => float_arg(config::PRECISION.param),
    max_time_arg: f64 => float_arg(config::MAX_TIME.param),
    timeout_arg: f64 => float_arg(config::TIMEOUT.param),
}

/// `stride_bytes=`: an int; its rule (a power of two in range) is `workload::Shape::new`'s.
fn stride_arg(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    crate::workload::check_stride(int_arg(obj, "stride_bytes")?).map_err(|e| to_py(e, None))
}

/// `repetitions=`: None (measure until precise), or a fixed count.
fn fixed_repetitions_arg(obj: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    if obj.is_none() {
        return Ok(None);
    }
    repetitions_arg(obj).map(Some)
}

/// `cpu=`: None, or an int (its range is `placement.rs`'s rule).
fn cpu_arg(obj: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if obj.is_none() {
        return Ok(None);
    }
    int_arg(obj, "cpu").map(Some)
}

/// `procs`: one count or a sequence of counts (a str, bytes, bool or None is neither).
fn procs_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let one = obj.is_instance_of::<PyInt>()
        || (obj.hasattr("__index__")? && !obj.hasattr("__len__")? && !obj.hasattr("__iter__")?);
    if one && !obj.is_instance_of::<PyBool>() {
        return Ok(vec![count_arg(obj, config::PROCS)?]);
    }
    if obj.is_instance_of::<PyBool>() || obj.is_none() {
        return Err(PyTypeError::new_err(format!(
            "procs: expected an int or a sequence of ints, got {}",
            type_name(obj)
        )));
    }
    items(
        obj,
        "procs",
        "an int or a sequence of ints",
        config::MAX_POINTS,
    )?
    .iter()
    .map(|item| count_arg(item, config::PROCS))
    .collect()
}

/// Runs `f` without the GIL; between repetitions it re-takes the GIL just long enough to see
/// whether Ctrl-C (or another signal handler) raised, and if so the run is torn down and
/// that exception re-raised.
fn measure<T: Send>(
    py: Python<'_>,
    f: impl FnOnce(core::Interrupt) -> Result<T, Error> + Send,
) -> PyResult<T> {
    let mut pending: Option<PyErr> = None;
    let outcome = py.detach(|| {
        f(&mut || {
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    pending = Some(e);
                    true
                }
            })
        })
    });
    outcome.map_err(|e| to_py(e, pending.take()))
}

/// Two participants bounce the token, as `perf bench sched pipe` does: `loops` round trips
/// timed as one run (perf's form), or, without `loops`, until precise as a ring point.
#[pyfunction]
#[pyo3(signature = (loops=None, *, threads=false, engine=None, transport=None, placement=None,
    cpu=None, precision=stop::DEFAULT_PRECISION, max_time=stop::DEFAULT_MAX_TIME,
    max_repetitions=stop::DEFAULT_MAX_REPETITIONS, min_time=None,
    timeout=config::DEFAULT_TIMEOUT, history=None, counters="evidence"))]
#[allow(clippy::too_many_arguments)]
fn pingpong<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = optional_loops_arg)] loops: Option<usize>,
    threads: bool,
    engine: Option<&str>,
    transport: Option<&str>,
    placement: Option<&Bound<'py, PyAny>>,
    #[pyo3(from_py_with = cpu_arg)] cpu: Option<i64>,
    #[pyo3(from_py_with = precision_arg)] precision: f64,
    #[pyo3(from_py_with = max_time_arg)] max_time: f64,
    #[pyo3(from_py_with = max_repetitions_arg)] max_repetitions: usize,
    #[pyo3(from_py_with = min_time_arg)] min_time: Option<f64>,
    #[pyo3(from_py_with = timeout_arg)] timeout: f64,
    history: Option<RunHistory>,
    counters: &str,
) -> PyResult<Bound<'py, PyDict>> {
    // perf's -T is the thread engine; any engine can be named, fibers too.
    let engine = match (engine, threads) {
        (None, true) => "thread",
        (None, false) => "process",
        (Some(name), false) | (Some(name @ "thread"), true) => name,
        (Some(name), true) => {
            return Err(PyValueError::new_err(format!(
                "threads: True means engine=\"thread\", but engine={name:?} was named"
            )))
        }
    };
    let (engine, transport) = engine_transport(engine, transport)?;
    let stop = Stop::Precise(Precision {
        target: precision,
        max_repetitions,
        max_time,
    });
    let cfg = Config {
        run_levels: run_levels(Some(vec![history]))?,
        observer: Observer::parse(counters).map_err(|e| to_py(e, None))?,
        ..core::pingpong_config(
            engine,
            transport,
            self::placement(placement, cpu)?,
            loops.map(|n| n as u64),
            stop,
            min_time,
            timeout,
        )
        .map_err(|e| to_py(e, None))?
    };
    let mut points = measure(py, |interrupt| core::run(&cfg, interrupt))?;
    let p = result::pingpong(&cfg, &points.remove(0));
    let d = PyDict::new(py);
    d.set_item("loops", p.loops)?;
    d.set_item("threads", engine == Engine::Thread)?;
    d.set_item("engine", engine.name())?;
    d.set_item("transport", transport.name())?;
    d.set_item("placement", cfg.placement.name())?;
    set_stop_items(&d, &cfg.stop)?;
    d.set_item("min_time", cfg.min_time)?;
    d.set_item("counters", cfg.observer.as_str())?;
    d.set_item("elapsed_s", p.elapsed_s)?;
    d.set_item("usecs_per_op", p.usecs_per_op)?;
    d.set_item("ops_per_sec", p.ops_per_sec)?;
    d.set_item("usecs_per_switch", p.usecs_per_switch)?;
    d.set_item("cycles_per_switch", p.cycles_per_switch)?;
    d.set_item("tsc", tsc_dict(py, &crate::clock::tsc())?)?;
    d.set_item("cpus", ints(py, &p.cpus))?;
    d.set_item("samples_us", p.samples_us.into_pyarray(py))?;
    d.set_item("stats", stats_dict(py, std::slice::from_ref(&p.stats))?)?;
    d.set_item("stopped", p.stopped.as_str())?;
    d.set_item("block", p.block)?;
    d.set_item("instance_blocks", ints(py, &p.instance_blocks))?;
    d.set_item(
        "phase_s",
        phases_dict(py, std::slice::from_ref(&p.phase_s))?,
    )?;
    Ok(d)
}

/// Earlier runs of one point on this machine in comparable conditions: each run's ln
/// figure, its relative standard error and its age in seconds (`stats::run_level`).
type RunHistory = (Vec<f64>, Vec<f64>, Vec<f64>);

/// The run level of each point from its history (`None`: nothing known).
fn run_levels(history: Option<Vec<Option<RunHistory>>>) -> PyResult<Vec<Option<stats::RunLevel>>> {
    history
        .unwrap_or_default()
        .into_iter()
        .map(|h| match h {
            None => Ok(None),
            Some(h) => earlier_runs(h).map(|runs| stats::run_level(&runs)),
        })
        .collect()
}

/// A point's history as runs; a ValueError where its three lists differ in length.
fn earlier_runs((figures, ses, ages): RunHistory) -> PyResult<Vec<stats::EarlierRun>> {
    if figures.len() != ses.len() || figures.len() != ages.len() {
        return Err(PyValueError::new_err(format!(
            "history: a point's ln figures, relative errors and ages must be as many, got \
             {}, {} and {}",
            figures.len(),
            ses.len(),
            ages.len()
        )));
    }
    Ok(figures
        .into_iter()
        .zip(ses)
        .zip(ages)
        .map(|((log_figure, rel_se), age_s)| stats::EarlierRun {
            log_figure,
            rel_se,
            age_s,
        })
        .collect())
}

/// The run level earlier runs of one point give (`stats::run_level`): their ln figures,
/// relative standard errors and ages in seconds. None below `MIN_RUNS` usable runs, else
/// {"sd", "runs_seen"} as a ring's stats name them.
#[pyfunction]
fn run_level(
    py: Python<'_>,
    log_figures: Vec<f64>,
    rel_se: Vec<f64>,
    ages_s: Vec<f64>,
) -> PyResult<Option<Bound<'_, PyDict>>> {
    let Some(level) = stats::run_level(&earlier_runs((log_figures, rel_se, ages_s))?) else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item("sd", level.sd)?;
    d.set_item("runs_seen", level.df + 1.0)?;
    Ok(Some(d))
}

/// `loops=`: None (measure until precise), or perf's fixed count.
fn optional_loops_arg(obj: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    if obj.is_none() {
        return Ok(None);
    }
    loops_arg(obj).map(Some)
}

/// {"ghz", "read_cost_cycles", "unavailable_reason"} of the TSC calibration.
fn tsc_dict<'py>(
    py: Python<'py>,
    tsc: &Result<crate::clock::Tsc, String>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ghz", tsc.as_ref().ok().map(|t| t.ghz))?;
    d.set_item("read_cost_cycles", tsc.as_ref().ok().map(|t| t.read_cost))?;
    d.set_item("unavailable_reason", tsc.as_ref().err())?;
    Ok(d)
}

/// `ring`, `ring_config` and `ring_check` take the same arguments, converted into one
/// `Config`: one signature with its defaults for all three. `$cfg` is that `Config` in `$body`.
macro_rules! ring_arguments {
    ($(#[$doc:meta])* fn $name:ident($py:ident, $cfg:ident) $body:block) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (procs, *, engine="process", transport=None, size_kb=0,
            repetitions=None, precision=stop::DEFAULT_PRECISION,
            max_time=stop::DEFAULT_MAX_TIME, max_repetitions=stop::DEFAULT_MAX_REPETITIONS,
            warmup=1, parallel=1, placement=None, cpu=None, min_time=None,
            timeout=config::DEFAULT_TIMEOUT, record_hops=false, history=None,
            stride_bytes=crate::workload::DEFAULT_STRIDE_BYTES, counters="evidence"))]
        #[allow(clippy::too_many_arguments)]
        fn $name<'py>(
            $py: Python<'py>,
            #[pyo3(from_py_with = procs_arg)] procs: Vec<usize>,
            engine: &str,
            transport: Option<&str>,
            #[pyo3(from_py_with = size_kb_arg)] size_kb: usize,
            #[pyo3(from_py_with = fixed_repetitions_arg)] repetitions: Option<usize>,
            #[pyo3(from_py_with = precision_arg)] precision: f64,
            #[pyo3(from_py_with = max_time_arg)] max_time: f64,
            #[pyo3(from_py_with = max_repetitions_arg)] max_repetitions: usize,
            #[pyo3(from_py_with = warmup_arg)] warmup: usize,
            #[pyo3(from_py_with = parallel_arg)] parallel: usize,
            placement: Option<&Bound<'py, PyAny>>,
            #[pyo3(from_py_with = cpu_arg)] cpu: Option<i64>,
            #[pyo3(from_py_with = min_time_arg)] min_time: Option<f64>,
            #[pyo3(from_py_with = timeout_arg)] timeout: f64,
            record_hops: bool,
            history: Option<Vec<Option<RunHistory>>>,
            #[pyo3(from_py_with = stride_arg)] stride_bytes: usize,
            counters: &str,
        ) -> PyResult<Bound<'py, PyDict>> {
            let (engine, transport) = engine_transport(engine, transport)?;
            let stop = stop_rule(repetitions, precision, max_repetitions, max_time);
            let $cfg = Config {
                engine,
                transport,
                procs,
                size_kb,
                stride_bytes,
                stop,
                warmup,
                parallel,
                placement: self::placement(placement, cpu)?,
                min_time: min_time.unwrap_or(stop.default_min_time()),
                timeout,
                plan: Plan::Calibrated { overhead: true },
                record_hops,
                run_levels: run_levels(history)?,
                observer: Observer::parse(counters).map_err(|e| to_py(e, None))?,
            };
            $body
        }
    };
}

ring_arguments! {
    /// Runs the token ring for each process count; see `ctxbench.ring` for the arguments.
    fn ring(py, cfg) {
        let points = measure(py, |interrupt| core::run(&cfg, interrupt))?;
        ring_dict(py, &cfg, summarize(&cfg, &points))
    }
}

ring_arguments! {
    /// What `ring` would record of what was asked (the defaults filled in), its arguments
    /// checked as on any machine; `ring_check` also checks them against this one.
    fn ring_config(py, cfg) {
        cfg.validate().map_err(|e| to_py(e, None))?;
        config_dict(py, &cfg)
    }
}

ring_arguments! {
    /// `ring_config`, checked as `ring` checks it here before it starts anything: the
    /// placement against this thread's CPUs, the transports that need one CPU, the memory.
    fn ring_check(py, cfg) {
        core::check(&cfg).map_err(|e| to_py(e, None))?;
        config_dict(py, &cfg)
    }
}

/// What a ring result records of its configuration: what the caller asked, with the
/// defaults filled in as the run used them.
fn config_dict<'py>(py: Python<'py>, cfg: &Config) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("engine", cfg.engine.name())?;
    d.set_item("transport", cfg.transport.name())?;
    d.set_item("placement", cfg.placement.name())?;
    d.set_item("cpu", cfg.placement.cpu())?;
    d.set_item("size_kb", cfg.size_kb)?;
    d.set_item("stride_bytes", cfg.stride_bytes)?;
    set_stop_items(&d, &cfg.stop)?;
    let max_repetitions = match cfg.stop {
        Stop::Fixed(_) => None,
        Stop::Precise(Precision {
            max_repetitions, ..
        }) => Some(max_repetitions),
    };
    d.set_item("max_repetitions", max_repetitions)?;
    d.set_item("warmup", cfg.warmup)?;
    d.set_item("parallel", cfg.parallel)?;
    d.set_item("min_time", cfg.min_time)?;
    d.set_item("timeout", cfg.timeout)?;
    d.set_item("record_hops", cfg.record_hops)?;
    d.set_item("counters", cfg.observer.as_str())?;
    Ok(d)
}

/// The stopping rule a caller asked for: a fixed count is lmbench's way; without one,
/// measure until precise.
fn stop_rule(
    repetitions: Option<usize>,
    precision: f64,
    max_repetitions: usize,
    max_time: f64,
) -> Stop {
    match repetitions {
        Some(n) => Stop::Fixed(n),
        None => Stop::Precise(Precision {
            target: precision,
            max_repetitions,
            max_time,
        }),
    }
}

/// A result's `repetitions`, `precision` and `max_time`: the stopping rule it ran under.
fn set_stop_items(d: &Bound<'_, PyDict>, stop: &Stop) -> PyResult<()> {
    let (repetitions, precision, max_time) = match *stop {
        Stop::Fixed(n) => (Some(n), None, None),
        Stop::Precise(Precision {
            target, max_time, ..
        }) => (None, Some(target), Some(max_time)),
    };
    d.set_item("repetitions", repetitions)?;
    d.set_item("precision", precision)?;
    d.set_item("max_time", max_time)
}

/// The ring at every size of `sizes_kb` (which must hold 0), `rounds` times round-robin, and
/// the split of each point's cost; see `ctxbench.cache_sweep`.
#[pyfunction]
#[pyo3(signature = (procs, sizes_kb, *, engine="process", transport=None,
    stride_bytes=crate::workload::DEFAULT_STRIDE_BYTES, rounds=crate::cache::DEFAULT_ROUNDS,
    placement=None, cpu=None, min_time=None, timeout=config::DEFAULT_TIMEOUT, line_bytes=64,
    stream_kb=0, progress=None))]
#[allow(clippy::too_many_arguments)]
fn cache_sweep<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = procs_arg)] procs: Vec<usize>,
    sizes_kb: Vec<Bound<'py, PyAny>>,
    engine: &str,
    transport: Option<&str>,
    #[pyo3(from_py_with = stride_arg)] stride_bytes: usize,
    #[pyo3(from_py_with = rounds_arg)] rounds: usize,
    placement: Option<&Bound<'py, PyAny>>,
    #[pyo3(from_py_with = cpu_arg)] cpu: Option<i64>,
    #[pyo3(from_py_with = min_time_arg)] min_time: Option<f64>,
    #[pyo3(from_py_with = timeout_arg)] timeout: f64,
    line_bytes: usize,
    #[pyo3(from_py_with = size_kb_arg)] stream_kb: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let sizes_kb = sizes_kb
        .iter()
        .map(size_kb_arg)
        .collect::<PyResult<Vec<usize>>>()?;
    let (engine, transport) = engine_transport(engine, transport)?;
    let block = Stop::Fixed(stop::BLOCK_REPETITIONS);
    let base = Config {
        engine,
        transport,
        stride_bytes,
        placement: self::placement(placement, cpu)?,
        min_time: min_time.unwrap_or(stop::PRECISION_MIN_TIME),
        timeout,
        stop: block,
        ..Config::lat_ctx(procs)
    };
    // As `measure`, and an exception raised by `progress(done, rounds)` stops the sweep and
    // is raised again.
    let pending: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
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
        crate::cache::sweep(
            &base,
            &sizes_kb,
            rounds,
            stream_kb,
            &mut interrupt,
            &mut heard,
        )
    });
    let pending = pending.into_inner().unwrap_or_else(|p| p.into_inner());
    let sweep = outcome.map_err(|e| to_py(e, pending))?;
    let zero = sweep.sizes_kb.iter().position(|&s| s == 0).unwrap_or(0);
    let results = PyList::empty(py);
    let streamed = crate::cache::refilled_kb(sweep.stream_kb, stride_bytes, line_bytes);
    let rates: Vec<f64> = sweep.stream_us.iter().map(|us| streamed / us).collect();
    let stream = stats::median(&rates);
    let split: Vec<Vec<crate::cache::Indirect>> = sweep
        .sizes_kb
        .iter()
        .zip(&sweep.points)
        .map(|(&size_kb, points)| {
            let refilled = crate::cache::refilled_kb(size_kb, stride_bytes, line_bytes);
            points
                .iter()
                .zip(&sweep.points[zero])
                .map(|(p, z)| crate::cache::indirect(p, z, refilled, stream))
                .collect()
        })
        .collect();
    for (&size_kb, points) in sweep.sizes_kb.iter().zip(&sweep.points) {
        // The record says what was made: `rounds` blocks of BLOCK_REPETITIONS.
        let cfg = Config {
            size_kb,
            stop: Stop::Fixed(rounds * stop::BLOCK_REPETITIONS),
            ..base.clone()
        };
        results.append(ring_dict(py, &cfg, summarize(&cfg, points))?)?;
    }
    let indirect = PyDict::new(py);
    let field = |f: fn(&crate::cache::Indirect) -> f64| -> Vec<Vec<f64>> {
        split
            .iter()
            .map(|row| row.iter().map(f).collect())
            .collect()
    };
    indirect.set_item("us", matrix(py, &field(|i| i.us))?)?;
    indirect.set_item("low_us", matrix(py, &field(|i| i.low_us))?)?;
    indirect.set_item("high_us", matrix(py, &field(|i| i.high_us))?)?;
    indirect.set_item(
        "refill_kib_per_us",
        matrix(py, &field(|i| i.refill_kib_per_us))?,
    )?;
    indirect.set_item("refill_low", matrix(py, &field(|i| i.refill_low))?)?;
    indirect.set_item("refill_high", matrix(py, &field(|i| i.refill_high))?)?;
    let notes = PyList::empty(py);
    for row in &split {
        notes.append(PyList::new(py, row.iter().map(|i| i.refill.as_str()))?)?;
    }
    indirect.set_item("refill_note", notes)?;
    let d = PyDict::new(py);
    d.set_item("results", results)?;
    d.set_item("indirect", indirect)?;
    d.set_item("stream_kb", sweep.stream_kb)?;
    d.set_item("stream_kib_per_us", rates.into_pyarray(py))?;
    d.set_item("rounds", rounds)?;
    d.set_item("line_bytes", line_bytes)?;
    Ok(d)
}

/// The `RingDict` of `_core.pyi`: the run's configuration and its summary, as numpy arrays.
fn ring_dict<'py>(py: Python<'py>, cfg: &Config, s: RingSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = config_dict(py, cfg)?;
    let stopped = s.stopped.iter().map(|x| x.as_str());
    d.set_item("stopped", PyList::new(py, stopped)?)?;
    let made: Vec<usize> = s.samples_us.iter().map(Vec::len).collect();
    d.set_item("repetitions_made", ints(py, &made))?;
    d.set_item("procs", ints(py, &s.procs))?;
    d.set_item("samples_us", by_repetition(py, &s.samples_us)?)?;
    d.set_item("raw_samples_us", by_repetition(py, &s.raw_samples_us)?)?;
    d.set_item(
        "overhead_samples_us",
        by_repetition(py, &s.overhead_samples_us)?,
    )?;
    d.set_item("latency_us", column(py, &s.stats, |x| x.description.median))?;
    d.set_item("min_us", column(py, &s.stats, |x| x.description.min))?;
    d.set_item("raw_us", s.raw_us.into_pyarray(py))?;
    d.set_item("overhead_point_us", s.overhead_point_us.into_pyarray(py))?;
    d.set_item("overhead_us", s.overhead_us)?;
    d.set_item("ring_us", matrix(py, &s.ring_us)?)?;
    d.set_item("below_resolution", s.below_resolution.into_pyarray(py))?;
    d.set_item("stats", stats_dict(py, &s.stats)?)?;
    d.set_item("switches_per_hop", s.switches_per_hop.into_pyarray(py))?;
    d.set_item("counted_us", s.counted_us.into_pyarray(py))?;
    d.set_item("switch_source", PyList::new(py, &s.switch_source)?)?;
    d.set_item("counters", s.observer)?;
    d.set_item(
        "involuntary_switches",
        s.involuntary_switches.into_pyarray(py),
    )?;
    d.set_item("migrations", s.migrations.into_pyarray(py))?;
    let hardware = PyDict::new(py);
    let per_switch = |v: Option<Vec<f64>>| v.map(|v| v.into_pyarray(py));
    hardware.set_item("cycles_per_switch", per_switch(s.cycles_per_switch))?;
    hardware.set_item(
        "instructions_per_switch",
        per_switch(s.instructions_per_switch),
    )?;
    hardware.set_item(
        "cache_misses_per_switch",
        per_switch(s.cache_misses_per_switch),
    )?;
    hardware.set_item(
        "dtlb_misses_per_switch",
        per_switch(s.dtlb_misses_per_switch),
    )?;
    hardware.set_item("unavailable_reason", s.hardware_unavailable)?;
    d.set_item("hardware", hardware)?;
    d.set_item("counters_unavailable_reason", s.software_unavailable)?;
    d.set_item("warnings", PyList::new(py, &s.warnings)?)?;
    d.set_item("tsc_cycles_per_switch", per_switch(s.tsc_cycles_per_switch))?;
    d.set_item("tsc", tsc_dict(py, &s.tsc)?)?;
    let (percentiles, histogram) = match &s.hops {
        Some(h) => {
            let (p, hist) = hops_dicts(py, h)?;
            (p.into_any(), hist.into_any())
        }
        None => (py.None().into_bound(py), py.None().into_bound(py)),
    };
    d.set_item("hop_percentiles_us", percentiles)?;
    d.set_item("hop_histogram", histogram)?;
    let cpus = PyList::empty(py);
    for point in &s.cpus {
        let widened: Vec<Vec<i64>> = point
            .iter()
            .map(|ring| ring.iter().map(|&c| i64::from(c)).collect())
            .collect();
        cpus.append(matrix(py, &widened)?)?;
    }
    d.set_item("cpus", cpus)?;
    d.set_item("trips", ints(py, &s.trips))?;
    d.set_item("overhead_rounds", ints(py, &s.overhead_rounds))?;
    d.set_item("work_verified", s.work_verified.into_pyarray(py))?;
    d.set_item("phase_s", phases_dict(py, &s.phase_s)?)?;
    d.set_item("block", ints(py, &s.block))?;
    let instance_blocks = PyList::empty(py);
    for blocks in &s.instance_blocks {
        instance_blocks.append(ints(py, blocks))?;
    }
    d.set_item("instance_blocks", instance_blocks)?;
    working_set_items(py, &d, &s.resident_kb)?;
    d.set_item("one_cpu", s.one_cpu.into_pyarray(py))?;
    Ok(d)
}

/// Seconds per phase, one array per phase (one value per point).
fn phases_dict<'py>(py: Python<'py>, phase_s: &[Phases]) -> PyResult<Bound<'py, PyDict>> {
    let phases = PyDict::new(py);
    let phase = |f: fn(&Phases) -> f64| phase_s.iter().map(f).collect::<Vec<_>>();
    phases.set_item("calibration", phase(|p| p.calibration).into_pyarray(py))?;
    phases.set_item("warmup", phase(|p| p.warmup).into_pyarray(py))?;
    phases.set_item("measure", phase(|p| p.measure).into_pyarray(py))?;
    phases.set_item("observer_wait", phase(|p| p.observer_wait).into_pyarray(py))?;
    phases.set_item(
        "setup_teardown",
        phase(|p| p.setup_teardown).into_pyarray(py),
    )?;
    Ok(phases)
}

/// The working set's field of a ring result beside the stride `config_dict`
/// records: per point the smallest resident private KiB of any participant's array (-1:
/// unknown).
fn working_set_items(
    py: Python<'_>,
    d: &Bound<'_, PyDict>,
    resident_kb: &[Option<u64>],
) -> PyResult<()> {
    let resident: Vec<i64> = resident_kb
        .iter()
        .map(|kb| kb.map_or(-1, |kb| kb as i64))
        .collect();
    d.set_item("resident_kb", resident.into_pyarray(py))?;
    Ok(())
}

/// Counts as an int64 array (numpy's default integer, whatever the Rust width).
fn ints<'py, T: Copy + TryInto<i64>>(py: Python<'py>, v: &[T]) -> Bound<'py, PyArray1<i64>> {
    v.iter()
        .map(|&x| x.try_into().unwrap_or(i64::MAX))
        .collect::<Vec<i64>>()
        .into_pyarray(py)
}

/// Per-point series `[point][repetition]` as a (repetition, point) array; a point that
/// stopped earlier than another has NaN where it made no repetition.
fn by_repetition<'py>(py: Python<'py>, series: &[Vec<f64>]) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let rows = series.iter().map(Vec::len).max().unwrap_or(0);
    let table: Vec<Vec<f64>> = (0..rows)
        .map(|k| {
            let at = |v: &Vec<f64>| v.get(k).copied().unwrap_or(f64::NAN);
            series.iter().map(at).collect()
        })
        .collect();
    matrix(py, &table)
}

/// A rectangular `[row][column]` table as a 2-D array.
fn matrix<'py, T: numpy::Element + Clone>(
    py: Python<'py>,
    rows: &[Vec<T>],
) -> PyResult<Bound<'py, PyArray2<T>>> {
    Ok(PyArray2::from_vec2(py, rows)?)
}

fn column<'py>(
    py: Python<'py>,
    stats: &[PointStats],
    field: fn(&PointStats) -> f64,
) -> Bound<'py, PyArray1<f64>> {
    stats.iter().map(field).collect::<Vec<_>>().into_pyarray(py)
}

/// Every point's `PointStats`, one array per field.
fn stats_dict<'py>(py: Python<'py>, stats: &[PointStats]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("min", column(py, stats, |x| x.description.min))?;
    d.set_item("median", column(py, stats, |x| x.description.median))?;
    d.set_item("mean", column(py, stats, |x| x.description.mean))?;
    d.set_item("max", column(py, stats, |x| x.description.max))?;
    d.set_item("stdev", column(py, stats, |x| x.description.stdev))?;
    d.set_item("cv", column(py, stats, |x| x.description.cv))?;
    d.set_item("ci_low", column(py, stats, |x| x.ci_low))?;
    d.set_item("ci_high", column(py, stats, |x| x.ci_high))?;
    // An unknown standard error (one unit to go on) is NaN, as the interval is.
    let se = |x: &PointStats| match x.estimate.uncertainty.se {
        s if s.is_finite() => s,
        _ => f64::NAN,
    };
    d.set_item("se", column(py, stats, se))?;
    let se_within = |x: &PointStats| match x.within.se {
        s if s.is_finite() => s,
        _ => f64::NAN,
    };
    d.set_item("se_within", column(py, stats, se_within))?;
    d.set_item("df", column(py, stats, |x| x.estimate.uncertainty.df))?;
    let levels = stats.iter().map(|x| x.estimate.uncertainty.level.as_str());
    d.set_item("level", PyList::new(py, levels)?)?;
    d.set_item("sd_repetition", column(py, stats, |x| x.spreads.repetition))?;
    d.set_item("sd_block", column(py, stats, |x| x.spreads.block))?;
    d.set_item("sd_instance", column(py, stats, |x| x.spreads.instance))?;
    let run = |x: &PointStats| x.run_level.map_or(f64::NAN, |r| r.sd);
    d.set_item("sd_run", column(py, stats, run))?;
    let runs = |x: &PointStats| x.run_level.map_or(0.0, |r| r.df + 1.0);
    d.set_item("runs_seen", column(py, stats, runs))?;
    let counts = |f: fn(&PointStats) -> usize| stats.iter().map(f).collect::<Vec<_>>();
    d.set_item("instances", ints(py, &counts(|x| x.instances)))?;
    d.set_item("outliers", ints(py, &counts(|x| x.description.outliers)))?;
    d.set_item("clusters", ints(py, &counts(|x| x.description.clusters)))?;
    let verdicts = stats.iter().map(|x| x.verdict.as_str());
    d.set_item("verdict", PyList::new(py, verdicts)?)?;
    Ok(d)
}

/// (`hop_percentiles_us`, `hop_histogram`) of the result.
fn hops_dicts<'py>(
    py: Python<'py>,
    h: &HopSummary,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let percentiles = PyDict::new(py);
    for (name, values) in &h.percentiles_us {
        percentiles.set_item(*name, values.clone().into_pyarray(py))?;
    }
    let histogram = PyDict::new(py);
    histogram.set_item("edges_us", h.edges_us.clone().into_pyarray(py))?;
    histogram.set_item("counts", matrix(py, &h.counts)?)?;
    Ok((percentiles, histogram))
}

/// The checksum one pass of the workload over `size_kb` KiB produces.
#[pyfunction]
#[pyo3(signature = (size_kb, stride_bytes=crate::workload::DEFAULT_STRIDE_BYTES))]
fn workload_checksum(
    #[pyo3(from_py_with = size_kb_arg)] size_kb: usize,
    #[pyo3(from_py_with = stride_arg)] stride_bytes: usize,
) -> PyResult<u64> {
    let shape = crate::workload::Shape::new(size_kb, stride_bytes).map_err(|e| to_py(e, None))?;
    Ok(shape.expected_sum())
}

/// The figure and uncertainty of one point under the variance model (`stop::estimate`):
/// its samples in measuring order, `block` repetitions per block, `instance_blocks` blocks
/// per ring instance, and the run level its run knew of (`run_sd`, relative, over
/// `runs_seen` earlier runs). A dict {"center", "se", "df", "level"}.
#[pyfunction]
#[pyo3(signature = (samples, block, instance_blocks, run_sd=None, runs_seen=None))]
fn estimate<'py>(
    py: Python<'py>,
    samples: Vec<f64>,
    block: usize,
    instance_blocks: Vec<usize>,
    run_sd: Option<f64>,
    runs_seen: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    finite_values("samples", &samples)?;
    if block == 0 {
        return Err(PyValueError::new_err("block: must be at least 1, got 0"));
    }
    let run = match (run_sd, runs_seen) {
        (Some(sd), Some(runs)) if sd.is_finite() && sd >= 0.0 && runs >= 2.0 => {
            Some(stats::RunLevel { sd, df: runs - 1.0 })
        }
        _ => None,
    };
    let layout = stats::Layout {
        samples: &samples,
        block,
        instance_blocks: &instance_blocks,
    };
    estimate_dict(py, &stop::estimate(&layout, run.as_ref()))
}

/// The estimate from whole runs' figures of one point: their mean, the spread between runs
/// its uncertainty (`stats::runs_estimate`).
#[pyfunction]
fn runs_estimate<'py>(py: Python<'py>, figures: Vec<f64>) -> PyResult<Bound<'py, PyDict>> {
    finite_values("figures", &figures)?;
    estimate_dict(py, &stats::runs_estimate(&figures))
}

/// `new` against `base`, each an `estimate` dict and whether it reaches the level that
/// differs between runs, at ± `threshold` (`verdict::compare`): the word, why, the ratio
/// with its interval and equivalence interval, and what would decide it.
#[pyfunction]
fn compare_estimates<'py>(
    py: Python<'py>,
    base: &Bound<'py, PyDict>,
    base_replicated: bool,
    new: &Bound<'py, PyDict>,
    new_replicated: bool,
    threshold: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let side = |d, replicated| -> PyResult<verdict::Side> {
        Ok(verdict::Side {
            estimate: estimate_of(d)?,
            replicated,
        })
    };
    let c = verdict::compare(
        &side(base, base_replicated)?,
        &side(new, new_replicated)?,
        threshold,
    );
    let out = PyDict::new(py);
    out.set_item("verdict", c.change.as_str())?;
    out.set_item("why", c.why.as_str())?;
    out.set_item("ratio", c.difference.ratio)?;
    out.set_item("low", c.difference.low)?;
    out.set_item("high", c.difference.high)?;
    out.set_item("equivalent_low", c.equivalent_low)?;
    out.set_item("equivalent_high", c.equivalent_high)?;
    out.set_item("p_value", c.difference.p_value)?;
    out.set_item("df", c.difference.df)?;
    out.set_item("half_width", c.half_width)?;
    out.set_item("needed_half_width", c.needed_half_width)?;
    out.set_item("data_factor", c.data_factor)?;
    Ok(out)
}

/// Runs per side a comparison needs to tell a change of `detect` with probability `power`
/// when one run's ln figure scatters by `spread` (`verdict::runs_to_detect`; None: more than
/// `MAX_PLANNED`).
#[pyfunction]
#[pyo3(signature = (spread, detect, power=0.8))]
fn runs_to_detect(spread: f64, detect: f64, power: f64) -> PyResult<Option<usize>> {
    plan_args(spread, detect, power)?;
    Ok(verdict::runs_to_detect(spread, detect, power))
}

/// Rounds `ab` needs for the same (`sequential::rounds_to_detect`), when one round's ln
/// ratio scatters by `spread`.
#[pyfunction]
#[pyo3(signature = (spread, detect, power=0.8))]
fn rounds_to_detect(spread: f64, detect: f64, power: f64) -> PyResult<Option<usize>> {
    plan_args(spread, detect, power)?;
    let alpha = 1.0 - stop::CONFIDENCE;
    Ok(crate::sequential::rounds_to_detect(
        spread,
        detect,
        alpha,
        power,
        verdict::MAX_PLANNED,
    ))
}

fn plan_args(spread: f64, detect: f64, power: f64) -> PyResult<()> {
    config::DETECT.check(detect).map_err(|e| to_py(e, None))?;
    config::POWER.check(power).map_err(|e| to_py(e, None))?;
    if !(spread.is_finite() && spread >= 0.0) {
        return Err(PyValueError::new_err(format!(
            "spread: must be a finite relative spread >= 0, got {spread}"
        )));
    }
    Ok(())
}

fn finite_values(param: &str, values: &[f64]) -> PyResult<()> {
    if values.is_empty() || values.iter().any(|x| !x.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{param}: must hold at least one value, all finite"
        )));
    }
    Ok(())
}

fn estimate_dict<'py>(py: Python<'py>, e: &Estimate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("center", e.center)?;
    d.set_item("se", e.uncertainty.se)?;
    d.set_item("df", e.uncertainty.df)?;
    d.set_item("level", e.uncertainty.level.as_str())?;
    Ok(d)
}

/// An `estimate` dict back: the level named by its word.
fn estimate_of(d: &Bound<'_, PyDict>) -> PyResult<Estimate> {
    let item = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(key)?
            .ok_or_else(|| PyValueError::new_err(format!("estimate: missing {key:?}")))
    };
    let word: String = item("level")?.extract()?;
    let level = [Level::Repetition, Level::Block, Level::Instance, Level::Run]
        .into_iter()
        .find(|l| l.as_str() == word)
        .ok_or_else(|| PyValueError::new_err(format!("estimate: unknown level {word:?}")))?;
    Ok(Estimate {
        center: item("center")?.extract()?,
        uncertainty: Uncertainty {
            se: item("se")?.extract()?,
            df: item("df")?.extract()?,
            level,
        },
    })
}

/// The name a result records for this placement (as `ring` would): "single", "[0, 1]", ...
#[pyfunction]
#[pyo3(signature = (placement=None, cpu=None))]
fn placement_name(
    placement: Option<&Bound<'_, PyAny>>,
    #[pyo3(from_py_with = cpu_arg)] cpu: Option<i64>,
) -> PyResult<String> {
    Ok(self::placement(placement, cpu)?.name())
}

/// The transport `ring` uses for `engine` when none is named.
#[pyfunction]
fn default_transport(engine: &str) -> PyResult<&'static str> {
    Ok(Engine::parse(engine)
        .map_err(|e| to_py(e, None))?
        .default_transport()
        .name())
}

/// ns per resume+suspend pair of a bare corosensei coroutine: the peer for fiber hops.
#[pyfunction]
fn fiber_baseline_ns(
    py: Python<'_>,
    #[pyo3(from_py_with = pairs_arg)] pairs: usize,
) -> PyResult<f64> {
    let pairs = pairs as u64;
    py.detach(|| crate::engine::fiber::baseline_switch_ns(pairs))
        .map_err(|e| to_py(e, None))
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
    m.add_function(wrap_pyfunction!(ring, m)?)?;
    m.add_function(wrap_pyfunction!(pingpong, m)?)?;
    m.add_function(wrap_pyfunction!(workload_checksum, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(runs_estimate, m)?)?;
    m.add_function(wrap_pyfunction!(compare_estimates, m)?)?;
    m.add_function(wrap_pyfunction!(run_level, m)?)?;
    m.add_function(wrap_pyfunction!(runs_to_detect, m)?)?;
    m.add_function(wrap_pyfunction!(rounds_to_detect, m)?)?;
    m.add("MIN_RUNS", stats::MIN_RUNS)?;
    m.add_function(wrap_pyfunction!(fiber_baseline_ns, m)?)?;
    m.add_function(wrap_pyfunction!(default_transport, m)?)?;
    m.add_function(wrap_pyfunction!(placement_name, m)?)?;
    m.add_function(wrap_pyfunction!(ring_config, m)?)?;
    m.add_function(wrap_pyfunction!(ring_check, m)?)?;
    topo::register(m)?;
    m.add("FIXED_MIN_TIME", stop::FIXED_MIN_TIME)?;
    m.add("PRECISION_MIN_TIME", stop::PRECISION_MIN_TIME)?;
    m.add_function(wrap_pyfunction!(cache_sweep, m)?)?;
    m.add("DEFAULT_ROUNDS", crate::cache::DEFAULT_ROUNDS)?;
    m.add("REFILL_ABOVE_STREAM", crate::cache::ABOVE_STREAM)?;
    m.add("DEFAULT_TIMEOUT", config::DEFAULT_TIMEOUT)?;
    m.add("DEFAULT_PRECISION", stop::DEFAULT_PRECISION)?;
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
    m.add("CHANGES", PyTuple::new(m.py(), verdict::Change::NAMES)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("COMPILER", env!("CTXBENCH_RUSTC"))?;
    Ok(())
}
