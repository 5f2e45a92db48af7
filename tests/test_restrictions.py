"""Restricted hosts: each restriction named by the core (``_core.restrictions``), in
``ctxbench info`` and in the metadata, on described hosts (planted under ``tmp_path``) and
for real on this machine where it can be made (tests/restricted.py; root only), and each
refused feature refused naming it and what to do."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Described

from ctxbench import _core
from ctxbench import metadata as md

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

# What each restriction is planted as on a described host (relative to its sysfs root; its
# /proc is ROOT/proc), and the words its detail says.
PLANTED = {
    "cpuset": ({"fs/cgroup/cpuset.cpus.effective": "1"}, "allows 1 of the 2 online CPUs (1)"),
    "cpu_quota": ({"fs/cgroup/cpu.max": "50000 100000"}, "0.50 CPU: 50000 µs every 100000 µs"),
    "cgroup_read_only": (
        {"proc/self/mountinfo": "30 1 0:30 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 ro"},
        "mounted read-only: /sys/fs/cgroup",
    ),
    "perf_event_paranoid": (
        {"proc/sys/kernel/perf_event_paranoid": "3"},
        "kernel.perf_event_paranoid = 3: a process without CAP_PERFMON may open no perf event",
    ),
    "io_uring_refused": (
        {"proc/sys/kernel/io_uring_disabled": "2"},
        "io_uring_setup is refused to every process",
    ),
    "no_kernel_config": ({}, "config.gz (CONFIG_IKCONFIG_PROC) and no"),
}


def plant(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return root


def guest(described: Described, name: str) -> Path:
    """The 2-vCPU AMD guest with restriction `name` planted, and nothing else restricted."""
    files, _ = PLANTED[name]
    config = {} if name == "no_kernel_config" else {"proc/config.gz": "only there"}
    return plant(described("amd-epyc-guest"), {**config, **files})


def names(found: list[_core.RestrictionDict]) -> list[str]:
    return [r["name"] for r in found]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "ctxbench", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("name", list(PLANTED))
def test_a_planted_restriction_is_named_with_what_was_read_and_what_to_do(
    described: Described, name: str
) -> None:
    root = guest(described, name)
    found = _core.restrictions(str(root))
    assert names(found) == [name]
    assert PLANTED[name][1] in found[0]["detail"]
    assert len(found[0]["hint"]) > 40
    env = {**os.environ, "CTXBENCH_SYSFS": str(root)}
    out = cli("info", env=env)
    assert out.returncode == 0, out.stderr
    assert f"restrictions.{name}:" in out.stdout
    assert f"what_to_do.{name}:" in out.stdout
    assert found[0]["hint"] in " ".join(out.stdout.split())


def test_a_host_without_restrictions_says_none_in_info(described: Described) -> None:
    root = plant(described("amd-epyc-guest"), {"proc/config.gz": "only there"})
    assert _core.restrictions(str(root)) == []
    out = cli("info", env={**os.environ, "CTXBENCH_SYSFS": str(root)})
    assert out.returncode == 0, out.stderr
    rows = dict(line.split(":", 1) for line in out.stdout.splitlines() if ":" in line)
    assert rows["restrictions"].strip() == "(none)"
    assert "what_to_do." not in out.stdout


def test_the_metadata_names_the_restrictions_of_the_roots_it_reads(tmp_path: Path) -> None:
    proc, sys_root = tmp_path / "proc", tmp_path / "sys"
    plant(tmp_path, {"proc/self/cgroup": "0::/job", "sys/fs/cgroup/job/cpu.max": "25000 100000"})
    meta = md._collect(proc, sys_root, tmp_path / "boot", version="x", extra=None)
    found = meta["restrictions"]
    assert isinstance(found, dict)
    assert found["cpu_quota"].startswith("0.25 CPU: 25000 µs every 100000 µs")
    assert "no_kernel_config" in found and "io_uring_refused" not in found
    text = md.format_metadata({"restrictions": found})
    assert "restrictions.cpu_quota:" in text


# --- for real -----------------------------------------------------------------------------

LIVE = "import json, ctxbench._core as c; print(json.dumps(c.restrictions('/sys')))"
# A transport that needs io_uring, tried: the refusal's words, or "ran". (With cgroups for
# the transport: the cgroups axis, tried.)
URING_RING = """
import ctxbench
try:
    ctxbench.ring(2, transport="msg_ring", repetitions=3, history=False)
    print("ran")
