"""One measurement at a time per kernel: threads and processes wait for each other, the wait is
bounded and names the holder, and the lock lives where only this user can reach it."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import FAST

import ctxbench
from ctxbench import _core, _exclusive, api, metadata, report

pytest_plugins = ["pytester"]

# The holder's command as the lock names it: argv[0]'s base name (python, python3...).
PYTHON = os.path.basename(sys.executable)

# Holds the lock for `seconds`, printing "held" once it has it and its release time after.
HOLD = """
import sys, time
from ctxbench._exclusive import measuring
with measuring():
    print("held", flush=True)
    time.sleep(float(sys.argv[1]))
    released = time.time()
print(released, flush=True)
"""


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, float]]:
    """(start, end) of every core measurement made through the API from now on."""
    made: list[tuple[float, float]] = []
    real = api._core.ring

    def timed(*args: object, **kwargs: object) -> object:
        start = time.time()
        try:
            return real(*args, **kwargs)
        finally:
            made.append((start, time.time()))

    monkeypatch.setattr(api._core, "ring", timed)
    return made


def test_two_threads_measure_one_after_the_other(spans: list[tuple[float, float]]) -> None:
    runs = [threading.Thread(target=ctxbench.ring, args=([3],), kwargs=FAST) for _ in range(3)]
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    ordered = sorted(spans)
    assert len(ordered) == 3
    assert all(end <= start for (_, end), (start, _) in zip(ordered, ordered[1:])), ordered


def _holder(seconds: float) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    return p


def test_another_process_measuring_is_waited_for(spans: list[tuple[float, float]]) -> None:
    holder = _holder(0.5)
    ctxbench.ring([2], **FAST)
    assert holder.stdout is not None
    released = float(holder.stdout.readline())
    assert holder.wait() == 0
    assert spans[0][0] >= released


def test_the_wait_is_bounded_and_names_the_holder() -> None:
    holder = _holder(30)
    try:
        with pytest.raises(_exclusive.MachineBusy) as info:
            with _exclusive.measuring(patience=0.3):
                pass
        assert f"pid {holder.pid} (python" in str(info.value), info.value
        assert "after 0.3 s" in str(info.value)
    finally:
        holder.kill()
        holder.wait()
    with _exclusive.measuring(patience=5):  # the kernel dropped the dead holder's lock
        pass


def test_a_measurement_inside_a_measurement_does_not_wait_for_itself() -> None:
    with _exclusive.measuring(patience=1):
        r = ctxbench.ring([2], **FAST)
    assert r.work_verified.all()


def test_a_waiter_gets_in_between_the_points_of_a_running_loop(
    spans: list[tuple[float, float]],
) -> None:
    looping = threading.Thread(target=lambda: [ctxbench.ring([2], **FAST) for _ in range(12)])
    looping.start()
    while not spans:
        time.sleep(0.001)
    ctxbench.ring([5], **FAST)
    mine = len(spans)
    looping.join()
    # The gate lets the waiter in at the loop's next release, not after all twelve.
    assert mine < 12, mine


def test_only_a_private_directory_holds_the_lock(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert _exclusive._private(private) is None
    private.chmod(0o755)
    assert "lets others in" in str(_exclusive._private(private))
    link = tmp_path / "link"
    link.symlink_to(private)
    assert "symlink" in str(_exclusive._private(link))
    if os.geteuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 4242, 4242)
        assert "owned by uid 4242" in str(_exclusive._private(theirs))
    directory = _exclusive.lock_dir()
    assert _exclusive._private(directory) is None
    assert directory.stat().st_uid == os.geteuid()


def test_without_a_private_directory_it_measures_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused() -> Path:
        raise OSError(13, "/tmp/ctxbench-0 is not this user's private directory: owned by uid 1")

    monkeypatch.setattr(_exclusive, "lock_dir", refused)
    with pytest.warns(UserWarning, match="measuring without the machine lock"):
        r = ctxbench.ring([2], **FAST)
    assert r.work_verified.all()


def test_the_kernel_id_follows_the_fleets_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(metadata.BOOT_ID_ENV, "boot-a")
    a = _exclusive.kernel_id()
    monkeypatch.setenv(metadata.BOOT_ID_ENV, "boot-b")
    assert a != _exclusive.kernel_id()


class _Measured(Exception):
    """Raised by a spy in place of the core's measurement, once it has looked."""


def _held_elsewhere() -> bool:
    """Whether this kernel's lock is held: a new open file description of it cannot take it."""
    path = _exclusive.lock_dir() / f"kernel-{_exclusive.kernel_id()}.lock"
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


