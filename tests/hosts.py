"""Described hosts: the sysfs files ``ctxbench.topology`` reads (topology, caches, NUMA nodes,
the root cgroup's cpuset) for machines the suite cannot run on, written under a directory the
test owns (``tmp_path``) when a test asks for one.

Python tests take the ``described`` fixture of conftest.py; the Rust tests, and anyone by
hand, run ``python3 tests/hosts.py NAME DIR`` (stdlib only), which writes ``DIR/NAME`` and
prints its path. A profile is a function that returns a ``Host``, registered with
``@profile``: adding one is a few lines of ``cpu`` and ``cache`` calls. Each says where its
numbers come from.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

PROFILES: dict[str, Callable[[], Host]] = {}


def profile(make: Callable[[], Host]) -> Callable[[], Host]:
    """Registers ``make`` under its name with dashes (``intel_2s_smt2`` -> "intel-2s-smt2")."""
    PROFILES[make.__name__.replace("_", "-")] = make
    return make


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


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


class Host:
    """CPUs described by package, core and SMT siblings, and the caches and nodes around
    them; ``files`` are written last, over what the rest wrote (a broken attribute)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.cpus: dict[int, dict[str, object]] = {}
        # level, type, size, the CPUs sharing it, line bytes
        self.caches: list[tuple[int, str, str, list[int], int]] = []
        self.nodes: dict[int, list[int]] = {}
        self.distances: dict[int, list[int]] = {}
        self.online = list(range(n))
        self.cpuset: str | None = None
        self.with_caches = True
        self.core_cpus_list = True
        self.files: dict[str, str] = {}

    def cpu(self, cpu: int, package: int, core: int, siblings: list[int], cluster: int = 65535):
        self.cpus[cpu] = dict(package=package, core=core, siblings=siblings, cluster=cluster)

    def cache(self, level: int, kind: str, size: str, cpus: list[int], line: int = 64) -> None:
        self.caches.append((level, kind, size, cpus, line))

    def one_node(self) -> None:
        self.nodes = {0: list(range(self.n))}
        self.distances = {0: [10]}

    def save(self, root: Path) -> Path:
        base = root / "devices/system/cpu"
        everyone = list(range(self.n))
        _write(base / "possible", cpulist(everyone))
        _write(base / "present", cpulist(everyone))
        _write(base / "online", cpulist(self.online))
        _write(base / "offline", cpulist([c for c in everyone if c not in self.online]))
        for cpu in everyone:
            d = base / f"cpu{cpu}"
            if cpu != 0:
                _write(d / "online", "1" if cpu in self.online else "0")
            if cpu not in self.online:
                continue  # the kernel removes an offline CPU's topology and cache directories
            self._topology(d / "topology", cpu)
            if self.with_caches:
                self._caches(d / "cache", cpu)
        self._nodes(root / "devices/system/node")
        if self.cpuset is not None:
            _write(root / "fs/cgroup/cpuset.cpus.effective", self.cpuset)
        for rel, text in self.files.items():
            _write(root / rel, text)
        return root

    def _topology(self, d: Path, cpu: int) -> None:
        c = self.cpus[cpu]
        siblings = cpulist(c["siblings"])  # type: ignore[arg-type]
        _write(d / "physical_package_id", str(c["package"]))
        _write(d / "die_id", "0")
        _write(d / "cluster_id", str(c["cluster"]))
        _write(d / "core_id", str(c["core"]))
        _write(d / "thread_siblings_list", siblings)
        if self.core_cpus_list:  # since Linux 5.5; older kernels have thread_siblings_list only
            _write(d / "core_cpus_list", siblings)

    def _caches(self, d: Path, cpu: int) -> None:
        mine = [c for c in self.caches if cpu in c[3]]
        for index, (level, kind, size, cpus, line) in enumerate(mine):
            i = d / f"index{index}"
            _write(i / "level", str(level))
            _write(i / "type", kind)
            _write(i / "size", size)
            _write(i / "shared_cpu_list", cpulist(cpus))
            _write(i / "coherency_line_size", str(line))

    def _nodes(self, base: Path) -> None:
        if not self.nodes:
            return
        _write(base / "online", cpulist(list(self.nodes)))
        _write(base / "has_memory", cpulist(list(self.nodes)))
        for node, cpus in self.nodes.items():
            _write(base / f"node{node}/cpulist", cpulist(cpus))
            _write(base / f"node{node}/distance", " ".join(map(str, self.distances[node])))


