"""What the kernel is doing around a switch, as the metadata records it: its preemption mode,
a sched_ext scheduler, whether this process has rseq registered, and the CPU vulnerabilities
with their mitigations. Each probe takes the roots it reads (``metadata`` passes its
``PROC_ROOT``, ``SYS_ROOT`` and ``BOOT_ROOT``, so that tests and copied trees redirect them)
and never raises: what it cannot tell it says, with why."""

from __future__ import annotations

import ctypes
import gzip
import os
import re
from pathlib import Path

# The preemption models, as /sys/kernel/debug/sched/preempt and preempt= name them, by the
# Kconfig symbol that selects each at build time (CONFIG_PREEMPT_RT outranks the choice).
_MODELS = {
    "CONFIG_PREEMPT_RT": "rt",
    "CONFIG_PREEMPT_LAZY": "lazy",
    "CONFIG_PREEMPT": "full",
    "CONFIG_PREEMPT_VOLUNTARY": "voluntary",
    "CONFIG_PREEMPT_NONE": "none",
}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _config(proc: Path, boot: Path, release: str) -> tuple[str | None, str]:
    """The kernel's build configuration and where it came from: /boot/config-<release>,
    else /proc/config.gz (CONFIG_IKCONFIG_PROC); None with the places tried."""
    path = boot / f"config-{release}"
    text = _read(path)
    if text is not None:
        return text, str(path)
    try:
        with gzip.open(proc / "config.gz", "rt", encoding="utf-8", errors="replace") as f:
            return f.read(), str(proc / "config.gz")
    except (OSError, EOFError):
        return None, f"neither {path} nor {proc / 'config.gz'} is readable"


def preempt(sys_root: Path, proc: Path, boot: Path, release: str) -> dict[str, str]:
    """``mode`` (none, voluntary, full, lazy, rt, or unknown) and ``source``: the debugfs
    file the scheduler prints it in, where readable (debugfs is rarely mounted); else the
    build configuration, with ``preempt=`` of the command line where the kernel can switch
    at boot (CONFIG_PREEMPT_DYNAMIC); else why it is unknown."""
    debug = sys_root / "kernel" / "debug" / "sched" / "preempt"
    text = _read(debug)
    if text:
        # "none voluntary (full) lazy": the mode in use is the one in parentheses.
        chosen = re.search(r"\((\w+)\)", text)
        if chosen:
            return {"mode": chosen.group(1), "source": str(debug)}
    config, where = _config(proc, boot, release)
    if config is None:
        return {"mode": "unknown", "source": f"{debug} unreadable, and {where}"}
    built = {line.partition("=")[0] for line in config.splitlines() if line.endswith("=y")}
    mode = next((m for symbol, m in _MODELS.items() if symbol in built), None)
    if mode is None:
        return {"mode": "unknown", "source": f"{where} selects no CONFIG_PREEMPT_* model"}
    source = where
    if "CONFIG_PREEMPT_DYNAMIC" in built and mode != "rt":
        asked = re.findall(r"(?:^|\s)preempt=(\w+)", _read(proc / "cmdline") or "")
        if asked and asked[-1] in _MODELS.values():
            return {"mode": asked[-1], "source": f"preempt= of {proc / 'cmdline'} ({where})"}
        source = f"{where} (CONFIG_PREEMPT_DYNAMIC, no preempt= at boot)"
    return {"mode": mode, "source": source}


def sched_ext(sys_root: Path) -> str:
    """ "absent" (a kernel without sched_ext), the state of sched_ext ("disabled"), or
    "enabled: <the loaded scheduler's name>"."""
    base = sys_root / "kernel" / "sched_ext"
    state = _read(base / "state")
    if state is None:
        return "absent"
    ops = _read(base / "root" / "ops")
    return f"{state}: {ops}" if ops else state


def rseq() -> dict[str, object]:
    """Whether this process's threads have rseq registered: glibc (2.35 on) registers every
    thread it starts, and says so in ``__rseq_size`` (0: not registered, by the
    glibc.pthread.rseq tunable or a kernel that refused it). Forked participants keep the
    registration; threads started by the core are glibc's. ``registered`` None where the C
    library does not say (before glibc 2.35, musl)."""
    try:
        size = ctypes.c_uint.in_dll(ctypes.CDLL(None), "__rseq_size").value
    except (OSError, ValueError):
        return {
            "registered": None,
            "source": "the C library exports no __rseq_size (glibc before 2.35, or not glibc)",
        }
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    why = " (GLIBC_TUNABLES turns it off)" if "glibc.pthread.rseq=0" in tunables else ""
    return {"registered": size > 0, "source": f"glibc's __rseq_size is {size}{why}"}


def vulnerabilities(sys_root: Path) -> dict[str, str] | None:
    """Each CPU vulnerability the kernel knows of and its state ("Not affected",
    "Mitigation: ..."), from /sys/devices/system/cpu/vulnerabilities; None where hidden."""
    directory = sys_root / "devices" / "system" / "cpu" / "vulnerabilities"
    try:
        entries = sorted(p for p in directory.iterdir() if p.is_file())
    except OSError:
        return None
    found = {entry.name: _read(entry) for entry in entries}
    return {name: status for name, status in found.items() if status}
