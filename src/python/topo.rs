//! The bindings of `topology` and `matrix`: Python arguments in, the `TopologyDict` and
//! `MatrixDict` of `_core.pyi` out. Private helpers of the parent module (argument
//! conversion, error mapping, arrays) are shared.

use super::{
    by_repetition, count_arg, engine_transport, fixed_repetitions_arg, int_arg, ints, items,
    max_repetitions_arg, max_time_arg, min_time_arg, precision_arg, set_stop_items, size_kb_arg,
    stop_rule, timeout_arg, to_py, warmup_arg,
};
use crate::config::{self, Config, Plan, PASSES, PER_CLASS};
use crate::error::Error;
use crate::matrix::{Cell, Matrix, MatrixConfig, Memory, CELL_MAX_TIME, CELL_MIN_TIME};
use crate::stop::{self, Stop};
use crate::topology::{CacheShare, Cpu, Relation, Topology};
use numpy::{IntoPyArray, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};
use std::path::Path;
use std::sync::Mutex;

/// The machine's topology as sysfs under `sysfs` describes it.
#[pyfunction]
#[pyo3(signature = (sysfs="/sys"))]
fn topology(py: Python<'_>, sysfs: &str) -> PyResult<Py<PyDict>> {
    let t = crate::topology::read(Path::new(sysfs)).map_err(|e| to_py(e, None))?;
    Ok(topology_dict(py, &t, true)?.unbind())
}

/// `-1` for what sysfs does not say.
fn known<T: TryInto<i64>>(v: Option<T>) -> i64 {
    v.and_then(|x| x.try_into().ok()).unwrap_or(-1)
}

fn topology_dict<'py>(
    py: Python<'py>,
    t: &Topology,
    relations: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let cpus = &t.cpus;
    let per_cpu = |f: &dyn Fn(&Cpu) -> i64| cpus.iter().map(f).collect::<Vec<i64>>();
    let flags = |f: &dyn Fn(&Cpu) -> bool| cpus.iter().map(f).collect::<Vec<bool>>();
    d.set_item("sysfs", t.root.to_string_lossy())?;
    d.set_item("cpus", ints(py, &per_cpu(&|c| c.id as i64)))?;
    d.set_item("online", flags(&|c| c.online).into_pyarray(py))?;
    d.set_item("allowed", flags(&|c| c.allowed).into_pyarray(py))?;
    d.set_item("package", ints(py, &per_cpu(&|c| c.package)))?;
    d.set_item("die", ints(py, &per_cpu(&|c| known(c.die))))?;
    d.set_item("cluster", ints(py, &per_cpu(&|c| known(c.cluster))))?;
    d.set_item("core", ints(py, &per_cpu(&|c| c.core)))?;
    d.set_item("node", ints(py, &per_cpu(&|c| known(c.node))))?;
    d.set_item("llc", ints(py, &per_cpu(&|c| known(t.llc(c.id)))))?;
    let lists = |f: &dyn Fn(&Cpu) -> Vec<usize>| -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, cpus.iter().map(|c| ints(py, &f(c))))
    };
    d.set_item("smt_siblings", lists(&|c| c.smt_siblings.clone())?)?;
    d.set_item("cpu_caches", lists(&|c| c.caches.clone())?)?;
    let caches = PyList::empty(py);
    for c in &t.caches {
        let e = PyDict::new(py);
        e.set_item("name", c.name())?;
        e.set_item("level", c.level)?;
        e.set_item("type", c.kind.name())?;
        e.set_item("size_kb", c.size_kb)?;
        e.set_item("cpus", ints(py, &c.cpus))?;
        caches.append(e)?;
    }
    d.set_item("caches", caches)?;
    d.set_item("cache_share_kb", cache_shares(py, t)?)?;
    d.set_item(
        "nodes",
        ints(py, &t.nodes.iter().map(|n| n.id).collect::<Vec<_>>()),
    )?;
    let distances: Vec<Vec<i64>> = t
        .nodes
        .iter()
        .map(|n| n.distances.iter().map(|&x| i64::from(x)).collect())
        .collect();
    let square = distances.iter().all(|r| r.len() == distances.len());
    let distances = if square { distances } else { Vec::new() };
    d.set_item("distances", table(py, &distances, t.nodes.len())?)?;
    d.set_item("order", ints(py, &t.order()))?;
    d.set_item("cpuset", t.cpuset.as_ref().map(|c| ints(py, c)))?;
    d.set_item("affinity", t.affinity.as_ref().map(|c| ints(py, c)))?;
    d.set_item("notes", PyList::new(py, &t.notes)?)?;
    if relations {
        let codes: Vec<Vec<u8>> = cpus
            .iter()
            .map(|a| cpus.iter().map(|b| code(t.relation(a.id, b.id))).collect())
            .collect();
        d.set_item("relations", table(py, &codes, cpus.len())?)?;
    }
    Ok(d)
}

