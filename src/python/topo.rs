//! The binding of `topology`: the machine's CPUs, caches and NUMA nodes as the `TopologyDict`
//! of `_core.pyi`, arrays as numpy arrays; and the relation names.

use super::convert::core_err;
use crate::topology::{CacheShare, Cpu, Relation, Topology};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;

/// Integers as an int64 array.
fn ints<'py, T: Copy + TryInto<i64>>(py: Python<'py>, v: &[T]) -> Bound<'py, PyArray1<i64>> {
    v.iter()
        .map(|&x| x.try_into().unwrap_or(-1))
        .collect::<Vec<i64>>()
        .into_pyarray(py)
}

/// The machine's topology as sysfs under `sysfs` describes it (default: the host's,
/// `host::sysfs_root`).
#[pyfunction]
#[pyo3(signature = (sysfs=None))]
fn topology(py: Python<'_>, sysfs: Option<&str>) -> PyResult<Py<PyDict>> {
    let root = sysfs.map_or_else(crate::host::sysfs_root, PathBuf::from);
    let t = crate::topology::read(&root).map_err(core_err)?;
    Ok(topology_dict(py, &t, true)?.unbind())
}

/// `-1` for what sysfs does not say.
fn known<T: TryInto<i64>>(v: Option<T>) -> i64 {
    v.and_then(|x| x.try_into().ok()).unwrap_or(-1)
}

pub(super) fn topology_dict<'py>(
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
    let kind = |c: &Cpu| c.core_type.map_or_else(String::new, |k| k.name());
    d.set_item("core_type", cpus.iter().map(kind).collect::<Vec<String>>())?;
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(topology, m)?)?;
    Ok(())
}
