"""The machine's CPUs, caches and NUMA nodes as sysfs describes them (``ctxbench.topology``).

The parsing and the rule that names how two CPUs relate live in the core (``src/topology``);
this class holds what it returns and looks things up in it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core
from .record import typed
from .schema import MATRIX


@dataclass(frozen=True, eq=False)
class Topology:
    """CPUs (every present one, ascending: ``cpus``) with, per CPU, whether it is ``online``
    and ``allowed`` (online, in our cpuset and affinity mask), its ``package``, ``die``,
    ``cluster``, ``core``, NUMA ``node`` (-1 where sysfs says nothing), ``core_type`` (on a
    hybrid host "P-core" or "E-core", Intel's, or "capacity N", Arm's ``cpu_capacity``; ""
    on a host of one kind) and ``smt_siblings``;
    the ``caches`` (one dict per cache instance: ``name`` such as "L2", ``level``, ``type``,
    ``size_kb``, ``cpus`` sharing it); the NUMA ``nodes`` and their ``distances``; ``order``,
    the online CPUs package → LLC → core → SMT; and ``notes``: what sysfs lacked and what was
    assumed instead (a VM without cache directories, offline CPUs, no cpuset file)."""

    sysfs: str
    cpus: np.ndarray
    online: np.ndarray
    allowed: np.ndarray
    package: np.ndarray
    die: np.ndarray
    cluster: np.ndarray
    core: np.ndarray
    node: np.ndarray
    llc: np.ndarray
    core_type: list[str]
    smt_siblings: list[np.ndarray]
    cpu_caches: list[np.ndarray]
    caches: list[dict[str, Any]]
    cache_share: dict[str, np.ndarray]
    nodes: np.ndarray
    distances: np.ndarray
    order: np.ndarray
    cpuset: np.ndarray | None
    affinity: np.ndarray | None
    notes: list[str]
    relations: np.ndarray

    def _index(self, cpu: int, param: str = "cpu") -> int:
        if isinstance(cpu, bool) or not isinstance(cpu, (int, np.integer)):
            raise TypeError(f"{param}: expected a CPU id (int), got {type(cpu).__name__}")
        hits = np.flatnonzero(self.cpus == cpu)
        if hits.size == 0:
            raise ValueError(f"{param}: CPU {cpu} is not on this machine ({self.sysfs})")
        return int(hits[0])

    def relation(self, a: int, b: int) -> str:
        """The closest level CPUs ``a`` and ``b`` share, one of ``ctxbench._core.RELATIONS``:
        "same-cpu", "smt-sibling", "shared-l2", "shared-llc", "same-package",
        "cross-package"."""
        code = self.relations[self._index(a, "a"), self._index(b, "b")]
        return _core.RELATIONS[int(code)]

    def numa_distance(self, a: int, b: int) -> int | None:
        """The SLIT distance between the nodes of ``a`` and ``b`` (10 = local), or None on a
        machine with one node or where sysfs does not say."""
        na, nb = self.node[self._index(a, "a")], self.node[self._index(b, "b")]
        if len(self.nodes) < 2 or na < 0 or nb < 0 or self.distances.size == 0:
            return None
        i, j = (int(np.flatnonzero(self.nodes == n)[0]) for n in (na, nb))
        return int(self.distances[i, j])

    def core_types(self) -> dict[str, list[int]]:
        """On a hybrid host, each kind of core with its CPUs, e.g. ``{"P-core": [0, ...],
        "E-core": [8, ...]}``; empty on a host of one kind."""
        kinds: dict[str, list[int]] = {}
        for cpu, kind in zip(self.cpus.tolist(), self.core_type):
            if kind:
                kinds.setdefault(kind, []).append(int(cpu))
        return kinds

    def one_of_each_kind(self) -> list[int]:
        """The first allowed CPU of each kind of core of a hybrid host, a placement:
        ``ctxbench.ring(2, placement=t.one_of_each_kind())`` passes the token between a
        P-core and an E-core. A ``ValueError`` on a host of one kind, or where a kind has no
        CPU this process may use."""
        allowed = set(self.cpus[self.allowed].tolist())
        kinds = self.core_types()
        if len(kinds) < 2:
            raise ValueError(f"placement: {self.sysfs} describes one kind of core")
        out = []
        for kind, cpus in kinds.items():
            mine = [c for c in cpus if c in allowed]
            if not mine:
                raise ValueError(f"placement: no {kind} is allowed to this process ({cpus})")
            out.append(mine[0])
        return out

    def _cpu_or_first(self, cpu: int | None) -> int | None:
        if cpu is not None:
            return self._index(cpu)
        allowed = np.flatnonzero(self.allowed)
        return int(allowed[0]) if allowed.size else None

    def cache_share_kb(self, cpu: int | None = None) -> dict[str, float]:
        """Each cache level of ``cpu`` (default: the first allowed CPU) as KiB per CPU: its
        size ÷ the online CPUs sharing it (SMT siblings share L1 and L2), e.g. ``{"L1d":
        32.0, "L1i": 32.0, "L2": 1024.0, "L3": 16384.0}``. Empty where sysfs has no cache
        information (see ``notes``)."""
        i = self._cpu_or_first(cpu)
        if i is None:
            return {}
        return {name: float(kb[i]) for name, kb in self.cache_share.items() if not np.isnan(kb[i])}

    def cache_kb(self, cpu: int | None = None) -> dict[str, int]:
        """Each cache level of ``cpu`` (default: the first allowed CPU) whole, in KiB."""
        i = self._cpu_or_first(cpu)
        if i is None:
            return {}
        mine = (self.caches[int(k)] for k in self.cpu_caches[i])
        return {c["name"]: int(c["size_kb"]) for c in mine if c["size_kb"] is not None}

    def __repr__(self) -> str:
        on = np.flatnonzero(self.online)
        cores = {(int(self.package[i]), int(self.core[i])) for i in on}
        packages = len(set(self.package[on].tolist()))
        shares = self.cache_share_kb(int(self.cpus[on[0]])) if on.size else {}
        levels = ", ".join(f"{name} {kb:g}" for name, kb in shares.items())
        return (
            f"Topology({on.size} CPUs online, {int(self.allowed.sum())} allowed; "
            f"packages {packages}, cores {len(cores)}, NUMA nodes {max(len(self.nodes), 1)}; "
            f"KiB per CPU: {levels or 'caches unknown'})"
        )


def table(sysfs: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The table ``_core.topology`` returns, its arrays restored as a matrix record's topology
    is (its ``relations`` already one)."""
    raw = dict(_core.topology(None if sysfs is None else os.fspath(sysfs)))
    relations = raw.pop("relations")
    return {**typed(raw, MATRIX["topology"]), "relations": relations}


