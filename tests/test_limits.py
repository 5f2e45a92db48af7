"""Resource limits imposed with cgroups: every failure is an exception with a hint and a full
teardown, never a panic, a hang or the OOM killer."""

from __future__ import annotations

import pytest
from cgroups import limited, run_in

pytestmark = pytest.mark.slow

GIB = 1 << 30

# Prints the exception's type and message, or OK; any other ending (a panic, a kill by the
# OOM killer) shows in the return code and stderr.
REPORT = """
import ctxbench
try:
    {call}
    print("OK")
except BaseException as e:
    # OSError with errno EAGAIN arrives as its subclass BlockingIOError.
    print("OSError" if isinstance(e, OSError) else type(e).__name__, e)
"""


def _report(group, call: str) -> str:  # type: ignore[no-untyped-def]
    p = run_in(group, REPORT.format(call=call))
    assert p.returncode == 0, f"exit {p.returncode}: {p.stdout}{p.stderr}"
    return p.stdout


@pytest.mark.parametrize("procs", [64, 8])
def test_a_ring_too_big_for_the_memory_cgroup_is_a_memory_error(procs: int) -> None:
    with limited("memory", 3 * GIB) as group:
        out = _report(group, f"ctxbench.lat_ctx([{procs}], size_kb=1 << 20, min_time=0.002)")
    assert out.startswith("MemoryError"), out
    assert "MiB is available" in out, out
    assert "memory.limit_in_bytes" in out or "memory.max" in out, out
    assert f"{procs} participants with 1048576 KiB" in out, out


def test_a_ring_that_fits_the_memory_cgroup_runs() -> None:
    with limited("memory", 3 * GIB) as group:
        out = _report(group, "ctxbench.lat_ctx([2, 8], size_kb=1024, min_time=0.002)")
    assert out.strip() == "OK", out


# The same fault at every place the core creates a task: forking participants, starting
# participant threads, starting the driver threads of parallel rings. Each is an OSError with
# the process-limit hint, everything started is torn down, and the caller does not hang.
@pytest.mark.parametrize(
    ("pids_max", "call"),
    [
        (40, "ctxbench.ring([2], parallel=30, min_time=0.002)"),
        (40, "ctxbench.ring([2], parallel=30, engine='thread', min_time=0.002)"),
        (12, "ctxbench.ring([20], min_time=0.002)"),
        (12, "ctxbench.ring([20], engine='thread', min_time=0.002)"),
    ],
    ids=["driver-threads", "driver-threads-of-thread-rings", "fork", "participant-threads"],
)
def test_a_process_limit_is_an_oserror_with_a_hint_wherever_it_hits(
    pids_max: int, call: str
) -> None:
    with limited("pids", pids_max) as group:
        out = _report(group, call)
    assert out.startswith("OSError"), out
    assert "process limit" in out, out