/// A square table as a 2-D array, (0, 0) when there is none.
fn table<'py, T: numpy::Element + Clone>(
    py: Python<'py>,
    rows: &[Vec<T>],
    n: usize,
) -> PyResult<Bound<'py, PyArray2<T>>> {
    if rows.is_empty() || n == 0 {
        return Ok(PyArray2::zeros(py, [0, 0], false));
    }
    Ok(PyArray2::from_vec2(py, rows)?)
}

fn code(r: Relation) -> u8 {
    Relation::ALL.iter().position(|&x| x == r).unwrap_or(0) as u8
}

/// {cache name: KiB per CPU for each CPU of `cpus`, NaN where it has none of that name}.
fn cache_shares<'py>(py: Python<'py>, t: &Topology) -> PyResult<Bound<'py, PyDict>> {
    let shares: Vec<Vec<CacheShare>> = t.cpus.iter().map(|c| t.cache_share_kb(c.id)).collect();
    let mut names: Vec<String> = shares.iter().flatten().map(|s| s.name.clone()).collect();
    names.sort_by_key(|n| (n.get(1..2).map(str::to_string), n.clone()));
    names.dedup();
    let d = PyDict::new(py);
    for name in names {
        let kb: Vec<f64> = shares
            .iter()
            .map(|s| {
                s.iter()
                    .find(|x| x.name == name)
                    .map_or(f64::NAN, |x| x.per_cpu_kb)
            })
            .collect();
        d.set_item(name, kb.into_pyarray(py))?;
    }
    Ok(d)
}

/// `cpus=`: None, or a sequence of CPU ids.
fn cpus_arg(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<usize>>> {
    if obj.is_none() {
        return Ok(None);
    }
    let expected = "a sequence of CPU ids or None";
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "cpus: expected {expected}, got bool"
        )));
    }
    // Each CPU once, so no more than an affinity mask holds.
    let most = crate::sys::MAX_CPUS;
    let ids = items(obj, "cpus", expected, most)?;
    if ids.len() > most {
        return Err(PyValueError::new_err(format!(
            "cpus: lists more than {most} CPU ids, each CPU once at most"
        )));
    }
    ids.iter()
        .map(|item| {
            let id = int_arg(item, "cpus")?;
            usize::try_from(id).map_err(|_| {
                to_py(
                    Error::invalid("cpus", format!("CPU ids are >= 0, got {id}")),
                    None,
                )
            })
        })
        .collect::<PyResult<Vec<usize>>>()
        .map(Some)
}

/// `memory_node=`: None, "waker", "wakee" or a node id.
fn memory_arg(obj: &Bound<'_, PyAny>) -> PyResult<Memory> {
    if obj.is_none() {
        return Ok(Memory::Auto);
    }
    if obj.is_instance_of::<PyString>() {
        return Memory::parse(&obj.extract::<String>()?).map_err(|e| to_py(e, None));
    }
    let node = int_arg(obj, "memory_node")
        .map_err(|_| PyTypeError::new_err(format!("memory_node: expected {}", Memory::NAMES)))?;
    usize::try_from(node).map(Memory::Node).map_err(|_| {
        to_py(
            Error::invalid("memory_node", format!("node ids are >= 0, got {node}")),
            None,
        )
    })
}

/// `per_class=`: None (every pair) or a count.
fn per_class_arg(obj: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    if obj.is_none() {
        return Ok(None);
    }
    count_arg(obj, PER_CLASS).map(Some)
}

fn passes_arg(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    count_arg(obj, PASSES)
}

/// Measures the CPU×CPU matrix; see `ctxbench.matrix` for the arguments.
#[pyfunction]
#[pyo3(signature = (cpus=None, *, engine="thread", transport="futex", size_kb=0, repetitions=None,
    precision=stop::DEFAULT_PRECISION, max_time=CELL_MAX_TIME,
    max_repetitions=stop::DEFAULT_MAX_REPETITIONS, warmup=1, min_time=None,
    timeout=config::DEFAULT_TIMEOUT, record_hops=false, per_class=None, passes=1,
    memory_node=Memory::Auto, progress=None))]
