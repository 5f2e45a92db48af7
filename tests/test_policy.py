"""The scheduling policy as an axis: applied to every task, read back into the result, and
refused, naming the limit, wherever it cannot run as asked."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cgroups
import pytest

import ctxbench
from ctxbench import _core
from tests.conftest import children, needs_cap

QUICK = {"repetitions": 2, "warmup": 0, "min_time": 0.002, "history": False}


def _whole_machine() -> bool:
    """SCHED_DEADLINE needs tasks free to run on every CPU of the root domain."""
    return os.sched_getaffinity(0) == set(range(os.cpu_count() or 1))


def test_policies_are_the_cores():
    assert _core.POLICIES == ("other", "batch", "idle", "fifo", "rr", "deadline")


def test_a_fair_policy_is_read_back_into_the_result_and_its_rows():
    r = ctxbench.ring(2, policy="batch", nice=5, **QUICK)
    assert (r.policy, r.priority, r.nice) == ("batch", 0, 5)
    assert r.dl_runtime_us is None
    frame = r.to_frame()
    assert set(frame["policy"]) == {"batch"} and set(frame["nice"]) == {5}


def test_nothing_asked_records_what_every_task_inherited():
    before = os.sched_getscheduler(0)
    r = ctxbench.ring(2, **QUICK)
    names = {os.SCHED_OTHER: "other", os.SCHED_BATCH: "batch", os.SCHED_IDLE: "idle"}
    assert r.policy == names.get(before, r.policy)
    assert os.sched_getscheduler(0) == before


@needs_cap
@pytest.mark.parametrize("engine", ["process", "thread", "fiber"])
def test_fifo_on_every_engine_and_the_caller_gets_its_policy_back(engine):
    before = (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))
    r = ctxbench.ring(
        [2, 3], engine=engine, placement="single", policy="fifo", priority=10, **QUICK
    )
    assert (r.policy, r.priority, r.nice) == ("fifo", 10, 0)
    assert (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0)) == before


@needs_cap
def test_pingpong_under_rr():
    p = ctxbench.pingpong(policy="rr", priority=3, repetitions=2, min_time=0.002, history=False)
    assert (p.policy, p.priority) == ("rr", 3)


@needs_cap
@pytest.mark.skipif(not _whole_machine(), reason="this process may not use every CPU")
def test_deadline_runs_with_its_parameters_and_a_full_bandwidth_is_the_kernels_refusal():
    r = ctxbench.ring(2, policy="deadline", dl_runtime_us=300, **QUICK)
    assert r.policy == "deadline"
    assert (r.dl_runtime_us, r.dl_deadline_us, r.dl_period_us) == (300, 1000, 1000)
    # 20 tasks at 50 % each ask for 10 CPUs: the kernel's admission control refuses.
    with pytest.raises(OSError) as e:
        ctxbench.ring(20, policy="deadline", dl_runtime_us=500, **QUICK)
    assert e.value.errno == errno.EBUSY
    assert "deadline bandwidth" in str(e.value)


@pytest.mark.parametrize(
    ("asked", "param", "words"),
    [
        ({"policy": "fifo", "transport": "yield", "placement": "single"}, "policy", "starve"),
        ({"policy": "deadline", "placement": "single"}, "placement", "pinned"),
        ({"policy": "fifo", "priority": 0}, "priority", "between 1 and 99"),
        ({"policy": "rr", "nice": 3}, "nice", "only other and batch"),
        ({"policy": "idle", "nice": -20}, "nice", "only other and batch"),
        ({"policy": "other", "priority": 5}, "priority", "only fifo and rr"),
        ({"policy": "batch", "dl_period_us": 2000}, "dl_period_us", "deadline"),
        ({"nice": 20}, "nice", "between -20 and 19"),
        ({"policy": "sporadic"}, "policy", "expected one of"),
    ],
)
def test_a_policy_that_cannot_run_as_asked_is_refused_before_anything_starts(asked, param, words):
    with pytest.raises(ValueError) as e:
        ctxbench.ring(2, **asked, **QUICK)
    assert str(e.value).startswith(f"{param}:") and words in str(e.value)


def test_the_matrix_refuses_deadline():
    with pytest.raises(ValueError, match="policy: the matrix pins"):
        ctxbench.matrix([0], policy="deadline", progress=False)


# A child that measures one ring under `policy` and prints its error, if any.
CHILD = """
import ctxbench, sys
try:
    r = ctxbench.ring(2, placement="default", repetitions=2, warmup=0, min_time=0.002,
                      history=False, **{asked})
    print("ran", r.policy, r.priority)
