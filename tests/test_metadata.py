"""Tests for metadata.py: real machine, fake /proc+/sys trees, formatting."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxbench import metadata as md

# Builds a fake tree from {relative path: content} and runs collect() on it.
Collector = Callable[[dict[str, str]], dict[str, object]]

# Expected types per key when the value is known; None is always allowed.
EXPECTED_TYPES: dict[str, tuple[type, ...]] = {
    "ctxbench_version": (str,),
    "date": (str,),
    "run_id": (str,),
    "hostname": (str,),
    "machine": (str,),
    "kernel": (str,),
    "cpu_model": (str,),
    "cpu_count": (int,),
    "affinity": (list,),
    "smt": (str,),
    "core_types": (dict,),
    "governor": (str,),
    "clocksource": (str,),
    "hypervisor": (bool,),
    "hypervisor_vendor": (str,),
    "tsc": (dict,),
    "preempt": (dict,),
    "sched_ext": (str,),
    "rseq": (dict,),
    "vulnerabilities": (dict,),
    "cmdline_mitigations": (str,),
    "isolcpus": (str,),
    "nohz_full": (str,),
    "cgroup_cpu_quota": (float,),
    "loadavg": (list,),
    "runnable_per_cpu": (float,),
    "perf_event_paranoid": (int,),
    "restrictions": (dict,),
    "mem_total_kb": (int,),
    "cache_kb": (dict,),
    "python_version": (str,),
    "python_implementation": (str,),
    "compiler": (str,),
}

# Keys whose value depends only on PROC_ROOT/SYS_ROOT, so an empty tree must
# make them None.
TREE_KEYS = (
    "cpu_model",
    "smt",
    "governor",
    "clocksource",
    "hypervisor",
    "hypervisor_vendor",
    "tsc",
    "vulnerabilities",
    "cmdline_mitigations",
    "isolcpus",
    "nohz_full",
    "cgroup_cpu_quota",
    "perf_event_paranoid",
    "mem_total_kb",
    "cache_kb",
)

X86_VM_CPUINFO = """\
processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
flags\t\t: fpu vme tsc constant_tsc rep_good nopl hypervisor lahf_lm

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
flags\t\t: fpu vme tsc constant_tsc rep_good nopl hypervisor lahf_lm
"""

ARM_CPUINFO = """\
processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics
CPU implementer\t: 0x41
CPU architecture: 8
CPU part\t: 0xd0c
"""


def make_tree(root: Path, files: dict[str, str]) -> tuple[Path, Path]:
    proc, sys_root = root / "proc", root / "sys"
    proc.mkdir(parents=True, exist_ok=True)
    sys_root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return proc, sys_root


@pytest.fixture
def fake_roots(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Collector:
    def point(files: dict[str, str]) -> dict[str, object]:
        proc, sys_root = make_tree(tmp_path, files)
        monkeypatch.setattr(md, "PROC_ROOT", proc)
        monkeypatch.setattr(md, "SYS_ROOT", sys_root)
        monkeypatch.setattr(md, "BOOT_ROOT", tmp_path / "boot")
        return md.collect(version="9.9")

    return point


def check_types(meta: dict[str, object]) -> None:
    for key, types in EXPECTED_TYPES.items():
        value = meta[key]
        assert value is None or isinstance(value, types), (key, value)


# --- real machine -----------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")
def test_collect_real_machine() -> None:
    meta = md.collect(version="1.2.3")
    assert set(md.KEYS) <= set(meta)
    assert set(EXPECTED_TYPES) == set(md.KEYS)
    check_types(meta)
    assert meta["ctxbench_version"] == "1.2.3"
    assert isinstance(meta["kernel"], str) and meta["kernel"]
    assert meta["cpu_count"] == os.cpu_count()
    affinity = meta["affinity"]
    assert isinstance(affinity, list) and affinity == sorted(affinity)
    assert all(isinstance(c, int) for c in affinity)
    loadavg = meta["loadavg"]
    assert isinstance(loadavg, list) and len(loadavg) == 3
    assert all(isinstance(x, float) for x in loadavg)
    # Other tasks runnable per CPU as the run starts: this process is not one of them.
    assert isinstance(meta["runnable_per_cpu"], float) and meta["runnable_per_cpu"] >= 0
    assert isinstance(meta["date"], str)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["date"])
    assert isinstance(meta["mem_total_kb"], int) and meta["mem_total_kb"] > 0
    tsc = meta["tsc"]
    if isinstance(tsc, dict):
        assert set(tsc) == {"constant_tsc", "nonstop_tsc"}
    mitigations = meta["vulnerabilities"]
    if isinstance(mitigations, dict):
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in mitigations.items())
    json.loads(json.dumps(meta))


def test_collect_extra_merged_and_wins() -> None:
    meta = md.collect(extra={"placement": "spread", "kernel": "override"})
    assert meta["placement"] == "spread"
    assert meta["kernel"] == "override"
    assert meta["ctxbench_version"] == "unknown"


def test_real_metadata_formats_and_hints() -> None:
    from ctxbench.report import hints

    meta = md.collect()
    text = md.format_metadata(meta)
    assert "kernel:" in text
    for placement in ("single", "spread"):
        for hint in hints(meta, placement=placement):
            assert "\n" not in hint and len(hint) < 100


# --- fake trees -------------------------------------------------------------


def test_fake_x86_vm_tree(fake_roots: Collector) -> None:
    vuln = "sys/devices/system/cpu/vulnerabilities"
    meta = fake_roots(
        {
            "proc/cpuinfo": X86_VM_CPUINFO,
            "proc/cmdline": "BOOT_IMAGE=/vmlinuz mitigations=auto quiet mitigations=off\n",
            "proc/meminfo": "MemTotal:       16314068 kB\nMemFree:  1 kB\n",
            "proc/sys/kernel/perf_event_paranoid": "2\n",
            "proc/self/cgroup": "0::/bench.slice/run\n",
            "sys/fs/cgroup/bench.slice/run/cpu.max": "50000 100000\n",
            "sys/fs/cgroup/cpu.max": "max 100000\n",
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "powersave\n",
            "sys/devices/system/cpu/smt/control": "on\n",
            "sys/devices/system/cpu/smt/active": "1\n",
            "sys/devices/system/cpu/isolated": "\n",
            "sys/devices/system/cpu/nohz_full": "(null)\n",
            "sys/devices/system/clocksource/clocksource0/current_clocksource": "kvm-clock\n",
            "sys/hypervisor/type": "xen\n",
            f"{vuln}/spectre_v2": "Mitigation: Retpolines\n",
            f"{vuln}/meltdown": "Not affected\n",
        }
    )
    assert meta["cpu_model"] == "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"
    assert meta["hypervisor"] is True
    assert meta["hypervisor_vendor"] == "xen"
    assert meta["tsc"] == {"constant_tsc": True, "nonstop_tsc": False}
    assert meta["governor"] == "powersave"
    assert meta["smt"] == "on"
    assert meta["clocksource"] == "kvm-clock"
    assert meta["cgroup_cpu_quota"] == 0.5
    assert meta["cmdline_mitigations"] == "off"
    assert meta["isolcpus"] is None
    assert meta["nohz_full"] is None
    assert meta["perf_event_paranoid"] == 2
    assert meta["mem_total_kb"] == 16314068
    assert meta["vulnerabilities"] == {
        "meltdown": "Not affected",
        "spectre_v2": "Mitigation: Retpolines",
    }
    assert meta["ctxbench_version"] == "9.9"
    assert meta["compiler"] is None
    check_types(meta)
    json.dumps(meta)


def test_hypervisor_flag_without_sys_hypervisor(fake_roots: Collector) -> None:
    meta = fake_roots({"proc/cpuinfo": X86_VM_CPUINFO})
    assert meta["hypervisor"] is True
    assert meta["hypervisor_vendor"] is None


def test_bare_metal_x86(fake_roots: Collector) -> None:
    meta = fake_roots(
        {"proc/cpuinfo": "model name\t: Some CPU\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n"}
    )
    assert meta["hypervisor"] is False
    assert meta["tsc"] == {"constant_tsc": True, "nonstop_tsc": True}


def test_cache_sizes(fake_roots: Collector) -> None:
    cache = "sys/devices/system/cpu/cpu0/cache"
    files = {}
    for i, (level, kind, size) in enumerate(
        [
            ("1", "Data", "48K"),
            ("1", "Instruction", "32K"),
            ("2", "Unified", "2048K"),
            ("3", "Unified", "32M"),
        ]
    ):
        files.update(
            {
                f"{cache}/index{i}/level": level,
                f"{cache}/index{i}/type": kind,
                f"{cache}/index{i}/size": size,
            }
        )
    assert fake_roots(files)["cache_kb"] == {"L1d": 48, "L1i": 32, "L2": 2048, "L3": 32768}


def test_missing_files_give_none(fake_roots: Collector) -> None:
    meta = fake_roots({})
    assert set(md.KEYS) <= set(meta)
    for key in TREE_KEYS:
        assert meta[key] is None, key
    # Keys that do not come from the tree are still filled in.
    assert meta["kernel"] is not None
    assert meta["python_version"] is not None
    check_types(meta)
    json.dumps(meta)


def test_unreadable_files_give_none(fake_roots: Collector, tmp_path: Path) -> None:
    # A directory in place of a file raises IsADirectoryError even for root,
    # unlike chmod 000 which root bypasses.
    for rel in (
        "proc/cpuinfo",
        "proc/meminfo",
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
    ):
        (tmp_path / rel).mkdir(parents=True)
    meta = fake_roots({"proc/cmdline": "quiet\n"})
    assert meta["cpu_model"] is None
    assert meta["mem_total_kb"] is None
    assert meta["governor"] is None
    assert meta["cmdline_mitigations"] is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_permission_denied_gives_none(fake_roots: Collector, tmp_path: Path) -> None:
    proc, _ = make_tree(tmp_path, {"proc/sys/kernel/perf_event_paranoid": "1\n"})
    target = proc / "sys" / "kernel" / "perf_event_paranoid"
    target.chmod(0)
    try:
        assert fake_roots({})["perf_event_paranoid"] is None
    finally:
        target.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_arm_cpuinfo(fake_roots: Collector) -> None:
    meta = fake_roots({"proc/cpuinfo": ARM_CPUINFO})
    assert meta["cpu_model"] == "implementer 0x41 part 0xd0c"
    assert meta["tsc"] is None
    assert meta["hypervisor"] is None


def test_arm_hardware_preferred(fake_roots: Collector) -> None:
    meta = fake_roots({"proc/cpuinfo": ARM_CPUINFO + "\nHardware\t: BCM2835\n"})
    assert meta["cpu_model"] == "BCM2835"


@pytest.mark.parametrize(
    ("control", "active", "expected"),
    [
        ("on", "1", "on"),
        ("off", "0", "off"),
        ("forceoff", "0", "forceoff"),
        ("notsupported", "0", "notsupported"),
        ("on", "0", "on (inactive)"),
        (None, "1", "on"),
        (None, "0", "off"),
        (None, None, None),
    ],
)
def test_smt(
    fake_roots: Collector, control: str | None, active: str | None, expected: str | None
) -> None:
    files = {}
    if control is not None:
        files["sys/devices/system/cpu/smt/control"] = control + "\n"
    if active is not None:
        files["sys/devices/system/cpu/smt/active"] = active + "\n"
    assert fake_roots(files)["smt"] == expected


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # Own cgroup unlimited -> None.
        ({"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/cpu.max": "max 100000\n"}, None),
        # Root-namespace container: path from /proc/self/cgroup is absent here,
        # the limit sits at the mount root.
        (
            {
                "proc/self/cgroup": "0::/docker/abc\n",
                "sys/fs/cgroup/cpu.max": "200000 100000\n",
            },
            2.0,
        ),
        # Tightest ancestor wins.
        (
            {
                "proc/self/cgroup": "0::/a/b\n",
                "sys/fs/cgroup/a/cpu.max": "150000 100000\n",
                "sys/fs/cgroup/a/b/cpu.max": "max 100000\n",
            },
            1.5,
        ),
        # cgroup v1 fallback.
        (
            {
                "proc/self/cgroup": "4:cpu,cpuacct:/job\n0::/\n",
                "sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_quota_us": "25000\n",
                "sys/fs/cgroup/cpu,cpuacct/job/cpu.cfs_period_us": "100000\n",
            },
            0.25,
        ),
        # v1 unlimited.
        (
            {
                "proc/self/cgroup": "1:cpu:/\n",
                "sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
                "sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
            },
            None,
        ),
        # Garbage must not raise.
        ({"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/cpu.max": "lots 0\n"}, None),
        ({"proc/self/cgroup": "nonsense\n"}, None),
    ],
)
def test_cgroup_quota(fake_roots: Collector, files: dict[str, str], expected: float | None) -> None:
    assert fake_roots(files)["cgroup_cpu_quota"] == expected


def test_the_cpu_quota_has_one_home_the_cores_reading(
    fake_roots: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33's leftover: metadata read the quota itself, beside the core's reading that
    names the restriction and flags a throttled run."""
    from ctxbench import _core

    files = {"proc/self/cgroup": "0::/a\n", "sys/fs/cgroup/a/cpu.max": "75000 100000\n"}
    assert fake_roots(files)["cgroup_cpu_quota"] == 0.75
    assert _core.cpu_quota(str(md.SYS_ROOT), str(md.PROC_ROOT), str(md.BOOT_ROOT)) == 0.75
    (said,) = [r for r in _core.restrictions(str(md.SYS_ROOT), str(md.PROC_ROOT)) if
               r["name"] == "cpu_quota"]  # fmt: skip
    assert said["detail"].startswith("0.75 CPU")
    monkeypatch.setattr(_core, "cpu_quota", lambda *roots: 0.125)
    assert fake_roots(files)["cgroup_cpu_quota"] == 0.125