#[allow(clippy::too_many_arguments)]
fn matrix<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = cpus_arg)] cpus: Option<Vec<usize>>,
    engine: &str,
    transport: &str,
    #[pyo3(from_py_with = size_kb_arg)] size_kb: usize,
    #[pyo3(from_py_with = fixed_repetitions_arg)] repetitions: Option<usize>,
    #[pyo3(from_py_with = precision_arg)] precision: f64,
    #[pyo3(from_py_with = max_time_arg)] max_time: f64,
    #[pyo3(from_py_with = max_repetitions_arg)] max_repetitions: usize,
    #[pyo3(from_py_with = warmup_arg)] warmup: usize,
    #[pyo3(from_py_with = min_time_arg)] min_time: Option<f64>,
    #[pyo3(from_py_with = timeout_arg)] timeout: f64,
    record_hops: bool,
    #[pyo3(from_py_with = per_class_arg)] per_class: Option<usize>,
    #[pyo3(from_py_with = passes_arg)] passes: usize,
    #[pyo3(from_py_with = memory_arg)] memory_node: Memory,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let (engine, transport) = engine_transport(engine, Some(transport))?;
    let stop = stop_rule(repetitions, precision, max_repetitions, max_time);
    let default_min_time = match stop {
        Stop::Fixed(_) => stop.default_min_time(),
        Stop::Precise(_) => CELL_MIN_TIME,
    };
    let cfg = MatrixConfig {
        cpus,
        ring: Config {
            engine,
            transport,
            size_kb,
            stop,
            warmup,
            min_time: min_time.unwrap_or(default_min_time),
            timeout,
            plan: Plan::Calibrated { overhead: true },
            record_hops,
            ..Config::lat_ctx(vec![2])
        },
        per_class,
        passes,
        memory: memory_node,
    };
    let topo = crate::topology::read(Path::new("/sys")).map_err(|e| to_py(e, None))?;
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let m = run(py, &topo, &cfg, progress)?;
    let d = matrix_dict(py, &cfg, &m)?;
    d.set_item("started_unix_s", started)?;
    d.set_item("topology", topology_dict(py, &topo, false)?)?;
    Ok(d)
}

/// `matrix::run` without the GIL; Ctrl-C and an exception raised by `progress(done, total)`
/// stop it, and that exception is re-raised.
fn run(
    py: Python<'_>,
    topo: &Topology,
    cfg: &MatrixConfig,
    progress: Option<Py<PyAny>>,
) -> PyResult<Matrix> {
    let pending: Mutex<Option<PyErr>> = Mutex::new(None);
    let keep = |e: PyErr| {
        *pending.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
        Error::Interrupted
    };
    let outcome = py.detach(|| {
        let mut interrupt = || Python::attach(|py| py.check_signals().map_err(keep).is_err());
        let mut heard = |done: usize, total: usize, _: &Cell| match &progress {
            None => Ok(()),
            Some(f) => Python::attach(|py| f.call1(py, (done, total)).map(drop).map_err(keep)),
        };
        crate::matrix::run(topo, cfg, &mut interrupt, &mut heard)
    });
    let pending = pending.into_inner().unwrap_or_else(|p| p.into_inner());
    outcome.map_err(|e| to_py(e, pending))
}

/// The `MatrixDict` of `_core.pyi`: the run's configuration and one entry per cell.
fn matrix_dict<'py>(
    py: Python<'py>,
    cfg: &MatrixConfig,
    m: &Matrix,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let r = &cfg.ring;
    d.set_item("engine", r.engine.name())?;
    d.set_item("transport", r.transport.name())?;
    d.set_item("size_kb", r.size_kb)?;
    set_stop_items(&d, &r.stop)?;
    d.set_item("warmup", r.warmup)?;
    d.set_item("min_time", r.min_time)?;
    d.set_item("record_hops", r.record_hops)?;
    d.set_item("per_class", cfg.per_class)?;
    d.set_item("passes", cfg.passes)?;
    d.set_item("memory_node", cfg.memory.name())?;
    d.set_item("cpus", ints(py, &m.cpus))?;
    cell_columns(py, &d, &m.cells)?;
    d.set_item("warnings", PyList::new(py, &m.warnings)?)?;
    Ok(d)
}