except OSError as e:
    print(e)
"""


def live(argv_prefix: list[str] | None = None) -> dict[str, str]:
    argv = [*(argv_prefix or []), sys.executable, "-c", LIVE]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return {r["name"]: r["detail"] for r in json.loads(out.stdout)}


def uring_ring(argv_prefix: list[str] | None = None) -> str:
    argv = [*(argv_prefix or []), sys.executable, "-c", URING_RING]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.parametrize("code", [errno.EPERM, errno.ENOSYS])
def test_a_seccomp_filter_on_io_uring_is_named_and_the_uring_transports_refused(
    code: int,
) -> None:
    import restricted

    filtered = live(restricted.seccomp_argv(code, []))
    assert "refused by a seccomp filter" in filtered["io_uring_refused"], filtered
    said = uring_ring(restricted.seccomp_argv(code, []))
    assert "restriction io_uring_refused: io_uring_setup was refused by a seccomp" in said
    assert "choose another (eventfd, futex)" in said
    assert "io_uring_refused" not in live(), "only the filtered child is restricted"


def test_perf_event_paranoid_is_named_for_a_process_it_restricts() -> None:
    """As a user without capabilities (setpriv; no sysctl is changed: other tests run
    meanwhile), at this machine's level. Level 3 and the sysctl of io_uring are planted
    above: setting either here would change what every other process sees."""
    import restricted

    level = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text())
    if level < 2:
        pytest.skip(f"perf_event_paranoid is {level} here: it restricts no one")
    nobody = restricted.unprivileged_argv([])
    counted = "import ctxbench\nprint(ctxbench.ring(2, repetitions=3, history=False)"
    counted += ".counters_unavailable_reason)"
    # history=False: nobody writes nothing (no history, no store).
    out = restricted.run([*nobody, sys.executable, "-c", counted])
    assert "perf_event_paranoid" not in live(), "root's capabilities lift it"
    assert live(nobody)["perf_event_paranoid"].startswith(f"kernel.perf_event_paranoid = {level}")
    assert out.returncode == 0, out.stderr
    said = out.stdout
    expected = (
        f"not permitted (restriction perf_event_paranoid: kernel.perf_event_paranoid = {level}"
    )
    assert expected in said, said
    assert "reported unavailable, never as zero" in said


def test_a_read_only_cgroup_mount_is_named_and_the_cgroups_axis_refused() -> None:
    import restricted
    from cgroups import _hierarchy

    mount, _ = _hierarchy("cpu")
    ro = restricted.read_only_cgroups_argv(str(mount), [])
    found = live(ro)
    assert str(mount) in found["cgroup_read_only"], found
    code = URING_RING.replace('transport="msg_ring"', 'cgroups="same"')
    out = subprocess.run([*ro, sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "(restriction cgroup_read_only)" in out.stdout, out.stdout
    assert "hint: the cgroups axis cannot make its groups" in out.stdout
    assert "cgroup_read_only" not in live(), "only the namespace's mount is read-only"


def test_a_one_cpu_cpuset_is_named() -> None:
    from cgroups import configured, run_in

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("a cpuset of 1 CPU restricts nothing on a 1-CPU machine")
    one = {"cpuset.cpus": "0", "cpuset.mems": "0"}
    spread = URING_RING.replace('transport="msg_ring"', 'placement="spread"')
    with configured("cpuset", one, {"cpuset.cpus": "0"}) as group:
        out = run_in(group, LIVE)
        refused = run_in(group, spread)
    assert out.returncode == 0, out.stderr
    found = {r["name"]: r["detail"] for r in json.loads(out.stdout)}
    assert "our cgroup's cpuset allows 1 of the " in found["cpuset"], found
    assert found["cpuset"].endswith("online CPUs (0)")
    # A placement the cpuset cannot give is refused, naming it.
    assert "ValueError" in refused.stderr, refused.stdout
    assert '"spread" puts participants on different CPUs' in refused.stderr
    assert "(restriction cpuset: our cgroup's cpuset allows 1 of the " in refused.stderr


# A ring of 2 in the group given as argv[1], joined once ctxbench is imported (so that the
# quota meets the ring, not the interpreter's start): its verdicts, warnings and the report's
# lines, with the group's own count of throttled periods around the ring.
THROTTLED_RING = """
import json, os, sys
import ctxbench
from ctxbench import report

