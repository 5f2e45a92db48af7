"""Restricted processes made for real, each in a child only (never a machine-wide setting:
other tests run meanwhile): a seccomp filter refusing io_uring_setup, a user without
capabilities, a cgroup file system read-only in a mount namespace of the child's own.
Tests skip, with the reason, where the machine does not let us (not root, no unshare).

``python3 tests/restricted.py seccomp-io-uring ERRNO -- ARGV...`` runs ARGV under a filter
that answers io_uring_setup with ERRNO (stdlib only: the filter is installed before exec).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve()

# <linux/seccomp.h>, <linux/filter.h>, <linux/audit.h>
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_RET_K = 0x06
AUDIT_ARCH_X86_64 = 0xC000003E
NR_IO_URING_SETUP = 425  # the same number on every architecture since 5.1


def _filter(errno: int) -> bytes:
    """A BPF program: io_uring_setup on x86-64 gets `errno`, everything else runs."""
    insn = [
        (BPF_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (BPF_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        (BPF_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (BPF_JEQ_K, 0, 1, NR_IO_URING_SETUP),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return b"".join(struct.pack("HBBI", *i) for i in insn)


def _install(errno: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    code = _filter(errno)
    filt = ctypes.create_string_buffer(code)
    prog = struct.pack("HxxxxxxP", len(code) // 8, ctypes.addressof(filt))
    prog_buf = ctypes.create_string_buffer(prog)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog_buf, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def seccomp_argv(errno: int, argv: list[str]) -> list[str]:
    """`argv` run under a filter answering io_uring_setup with `errno`."""
    if os.uname().machine != "x86_64":
        pytest.skip("the io_uring_setup filter is written for x86-64")
    return [sys.executable, str(HERE), "seccomp-io-uring", str(errno), "--", *argv]


def _root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")


def unprivileged_argv(argv: list[str]) -> list[str]:
    """`argv` as user nobody, without capabilities (perf_event_paranoid then applies)."""
    _root()
    if shutil.which("setpriv") is None:
        pytest.skip("no setpriv(1)")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
            *argv]  # fmt: skip


def read_only_cgroups_argv(mount: str, argv: list[str]) -> list[str]:
    """`argv` in a mount namespace of its own where the cgroup hierarchy at `mount` is
    read-only (the rest of the machine keeps it writable)."""
    _root()
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1)")
    script = 'mount -o remount,bind,ro "$0" && exec "$@"'
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, mount, *argv]


def run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[1] != "seccomp-io-uring" or sys.argv[3] != "--":
        sys.exit(f"usage: python3 {sys.argv[0]} seccomp-io-uring ERRNO -- ARGV...")
    _install(int(sys.argv[2]))
    os.execvp(sys.argv[4], sys.argv[4:])
