//! The pyo3 bindings: Python arguments in, numpy arrays out. Errors are mapped to Python
//! exceptions here and nowhere else.

use crate::config::{self, Config, Plan, Stop};
use crate::engine::{Engine, TransportKind};
use crate::error::Error;
use crate::placement::{self as placements, Named, Placement};
use crate::result::{summarize, HopSummary, RingSummary};
use crate::ring as core;
use crate::ring::Phases;
use crate::stats::Summary;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString, PyTuple};

fn to_py(e: Error, pending: Option<PyErr>) -> PyErr {
    match e {
        Error::Invalid { .. } => PyValueError::new_err(e.to_string()),
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
        Some(o) if o.is_instance_of::<PyBytes>() => return Err(placement_type(o)),
        Some(o) => {
            let ids = o.try_iter().map_err(|_| placement_type(o))?;
            cpus = ids
                .map(|id| int_arg(&id?, "placement"))
                .collect::<PyResult<_>>()?;
            Some(Named::Cpus(&cpus))
        }
    };
    Placement::from_request(named, cpu).map_err(|e| to_py(e, None))
}

fn placement_type(obj: &Bound<'_, PyAny>) -> PyErr {
    let type_name = obj.get_type().name().map(|n| n.to_string());
    PyTypeError::new_err(format!(
        "placement: expected {}, got {}",
        placements::expected(),
        type_name.unwrap_or_default()
    ))
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
    limit
        .count(int_arg(obj, limit.param)?)
        .map_err(|e| to_py(e, None))
}

fn int_arg(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<i64> {
    let wrong = || {
        let type_name = obj.get_type().name().map(|n| n.to_string());
        PyTypeError::new_err(format!(
            "{param}: expected an int, got {}",
            type_name.unwrap_or_default()
        ))
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(wrong());
    }
    obj.extract::<i64>().map_err(|_| wrong())
}

// pyo3's `from_py_with` takes a function's path, so each integer parameter gets one.
macro_rules! count_args {
    ($($name:ident => $limit:expr),* $(,)?) => {$(
        fn $name(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
            count_arg(obj, $limit)
        }
    )*};
}

count_args! {
    size_kb_arg => config::SIZE_KB,
    repetitions_arg => config::REPETITIONS,
    max_repetitions_arg => config::MAX_REPETITIONS,
    warmup_arg => config::WARMUP,
    parallel_arg => config::PARALLEL,
    loops_arg => config::LOOPS,
    pairs_arg => config::BASELINE_PAIRS,
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
    let one = !obj.is_instance_of::<PyBool>() && obj.extract::<i64>().is_ok();
    if one {
        return Ok(vec![count_arg(obj, config::PROCS)?]);
    }
    let text = obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>();
    let Some(items) = (!text).then(|| obj.try_iter()).and_then(Result::ok) else {
        let type_name = obj.get_type().name().map(|n| n.to_string());
        return Err(PyTypeError::new_err(format!(
            "procs: expected an int or a sequence of ints, got {}",
            type_name.unwrap_or_default()
        )));
    };
    items.map(|item| count_arg(&item?, config::PROCS)).collect()
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

/// Two participants bounce the token `loops` times, as `perf bench sched pipe` does.
#[pyfunction]
#[pyo3(signature = (loops=1_000_000, *, threads=false, transport="pipe", placement=None,
    cpu=None, timeout=10.0))]
