"""Machine metadata for ctxbench results, in the spirit of pyperf's metadata.

Context-switch latency is dominated by the scheduler, frequency scaling,
virtualisation and speculative-execution mitigations, so all of them are
recorded next to the numbers: without them two results cannot be compared.

Everything is best effort. A missing or unreadable file yields None rather
than an exception, because the benchmark must still run in minimal
containers, VMs and locked-down kernels where much of /sys is hidden.
"""

from __future__ import annotations

import hashlib
import os
import platform
import secrets
import socket
import time
from pathlib import Path

from . import _kernel_state

# Module-level so tests (or an analysis of a copied /proc and /sys tree) can
# redirect every probe; collect() looks them up at call time for that reason.
PROC_ROOT = Path("/proc")
SYS_ROOT = Path("/sys")
BOOT_ROOT = Path("/boot")

# Every key collect() guarantees, in display order. Exported so callers and
# tests can check completeness without duplicating the list.
KEYS: tuple[str, ...] = (
    "ctxbench_version",
    "date",
    "run_id",
    "hostname",
    "machine",
    "kernel",
    "cpu_model",
    "cpu_count",
    "affinity",
    "smt",
    # On a hybrid host, each kind of core and its CPUs (filled by the caller, from the core's
    # topology): a switch to an E-core costs differently.
    "core_types",
    "governor",
    "clocksource",
    "hypervisor",
    "hypervisor_vendor",
    "tsc",
    "preempt",
    "sched_ext",
    "rseq",
    "vulnerabilities",
    "cmdline_mitigations",
    "isolcpus",
    "nohz_full",
    "cgroup_cpu_quota",
    "loadavg",
    "runnable_per_cpu",
    "perf_event_paranoid",
    "restrictions",
    "mem_total_kb",
    "cache_kb",
    "python_version",
    "python_implementation",
    "compiler",
)

# What tells two machines apart for a switch: where one of these differs between two
# results, a difference between them may be the machine's, and ``ctxbench.compare`` says so;
# the tidy table repeats each as a column (``column_value``).
COMPARED: tuple[str, ...] = (
    "cpu_model",
    "kernel",
    "hypervisor",
    "ctxbench_version",
    "preempt",
    "sched_ext",
    "vulnerabilities",
)


def column_value(key: str, value: object) -> object:
    """A metadata value as the table's column holds it: the preemption mode alone (where it
    was read from is no difference), the vulnerabilities as "name: state" pairs joined by
    " | " (a state may hold "; "; ``vulnerability_states`` reads them back); anything else as
    it is."""
    if key == "preempt" and isinstance(value, dict):
        return value.get("mode")
    if key == "vulnerabilities" and isinstance(value, dict):
        return " | ".join(f"{k}: {v}" for k, v in sorted(value.items()))
    return value


def vulnerability_states(text: str) -> dict[str, str]:
    """The vulnerabilities column back into {name: state}."""
    pairs = (item.partition(": ") for item in text.split(" | ") if item)
    return {name: state for name, _, state in pairs}


# What results saved with ``hostname=False`` (``--no-hostname``) hold instead of the
# hostname: the key stays, as every key does, and says the name was left out on purpose
# (None would say it is unknown); the same text everywhere, so such files still compare.
HOSTNAME_WITHHELD = "(withheld)"
# Every field that can name the host: this machine's hostname, and what a fleet run adds
# (the worker's host, its Dask name, which defaults to its address, and that address).
HOST_FIELDS = ("hostname", "host", "worker", "worker_address")
# What a fleet run adds to each record's metadata (``ctxbench.fleet``), and each row of its
# frame repeats: who measured the point, on which machine, and when.
FLEET_FIELDS = ("host", "worker", "worker_address", "machine", "started", "finished")


# Set in a worker's environment, these replace the machine's two ids (``machine_identity``):
# for containers without /etc/machine-id, and for tests that fake several machines on one.
MACHINE_ID_ENV = "CTXBENCH_MACHINE_ID"
BOOT_ID_ENV = "CTXBENCH_BOOT_ID"


def _read(path: Path) -> str | None:
    # Single choke point so every probe shares the never-raise contract;
    # sysfs attributes can fail with EIO/EPERM/ENODEV even when they exist.
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _read_value(path: Path) -> str | None:
    text = _read(path)
    # Older kernels print "(null)" for unset cpumasks such as nohz_full.
    if not text or text == "(null)":
        return None
    return text


