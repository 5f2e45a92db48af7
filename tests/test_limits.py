"""Resource limits imposed with cgroups: every failure is an exception with a hint and a full
teardown, never a panic, a hang or the OOM killer."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

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


# A point's cgroups cost the kernel memory, charged to the memory cgroup of whoever makes
# them: 255 participants split 16 deep make 4,081 groups, about 64 MiB. The caller's group
# leaves it 40 MiB beyond the check's reserve: its 255 threads fit, their groups do not.
GROUPS = """
import pathlib, ctxbench
group = pathlib.Path({group!r})
used = int((group / {used!r}).read_text())
(group / {limit!r}).write_text(str(used + ((64 + 40) << 20)))
"""


def test_cgroups_that_do_not_fit_the_memory_cgroup_are_a_memory_error_before_any_is_made() -> None:
    call = "ctxbench.ring([255], engine='thread', cgroups='split', cgroup_depth=16)"
    with limited("memory", 3 * GIB) as group:
        v1 = not (group / "memory.max").exists()
        used, limit = ("memory.usage_in_bytes", "memory.limit_in_bytes") if v1 else (
            "memory.current", "memory.max")  # fmt: skip
        setup = GROUPS.format(group=str(group), used=used, limit=limit)
        p = run_in(group, setup + REPORT.format(call=call))
    assert p.returncode == 0, f"exit {p.returncode}: {p.stdout}{p.stderr}"
    assert p.stdout.startswith("MemoryError"), p.stdout
    assert "4081 cgroups (split at depth 16) of about 16 KiB of kernel memory" in p.stdout
    assert "lower cgroup_depth" in p.stdout and "MiB is available" in p.stdout, p.stdout


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


def _run(code: str, preexec=None, timeout: float = 120) -> str:  # type: ignore[no-untyped-def]
    """Runs `code` (REPORT-style) in a fresh interpreter, optionally limited by `preexec`."""
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec,
    )
    assert p.returncode == 0, f"exit {p.returncode}: {p.stdout}{p.stderr}"
    return p.stdout


def _queued_signals(limit: int):  # type: ignore[no-untyped-def]
    return lambda: resource.setrlimit(resource.RLIMIT_SIGPENDING, (limit, limit))


# With the queued-signal limit used up, tgkill fails with EAGAIN: every engine and shape of
# run ends at once in an error that names the limit, and nothing is left running (the child
# checks its own threads and children before it reports). The limit counts every queued
# signal of the user, machine-wide, so `ulimit -i 1` fails or not depending on other
# processes; 0 fails always.
LEFT = """
import os, time
time.sleep(0.05)
ours = [t for t in os.listdir("/proc/self/task")
        if open(f"/proc/self/task/{t}/comm").read().startswith("ctxbench")]
kids = [p for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{p}/stat")
        and open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1] == str(os.getpid())]
print("left", len(ours), len(kids))
"""


@pytest.mark.parametrize(
    "call",
    [
        "ctxbench.ring([2], engine='thread', transport='signal', min_time=0.002)",
        "ctxbench.ring([2], transport='signal', min_time=0.002)",
        "ctxbench.ring([8], engine='thread', transport='signal', parallel=4, min_time=0.002)",
        "ctxbench.ring([3], transport='signal', parallel=4, min_time=0.002)",
        "ctxbench.pingpong(10_000, threads=True, transport='signal')",
        "ctxbench.pingpong(10_000, transport='signal')",
    ],
    ids=["thread", "process", "thread-parallel", "process-parallel", "pingpong-T", "pingpong"],
)
def test_a_full_signal_queue_names_the_limit_and_leaves_nothing(call: str) -> None:
    out = _run(REPORT.format(call=call) + LEFT, _queued_signals(0), timeout=60)
    first, left = out.splitlines()[0], out.splitlines()[-1]
    assert first.startswith("RuntimeError"), out
    assert "queued-signal limit reached" in first and "ulimit -i" in first, out
    # No participant thread, driver thread or child survives.
    assert left == "left 0 0", out


def test_a_signal_ring_runs_within_a_small_queue() -> None:
    # One token in flight is one queued signal per ring: a few slots are enough.
    call = "ctxbench.ring([8], engine='thread', transport='signal', min_time=0.002)"
    out = _run(REPORT.format(call=call), _queued_signals(16), timeout=60)
    assert out.strip() == "OK", out


# The caller's own footprint counts: fork copies its page tables into every participant
# (about 2 MiB per GiB it holds). A caller holding 1 GiB forking 1,000 participants in a
# 2.5 GB cgroup needs about 2.7 GiB; it used to be OOM-killed, now it is told so.
HOLDING = "import numpy\nheld = numpy.ones((1 << 30) // 8)\n"


def test_a_ring_that_would_copy_too_many_page_tables_is_a_memory_error() -> None:
    with limited("memory", 2_500_000_000) as group:
        p = run_in(group, HOLDING + REPORT.format(call="ctxbench.ring([1000], min_time=0.002)"))
    assert p.returncode == 0, f"exit {p.returncode}: {p.stdout}{p.stderr}"
    assert p.stdout.startswith("MemoryError"), p.stdout
    assert "page tables" in p.stdout and "MiB is available" in p.stdout, p.stdout


def test_a_large_caller_runs_a_ring_that_fits_beside_it() -> None:
    call = "ctxbench.ring([100], min_time=0.002, repetitions=2, warmup=0)"
    with limited("memory", 2_500_000_000) as group:
        p = run_in(group, HOLDING + REPORT.format(call=call))
    assert p.returncode == 0, f"exit {p.returncode}: {p.stdout}{p.stderr}"
    assert p.stdout.strip() == "OK", p.stdout


# The thread engine raises the soft descriptor limit as the process engine does, and puts it
# back, also when two measurements raise it at once.
NOFILE = """
import ctxbench, resource, threading
soft = resource.getrlimit(resource.RLIMIT_NOFILE)
runs = [threading.Thread(target=ctxbench.ring, args=([600],),
                         kwargs=dict(engine="thread", min_time=0.002, repetitions=2, warmup=0))
        for _ in range(2)]