def from_dict(raw: dict[str, Any]) -> Topology:
    """A ``Topology`` of a ``table`` (``relations`` included)."""
    fields = dict(raw)
    fields["cache_share"] = fields.pop("cache_share_kb")
    return Topology(**fields)


def topology(sysfs: str | os.PathLike[str] | None = None) -> Topology:
    """The CPUs, caches and NUMA nodes sysfs describes under ``sysfs`` (default: the
    environment's ``CTXBENCH_SYSFS`` where set, else ``/sys``).

    With ``/sys``, ``allowed`` also applies this process's cpuset and affinity
    mask; another root (a copied tree, a fixture) is read as a description of another
    machine: its root cgroup's cpuset, no affinity mask. Files sysfs lacks never raise: the
    ``notes`` say what could not be known, and what was not read (a FIFO, a device, a file
    past 64 KiB). A root that describes no machine raises naming it: ``FileNotFoundError``
    or ``NotADirectoryError``, ``ValueError`` for a tree without CPU directories. With the
    CPU directories of ``/sys`` hidden, the CPUs are this process's affinity mask (noted).
    """
    return from_dict(table(sysfs))


def _cpulist(cpus: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2,5", as the kernel prints a CPU list."""
    runs: list[list[int]] = []
    for c in sorted(cpus):
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def core_types_here() -> dict[str, str] | None:
    """This machine's kinds of core (live /sys) with their CPUs as the kernel lists them,
    ``{"P-core": "0-7", "E-core": "8-15"}``: what every result's metadata records; None on
    a host of one kind, or where sysfs cannot be read."""
    try:
        kinds = topology("/sys").core_types()
    except (OSError, ValueError):
        return None
    return {kind: _cpulist(cpus) for kind, cpus in kinds.items()} or None