def _parse_cpuinfo(text: str | None) -> dict[str, str]:
    info: dict[str, str] = {}
    if text is None:
        return info
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            # First processor block wins: the model is what matters and
            # heterogeneous (big.LITTLE) parts cannot be summarised anyway.
            info.setdefault(key.strip(), value.strip())
    return info


def _cpu_model(info: dict[str, str]) -> str | None:
    # x86 uses "model name"; old 32-bit ARM "Processor"; MIPS "cpu model";
    # POWER "cpu".
    for key in ("model name", "Processor", "cpu model", "cpu"):
        if info.get(key):
            return info[key]
    # arm64 exposes no model string, only SoC and part numbers.
    if info.get("Hardware"):
        return info["Hardware"]
    part = info.get("CPU part")
    if part:
        implementer = info.get("CPU implementer")
        return f"implementer {implementer} part {part}" if implementer else f"part {part}"
    return None


def _smt(cpu_dir: Path) -> str | None:
    control = _read_value(cpu_dir / "smt" / "control")
    active = _read_value(cpu_dir / "smt" / "active")
    if control is None:
        if active is None:
            return None
        return "on" if active == "1" else "off"
    if control == "on" and active == "0":
        # Allowed but no sibling threads online: behaves like "off" for
        # placement purposes, yet differs from an admin-disabled setting.
        return "on (inactive)"
    return control


def _cmdline_mitigations(proc: Path) -> str | None:
    cmdline = _read(proc / "cmdline")
    if cmdline is None:
        return None
    value: str | None = None
    for token in cmdline.split():
        if token.startswith("mitigations="):
            # The kernel applies early params in order, so the last one wins.
            value = token.partition("=")[2]
    return value


def _parse_int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _mem_total_kb(proc: Path) -> int | None:
    text = _read(proc / "meminfo")
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            fields = line.split()
            return _parse_int(fields[1]) if len(fields) > 1 else None
    return None


def _size_kb(text: str | None) -> int | None:
    # sysfs prints cache sizes as "48K"; M and G are accepted in case an architecture uses them.
    if not text:
        return None
    scale = {"K": 1, "M": 1024, "G": 1024 * 1024}.get(text[-1].upper())
    number = _parse_int(text[:-1] if scale else text)
    if number is None:
        return None
    return number * scale if scale else number // 1024


def _cache_kb(cpu_dir: Path) -> dict[str, int] | None:
    """CPU 0's caches in KiB by name (L1d, L1i, L2, L3), from sysfs cache/index*/."""
    try:
        indices = sorted((cpu_dir / "cpu0" / "cache").glob("index*"))
    except OSError:
        return None
    caches: dict[str, int] = {}
    for index in indices:
        level = _read_value(index / "level")
        kind = _read_value(index / "type")
        size = _size_kb(_read_value(index / "size"))
        if level is None or size is None:
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind or "", "")
        caches.setdefault(f"L{level}{suffix}", size)
    return caches or None


def cpu_quota(proc: Path, sys_root: Path, boot: Path) -> float | None:
    """The tightest CPU quota on this process's groups, in CPUs: the core's reading
    (``_core.cpu_quota``), the one the restriction ``cpu_quota`` names and a run's throttle
    flag watches; None where no limit is found."""
    from . import _core

    return _core.cpu_quota(str(sys_root), str(proc), str(boot))


def restrictions(proc: Path, sys_root: Path, boot: Path) -> dict[str, str]:
    """What the host is restricted in (a cpuset, a CPU quota, a read-only cgroup file system,
    perf_event_paranoid, io_uring refused, no kernel config), each restriction's name and what
    was read: the core's (``_core.restrictions``), which also says what to do."""
    from . import _core

    found = _core.restrictions(str(sys_root), str(proc), str(boot))
    return {r["name"]: r["detail"] for r in found}


def _affinity() -> list[int] | None:
    try:
        return sorted(os.sched_getaffinity(0))
    except (OSError, AttributeError):
        return None


# Other tasks runnable per CPU just before a run: the running count of /proc/loadavg sampled
# this many times, this far apart.
RUNNABLE_SAMPLES = 10
RUNNABLE_PAUSE_S = 0.001
# Two runs are in comparable conditions when the other tasks runnable per CPU before each
# differ by at most this (two CPU-bound processes on two CPUs: 1.0).
LOAD_TOLERANCE = 0.25