fn pingpong<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = loops_arg)] loops: usize,
    threads: bool,
    transport: &str,
    placement: Option<&Bound<'py, PyAny>>,
    #[pyo3(from_py_with = cpu_arg)] cpu: Option<i64>,
    timeout: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let engine = if threads { "thread" } else { "process" };
    let (engine, transport) = engine_transport(engine, Some(transport))?;
    let placement = self::placement(placement, cpu)?;
    let loops = loops as u64;
    let name = placement.name();
    let p = measure(py, |interrupt| {
        core::pingpong(engine, transport, placement, loops, timeout, interrupt)
    })?;
    let d = PyDict::new(py);
    d.set_item("loops", p.loops)?;
    d.set_item("threads", threads)?;
    d.set_item("engine", engine.name())?;
    d.set_item("transport", transport.name())?;
    d.set_item("placement", name)?;
    d.set_item("elapsed_s", p.elapsed_s)?;
    d.set_item("usecs_per_op", p.usecs_per_op)?;
    d.set_item("ops_per_sec", p.ops_per_sec)?;
    d.set_item("usecs_per_switch", p.usecs_per_switch)?;
    d.set_item("cycles_per_switch", p.cycles_per_switch)?;
    d.set_item("tsc", tsc_dict(py, &crate::clock::tsc())?)?;
    d.set_item(
        "cpus",
        p.cpus
            .iter()
            .map(|&c| i64::from(c))
            .collect::<Vec<_>>()
            .into_pyarray(py),
    )?;
    Ok(d)
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
            repetitions=None, precision=config::DEFAULT_PRECISION,
            max_time=config::DEFAULT_MAX_TIME, max_repetitions=config::DEFAULT_MAX_REPETITIONS,
            warmup=1, parallel=1, placement=None, cpu=None, min_time=None,
            timeout=config::DEFAULT_TIMEOUT, record_hops=false))]
        #[allow(clippy::too_many_arguments)]
        fn $name<'py>(
            $py: Python<'py>,
            #[pyo3(from_py_with = procs_arg)] procs: Vec<usize>,
            engine: &str,
            transport: Option<&str>,
            #[pyo3(from_py_with = size_kb_arg)] size_kb: usize,
            #[pyo3(from_py_with = fixed_repetitions_arg)] repetitions: Option<usize>,
            precision: f64,
            max_time: f64,
            #[pyo3(from_py_with = max_repetitions_arg)] max_repetitions: usize,
            #[pyo3(from_py_with = warmup_arg)] warmup: usize,
            #[pyo3(from_py_with = parallel_arg)] parallel: usize,
            placement: Option<&Bound<'py, PyAny>>,
            #[pyo3(from_py_with = cpu_arg)] cpu: Option<i64>,
            min_time: Option<f64>,
            timeout: f64,
            record_hops: bool,
        ) -> PyResult<Bound<'py, PyDict>> {
            let (engine, transport) = engine_transport(engine, transport)?;
            // A fixed count is lmbench's way; without one, measure until precise.
            let stop = match repetitions {
                Some(n) => Stop::Repetitions(n),
                None => Stop::Precision {
                    target: precision,
                    max_repetitions,
                    max_time,
                },
            };
            let $cfg = Config {
                engine,
                transport,
                procs,
                size_kb,
                stop,
                warmup,
                parallel,
                placement: self::placement(placement, cpu)?,
                min_time: min_time.unwrap_or(stop.default_min_time()),
                timeout,
                plan: Plan::Calibrated,
                record_hops,
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
    let (repetitions, precision, max_time, max_repetitions) = match cfg.stop {
        Stop::Repetitions(n) => (Some(n), None, None, None),
        Stop::Precision {
            target,
            max_time,
            max_repetitions,
        } => (None, Some(target), Some(max_time), Some(max_repetitions)),
    };
    d.set_item("repetitions", repetitions)?;
    d.set_item("precision", precision)?;
    d.set_item("max_time", max_time)?;
    d.set_item("max_repetitions", max_repetitions)?;
    d.set_item("warmup", cfg.warmup)?;
    d.set_item("parallel", cfg.parallel)?;
    d.set_item("min_time", cfg.min_time)?;
    d.set_item("timeout", cfg.timeout)?;
    d.set_item("record_hops", cfg.record_hops)?;
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
    d.set_item("latency_us", column(py, &s.stats, |x| x.median))?;
    d.set_item("min_us", column(py, &s.stats, |x| x.min))?;
    d.set_item("raw_us", s.raw_us.into_pyarray(py))?;
    d.set_item("overhead_point_us", s.overhead_point_us.into_pyarray(py))?;
    d.set_item("overhead_us", s.overhead_us)?;
    d.set_item("ring_us", matrix(py, &s.ring_us)?)?;
    d.set_item("below_resolution", s.below_resolution.into_pyarray(py))?;
    d.set_item("stats", stats_dict(py, &s.stats)?)?;
    d.set_item("switches_per_hop", s.switches_per_hop.into_pyarray(py))?;
    d.set_item("counted_us", s.counted_us.into_pyarray(py))?;
    d.set_item("switch_source", PyList::new(py, &s.switch_source)?)?;
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
    let phases = PyDict::new(py);
    let phase = |f: fn(&Phases) -> f64| s.phase_s.iter().map(f).collect::<Vec<_>>();
    phases.set_item("calibration", phase(|p| p.calibration).into_pyarray(py))?;
    phases.set_item("warmup", phase(|p| p.warmup).into_pyarray(py))?;
    phases.set_item("measure", phase(|p| p.measure).into_pyarray(py))?;
    phases.set_item(
        "setup_teardown",
        phase(|p| p.setup_teardown).into_pyarray(py),
    )?;
    d.set_item("phase_s", phases)?;
    d.set_item("one_cpu", s.one_cpu.into_pyarray(py))?;
    Ok(d)
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
    stats: &[Summary],
    field: fn(&Summary) -> f64,
) -> Bound<'py, PyArray1<f64>> {
    stats.iter().map(field).collect::<Vec<_>>().into_pyarray(py)
}