except OSError as e:
    print(type(e).__name__, e.errno, e)
"""


def _without_cap_sys_nice(asked: str, rtprio: int) -> str:
    """Runs CHILD without CAP_SYS_NICE (dropped from the bounding set before exec) and with
    RLIMIT_RTPRIO lowered to `rtprio`."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("dropping CAP_SYS_NICE needs root and setpriv")
    import resource

    out = subprocess.run(
        ["setpriv", "--inh-caps=-sys_nice", "--bounding-set=-sys_nice", sys.executable, "-c",
         CHILD.replace("{asked}", asked)],
        capture_output=True, text=True, timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_RTPRIO, (rtprio, rtprio)),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_rlimit_rtprio_without_cap_sys_nice_is_named():
    said = _without_cap_sys_nice('{"policy": "fifo", "priority": 10}', rtprio=0)
    assert said.startswith("PermissionError 1")
    assert "RLIMIT_RTPRIO of at least 10 (it is 0" in said and "CAP_SYS_NICE" in said
    # A fair policy needs neither.
    assert _without_cap_sys_nice('{"policy": "batch"}', rtprio=0) == "ran batch 0\n"


def test_deadline_without_cap_sys_nice_is_named():
    said = _without_cap_sys_nice('{"policy": "deadline"}', rtprio=0)
    assert said.startswith("PermissionError 1")
    assert "SCHED_DEADLINE needs CAP_SYS_NICE" in said


@pytest.mark.slow
def test_a_cpu_cgroup_without_rt_runtime_is_named():
    """cgroup v1 with RT group scheduling: a new group's cpu.rt_runtime_us is 0."""
    if os.geteuid() != 0:
        pytest.skip("making a cgroup needs root")
    mounts = [m for f, m, opts in cgroups._mounts() if f == "cgroup" and "cpu" in opts]
    if not mounts or not (Path(mounts[0]) / "cpu.rt_runtime_us").exists():
        pytest.skip("no cgroup v1 cpu controller with RT group scheduling")
    group = Path(mounts[0]) / f"ctxbench-test-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    try:
        assert (group / "cpu.rt_runtime_us").read_text().strip() == "0"
        out = cgroups.run_in(group, CHILD.replace("{asked}", '{"policy": "fifo"}'))
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("PermissionError 1"), out.stdout
        assert f"{group}/cpu.rt_runtime_us is 0" in out.stdout
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            subprocess.run(["kill", "-9", pid], check=False)
        group.rmdir()


def test_nice_alone_is_policy_other():
    r = ctxbench.ring(2, nice=2, **QUICK)
    assert (r.policy, r.nice) == ("other", 2)


# Imports everything a ring and the CLI load, as root, then becomes nobody with no capability
# and RLIMIT_NICE 0: what the kernel checks of an ordinary user's process, with this
# interpreter (which nobody may not be able to read). `report()`: its own policy and nice.
AS_NOBODY = """
import os, resource, hashlib
import ctxbench, ctxbench.api, ctxbench.result, ctxbench.record, ctxbench.report
from ctxbench.cli import main, parser
parser()
resource.setrlimit(resource.RLIMIT_NICE, (0, 0))
os.setgroups([]); os.setgid(65534); os.setuid(65534)
QUICK = dict(repetitions=2, warmup=0, min_time=0.002, history=False)
def report():
    return os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0)
"""


