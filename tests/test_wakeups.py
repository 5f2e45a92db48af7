"""The io_uring and futex2 wake-up paths (msg_ring, uring_futex, futex_waitv, uring_read): they
carry every token with the process and thread engines, are refused by fibers and by a kernel
that lacks them (faked with CTXBENCH_KERNEL_LACKS), and a dead participant is named, not waited
for."""

from __future__ import annotations

import errno
import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
from conftest import FAST
from test_api import _kill_one_during

import ctxbench
from ctxbench import _core

NEW = ["msg_ring", "uring_futex", "futex_waitv", "uring_read"]
# What each needs first, and the mainline release that brought it.
SINCE = {"msg_ring": "5.18", "uring_futex": "6.7", "futex_waitv": "5.16", "uring_read": "5.6"}


@pytest.mark.parametrize("engine", ["process", "thread"])
@pytest.mark.parametrize("transport", NEW)
def test_every_token_arrives(engine: str, transport: str, no_leaks: None) -> None:
    assert transport in _core.TRANSPORTS[engine]
    r = ctxbench.ring(
        [2, 3], engine=engine, transport=transport, placement="single", record_hops=True, **FAST
    )
    assert r.transport == transport and r.work_verified.all()
    # One CPU: the token cannot move without the receiver sleeping and being woken.
    assert (r.switches_per_hop >= 0.95).all(), r.switches_per_hop
    hist = r.hop_histogram
    assert hist is not None
    np.testing.assert_array_equal(hist["counts"].sum(axis=1), r.repetitions * r.trips * r.procs)


@pytest.mark.parametrize("transport", NEW)
def test_pingpong_over_a_new_wake_up(transport: str, no_leaks: None) -> None:
    for threads in (False, True):
        r = ctxbench.pingpong(2_000, threads=threads, transport=transport, placement="spread")
        assert r.transport == transport and r.usecs_per_op > 0


@pytest.mark.parametrize("transport", NEW)
def test_fibers_refuse_them_by_name(transport: str) -> None:
    refusal = rf'"{transport}" does not work with engine "fiber".*resume'
    with pytest.raises(ValueError, match=refusal):
        ctxbench.ring([2], engine="fiber", transport=transport, **FAST)


@pytest.mark.parametrize("transport", NEW)
def test_a_kernel_without_it_is_refused_with_the_release_it_needs(
    transport: str, monkeypatch: pytest.MonkeyPatch, no_leaks: None
) -> None:
    monkeypatch.setenv("CTXBENCH_KERNEL_LACKS", transport)
    with pytest.raises(OSError) as e:
        ctxbench.ring([2], transport=transport, **FAST)
    assert e.value.errno == errno.ENOSYS
    text = str(e.value)
    assert f'transport "{transport}" needs' in text and f"Linux >= {SINCE[transport]}" in text
    assert f"running Linux {platform.release()}" in text and "eventfd" in text


@pytest.mark.parametrize("transport", ["msg_ring", "uring_futex", "uring_read"])
def test_io_uring_refused_names_the_sysctl(
    transport: str, monkeypatch: pytest.MonkeyPatch, no_leaks: None
) -> None:
    # io_uring itself missing (disabled, seccomp, an old kernel): refused before its opcodes.
    monkeypatch.setenv("CTXBENCH_KERNEL_LACKS", "futex_waitv, io_uring")
    with pytest.raises(OSError, match=r"needs io_uring \(Linux >= 5.1\)"):
        ctxbench.pingpong(100, transport=transport)
    # Lacking something else leaves it alone.
    monkeypatch.setenv("CTXBENCH_KERNEL_LACKS", "futex_waitv")
    assert ctxbench.pingpong(100, transport=transport).transport == transport


@pytest.mark.parametrize("transport", NEW)
def test_a_dead_participant_is_named_not_waited_for(transport: str, no_leaks: None) -> None:
    # No EOF on any of them: the watchdog's check of the children notices the death.
    e = _kill_one_during({"transport": transport, "timeout": 60})
    assert isinstance(e, RuntimeError), e
    assert "participant" in str(e) and "signal 9" in str(e)


def test_cli_takes_them_from_the_table() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ctxbench", "ring", "--transport", "msg_ring", "--json",
         "-N", "2", "--min-time", "0.002", "2"],
        capture_output=True, text=True, check=True, env={**os.environ, "CTXBENCH_HISTORY": "off"},
    ).stdout  # fmt: skip
    (d,) = json.loads(out)["results"]
    assert (d["engine"], d["transport"]) == ("process", "msg_ring")


# Installs a seccomp filter that fails io_uring_enter (426 on every architecture) with EPERM,
# as a container's policy may, then measures one ring per engine and prints what it raised.
UNDER_SECCOMP = """
import ctypes, struct, ctxbench
FILTER = [(0x20, 0, 0, 0), (0x15, 0, 1, 426), (0x06, 0, 0, 0x00050000 | 1),
          (0x06, 0, 0, 0x7FFF0000)]
code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *f) for f in FILTER))
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(len(FILTER), ctypes.addressof(code))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0  # PR_SET_SECCOMP, a filter
for engine in ("process", "thread"):
    try:
        ctxbench.ring([2], engine=engine, transport="{transport}", placement="single",
                      repetitions=2, warmup=0, min_time=0.002, history=False)
        print(engine, "ran")
    except Exception as e:
        print(engine, type(e).__name__, getattr(e, "errno", None), e)
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"), reason="filter's ABI")
@pytest.mark.parametrize("transport", ["msg_ring", "uring_futex", "uring_read"])
def test_a_participant_refused_io_uring_enter_is_named_with_its_errno(transport: str) -> None:
    """The participant fails its first io_uring_enter with EPERM and leaves before the ring
    is released; what it said is the cause, not the ESRCH of a task already gone."""
    code = UNDER_SECCOMP.replace("{transport}", transport)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["process", "thread"], p.stdout
    for line in lines:
        assert "Operation not permitted" in line and "participant 1" in line, line
        assert "No such process" not in line and "sched_getattr" not in line, line