def write(name: str, into: Path) -> Path:
    """The profile ``name`` written as ``into/name``; its root."""
    if name not in PROFILES:
        raise KeyError(f"no described host {name!r}; the profiles are {sorted(PROFILES)}")
    return PROFILES[name]().save(Path(into) / name)


# ---- the profiles ----------------------------------------------------------------------------


def guest(l1d: str, l1i: str, l2: str, l3: str) -> Host:
    """A KVM guest of 2 vCPUs, a core each: L1 and L2 per vCPU, one L3 shared by both."""
    m = Host(2)
    for cpu in range(2):
        m.cpu(cpu, 0, cpu, [cpu])
        m.cache(1, "Data", l1d, [cpu])
        m.cache(1, "Instruction", l1i, [cpu])
        m.cache(2, "Unified", l2, [cpu])
    m.cache(3, "Unified", l3, [0, 1])
    m.one_node()
    return m


@profile
def intel_xeon_guest() -> Host:
    """The guest on an Intel Xeon 6 host, as its sysfs reads: L1d 48K, L1i 32K and L2 2048K
    per vCPU, and the host's whole L3, 491520K (480 MiB), shared by both. 480 MB is the L3
    of the Xeon 6972P and 6952P (hardwareluxx's table of the Xeon 6900P series,
    https://www.hardwareluxx.de/index.php/artikel/hardware/prozessoren/
    64561-intels-comeback-granite-rapids-mit-96-kernen-im-test.html); 48K + 2 MiB per core
    as Intel gives for its P-cores since Sapphire Rapids (Intel support article 000027820)."""
    return guest("48K", "32K", "2048K", "491520K")


@profile
def amd_epyc_guest() -> Host:
    """The guest on an AMD EPYC host (family 25, model 17: Zen 4), as its lscpu and sysfs
    read: L1d and L1i 32K and L2 1024K per vCPU, one L3 of 32768K shared by both."""
    return guest("32K", "32K", "1024K", "32768K")


@profile
def intel_2s_smt2() -> Host:
    """Two sockets of 4 cores with 2 threads, a NUMA node each: CPU = thread*8 + socket*4 +
    core, as Intel servers number them (siblings 0 and 8); L1/L2 per core, L3 per socket.
    The sizes are 4th Gen Xeon Scalable's (Sapphire Rapids: 32 KB L1I, 48 KB L1D, 2 MB L2
    per core, 1.875 MB of L3 per core: Intel support article 000027820); 30720K is the L3
    of a 16-core part, the 4 cores a socket here a reduction."""
    m = Host(16)
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


@profile
def amd_1s_2ccx() -> Host:
    """One socket, two CCXs of 4 cores with 2 threads (siblings c and c+8), an L3 per CCX,
    as Zen 2 (EPYC 7002, Ryzen 3000) has them: 32 KiB L1D and L1I, 512 KiB L2 per core,
    16 MiB of L3 per CCX of 4 cores (Velten et al., "Memory Performance of AMD EPYC Rome
    and Intel Cascade Lake SP Server Processors", ICPE 2022, arXiv:2204.03290). A kernel
    before 5.5: thread_siblings_list only."""
    m = Host(16)
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
    m.one_node()
    return m


