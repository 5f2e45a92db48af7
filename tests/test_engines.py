"""Every engine and transport: the same properties as the lat_ctx ring."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import FAST, children

import ctxbench

COMBOS = [
    (engine, transport)
    for engine in ("process", "thread")
    for transport in ("pipe", "eventfd", "futex", "socket", "signal", "yield")
] + [("fiber", "resume")]

RT_SIGNAL = signal.SIGRTMIN + 7


def _tasks() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.parametrize(("engine", "transport"), COMBOS)
def test_every_combination_measures_and_leaks_nothing(
    engine: str, transport: str, no_leaks: None
) -> None:
    tasks = _tasks()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    handler = signal.getsignal(RT_SIGNAL)
    r = ctxbench.ring(
        [2, 5], engine=engine, transport=transport, size_kb=8, placement="single", **FAST
    )
    assert (r.engine, r.transport) == (engine, transport)
    assert r.samples_us.shape == (3, 2)
    assert np.isfinite(r.samples_us).all() and (r.raw_us > 0).all()
    assert r.work_verified.all(), "a participant skipped its work or lost the token"
    first = min(os.sched_getaffinity(0))
    assert all((c == first).all() for c in r.cpus)
    assert _tasks() <= tasks, "a participant thread outlived the call"
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == mask
    assert signal.getsignal(RT_SIGNAL) == handler


def test_default_transport_follows_the_engine() -> None:
    assert ctxbench.ring([2], **FAST).transport == "pipe"
    assert ctxbench.ring([2], engine="thread", **FAST).transport == "pipe"
    assert ctxbench.ring([2], engine="fiber", **FAST).transport == "resume"


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"engine": "fiber", "transport": "pipe"}, "resume"),
        ({"engine": "process", "transport": "resume"}, "futex"),
        ({"engine": "thread", "transport": "carrier-pigeon"}, "eventfd"),
        ({"engine": "greenlet"}, "fiber"),
        ({"transport": "yield", "placement": "default"}, "placement='single'"),
        ({"transport": "yield", "placement": "spread"}, "placement='single'"),
    ],
)
def test_nonsense_combinations_list_the_valid_ones(kwargs: dict[str, str], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        ctxbench.ring([2], **kwargs, **FAST)  # type: ignore[arg-type]


def test_ten_thousand_fibers() -> None:
    r = ctxbench.ring([10_000], engine="fiber", min_time=0.01, repetitions=2, warmup=0)
    assert r.work_verified.all()
    assert np.isfinite(r.latency_us).all()


def test_large_thread_ring_is_joined(no_leaks: None) -> None:
    tasks = _tasks()
    r = ctxbench.ring([200], engine="thread", transport="futex", min_time=0.01, repetitions=2)
    assert r.work_verified.all()
    assert _tasks() <= tasks


def test_parallel_thread_rings() -> None:
    r = ctxbench.ring([3], engine="thread", parallel=2, placement="balanced", **FAST)
    assert r.ring_us.shape == (1, 2)


def _kill_one_during(kwargs: dict[str, object]) -> BaseException | None:
    errors: list[BaseException] = []

    def kill() -> None:
        end = time.monotonic() + 5
        while len(children()) < 3 and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(0.1)
        os.kill(sorted(children())[1], signal.SIGKILL)

    t = threading.Thread(target=kill)
    t.start()
    try:
        ctxbench.ring([4], repetitions=200, min_time=0.05, **kwargs)  # type: ignore[arg-type]
    except BaseException as e:  # noqa: BLE001 - inspected below
        errors.append(e)
    t.join()
    return errors[0] if errors else None


@pytest.mark.parametrize("transport", ["futex", "signal", "eventfd"])
def test_dead_child_without_eof_is_named_not_hung(transport: str, no_leaks: None) -> None:
    # These transports have no EOF: only the watchdog's check of the children notices.
    e = _kill_one_during({"transport": transport, "timeout": 60})
    assert isinstance(e, RuntimeError), e
    assert "participant" in str(e) and "signal 9" in str(e)


def test_pingpong_reports_perfs_fields(no_leaks: None) -> None:
    r = ctxbench.pingpong(20_000, placement="single")
    assert r.loops == 20_000 and r.engine == "process" and not r.threads
    assert r.usecs_per_op == pytest.approx(2 * r.usecs_per_switch)
    assert r.ops_per_sec * r.usecs_per_op == pytest.approx(1e6)
    assert r.elapsed_s == pytest.approx(r.loops * r.usecs_per_op / 1e6)
    assert r.cpus.tolist() == [min(os.sched_getaffinity(0))] * 2
    t = ctxbench.pingpong(20_000, threads=True, transport="futex")
    assert t.engine == "thread" and t.threads and t.transport == "futex"


@pytest.mark.parametrize("bad", [{"loops": 0}, {"loops": -5}, {"transport": "resume"}])
def test_pingpong_bad_input(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="loops|transport"):
        ctxbench.pingpong(**bad)  # type: ignore[arg-type]


def test_cli_pipe_prints_perfs_fields() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ctxbench", "pipe", "-l", "5000", "-T"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "between two threads" in out
    assert {"usecs/op", "ops/sec", "usecs/switch"} <= {
        " ".join(line.split()[1:]) for line in out.splitlines() if line.strip()[:1].isdigit()
    }


def test_cli_ring_names_engine_and_transport() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ctxbench", "ring", "--engine", "thread", "--transport", "futex",
         "--json", "-N", "2", "--min-time", "0.002", "2"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    import json

    d = json.loads(out)
    assert (d["engine"], d["transport"]) == ("thread", "futex")


@pytest.mark.parametrize("engine", ["process", "thread"])
def test_signal_queue_never_overflows(engine: str) -> None:
    # A repetition long enough to send more signals than RLIMIT_SIGPENDING allows queued:
    # every token must consume its signal.
    r = ctxbench.ring(
        [2], engine=engine, transport="signal", placement="single", repetitions=1,
        warmup=0, min_time=0.5,
    )  # fmt: skip
    assert r.work_verified.all()