@pytest.mark.parametrize(
    ("core", "call"),
    [
        ("ring", lambda: ctxbench.ring([2], **FAST)),
        ("pingpong", lambda: ctxbench.pingpong(100)),
        ("matrix", lambda: ctxbench.matrix(progress=False)),
        ("cache_sweep", lambda: ctxbench.cache_sweep([2], [0, 4], rounds=2, progress=False)),
    ],
)
def test_every_measuring_call_holds_the_lock_while_the_core_measures(
    monkeypatch: pytest.MonkeyPatch, own_kernel: str, core: str, call: Any
) -> None:
    # A lock of its own: the machine's was held after the call by the other pytest worker's
    # measurement (run 2 of the two-hog series), which said nothing of this call.
    seen: list[bool] = []

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(_held_elsewhere())
        raise _Measured

    monkeypatch.setattr(_core, core, spy)
    with pytest.raises(_Measured):
        call()
    assert seen == [True]
    assert not _held_elsewhere(), "released after the call"


# --- a wait is never silent ------------------------------------------------------------------


@pytest.fixture
def own_kernel(monkeypatch: pytest.MonkeyPatch) -> str:
    """A lock of this test's own (a fake boot id, inherited by the processes it starts), so
    that other measurements on this machine neither hold it nor wait for it."""
    boot = f"test-wait-{os.getpid()}-{time.monotonic_ns()}"
    monkeypatch.setenv(metadata.BOOT_ID_ENV, boot)
    return boot


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ctxbench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# Long enough for a waiter to start and speak on a loaded machine; short enough that a
# waiter which never speaks fails the test within a minute or two, not ten.
HOLD_LONG = 90
RING = ["lat-ctx", "--placement", "single", "-N", "2", "--min-time", "0.002", "-W", "0", "2"]


def test_a_waiting_command_says_whom_it_waits_for(own_kernel: str) -> None:
    holder = _holder(HOLD_LONG)
    waiter = _cli(*RING)
    try:
        assert waiter.stderr is not None
        # Not a terminal: the first line after a second of waiting, while the holder holds.
        line = waiter.stderr.readline()
        assert holder.poll() is None, "the holder let go before the waiter spoke"
        # Said after the first second, by the waiter's own clock (not a wall-clock bound of
        # this test): "waiting 1 s".
        assert line.startswith("ctxbench: waiting 1 s "), line
        assert f"held by pid {holder.pid} ({PYTHON} -c " in line and "state S" in line, line
        assert "--no-wait" in line
    finally:
        holder.kill()
        holder.wait()
    out, err = waiter.communicate(timeout=300)
    assert waiter.returncode == 0, err
    assert "ctxbench: waited " in err and f"held by pid {holder.pid}" in err
    assert out.startswith('"size=0k')


def test_no_wait_fails_at_once_naming_the_holder(own_kernel: str) -> None:
    holder = _holder(HOLD_LONG)
    try:
        waiter = _cli(RING[0], "--no-wait", *RING[1:])
        out, err = waiter.communicate(timeout=300)
        assert holder.poll() is None, "the holder let go first: --no-wait waited"
        assert waiter.returncode == 2 and out == ""
        assert f"pid {holder.pid} ({PYTHON} -c " in err and "does not wait (--no-wait" in err
        assert "waiting" not in err
        with pytest.raises(_exclusive.MachineBusy, match=f"pid {holder.pid} .*does not wait"):
            with _exclusive.patience(0):
                ctxbench.ring([2], **FAST)
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("bad", [-1, "0", True, float("nan")])
def test_patience_is_seconds(bad: object) -> None:
    with pytest.raises(ValueError, match="patience: must be seconds >= 0"):
        with _exclusive.patience(bad):  # type: ignore[arg-type]
            pass


def test_a_fleet_point_that_waited_says_so_in_its_record(own_kernel: str) -> None:
    from ctxbench import _fleet_task

    holder = _holder(HOLD_LONG)
    heard: list[str] = []

    class Listen(report.Report):
        def say(self, line: report.Line) -> None:
            heard.append(str(line))
            holder.kill()  # let go once the waiter has spoken

    try:
        point = {"procs": [2], "placement": "single", **FAST}
        with report.saying(Listen()):
            rec = _fleet_task.measure({"ring": point, "version": ctxbench.__version__})
    finally:
        holder.kill()
        holder.wait()
    assert heard and heard[0].startswith("ctxbench: waiting ")
    (said,) = [w for w in rec["warnings"] if w.startswith("waited ")]
    assert f"held by pid {holder.pid}" in said


def test_the_pytest_plugin_shows_the_wait_past_its_capture(
    own_kernel: str, pytester: pytest.Pytester
) -> None:
    pytester.makepyfile(
        test_inner="""
def test_ring(ctxbench):
    ctxbench.ring([2], min_time=0.002, repetitions=2, warmup=0)
"""
    )
    holder = _holder(HOLD_LONG)
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_inner.py"],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert run.stdout is not None
        lines = iter(run.stdout.readline, "")
        said = next((line for line in lines if line.startswith("ctxbench: waiting ")), "")
        assert f"held by pid {holder.pid}" in said, said
    finally:
        holder.kill()
        holder.wait()
    out, _ = run.communicate(timeout=300)
    assert run.returncode == 0 and "1 passed" in out