group = sys.argv[1]
stat = lambda: int(open(group + "/cpu.stat").read().split("nr_throttled ")[1].split()[0])
open(group + "/cgroup.procs", "w").write(str(os.getpid()))
before = stat()
r = ctxbench.ring(2, repetitions=10, min_time=0.05, history=False)
print(json.dumps({
    "grew": stat() - before,
    "verdicts": [str(v) for v in r.stats["verdict"]],
    "warnings": list(r.warnings),
    "lines": [f"{line.kind}: {line.text}" for line in report.lines(r)],
}))
"""


def test_a_ring_a_half_cpu_quota_throttles_is_flagged_throttled_not_a_switch_cost() -> None:
    from cgroups import configured

    # The group's weight at its highest, so that the ring gets the CPU it asks for, more than
    # half a CPU, whatever else runs: the quota throttles it, not the machine's load.
    v1 = {"cpu.shares": "262144", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "50000"}
    v2 = {"cpu.weight": "10000", "cpu.max": "50000 100000"}
    with configured("cpu", v1, v2) as group:
        argv = [sys.executable, "-c", THROTTLED_RING, str(group)]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    said = json.loads(out.stdout)
    assert said["grew"] > 0, said
    assert said["verdicts"] == ["throttled"], said
    (warning,) = [w for w in said["warnings"] if "throttled" in w]
    assert warning.startswith("2 procs: throttled: the CPU quota stopped this run's groups in ")
    assert "(restriction cpu_quota: 0.50 CPU: 50000 µs every 100000 µs" in warning
    assert "its figure is not a switch's" in warning
    assert any(line.startswith("warning: 2 procs: throttled") for line in said["lines"])


# An A/B run and a one-cell matrix of two participants on one CPU in the group given as
# argv[1], joined once ctxbench is imported: how the A/B run stopped, the cell's verdict and
# the matrix's warnings.
THROTTLED_AB_AND_MATRIX = """
import json, os, sys
import ctxbench
from ctxbench import report

open(sys.argv[1] + "/cgroup.procs", "w").write(str(os.getpid()))
cpu = sorted(os.sched_getaffinity(0))[0]
side = {"measure": "ring", "procs": 2, "placement": "single", "min_time": 0.05}
ab = ctxbench.ab(side, {**side, "size_kb": 4}, budget=60, seed=1)
m = ctxbench.matrix([cpu], repetitions=10, min_time=0.05, progress=False)
print(json.dumps({
    "ab": [ab.stopped, ab.verdict, len(ab.a_us)],
    "ab_lines": [f"{line.kind}: {line.text}" for line in report.ab_lines(ab)],
    "matrix": [list(m.verdict), list(m.warnings)],
}))
"""


def test_an_ab_round_or_matrix_cell_a_quota_throttles_is_flagged_as_a_ring_is() -> None:
    """Issue 33's leftover: only rings and ping-pongs were flagged when throttled."""
    from cgroups import configured

    v1 = {"cpu.shares": "262144", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "50000"}
    v2 = {"cpu.weight": "10000", "cpu.max": "50000 100000"}
    with configured("cpu", v1, v2) as group:
        argv = [sys.executable, "-c", THROTTLED_AB_AND_MATRIX, str(group)]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    said = json.loads(out.stdout)
    # The throttled round is not kept, and the run stops there, undecided.
    stopped, verdict, rounds = said["ab"]
    assert (stopped, verdict) == ("throttled", "inconclusive"), said
    assert rounds == 0, said
    assert any("a CPU quota throttled a side's groups" in line for line in said["ab_lines"])
    verdicts, warnings = said["matrix"]
    assert verdicts == ["throttled"], said
    assert any("throttled: the CPU quota stopped" in w for w in warnings), said