def runnable_per_cpu(proc: Path = PROC_ROOT) -> float | None:
    """Tasks runnable besides this one, per CPU: the mean of ``RUNNABLE_SAMPLES`` readings of
    /proc/loadavg's running count. The load averages lag by a minute (two CPU-bound
    processes started 4 s before move the 1-minute one by about 0.1); this does not."""
    counts = []
    for _ in range(RUNNABLE_SAMPLES):
        try:
            with open(proc / "loadavg", "rb") as f:
                counts.append(int(f.read(256).split()[3].split(b"/")[0]) - 1)
        except (OSError, ValueError, IndexError):
            return None
        time.sleep(RUNNABLE_PAUSE_S)
    return max(0.0, sum(counts) / len(counts)) / (os.cpu_count() or 1)


def _loadavg() -> list[float] | None:
    try:
        return [float(x) for x in os.getloadavg()]
    except OSError:
        return None


def _digest(text: str) -> str:
    # An application-specific id, as machine-id(5) recommends, instead of the raw one.
    return hashlib.sha256(f"ctxbench:{text}".encode()).hexdigest()[:8]


def machine_identity() -> dict[str, str]:
    """``machine``: "<machine-id hash>-<boot-id hash>", a kernel instance plus its
    installation, so two hosts with one hostname stay apart, and so do clones of one VM image
    (same machine-id, different boot ids); ``kernel``: the boot id's hash. The raw ids are not
    published (machine-id(5) asks for that). $CTXBENCH_MACHINE_ID and $CTXBENCH_BOOT_ID replace
    the two ids."""
    machine_id = (
        os.environ.get(MACHINE_ID_ENV)
        or _read_value(Path("/etc/machine-id"))
        or _read_value(Path("/var/lib/dbus/machine-id"))
        or socket.gethostname()
    )
    boot_id = (
        os.environ.get(BOOT_ID_ENV)
        or _read_value(PROC_ROOT / "sys" / "kernel" / "random" / "boot_id")
        or f"{socket.gethostname()}-unknown-boot"
    )
    kernel = _digest(boot_id)
    return {"machine": f"{_digest(machine_id)}-{kernel}", "kernel": kernel}


def _utc_now() -> str:
    # time.gmtime avoids datetime.UTC (3.11+) while staying unambiguous UTC.
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _collect(
    proc: Path,
    sys_root: Path,
    boot: Path,
    *,
    version: str,
    extra: dict[str, object] | None,
) -> dict[str, object]:
    cpu_dir = sys_root / "devices" / "system" / "cpu"
    cpuinfo = _parse_cpuinfo(_read(proc / "cpuinfo"))
    # Only x86 has a "flags" line; its absence is how non-x86 is detected,
    # which keeps the detection testable with a fake tree.
    flags_line = cpuinfo.get("flags")
    flags = set(flags_line.split()) if flags_line is not None else None

    hypervisor_vendor = _read_value(sys_root / "hypervisor" / "type")
    hypervisor: bool | None
    if hypervisor_vendor is not None:
        hypervisor = True
    elif flags is not None:
        hypervisor = "hypervisor" in flags
    else:
        # Without x86 flags there is no cheap, reliable signal either way.
        hypervisor = None

    tsc: dict[str, bool] | None = None
    if flags is not None:
        tsc = {
            "constant_tsc": "constant_tsc" in flags,
            "nonstop_tsc": "nonstop_tsc" in flags,
        }

    values: dict[str, object] = {
        "ctxbench_version": version,
        "date": _utc_now(),
        # Tells one measuring call's results from another's made in the same second: a
        # comparison uses the spread between runs where a side holds several.
        "run_id": secrets.token_hex(6),
        "hostname": platform.node() or None,
        # What a sweep resumes per (``grid.point_key``), and a fleet run names its machines by.
        "machine": machine_identity()["machine"],
        "kernel": platform.release() or None,
        "cpu_model": _cpu_model(cpuinfo),
        "cpu_count": os.cpu_count(),
        "affinity": _affinity(),
        "smt": _smt(cpu_dir),
        "governor": _read_value(cpu_dir / "cpu0" / "cpufreq" / "scaling_governor"),
        "clocksource": _read_value(
            sys_root / "devices" / "system" / "clocksource" / "clocksource0" / "current_clocksource"
        ),
        "hypervisor": hypervisor,
        "hypervisor_vendor": hypervisor_vendor,
        "tsc": tsc,
        # The scheduler's own state: a preemption model, a BPF scheduler, rseq, mitigations
        # each change what a switch costs.
        "preempt": _kernel_state.preempt(sys_root, proc, boot, platform.release()),
        "sched_ext": _kernel_state.sched_ext(sys_root),
        "rseq": _kernel_state.rseq(),
        "vulnerabilities": _kernel_state.vulnerabilities(sys_root),
        "cmdline_mitigations": _cmdline_mitigations(proc),
        "isolcpus": _read_value(cpu_dir / "isolated"),
        "nohz_full": _read_value(cpu_dir / "nohz_full"),
        # The core's reading, which the restriction cpu_quota and the throttle flag use too.
        "cgroup_cpu_quota": cpu_quota(proc, sys_root, boot),
        "loadavg": _loadavg(),
        # Other tasks runnable per CPU as the run starts: one run measured among them cannot
        # speak for another (``ctxbench.compare`` says so).
        "runnable_per_cpu": runnable_per_cpu(proc),
        "perf_event_paranoid": _parse_int(
            _read_value(proc / "sys" / "kernel" / "perf_event_paranoid")
        ),
        # What a container or a locked-down kernel takes away (none: an empty dict).
        "restrictions": restrictions(proc, sys_root, boot),
        "mem_total_kb": _mem_total_kb(proc),
        # The working-set sizes where the lat_ctx curve steps up (plot.sizes draws them).
        "cache_kb": _cache_kb(cpu_dir),
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        # Filled by the caller: the rustc that built the native module.
        "compiler": None,
    }
    metadata = {key: values.get(key) for key in KEYS}
    if extra:
        # The caller knows things this module cannot (placement, run id), so
        # its values take precedence.
        metadata.update(extra)
    return metadata


