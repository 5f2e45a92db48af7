"""Writes the sysfs fixture trees (the files ctxbench.topology reads) beside this file:
``python tests/data/sysfs/make.py``.

Each tree holds what Linux puts under /sys for topology, caches, NUMA nodes and the root
cgroup's cpuset, for a machine we cannot run on here. The layouts (CPU numbering, which CPUs
share each cache, distances) follow real machines of each kind; the trees are committed, and
this script says how they were made.
"""

from __future__ import annotations

import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent


def cpulist(ids: list[int]) -> str:
    """[0, 1, 2, 3, 8] -> "0-3,8", as the kernel prints it."""
    ids = sorted(set(ids))
    parts, start = [], None
    for i, c in enumerate(ids):
        if start is None:
            start = c
        if i + 1 == len(ids) or ids[i + 1] != c + 1:
            parts.append(f"{start}" if start == c else f"{start}-{c}")
            start = None
    return ",".join(parts)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


class Machine:
    """CPUs described by package, core, thread, and the caches and nodes around them."""

    def __init__(self, name: str, n: int) -> None:
        self.root = HERE / name
        self.n = n
        self.cpus: dict[int, dict] = {}
        self.caches: list[tuple[int, str, str, list[int]]] = []  # level, type, size, cpus
        self.nodes: dict[int, list[int]] = {}
        self.distances: dict[int, list[int]] = {}
        self.online = list(range(n))
        self.cpuset: str | None = None
        self.with_caches = True
        self.core_cpus_list = True

    def cpu(self, cpu: int, package: int, core: int, siblings: list[int], cluster: int = 65535):
        self.cpus[cpu] = dict(package=package, core=core, siblings=siblings, cluster=cluster)

    def cache(self, level: int, kind: str, size: str, cpus: list[int]) -> None:
        self.caches.append((level, kind, size, cpus))

    def save(self) -> None:
        if self.root.exists():
            shutil.rmtree(self.root)
        base = self.root / "devices/system/cpu"
        everyone = list(range(self.n))
        write(base / "possible", cpulist(everyone))
        write(base / "present", cpulist(everyone))
        write(base / "online", cpulist(self.online))
        write(base / "offline", cpulist([c for c in everyone if c not in self.online]))
        for cpu in everyone:
            d = base / f"cpu{cpu}"
            if cpu != 0:
                write(d / "online", "1" if cpu in self.online else "0")
            if cpu not in self.online:
                continue  # the kernel removes an offline CPU's topology and cache directories
            self._topology(d / "topology", cpu)
            if self.with_caches:
                self._caches(d / "cache", cpu)
        self._nodes()
        if self.cpuset is not None:
            write(self.root / "fs/cgroup/cpuset.cpus.effective", self.cpuset)

    def _topology(self, d: Path, cpu: int) -> None:
        c = self.cpus[cpu]
        write(d / "physical_package_id", str(c["package"]))
        write(d / "die_id", "0")
        write(d / "cluster_id", str(c["cluster"]))
        write(d / "core_id", str(c["core"]))
        write(d / "thread_siblings_list", cpulist(c["siblings"]))
        if self.core_cpus_list:  # since Linux 5.5; older kernels have thread_siblings_list only
            write(d / "core_cpus_list", cpulist(c["siblings"]))

    def _caches(self, d: Path, cpu: int) -> None:
        mine = [c for c in self.caches if cpu in c[3]]
        for index, (level, kind, size, cpus) in enumerate(mine):
            i = d / f"index{index}"
            write(i / "level", str(level))
            write(i / "type", kind)
            write(i / "size", size)
            write(i / "shared_cpu_list", cpulist(cpus))

    def _nodes(self) -> None:
        base = self.root / "devices/system/node"
        if not self.nodes:
            return
        write(base / "online", cpulist(list(self.nodes)))
        write(base / "has_memory", cpulist(list(self.nodes)))
        for node, cpus in self.nodes.items():
            write(base / f"node{node}/cpulist", cpulist(cpus))
            write(base / f"node{node}/distance", " ".join(map(str, self.distances[node])))


