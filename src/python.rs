//! The pyo3 bindings: Python arguments in, numpy arrays out. Errors are mapped to Python
//! exceptions here and nowhere else.

use crate::config::{self, Config, Plan};
use crate::engine::{Engine, TransportKind};
use crate::error::Error;
use crate::hops;
use crate::placement::{Named, Placement, NAMES, POLICIES};
use crate::result::{summarize, Model};
use crate::ring as core;
use numpy::{IntoPyArray, PyArray2};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

fn to_py(e: Error, pending: Option<PyErr>) -> PyErr {
    match e {
        Error::Invalid { .. } => PyValueError::new_err(e.to_string()),
        Error::Os { errno, .. } => PyOSError::new_err((errno, e.to_string())),
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
            cpus = o.extract().map_err(|_| placement_type(o))?;
            Some(Named::Cpus(&cpus))
        }
    };
    Placement::from_request(named, cpu).map_err(|e| to_py(e, None))
}

fn placement_type(obj: &Bound<'_, PyAny>) -> PyErr {
    let type_name = obj.get_type().name().map(|n| n.to_string());
    PyTypeError::new_err(format!(
        "placement: expected {NAMES}, got {}",
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

/// A Python int as a count within `limit`, or the ValueError naming the parameter.
fn count(limit: config::Limit, value: i64) -> PyResult<usize> {
    limit.count(value).map_err(|e| to_py(e, None))
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
    loops: i64,
    threads: bool,
    transport: &str,
    placement: Option<&Bound<'py, PyAny>>,
    cpu: Option<i64>,
    timeout: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let engine = if threads { "thread" } else { "process" };
    let (engine, transport) = engine_transport(engine, Some(transport))?;
    let placement = self::placement(placement, cpu)?;
    let loops = count(config::LOOPS, loops)? as u64;
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

/// Runs the token ring for each process count; see `ctxbench.ring` for the arguments.
#[pyfunction]
#[pyo3(signature = (procs, *, engine="process", transport=None, size_kb=0, repetitions=11,
    warmup=1, parallel=1, placement=None, cpu=None, min_time=config::DEFAULT_MIN_TIME,
    timeout=config::DEFAULT_TIMEOUT,
    record_hops=false))]
#[allow(clippy::too_many_arguments)]
fn ring<'py>(
    py: Python<'py>,
    procs: Vec<i64>,
    engine: &str,
    transport: Option<&str>,
    size_kb: i64,
    repetitions: i64,
    warmup: i64,
    parallel: i64,
    placement: Option<&Bound<'py, PyAny>>,
    cpu: Option<i64>,
    min_time: f64,
    timeout: f64,
    record_hops: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (engine, transport) = engine_transport(engine, transport)?;
    let cfg = Config {
        engine,
        transport,
        procs: procs
            .iter()
            .map(|&p| count(config::PROCS, p))
            .collect::<PyResult<_>>()?,
        size_kb: count(config::SIZE_KB, size_kb)?,
        repetitions: count(config::REPETITIONS, repetitions)?,
        warmup: count(config::WARMUP, warmup)?,
        parallel: count(config::PARALLEL, parallel)?,
        placement: self::placement(placement, cpu)?,
        min_time,
        timeout,
        plan: Plan::Calibrated,
        record_hops,
    };
    let points = measure(py, |interrupt| core::run(&cfg, interrupt))?;
    let model = match (cfg.engine, cfg.transport) {
        (Engine::Fiber, _) => Model::Invisible,
        (_, TransportKind::Yield) => Model::Yielding,
        _ => Model::Blocking {
            single_cpu: matches!(cfg.placement, Placement::Single(_)),
        },
    };
    let s = summarize(&points, model);

    let d = PyDict::new(py);
    let v1 = |v: Vec<f64>| v.into_pyarray(py);
    let m2 = |m: &[Vec<f64>]| PyArray2::from_vec2(py, m).expect("rectangular");
    d.set_item("engine", cfg.engine.name())?;
    d.set_item("transport", cfg.transport.name())?;
    d.set_item("placement", cfg.placement.name())?;
    d.set_item("size_kb", cfg.size_kb)?;
    d.set_item("repetitions", cfg.repetitions)?;
    d.set_item("warmup", cfg.warmup)?;
    d.set_item("parallel", cfg.parallel)?;
    d.set_item("min_time", cfg.min_time)?;
    d.set_item(
        "procs",
        s.procs
            .iter()
            .map(|&p| p as i64)
            .collect::<Vec<_>>()
            .into_pyarray(py),
    )?;
    d.set_item("samples_us", m2(&s.samples_us))?;
    d.set_item("raw_samples_us", m2(&s.raw_samples_us))?;
    d.set_item("overhead_samples_us", m2(&s.overhead_samples_us))?;
    d.set_item("latency_us", v1(s.stats.iter().map(|x| x.median).collect()))?;
    d.set_item("min_us", v1(s.stats.iter().map(|x| x.min).collect()))?;
    d.set_item("raw_us", v1(s.raw_us.clone()))?;
    d.set_item("overhead_point_us", v1(s.overhead_point_us.clone()))?;
    d.set_item("overhead_us", s.overhead_us)?;
    d.set_item("ring_us", m2(&s.ring_us))?;
    d.set_item(
        "below_resolution",
        s.below_resolution.clone().into_pyarray(py),
    )?;
    let stats = PyDict::new(py);
    let col = |f: &dyn Fn(&crate::stats::Summary) -> f64| v1(s.stats.iter().map(f).collect());
    stats.set_item("min", col(&|x| x.min))?;
    stats.set_item("median", col(&|x| x.median))?;
    stats.set_item("mean", col(&|x| x.mean))?;
    stats.set_item("max", col(&|x| x.max))?;
    stats.set_item("stdev", col(&|x| x.stdev))?;
    stats.set_item("cv", col(&|x| x.cv))?;
    stats.set_item("ci_low", col(&|x| x.ci_low))?;
    stats.set_item("ci_high", col(&|x| x.ci_high))?;
    let ints = |f: &dyn Fn(&crate::stats::Summary) -> usize| {
        s.stats
            .iter()
            .map(|x| f(x) as i64)
            .collect::<Vec<_>>()
            .into_pyarray(py)
    };
    stats.set_item("outliers", ints(&|x| x.outliers))?;
    stats.set_item("clusters", ints(&|x| x.clusters))?;
    stats.set_item(
        "verdict",
        PyList::new(py, s.stats.iter().map(|x| x.verdict.as_str()))?,
    )?;
    d.set_item("stats", stats)?;
    d.set_item("switches_per_hop", v1(s.switches_per_hop.clone()))?;
    d.set_item(
        "counted_us",
        v1(points.iter().map(|p| p.counted_ns / 1e3).collect()),
    )?;
    d.set_item("switch_source", PyList::new(py, &s.switch_source)?)?;
    d.set_item(
        "involuntary_switches",
        s.involuntary_switches.clone().into_pyarray(py),
    )?;
    d.set_item("migrations", s.migrations.clone().into_pyarray(py))?;
    let hardware = PyDict::new(py);
    hardware.set_item("cycles_per_switch", s.cycles_per_switch.clone().map(&v1))?;
    hardware.set_item(
        "instructions_per_switch",
        s.instructions_per_switch.clone().map(&v1),
    )?;
    hardware.set_item("unavailable_reason", s.hardware_unavailable.clone())?;
    d.set_item("hardware", hardware)?;
    d.set_item(
        "counters_unavailable_reason",
        s.software_unavailable.clone(),
    )?;
    d.set_item("warnings", PyList::new(py, &s.warnings)?)?;
    d.set_item(
        "tsc_cycles_per_switch",
        s.tsc_cycles_per_switch.clone().map(&v1),
    )?;
    d.set_item("tsc", tsc_dict(py, &s.tsc)?)?;
    if record_hops {
        let hists: Vec<&(Vec<u64>, u64)> = points.iter().filter_map(|p| p.hops.as_ref()).collect();
        // Trim the histogram after the last bucket any point used.
        let used = hists
            .iter()
            .filter_map(|(c, _)| c.iter().rposition(|&x| x > 0))
            .max()
            .map_or(1, |j| j + 1);
        let pct = PyDict::new(py);
        for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)] {
            let v = hists
                .iter()
                .map(|(c, _)| hops::percentile(c, q) / 1e3)
                .collect();
            pct.set_item(name, v1(v))?;
        }
        pct.set_item(
            "max",
            v1(hists.iter().map(|(_, m)| *m as f64 / 1e3).collect()),
        )?;
        d.set_item("hop_percentiles_us", pct)?;
        let hist = PyDict::new(py);
        let edges: Vec<f64> = (0..=used).map(|j| hops::lower(j) as f64 / 1e3).collect();
        hist.set_item("edges_us", v1(edges))?;
        let counts: Vec<Vec<u64>> = hists.iter().map(|(c, _)| c[..used].to_vec()).collect();
        hist.set_item(
            "counts",
            PyArray2::from_vec2(py, &counts).expect("rectangular"),
        )?;
        d.set_item("hop_histogram", hist)?;
    } else {
        d.set_item("hop_percentiles_us", py.None())?;
        d.set_item("hop_histogram", py.None())?;
    }
    let cpus = PyList::empty(py);
    for p in &points {
        let m: Vec<Vec<i64>> = p
            .cpus
            .iter()
            .map(|r| r.iter().map(|&c| i64::from(c)).collect())
            .collect();
        cpus.append(PyArray2::from_vec2(py, &m).expect("rectangular"))?;
    }
    d.set_item("cpus", cpus)?;
    let trips: Vec<i64> = points.iter().map(|p| p.trips[0] as i64).collect();
    d.set_item("trips", trips.into_pyarray(py))?;
    let rounds: Vec<i64> = points.iter().map(|p| p.overhead_rounds[0] as i64).collect();
    d.set_item("overhead_rounds", rounds.into_pyarray(py))?;
    let verified: Vec<bool> = points.iter().map(|p| p.work_verified).collect();
    d.set_item("work_verified", verified.into_pyarray(py))?;
    let phases = PyDict::new(py);
    let ph = |f: &dyn Fn(&core::Phases) -> f64| v1(points.iter().map(|p| f(&p.phase_s)).collect());
    phases.set_item("calibration", ph(&|p| p.calibration))?;
    phases.set_item("warmup", ph(&|p| p.warmup))?;
    phases.set_item("measure", ph(&|p| p.measure))?;
    phases.set_item("setup_teardown", ph(&|p| p.setup_teardown))?;
    d.set_item("phase_s", phases)?;
    Ok(d)
}

