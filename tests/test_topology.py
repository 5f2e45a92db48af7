"""ctxbench.topology on described hosts (tests/hosts.py, written under tmp_path) and on this
machine. The parsing itself is tested in src/topology/tests.rs; here, what the binding
and the Python class make of it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable

import pytest
from conftest import Described

import ctxbench

Tree = Callable[[str], ctxbench.Topology]


@pytest.fixture
def tree(described: Described) -> Tree:
    """The topology of a described host, by profile name."""
    return lambda name: ctxbench.topology(described(name))


def test_two_sockets_with_smt_and_two_nodes(tree: Tree) -> None:
    t = tree("intel-2s-smt2")
    assert t.cpus.tolist() == list(range(16))
    assert t.relation(0, 0) == "same-cpu"
    assert t.relation(0, 8) == "smt-sibling"
    assert t.relation(0, 1) == "shared-llc"
    assert t.relation(0, 4) == "cross-package"
    assert t.numa_distance(0, 4) == 21
    assert t.numa_distance(0, 1) == 10
    assert t.order.tolist()[:4] == [0, 8, 1, 9]
    assert t.cache_kb(5) == {"L1d": 48, "L1i": 32, "L2": 2048, "L3": 30720}
    # Shared by the two SMT threads, and by the 8 CPUs of the socket.
    assert t.cache_share_kb(5) == {"L1d": 24.0, "L1i": 16.0, "L2": 1024.0, "L3": 3840.0}
    assert t.distances.tolist() == [[10, 21], [21, 10]]
    assert t.node.tolist() == [0] * 4 + [1] * 4 + [0] * 4 + [1] * 4


def test_an_l3_per_ccx_and_a_cluster_l2(tree: Tree) -> None:
    amd = tree("amd-1s-2ccx")
    assert amd.relation(1, 9) == "smt-sibling"
    assert amd.relation(0, 3) == "shared-llc"
    assert amd.relation(0, 4) == "same-package"
    assert amd.numa_distance(0, 4) is None
    arm = tree("arm-clusters")
    assert arm.relation(4, 7) == "shared-l2"
    assert arm.cluster.tolist() == [0] * 4 + [1] * 4
    # Every relation the core names is one Python knows.
    rels = {arm.relation(a, b) for a in range(8) for b in range(8)}
    assert rels <= set(ctxbench._core.RELATIONS)


def test_missing_cache_directories_and_offline_cpus_degrade_with_notes(tree: Tree) -> None:
    vm = tree("vm-no-caches")
    assert vm.caches == []
    assert vm.cache_share_kb() == {}
    assert vm.relation(0, 3) == "same-package"
    assert any("no cache directories" in n for n in vm.notes)
    off = tree("offline")
    assert off.online.tolist() == [True] * 6 + [False] * 2
    assert off.allowed.tolist() == [True] * 6 + [False] * 2
    assert off.order.tolist() == list(range(6))
    assert off.package[7] == 0 and off.smt_siblings[7].tolist() == [7]


def test_a_cpuset_restricts_what_is_allowed(tree: Tree) -> None:
    t = tree("cpuset")
    assert t.cpuset is not None and t.cpuset.tolist() == [0, 1, 3]
    assert t.cpus[t.allowed].tolist() == [0, 1, 3]
    assert t.affinity is None, "a tree is another machine: our affinity does not apply"
    assert t.cache_share_kb() == t.cache_share_kb(0)


def test_this_machine() -> None:
    t = ctxbench.topology()
    assert t.cpus[t.allowed].tolist() == sorted(os.sched_getaffinity(0))
    assert t.affinity is not None
    first = int(t.cpus[t.allowed][0])
    assert t.relation(first, first) == "same-cpu"
    assert set(t.order.tolist()) == set(t.cpus[t.online].tolist())
    assert "CPUs online" in repr(t)


def test_ctxbench_sysfs_names_the_host_read_by_default(
    described: Described, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = described("intel-xeon-guest")
    monkeypatch.setenv("CTXBENCH_SYSFS", str(root))
    t = ctxbench.topology()
    assert t.sysfs == str(root) and t.affinity is None, "another machine: no affinity mask"
    assert t.cache_share_kb(0) == {"L1d": 48.0, "L1i": 32.0, "L2": 2048.0, "L3": 245760.0}
    monkeypatch.setenv("CTXBENCH_SYSFS", "")
    assert ctxbench.topology().sysfs == "/sys"


def test_bad_input(tree: Tree) -> None:
    t = tree("amd-1s-2ccx")
    with pytest.raises(ValueError, match="a: CPU 99 is not on this machine"):
        t.relation(99, 0)
    with pytest.raises(TypeError, match="b: expected a CPU id"):
        t.relation(0, "1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cpu: CPU 16"):
        t.cache_share_kb(16)


def test_a_root_that_describes_no_machine_is_named() -> None:
    with pytest.raises(FileNotFoundError, match="sysfs root /nonexistent: No such file"):
        ctxbench.topology("/nonexistent")
    with pytest.raises(NotADirectoryError, match="sysfs root /etc/hostname"):
        ctxbench.topology("/etc/hostname")
    with pytest.raises(ValueError, match="sysfs: /proc/self holds no devices/system/cpu/cpu<N>"):
        ctxbench.topology("/proc/self")


def test_a_fifo_or_a_device_in_the_tree_is_noted_never_read(described: Described) -> None:
    root = described("amd-1s-2ccx")
    topo = root / "devices/system/cpu/cpu0/topology"
    (topo / "core_id").unlink()
    os.mkfifo(topo / "core_id")
    (topo / "physical_package_id").unlink()
    (topo / "physical_package_id").symlink_to("/dev/zero")
    # In a child with a deadline: a hang here would hang the suite.
    code = f"import ctxbench; print(ctxbench.topology({str(root)!r}).notes)"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "cpu0/topology/core_id: not a regular file" in p.stdout, p.stdout
    assert "cpu0/topology/physical_package_id: not a regular file" in p.stdout, p.stdout


HIDDEN = """
import ctxbench
t = ctxbench.topology()
print(t.cpus[t.allowed].tolist())
print(t.notes[0])
print(ctxbench.matrix(max_time=0.01, repetitions=2, progress=False).cpus.tolist())
"""


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs root")
def test_hidden_cpu_directories_fall_back_to_the_affinity_mask() -> None:
    hide = "mount -t tmpfs none /sys/devices/system/cpu"
    script = f'{hide} && exec "$0" -c "$1"'
    p = subprocess.run(["unshare", "--mount", "sh", "-c", script, sys.executable, HIDDEN],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    if "mount" in p.stderr and p.returncode != 0:
        pytest.skip(f"cannot hide /sys/devices/system/cpu here: {p.stderr.strip()}")
    assert p.returncode == 0, p.stderr
    mask = sorted(os.sched_getaffinity(0))
    allowed, note, matrix = p.stdout.splitlines()
    assert allowed == str(mask) and matrix == str(mask)
    assert f"affinity mask, {len(mask)} of them" in note