def without_hostname(metadata: dict[str, object]) -> dict[str, object]:
    """A copy of ``metadata`` with every field of ``HOST_FIELDS`` it has
    ``HOSTNAME_WITHHELD``."""
    return {k: HOSTNAME_WITHHELD if k in HOST_FIELDS else v for k, v in metadata.items()}


def collect(
    *, version: str = "unknown", extra: dict[str, object] | None = None
) -> dict[str, object]:
    """Metadata of this machine now; every key is present (None when unknown)."""
    return _collect(PROC_ROOT, SYS_ROOT, BOOT_ROOT, version=version, extra=extra)


def _format_int_ranges(values: list[int]) -> str:
    # Affinity masks on big machines are hundreds of CPUs; "0-127" is the
    # notation users already know from taskset and /sys cpulists.
    parts: list[str] = []
    start = prev = values[0]
    for v in values[1:]:
        if v == prev + 1:
            prev = v
            continue
        parts.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = v
    parts.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(parts)


# For these keys None is the normal "feature not in use" case, and printing
# "unknown" would send users hunting for a problem that does not exist.
_NONE_TEXT: dict[str, str] = {
    "isolcpus": "none",
    "nohz_full": "none",
    "cmdline_mitigations": "not set",
    "cgroup_cpu_quota": "no limit found",
    "core_types": "one kind",
}


def _format_value(value: object) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        # Two decimals is finer than run-to-run noise of loadavg or quotas;
        # trailing zeros only widen the column.
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if isinstance(value, (list, tuple)):
        if not value:
            return "(none)"
        items = list(value)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            ints = [v for v in items if isinstance(v, int)]
            if ints == sorted(set(ints)):
                return _format_int_ranges(ints)
        return " ".join(_format_value(v) for v in items)
    if isinstance(value, dict):
        if not value:
            return "(none)"
        return ", ".join(f"{k}={_format_value(v)}" for k, v in value.items())
    return " ".join(str(value).split())


def format_metadata(metadata: dict[str, object]) -> str:
    """Aligned 'key: value' lines for the CLI `ctxbench info`."""
    rows: list[tuple[str, str]] = []
    for key, value in metadata.items():
        if isinstance(value, dict) and value:
            # Nested dicts (mitigations has ~20 long entries) are unreadable
            # on one line, so each entry gets its own dotted key.
            for sub, sub_value in value.items():
                rows.append((f"{key}.{sub}", _format_value(sub_value)))
        elif value is None and key in _NONE_TEXT:
            rows.append((key, _NONE_TEXT[key]))
        else:
            rows.append((key, _format_value(value)))
    if not rows:
        return ""
    width = max(len(key) for key, _ in rows) + 1
    return "\n".join(f"{key + ':':<{width}} {text}" for key, text in rows)