for t in runs: t.start()
for t in runs: t.join()
ctxbench.ring([600], engine="thread", min_time=0.002, repetitions=2, warmup=0)
print("OK" if resource.getrlimit(resource.RLIMIT_NOFILE) == soft else "changed")
"""


def test_a_thread_ring_raises_the_descriptor_limit_and_restores_it() -> None:
    out = _run(NOFILE, lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 20000)))
    assert out.strip() == "OK", out


# Restricted to one CPU (taskset -c 0), spreading is impossible: said, not measured as
# `single` under another name.
@pytest.mark.parametrize(
    ("call", "what"),
    [
        ("ctxbench.ring([2], placement='spread', min_time=0.002)", "participants"),
        ("ctxbench.ring([2], placement='balanced', parallel=2, min_time=0.002)", "rings"),
    ],
)
def test_spreading_over_one_allowed_cpu_is_refused(call: str, what: str) -> None:
    cpu = min(os.sched_getaffinity(0))
    out = _run(REPORT.format(call=call), lambda: os.sched_setaffinity(0, {cpu}))
    assert out.startswith("ValueError placement:"), out
    assert what in out and f"CPU {cpu} only" in out, out


# rust-numpy loads numpy's C API on the first array and panicked if that failed (a Ctrl-C
# pending while it ran numpy's version check): it is loaded at import now, where it cannot
# be interrupted, and any failure there is the exception itself.
BREAK_NUMPY = """
import numpy.lib
real = numpy.lib.NumpyVersion
def interrupted(*args):
    numpy.lib.NumpyVersion = real
    raise KeyboardInterrupt
numpy.lib.NumpyVersion = interrupted
"""


def test_ctrl_c_while_the_first_array_is_built_is_no_panic() -> None:
    code = "import ctxbench\n" + BREAK_NUMPY + REPORT.format(call="ctxbench.pingpong(1000)")
    assert _run(code).strip() == "OK"


def test_ctrl_c_while_numpy_loads_at_import_is_a_keyboard_interrupt() -> None:
    code = BREAK_NUMPY + REPORT.replace("import ctxbench\n", "").format(call="import ctxbench")
    out = _run(code)
    assert out.startswith("KeyboardInterrupt"), out


# A cache sweep checks every ring size against the process limits before measuring any: the
# 8-process ring that cannot start is refused at once, before the core measures anything.
COUNTED = """
import ctxbench
from ctxbench import _core
calls = []
real = _core.cache_sweep
_core.cache_sweep = lambda *a, **k: calls.append(a) or real(*a, **k)
"""


def test_a_cache_sweep_that_cannot_start_its_rings_is_refused_before_measuring() -> None:
    call = "ctxbench.cache_sweep([2, 8], [0, 4], rounds=2, min_time=0.002, progress=False)"
    with limited("pids", 5) as group:
        p = run_in(group, COUNTED + REPORT.format(call=call) + "print('measured', len(calls))")
    assert p.returncode == 0, f"exit {p.returncode}: {p.stdout}{p.stderr}"
    assert p.stdout.startswith("OSError"), p.stdout
    assert "process limit" in p.stdout and "pids.max 5" in p.stdout, p.stdout
    assert p.stdout.splitlines()[-1] == "measured 0", p.stdout


def test_a_thrasher_too_big_for_the_memory_cgroup_is_one_line_from_the_cli() -> None:
    code = (
        "import sys\nfrom ctxbench.cli import main\n"
        "sys.exit(main(['ring', '-N', '1', '--interference', 'thrash_kb=1048576', '2']))\n"
    )
    with limited("memory", 256 << 20) as group:
        p = run_in(group, code)
    assert p.returncode == 2, p.stdout + p.stderr
    last = p.stderr.splitlines()[-1]
    assert last.startswith("ctxbench: error: ") and "Traceback" not in p.stderr, p.stderr
    assert "thrasher's 1048576 KiB buffer" in last, p.stderr