/// One array per cell field.
fn cell_columns<'py>(py: Python<'py>, d: &Bound<'py, PyDict>, cells: &[Cell]) -> PyResult<()> {
    let int = |f: &dyn Fn(&Cell) -> i64| ints(py, &cells.iter().map(f).collect::<Vec<_>>());
    let float = |f: &dyn Fn(&Cell) -> f64| cells.iter().map(f).collect::<Vec<_>>().into_pyarray(py);
    let flag = |f: &dyn Fn(&Cell) -> bool| cells.iter().map(f).collect::<Vec<_>>().into_pyarray(py);
    let text = |f: &dyn Fn(&Cell) -> &str| PyList::new(py, cells.iter().map(f));
    let stat = |c: &Cell| c.summary.stats[0].clone();
    d.set_item("cpu_from", int(&|c| c.from as i64))?;
    d.set_item("cpu_to", int(&|c| c.to as i64))?;
    d.set_item("relation", text(&|c| c.class.relation.name())?)?;
    d.set_item("numa_distance", int(&|c| known(c.class.distance)))?;
    d.set_item("pass_index", int(&|c| c.pass as i64))?;
    d.set_item("started_s", float(&|c| c.started_s))?;
    d.set_item("elapsed_s", float(&|c| c.elapsed_s))?;
    d.set_item("latency_us", float(&|c| stat(c).description.median))?;
    d.set_item("min_us", float(&|c| stat(c).description.min))?;
    d.set_item("ci_low", float(&|c| stat(c).ci_low))?;
    d.set_item("ci_high", float(&|c| stat(c).ci_high))?;
    d.set_item("cv", float(&|c| stat(c).description.cv))?;
    d.set_item("verdict", text(&|c| c.summary.stats[0].verdict.as_str())?)?;
    d.set_item("stopped", text(&|c| c.summary.stopped[0].as_str())?)?;
    d.set_item(
        "repetitions_made",
        int(&|c| c.summary.samples_us[0].len() as i64),
    )?;
    let series = |f: &dyn Fn(&Cell) -> &Vec<f64>| {
        by_repetition(py, &cells.iter().map(|c| f(c).clone()).collect::<Vec<_>>())
    };
    d.set_item("samples_us", series(&|c| &c.summary.samples_us[0])?)?;
    d.set_item("raw_samples_us", series(&|c| &c.summary.raw_samples_us[0])?)?;
    d.set_item(
        "overhead_samples_us",
        series(&|c| &c.summary.overhead_samples_us[0])?,
    )?;
    d.set_item("below_resolution", flag(&|c| c.summary.below_resolution[0]))?;
    d.set_item(
        "switches_per_hop",
        float(&|c| c.summary.switches_per_hop[0]),
    )?;
    d.set_item("migrations", int(&|c| c.summary.migrations[0]))?;
    d.set_item("block", int(&|c| c.summary.block[0] as i64))?;
    let shapes = PyList::empty(py);
    for c in cells {
        shapes.append(ints(py, &c.summary.instance_blocks[0]))?;
    }
    d.set_item("instance_blocks", shapes)?;
    d.set_item("work_verified", flag(&|c| c.summary.work_verified[0]))?;
    let seen: Vec<Vec<i64>> = cells
        .iter()
        .map(|c| c.summary.cpus[0][0].iter().map(|&x| i64::from(x)).collect())
        .collect();
    d.set_item("cpus_seen", table(py, &seen, 2)?)?;
    d.set_item(
        "memory_node_asked",
        int(&|c| known(c.memory.map(|m| m.node))),
    )?;
    d.set_item(
        "memory_node_seen",
        int(&|c| c.memory.map_or(-1, |m| i64::from(m.seen.max(-1)))),
    )?;
    let bound = |c: &Cell| c.offset.map_or(f64::NAN, |o| o.bound_ns());
    d.set_item("clock_offset_bound_ns", float(&bound))?;
    d.set_item("clock_untrusted", flag(&|c| c.offset_flagged))?;
    let wake = if cells.iter().all(|c| c.wake.is_some()) && !cells.is_empty() {
        let w = PyDict::new(py);
        for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)] {
            w.set_item(name, float(&|c| c.wake_us(q)))?;
        }
        w.into_any()
    } else {
        py.None().into_bound(py)
    };
    d.set_item("wake_us", wake)?;
    Ok(())
}

/// Adds the topology and matrix functions and constants to `_core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(topology, m)?)?;
    m.add_function(wrap_pyfunction!(matrix, m)?)?;
    m.add(
        "RELATIONS",
        PyTuple::new(m.py(), Relation::ALL.map(Relation::name))?,
    )?;
    m.add("MATRIX_CELL_MIN_TIME", CELL_MIN_TIME)?;
    m.add("MATRIX_CELL_MAX_TIME", CELL_MAX_TIME)?;
    m.add("MATRIX_PER_CLASS", crate::matrix::DEFAULT_PER_CLASS)?;
    Ok(())
}