def test_internal_collect_with_explicit_roots(tmp_path: Path) -> None:
    proc, sys_root = make_tree(tmp_path, {"proc/sys/kernel/perf_event_paranoid": "-1\n"})
    meta = md._collect(proc, sys_root, tmp_path / "boot", version="x", extra=None)
    assert meta["perf_event_paranoid"] == -1


# --- format_metadata --------------------------------------------------------


def test_format_metadata_alignment_and_values() -> None:
    meta: dict[str, object] = {
        "kernel": "6.1.0",
        "cpu_count": 8,
        "affinity": [0, 1, 2, 3, 6, 8, 9],
        "governor": None,
        "hypervisor": True,
        "loadavg": [0.5, 0.25, 0.0],
        "tsc": {"constant_tsc": True, "nonstop_tsc": False},
        "vulnerabilities": {},
        "cpu_model": "multi\nline",
        "isolcpus": None,
        "cgroup_cpu_quota": None,
        "ratio": 0.70166,
    }
    lines = md.format_metadata(meta).splitlines()
    rows = dict(line.split(": ", 1) for line in lines)
    rows = {k.rstrip(":").strip(): v.strip() for k, v in rows.items()}
    assert rows["kernel"] == "6.1.0"
    assert rows["affinity"] == "0-3,6,8-9"
    assert rows["governor"] == "unknown"
    assert rows["hypervisor"] == "yes"
    assert rows["loadavg"] == "0.5 0.25 0"
    assert rows["tsc.constant_tsc"] == "yes"
    assert rows["tsc.nonstop_tsc"] == "no"
    assert rows["vulnerabilities"] == "(none)"
    assert rows["cpu_model"] == "multi line"
    assert rows["isolcpus"] == "none"
    assert rows["cgroup_cpu_quota"] == "no limit found"
    assert rows["ratio"] == "0.7"
    # Every value starts in the same column.
    columns = {len(line) - len(line.split(":", 1)[1].lstrip()) for line in lines}
    assert len(columns) == 1


