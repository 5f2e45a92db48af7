"""Resource limits for tests: a fresh cgroup (v1 or v2, whichever holds the controller) that a
child interpreter joins before it imports ctxbench. Tests skip, with the reason, where the
machine does not let us make one (not root, no such controller, a read-only hierarchy)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# (v1 file, v2 file) for each limit the tests set.
LIMIT_FILES = {
    "memory": ("memory.limit_in_bytes", "memory.max"),
    "pids": ("pids.max", "pids.max"),
}


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(fstype, mount point, options) of every cgroup mount."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fstype, _source, options = (right.split() + ["", "", ""])[:3]
            if fstype in ("cgroup", "cgroup2"):
                found.append((fstype, left.split()[4], set(options.split(","))))
    return found


def _hierarchy(controller: str) -> tuple[Path, bool]:
    """(directory to create the group in, is v2) for `controller`, or skip."""
    if os.geteuid() != 0:
        pytest.skip("cgroup limits need root")
    for fstype, mount, options in _mounts():
        if fstype == "cgroup" and controller in options:
            return Path(mount), False
    for fstype, mount, _ in _mounts():
        root = Path(mount)
        if fstype == "cgroup2" and controller in (root / "cgroup.controllers").read_text().split():
            try:
                (root / "cgroup.subtree_control").write_text(f"+{controller}")
            except OSError as e:
                pytest.skip(f"cannot enable the {controller} controller in {root}: {e}")
            return root, True
    pytest.skip(f"no cgroup hierarchy has the {controller} controller here")


@contextmanager
def limited(controller: str, value: int) -> Iterator[Path]:
    """A new cgroup whose `controller` limit is `value`; removed afterwards."""
    v1_file, v2_file = LIMIT_FILES[controller]
    with configured(controller, {v1_file: str(value)}, {v2_file: str(value)}) as group:
        yield group


@contextmanager
def configured(controller: str, v1: dict[str, str], v2: dict[str, str]) -> Iterator[Path]:
    """A new cgroup in the hierarchy of `controller`, its files written in order (`v1`'s or
    `v2`'s, whichever the hierarchy is); removed afterwards."""
    parent, is_v2 = _hierarchy(controller)
    group = parent / f"ctxbench-test-{uuid.uuid4().hex[:8]}"
    try:
        group.mkdir()
        for name, value in (v2 if is_v2 else v1).items():
            (group / name).write_text(value)
    except OSError as e:
        if group.exists():
            group.rmdir()
        pytest.skip(f"cannot make a {controller} cgroup under {parent}: {e}")
    try:
        yield group
    finally:
        # Every task of the group has exited by now (run_in waits); a group must be empty
        # before rmdir.
        for pid in (group / "cgroup.procs").read_text().split():
            subprocess.run(["kill", "-9", pid], check=False)
        group.rmdir()


def run_in(group: Path, code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a fresh interpreter that joined `group` before starting."""

    def join() -> None:
        (group / "cgroup.procs").write_text(str(os.getpid()))

    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=join,
    )