/// The checksum one pass of the workload over `size_kb` KiB produces.
#[pyfunction]
fn workload_checksum(size_kb: i64) -> PyResult<u64> {
    let kb = count(config::SIZE_KB, size_kb)?;
    Ok(crate::workload::Workload::expected_sum(kb))
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

/// The name a result records for this placement (as `ring` would): "single", "[0, 1]", ...
#[pyfunction]
#[pyo3(signature = (placement=None, cpu=None))]
fn placement_name(placement: Option<&Bound<'_, PyAny>>, cpu: Option<i64>) -> PyResult<String> {
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
fn fiber_baseline_ns(py: Python<'_>, pairs: i64) -> PyResult<f64> {
    let limit = config::Limit {
        param: "pairs",
        lo: 1,
        hi: 1 << 40,
    };
    let pairs = count(limit, pairs)? as u64;
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
    m.add_function(wrap_pyfunction!(placement_name, m)?)?;
    m.add("DEFAULT_MIN_TIME", config::DEFAULT_MIN_TIME)?;
    m.add("DEFAULT_TIMEOUT", config::DEFAULT_TIMEOUT)?;
    m.add("MAX_PROCS", config::MAX_PROCS)?;
    m.add(
        "ENGINES",
        PyTuple::new(m.py(), Engine::ALL.map(Engine::name))?,
    )?;
    let transports = PyDict::new(m.py());
    for engine in Engine::ALL {
        let names: Vec<&str> = engine.transports().iter().map(|t| t.name()).collect();
        transports.set_item(engine.name(), PyTuple::new(m.py(), names)?)?;
    }
    m.add("TRANSPORTS", transports)?;
    m.add("PLACEMENTS", PyTuple::new(m.py(), POLICIES)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("COMPILER", env!("CTXBENCH_RUSTC"))?;
    Ok(())
}
