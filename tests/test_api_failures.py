"""Failure and teardown of the measuring functions on every path: a participant killed or
stopped, Ctrl-C, and the descriptor, memory and process limits, each an error naming what
failed with the ring's processes reaped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from conftest import children

import ctxbench
from ctxbench import _exclusive

# This process's children before the ring started (``_while_running``): a child an earlier
# test left to be reaped is not the ring's (one was stopped in its place at load 8, and the
# ring ran to its end).
_BEFORE: set[int] = set()


def _ring_children(want: int, deadline: float = 5.0) -> list[int]:
    """Waits until the running ring's children exist and have started."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        kids = sorted(children() - _BEFORE)
        if len(kids) >= want:
            return kids
        time.sleep(0.01)
    raise AssertionError("the ring's children never appeared")


def _while_running(action, **kwargs: object) -> BaseException | None:
    """Runs a long lat_ctx in this thread while `action` meddles from another thread."""
    errors: list[BaseException] = []
    t = threading.Thread(target=action)
    # The machine's measuring lock first (another ctxbench may hold it for a while): the
    # meddler's wait for the ring's children starts only when the ring can start.
    with _exclusive.measuring():
        _BEFORE.clear()
        _BEFORE.update(children())
        t.start()
        try:
            ctxbench.lat_ctx(**kwargs)  # type: ignore[arg-type]
        except BaseException as e:  # noqa: BLE001 - the test inspects it
            errors.append(e)
        t.join()
    return errors[0] if errors else None


def test_killed_child_raises_naming_the_participant(no_leaks: None) -> None:
    def kill_one() -> None:
        kids = _ring_children(3)
        time.sleep(0.1)
        os.kill(kids[1], signal.SIGKILL)

    e = _while_running(kill_one, procs=[4], repetitions=200, min_time=0.05)
    assert isinstance(e, RuntimeError), e
    assert "participant" in str(e) and "signal 9" in str(e)


def test_stopped_child_times_out_instead_of_hanging(no_leaks: None) -> None:
    def stop_one() -> None:
        kids = _ring_children(2)
        time.sleep(0.1)
        os.kill(kids[0], signal.SIGSTOP)

    e = _while_running(stop_one, procs=[3], repetitions=200, min_time=0.05, timeout=0.5)
    assert isinstance(e, RuntimeError), e
    assert "timeout" in str(e) and "stopped" in str(e)
    # One cause: a stopped participant did not die, and the message does not say so.
    assert "died" not in str(e) and "EOF" not in str(e), e


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """Python's own SIGINT handler for the test: a suite started in the background (`&`,
    nohup, some CI runners) inherits SIGINT ignored, and then Ctrl-C, real or simulated,
    does nothing at all."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_stops_within_a_second_and_reaps(no_leaks: None, ctrl_c_raises: None) -> None:
    import _thread

    sent: list[float] = []

    def interrupt() -> None:
        _ring_children(7)
        time.sleep(0.2)
        sent.append(time.monotonic())
        _thread.interrupt_main()

    e = _while_running(interrupt, procs=[8] * 10, repetitions=1000, min_time=0.05)
    assert isinstance(e, KeyboardInterrupt), e
    # It stopped, not ran to its end (at least 10 points x 1000 repetitions x 0.05 s): a bound
    # far below the run's length holds on any load (3 s did not hold on a loaded machine).
    assert time.monotonic() - sent[0] < 60.0


def test_ctrl_c_acts_on_a_ring_that_makes_no_progress(no_leaks: None, ctrl_c_raises: None) -> None:
    """A stopped participant holds the token: the driver waits in its trip and never reaches
    a check between repetitions. Ctrl-C still ends the run, not the watchdog's timeout."""
    import _thread

    def stop_one_then_interrupt() -> None:
        kids = _ring_children(2)
        time.sleep(0.2)
        os.kill(kids[-1], signal.SIGSTOP)
        time.sleep(0.3)
        _thread.interrupt_main()

    e = _while_running(
        stop_one_then_interrupt, procs=[3], repetitions=200, min_time=0.05, timeout=3600
    )
    assert isinstance(e, KeyboardInterrupt), e


def _in_child(code: str) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a fresh interpreter, so lowered limits stay there."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_descriptor_limit_gives_oserror_with_hint() -> None:
    p = _in_child(
        "import resource, ctxbench\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"
        "try:\n"
        "    ctxbench.lat_ctx([100], min_time=0.002, repetitions=1)\n"
        "except OSError as e:\n"
        "    print('OSError', e)\n"
    )
    assert "OSError" in p.stdout and "RLIMIT_NOFILE" in p.stdout, p.stdout + p.stderr


def test_memory_limit_gives_oserror_with_hint() -> None:
    p = _in_child(
        "import resource, ctxbench\n"
        "status = open('/proc/self/status').read().splitlines()\n"
        "vm = next(int(x.split()[1]) for x in status if x.startswith('VmSize'))\n"
        "cap = (vm << 10) + (256 << 20)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (cap, cap))\n"
        "try:\n"
        "    ctxbench.lat_ctx([2], size_kb=1 << 20, min_time=0.002, repetitions=1)\n"
        "except OSError as e:\n"
        "    print('OSError', e)\n"
    )
    assert "OSError" in p.stdout and "size_kb" in p.stdout, p.stdout + p.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root is exempt from RLIMIT_NPROC")
def test_process_limit_gives_oserror_with_hint() -> None:
    p = _in_child(
        "import resource, ctxbench\n"
        "resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))\n"
        "try:\n"
        "    ctxbench.lat_ctx([8], min_time=0.002, repetitions=1)\n"
        "except OSError as e:\n"
        "    print('OSError', e)\n"
    )
    assert "OSError" in p.stdout and "ulimit -u" in p.stdout, p.stdout + p.stderr


# Every engine and transport

# Every pair the core offers, so a new engine or transport is tested without a word here.
