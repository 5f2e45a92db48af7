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
from ctxbench import _core, _exclusive, api, metadata

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
    monkeypatch: pytest.MonkeyPatch, core: str, call: Any
) -> None:
    seen: list[bool] = []

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(_held_elsewhere())
        raise _Measured

    monkeypatch.setattr(_core, core, spy)
    with pytest.raises(_Measured):
        call()
    assert seen == [True]
    assert not _held_elsewhere(), "released after the call"