def test_format_metadata_empty() -> None:
    assert md.format_metadata({}) == ""


# --- what the kernel is doing -------------------------------------------------


def test_preempt_from_debugfs_where_readable(fake_roots: Collector) -> None:
    meta = fake_roots({"sys/kernel/debug/sched/preempt": "none voluntary (full) lazy\n"})
    assert meta["preempt"]["mode"] == "full"  # type: ignore[index]
    assert str(meta["preempt"]["source"]).endswith("kernel/debug/sched/preempt")  # type: ignore[index]


def test_preempt_from_the_config_and_the_boot_command_line(
    fake_roots: Collector, tmp_path: Path
) -> None:
    release = os.uname().release
    (tmp_path / "boot").mkdir()
    config = (
        "CONFIG_PREEMPT_BUILD=y\n# CONFIG_PREEMPT_NONE is not set\nCONFIG_PREEMPT_VOLUNTARY=y\n"
    )
    (tmp_path / "boot" / f"config-{release}").write_text(config)
    meta = fake_roots({"proc/cmdline": "quiet\n"})
    assert meta["preempt"] == {
        "mode": "voluntary",
        "source": str(tmp_path / "boot" / f"config-{release}"),
    }
    # A dynamic kernel takes the model preempt= names at boot.
    (tmp_path / "boot" / f"config-{release}").write_text(config + "CONFIG_PREEMPT_DYNAMIC=y\n")
    meta = fake_roots({"proc/cmdline": "quiet preempt=full\n"})
    assert meta["preempt"]["mode"] == "full"  # type: ignore[index]
    assert "preempt= of" in str(meta["preempt"]["source"])  # type: ignore[index]
    # PREEMPT_RT outranks the choice.
    (tmp_path / "boot" / f"config-{release}").write_text("CONFIG_PREEMPT=y\nCONFIG_PREEMPT_RT=y\n")
    assert fake_roots({})["preempt"]["mode"] == "rt"  # type: ignore[index]