def intel_2s_smt2() -> Machine:
    """Two sockets of 4 cores with 2 threads, a NUMA node each: CPU = thread*8 + socket*4 +
    core, as Intel servers number them (siblings 0 and 8); L1/L2 per core, L3 per socket."""
    m = Machine("intel-2s-smt2", 16)
    for s in range(2):
        for core in range(4):
            pair = [s * 4 + core, 8 + s * 4 + core]
            for cpu in pair:
                m.cpu(cpu, s, core, pair)
            m.cache(1, "Data", "48K", pair)
            m.cache(1, "Instruction", "32K", pair)
            m.cache(2, "Unified", "2048K", pair)
        socket = [c for c in range(16) if (c % 8) // 4 == s]
        m.cache(3, "Unified", "30720K", socket)
        m.nodes[s] = socket
    m.distances = {0: [10, 21], 1: [21, 10]}
    return m


def amd_1s_2ccx() -> Machine:
    """One socket, two CCXs of 4 cores with 2 threads (siblings c and c+8), an L3 per CCX."""
    m = Machine("amd-1s-2ccx", 16)
    m.core_cpus_list = False
    for core in range(8):
        pair = [core, core + 8]
        for cpu in pair:
            m.cpu(cpu, 0, core, pair)
        m.cache(1, "Data", "32K", pair)
        m.cache(1, "Instruction", "32K", pair)
        m.cache(2, "Unified", "512K", pair)
    for ccx in range(2):
        m.cache(3, "Unified", "16384K", [c for c in range(16) if (c % 8) // 4 == ccx])
    m.nodes[0] = list(range(16))
    m.distances = {0: [10]}
    return m


def arm_clusters() -> Machine:
    """Eight cores without SMT in two clusters of 4, an L2 per cluster, one L3."""
    m = Machine("arm-clusters", 8)
    for cpu in range(8):
        m.cpu(cpu, 0, cpu, [cpu], cluster=cpu // 4)
        m.cache(1, "Data", "64K", [cpu])
        m.cache(1, "Instruction", "64K", [cpu])
    for cluster in range(2):
        m.cache(2, "Unified", "1024K", list(range(cluster * 4, cluster * 4 + 4)))
    m.cache(3, "Unified", "8192K", list(range(8)))
    m.nodes[0] = list(range(8))
    m.distances = {0: [10]}
    return m


def plain(name: str, n: int) -> Machine:
    """n cores without SMT in one package, L1/L2 per core and one L3."""
    m = Machine(name, n)
    for cpu in range(n):
        m.cpu(cpu, 0, cpu, [cpu])
        m.cache(1, "Data", "32K", [cpu])
        m.cache(1, "Instruction", "32K", [cpu])
        m.cache(2, "Unified", "1024K", [cpu])
    m.cache(3, "Unified", "32768K", list(range(n)))
    m.nodes[0] = list(range(n))
    m.distances = {0: [10]}
    return m


def vm_no_caches() -> Machine:
    """A VM whose hypervisor exposes no cache information (no cpu*/cache directories)."""
    m = plain("vm-no-caches", 4)
    m.with_caches = False
    return m


def offline() -> Machine:
    """Eight CPUs, 6 and 7 taken offline (echo 0 > cpu6/online)."""
    m = plain("offline", 8)
    m.online = list(range(6))
    m.caches = [(lv, k, s, [c for c in cs if c < 6]) for lv, k, s, cs in m.caches if cs[0] < 6]
    m.nodes[0] = list(range(6))
    return m


def cpuset() -> Machine:
    """Four CPUs, our cgroup's cpuset allowing 0, 1 and 3."""
    m = plain("cpuset", 4)
    m.cpuset = "0-1,3"
    return m


if __name__ == "__main__":
    for make in (intel_2s_smt2, amd_1s_2ccx, arm_clusters, vm_no_caches, offline, cpuset):
        make().save()