def _as_nobody(code: str, tmp_path: Path) -> str:
    if os.geteuid() != 0:
        pytest.skip("becoming another user needs root")
    env = {**os.environ, "HOME": str(tmp_path), "CTXBENCH_HISTORY": "off"}
    os.chmod(tmp_path, 0o777)
    out = subprocess.run(
        [sys.executable, "-c", AS_NOBODY + code],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_an_unprivileged_caller_keeps_its_own_policy(tmp_path: Path) -> None:
    """An ordinary user may lower the ring's priority but not raise its own back: the
    calling thread is never the one lowered, so nothing needs raising, and a later call
    runs and is recorded under the caller's own policy."""
    said = _as_nobody(
        """
before = report()
for asked in ({"nice": 5}, {"policy": "idle"}, {"policy": "batch", "nice": 19}):
    r = ctxbench.ring([2, 3], **asked, **QUICK)
    print(r.policy, r.nice, report() == before)
print("cli", main(["ring", "--nice", "10", "-N", "2", "-W", "0", "--min-time", "0.002", "2"]),
      report() == before)
r = ctxbench.ring([2], **QUICK)
print(r.policy, r.nice, report() == before)
""",
        tmp_path,
    )
    assert said.splitlines()[:3] == ["other 5 True", "idle 0 True", "batch 19 True"], said
    assert said.splitlines()[-2:] == ["cli 0 True", "other 0 True"], said


def test_idle_takes_no_nice_and_runs_under_any_callers(tmp_path: Path) -> None:
    """SCHED_IDLE tasks run at the idle weight whatever their nice, and the kernel keeps a
    nice asked with it aside: a nice with idle is refused; a caller's own nice is no
    mismatch."""
    with pytest.raises(ValueError, match=r'^nice: policy "idle" has no nice'):
        ctxbench.ring(2, policy="idle", nice=-20, **QUICK)
    said = _as_nobody("os.nice(3)\nr = ctxbench.ring([2], policy='idle', **QUICK)\n"
                      "print(r.policy, r.nice, report())", tmp_path)  # fmt: skip
    assert said.split() == ["idle", "0", "(0,", "3)"], said


@contextmanager
def _held_by_a_real_time_task() -> Iterator[tuple[int, int]]:
    """A SCHED_FIFO 20 spinner pinned to one CPU: (its pid, the CPU). Fair tasks get that CPU
    only in the kernel's real-time throttle, real-time ones of a lower priority not at all."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("the ring's caller needs a CPU the spinner does not hold")
    if Path("/proc/sys/kernel/sched_rt_runtime_us").read_text().strip() == "-1":
        pytest.skip("no real-time throttle: the spinner would hold its CPU against everything")
    cpu = allowed[-1]
    spin = "import sys; print('spinning', flush=True)\nwhile True: pass"
    holder = subprocess.Popen(
        ["chrt", "-f", "20", "taskset", "-c", str(cpu), sys.executable, "-c", spin],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "spinning\n"
        yield holder.pid, cpu
    finally:
        holder.kill()
        holder.wait()


def _ring_under_fifo_10(cpu: int, timeout: float) -> subprocess.Popen[str]:
    """`ctxbench ring` of 2 on `cpu` from a SCHED_FIFO 10 caller (its participants inherit
    it). SIGINT at its default, so that Python handles it even where this suite was started
    with it ignored (in the background, by some CI runners)."""
    flags = ["-N", "2", "-W", "0", "--min-time", "0.002", "--timeout", str(timeout)]
    return subprocess.Popen(
        ["chrt", "-f", "10", sys.executable, "-m", "ctxbench", "ring", *flags,
         "--placement", "single", "--cpu", str(cpu), "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "CTXBENCH_HISTORY": "off"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip


@needs_cap
def test_a_start_held_off_by_a_real_time_task_names_it() -> None:
    with _held_by_a_real_time_task() as (holder, cpu):
        ring = _ring_under_fifo_10(cpu, timeout=1)
        try:
            _, err = ring.communicate(timeout=50)
        finally:
            ring.kill()
    assert ring.returncode == 2, err
    assert "did not start within 1 s (timeout)" in err, err
    assert f"task {holder} " in err and "fifo 20" in err, err


@needs_cap
def test_ctrl_c_acts_while_a_ring_cannot_start() -> None:
    """SIGINT to the caller alone (its participants never see it) while the ring waits for
    participants held off their CPU: the interrupt ends the start, not the timeout."""
    with _held_by_a_real_time_task() as (_, cpu):
        ring = _ring_under_fifo_10(cpu, timeout=3600)
        deadline = time.monotonic() + 30
        while not children(ring.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        ring.send_signal(signal.SIGINT)
        try:
            _, err = ring.communicate(timeout=50)
        finally:
            ring.kill()
    assert ring.returncode == 130, err
    assert "interrupted" in err, err