/// `stats.summarize` of every point, one array per field.
fn stats_dict<'py>(py: Python<'py>, stats: &[Summary]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("min", column(py, stats, |x| x.min))?;
    d.set_item("median", column(py, stats, |x| x.median))?;
    d.set_item("mean", column(py, stats, |x| x.mean))?;
    d.set_item("max", column(py, stats, |x| x.max))?;
    d.set_item("stdev", column(py, stats, |x| x.stdev))?;
    d.set_item("cv", column(py, stats, |x| x.cv))?;
    d.set_item("ci_low", column(py, stats, |x| x.ci_low))?;
    d.set_item("ci_high", column(py, stats, |x| x.ci_high))?;
    let counts = |f: fn(&Summary) -> usize| stats.iter().map(f).collect::<Vec<_>>();
    d.set_item("outliers", ints(py, &counts(|x| x.outliers)))?;
    d.set_item("clusters", ints(py, &counts(|x| x.clusters)))?;
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
fn workload_checksum(#[pyo3(from_py_with = size_kb_arg)] size_kb: usize) -> PyResult<u64> {
    Ok(crate::workload::Workload::expected_sum(size_kb))
}

/// Mann-Whitney U test: (U of `a`, two-sided p-value); see `stats::mann_whitney`.
#[pyfunction]
fn mann_whitney(a: Vec<f64>, b: Vec<f64>) -> PyResult<(f64, f64)> {
    for (param, v) in [("a", &a), ("b", &b)] {
        if v.is_empty() || v.iter().any(|x| !x.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "{param}: must hold at least one value, all finite"
            )));
        }
    }
    Ok(crate::stats::mann_whitney(&a, &b))
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ring, m)?)?;
    m.add_function(wrap_pyfunction!(pingpong, m)?)?;
    m.add_function(wrap_pyfunction!(workload_checksum, m)?)?;
    m.add_function(wrap_pyfunction!(mann_whitney, m)?)?;
    m.add_function(wrap_pyfunction!(fiber_baseline_ns, m)?)?;
    m.add_function(wrap_pyfunction!(default_transport, m)?)?;
    m.add_function(wrap_pyfunction!(ring_config, m)?)?;
    m.add_function(wrap_pyfunction!(ring_check, m)?)?;
    m.add(
        "DEFAULT_MIN_TIME_REPETITIONS",
        config::DEFAULT_MIN_TIME_REPETITIONS,
    )?;
    m.add(
        "DEFAULT_MIN_TIME_PRECISION",
        config::DEFAULT_MIN_TIME_PRECISION,
    )?;
    m.add("DEFAULT_TIMEOUT", config::DEFAULT_TIMEOUT)?;
    m.add("DEFAULT_PRECISION", config::DEFAULT_PRECISION)?;
    m.add("DEFAULT_MAX_TIME", config::DEFAULT_MAX_TIME)?;
    m.add("DEFAULT_MAX_REPETITIONS", config::DEFAULT_MAX_REPETITIONS)?;
    m.add("MAX_PROCS", config::MAX_PROCS)?;
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
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("COMPILER", env!("CTXBENCH_RUSTC"))?;
    Ok(())
}