@profile
def arm_clusters() -> Host:
    """Eight cores without SMT in two clusters of 4 (sysfs's cluster_id, Linux 5.16+), an L2
    per cluster, one L3: the shape of Arm's DynamIQ and Cortex-A72 clusters, whose cores
    share the cluster's L2. The sizes are illustrative, not one model's (64 KiB L1I and L1D
    per core as Kunpeng 920's), chosen so that every level differs."""
    m = Host(8)
    for cpu in range(8):
        m.cpu(cpu, 0, cpu, [cpu], cluster=cpu // 4)
        m.cache(1, "Data", "64K", [cpu])
        m.cache(1, "Instruction", "64K", [cpu])
    for cluster in range(2):
        m.cache(2, "Unified", "1024K", list(range(cluster * 4, cluster * 4 + 4)))
    m.cache(3, "Unified", "8192K", list(range(8)))
    m.one_node()
    return m


def plain(n: int) -> Host:
    """n cores without SMT in one package, L1/L2 per core and one L3 (illustrative sizes,
    the AMD guest's L1 and L2): the base of the restricted hosts below."""
    m = Host(n)
    for cpu in range(n):
        m.cpu(cpu, 0, cpu, [cpu])
        m.cache(1, "Data", "32K", [cpu])
        m.cache(1, "Instruction", "32K", [cpu])
        m.cache(2, "Unified", "1024K", [cpu])
    m.cache(3, "Unified", "32768K", list(range(n)))
    m.one_node()
    return m


@profile
def vm_no_caches() -> Host:
    """A VM whose hypervisor exposes no cache information (no cpu*/cache directories)."""
    m = plain(4)
    m.with_caches = False
    return m


@profile
def offline() -> Host:
    """Eight CPUs, 6 and 7 taken offline (echo 0 > cpu6/online)."""
    m = plain(8)
    m.online = list(range(6))
    m.caches = [(lv, k, s, [c for c in cs if c < 6], line)
                for lv, k, s, cs, line in m.caches if cs[0] < 6]  # fmt: skip
    m.nodes[0] = list(range(6))
    return m


@profile
def cpuset() -> Host:
    """Four CPUs, our cgroup's cpuset allowing 0, 1 and 3."""
    m = plain(4)
    m.cpuset = "0-1,3"
    return m


# ---- big machines, hybrid cores, containers ---------------------------------------------------


@profile
def amd_genoa_x() -> Host:
    """One AMD EPYC 9684X (Zen 4 with 3D V-Cache): 96 cores with 2 threads (siblings c and
    c+96, as Linux numbers AMD's), 12 CCDs of 8 cores, each CCD an L3 of 96 MiB (32 MiB
    plus 64 MiB stacked): 1152 MiB of L3 in all, the product page's figure (amd.com, "AMD
    EPYC 9684X": 96 cores, 192 threads, L3 1152 MB). L1D and L1I 32 KiB and L2 1 MiB per
    core: AMD's Software Optimization Guide for Zen 4 (publication 57647). NPS1: one node."""
    m = Host(192)
    for core in range(96):
        pair = [core, core + 96]
        for cpu in pair:
            m.cpu(cpu, 0, core, pair)
        m.cache(1, "Data", "32K", pair)
        m.cache(1, "Instruction", "32K", pair)
        m.cache(2, "Unified", "1024K", pair)
    for ccd in range(12):
        m.cache(3, "Unified", "98304K", [c for c in range(192) if (c % 96) // 8 == ccd])
    m.one_node()
    return m


@profile
def xeon6_2s_snc3() -> Host:
    """Two Intel Xeon 6972P (Granite Rapids-AP) sockets of 96 cores with 2 threads: 384 CPUs,
    numbered CPU = thread*192 + socket*96 + core as Linux numbers Intel's; 480 MB of L3 per
    socket (Intel ARK, "Intel Xeon 6972P": 96 cores, 192 threads, 480 MB cache; the guest
    above sees the same L3), 48K L1D, 32K L1I and 2 MiB L2 per core (Intel support article
    000027820). Sub-NUMA clustering in 3 (SNC3, one node per compute die, the 6900P's
    default): 6 nodes of 32 cores, the L3 still one per socket in sysfs. The distances,
    10 / 12 / 21, are those numactl -H prints on SNC Xeons (illustrative)."""
    m = Host(384)
    for s in range(2):
        for core in range(96):
            pair = [s * 96 + core, 192 + s * 96 + core]
            for cpu in pair:
                m.cpu(cpu, s, core, pair)
            m.cache(1, "Data", "48K", pair)
            m.cache(1, "Instruction", "32K", pair)
            m.cache(2, "Unified", "2048K", pair)
        m.cache(3, "Unified", "491520K", [c for c in range(384) if (c % 192) // 96 == s])
    for node in range(6):
        s, die = divmod(node, 3)
        m.nodes[node] = [c for c in range(384)
                         if (c % 192) // 96 == s and (c % 96) // 32 == die]  # fmt: skip
        m.distances[node] = [10 if n == node else 12 if n // 3 == s else 21 for n in range(6)]
    return m


@profile
def ampere_altra() -> Host:
    """An Ampere Altra Q80-30 (Arm Neoverse N1): 80 cores without SMT, 64 KiB L1I and L1D
    and 1 MiB L2 per core (Ampere's Altra product brief). Its 32 MiB system-level cache is
    memory-side and the ACPI tables describe no L3, so sysfs lists L1d, L1i and L2 only (as
    lscpu shows on Altra). One node (monolithic mode)."""
    m = Host(80)
    for cpu in range(80):
        m.cpu(cpu, 0, cpu, [cpu])
        m.cache(1, "Data", "64K", [cpu])
        m.cache(1, "Instruction", "64K", [cpu])
        m.cache(2, "Unified", "1024K", [cpu])
    m.one_node()
    return m


@profile
def intel_hybrid_laptop() -> Host:
    """An Intel Core i7-1260P (Alder Lake-P): 4 P-cores with 2 threads (CPUs 0-7, siblings
    2k and 2k+1) and 8 E-cores (CPUs 8-15) in two modules of 4, 18 MB of L3 shared by all
    (Intel ARK, "Intel Core i7-1260P": 12 cores, 4 P + 8 E, 16 threads, 18 MB cache).
    P-core (Golden Cove): 48K L1D, 32K L1I, 1.25 MiB L2; E-core (Gracemont): 32K L1D, 64K
    L1I, 2 MiB L2 per module of 4 (Intel's Architecture Day 2021). The kernel's two core
    PMUs list each type's CPUs: /sys/devices/cpu_core/cpus and /sys/devices/cpu_atom/cpus
    (linux tools/perf/Documentation/intel-hybrid.txt)."""
    m = Host(16)
    for core in range(4):
        pair = [2 * core, 2 * core + 1]
        for cpu in pair:
            m.cpu(cpu, 0, 4 * core, pair)
        m.cache(1, "Data", "48K", pair)
        m.cache(1, "Instruction", "32K", pair)
        m.cache(2, "Unified", "1280K", pair)
    for cpu in range(8, 16):
        m.cpu(cpu, 0, 8 + cpu, [cpu], cluster=(cpu - 8) // 4)
        m.cache(1, "Data", "32K", [cpu])
        m.cache(1, "Instruction", "64K", [cpu])
    for module in range(2):
        m.cache(2, "Unified", "2048K", list(range(8 + 4 * module, 12 + 4 * module)))
    m.cache(3, "Unified", "18432K", list(range(16)))
    m.one_node()
    m.files["devices/cpu_core/cpus"] = "0-7"
    m.files["devices/cpu_atom/cpus"] = "8-15"
    return m


@profile
def rk3399_big_little() -> Host:
    """A Rockchip RK3399 board: CPUs 0-3 Cortex-A53 (LITTLE) sharing a 512 KiB L2, CPUs 4-5
    Cortex-A72 (big) sharing a 1 MiB L2, no L3 (Rockchip's RK3399 datasheet); L1D 32 KiB
    each, L1I 32 KiB (A53) and 48 KiB (A72) (Arm's Cortex-A53 and A72 reference manuals,
    as configured there). cpu_capacity 381 and 1024: the kernel scales the device tree's
    capacity-dmips-mhz (485 and 1024 in linux arch/arm64/boot/dts/rockchip/rk3399.dtsi) by
    each cluster's top frequency (1416 and 1800 MHz there): 485 x 1416 / 1800 = 381."""
    m = Host(6)
    for cpu in range(6):
        big = cpu >= 4
        m.cpu(cpu, 0, cpu - 4 if big else cpu, [cpu], cluster=int(big))
        m.cache(1, "Data", "32K", [cpu])
        m.cache(1, "Instruction", "48K" if big else "32K", [cpu])
        m.files[f"devices/system/cpu/cpu{cpu}/cpu_capacity"] = "1024" if big else "381"
    m.cache(2, "Unified", "512K", [0, 1, 2, 3])
    m.cache(2, "Unified", "1024K", [4, 5])
    m.one_node()
    return m


@profile
def container_cpuset1() -> Host:
    """A container on an 8-CPU host given one CPU (docker run --cpuset-cpus=5: its cgroup's
    cpuset.cpus.effective is "5"); the host as ``plain`` describes it."""
    m = plain(8)
    m.cpuset = "5"
    return m


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(f"usage: python3 {sys.argv[0]} NAME DIR  (NAME one of {sorted(PROFILES)})")
    print(write(sys.argv[1], Path(sys.argv[2])))