def test_preempt_from_proc_config_gz(fake_roots: Collector, tmp_path: Path) -> None:
    import gzip

    (tmp_path / "proc").mkdir(exist_ok=True)
    with gzip.open(tmp_path / "proc" / "config.gz", "wt") as f:
        f.write("CONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_DYNAMIC=y\n")
    meta = fake_roots({"proc/cmdline": "quiet\n"})
    assert meta["preempt"]["mode"] == "none"  # type: ignore[index]
    assert "config.gz" in str(meta["preempt"]["source"])  # type: ignore[index]


def test_preempt_unknown_says_why(fake_roots: Collector) -> None:
    preempt = fake_roots({})["preempt"]
    assert preempt["mode"] == "unknown"  # type: ignore[index]
    why = str(preempt["source"])  # type: ignore[index]
    assert "debug/sched/preempt unreadable" in why and "config.gz" in why and "/boot/config-" in why


def test_sched_ext_absent_disabled_and_loaded(fake_roots: Collector) -> None:
    assert fake_roots({})["sched_ext"] == "absent"
    assert fake_roots({"sys/kernel/sched_ext/state": "disabled\n"})["sched_ext"] == "disabled"
    loaded = {
        "sys/kernel/sched_ext/state": "enabled\n",
        "sys/kernel/sched_ext/root/ops": "rusty_1.0.5_x86_64\n",
    }
    assert fake_roots(loaded)["sched_ext"] == "enabled: rusty_1.0.5_x86_64"


def test_rseq_says_whether_glibc_registered_it() -> None:
    rseq = md.collect()["rseq"]
    assert isinstance(rseq, dict) and set(rseq) == {"registered", "source"}
    import ctypes

    try:
        size = ctypes.c_uint.in_dll(ctypes.CDLL(None), "__rseq_size").value
    except ValueError:
        assert rseq["registered"] is None
    else:
        assert rseq["registered"] is (size > 0)
        assert f"__rseq_size is {size}" in str(rseq["source"])


def test_kernel_state_is_compared_and_repeated_on_every_row() -> None:
    for key in ("preempt", "sched_ext", "vulnerabilities"):
        assert key in md.COMPARED
    states = {"spectre_v2": "Mitigation: Retpolines; IBPB: conditional", "mds": "Not affected"}
    text = md.column_value("vulnerabilities", states)
    assert md.vulnerability_states(text) == states  # type: ignore[arg-type]
    assert md.column_value("preempt", {"mode": "full", "source": "x"}) == "full"
