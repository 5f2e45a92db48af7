"""Calibrated interference: neighbours on the measured CPUs, refused precisely, recorded with
what they achieved, and gone after every run, failed, timed out or interrupted."""

from __future__ import annotations

import _thread
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ctxbench
from ctxbench import files
from ctxbench.cli import main
from tests.conftest import FAST, children, needs_cap

ONE_CPU = {"placement": "single", **FAST}


@pytest.mark.parametrize(
    ("asked", "exc", "words"),
    [
        ({"hogs": 65}, ValueError, '"hogs" must be an integer between 0 and 64'),
        ({"hogs": -1}, ValueError, '"hogs" must be an integer between 0 and 64'),
        ({"hogs": 1.5}, ValueError, '"hogs" must be an integer'),
        ({"rings": 17}, ValueError, '"rings" must be an integer between 0 and 16'),
        ({"thrash_kb": 1 << 21}, ValueError, "between 0 and 1048576"),
        ({"duty": 0}, ValueError, '"duty" must be > 0 and <= 1'),
        ({"duty": 1.5}, ValueError, '"duty" must be > 0 and <= 1'),
        ({"duty": math.nan}, ValueError, '"duty"'),
        ({"queued": 65}, ValueError, '"queued" must be an integer between 0 and 64'),
        ({"cores": 2}, ValueError, 'unknown key "cores"; expected some of'),
        ({"hogs": True}, TypeError, '"hogs" expected a number, got bool'),
        ({"hogs": "2"}, TypeError, '"hogs" expected a number'),
        ([("hogs", 2)], TypeError, "expected a dict"),
    ],
)
def test_bad_interference_is_refused_naming_it(asked: Any, exc: type, words: str) -> None:
    with pytest.raises(exc, match="interference") as e:
        ctxbench.ring([2], interference=asked, **ONE_CPU)
    assert words in str(e.value)


def test_no_neighbour_records_none() -> None:
    assert ctxbench.ring([2], interference={}, **ONE_CPU).interference is None
    assert ctxbench.ring([2], interference={"duty": 0.5}, **ONE_CPU).interference is None


def test_neighbours_are_recorded_and_gone(no_leaks: None) -> None:
    asked = {"hogs": 1, "duty": 0.5, "thrash_kb": 256, "rings": 1}
    r = ctxbench.ring([2, 3], record_hops=True, interference=asked, **ONE_CPU)
    i = r.interference
    assert i is not None
    assert (i["hogs"], i["duty"], i["thrash_kb"], i["rings"]) == (1, 0.5, 256, 1)
    assert len(i["span_s"]) == 2 and all(s > 0 for s in i["span_s"])
    for point in range(2):
        assert len(i["hog_duty"][point]) == 1 and len(i["ring_duty"][point]) == 1
        # CPU time over the span cannot exceed the span (one CPU), but for /proc's rounding.
        assert 0 <= i["hog_duty"][point][0] <= 1.05
        assert 0 <= i["thrash_resident_kb"][point] <= 256
    # The figure to read under interference: the hops' percentiles.
    assert set(r.hop_percentiles_us) >= {"p50", "p90", "p99", "p99.9"}
    assert np.all(np.asarray(r.hop_percentiles_us["p50"]) > 0)


def test_a_half_duty_hog_runs_less_than_a_full_one() -> None:
    """Both hogs share the measured CPU with the ring: the full one may take less than its
    asking, but never less than a hog that sleeps half of every period... on average over
    two runs of the same CPU; the half one's duty is at most its asking plus /proc's slack."""
    full = ctxbench.ring([2], interference={"hogs": 1}, **ONE_CPU).interference
    half = ctxbench.ring([2], interference={"hogs": 1, "duty": 0.25}, **ONE_CPU).interference
    assert full is not None and half is not None
    assert half["hog_duty"][0][0] <= 0.25 + 0.1
    assert full["hog_duty"][0][0] > 0


def test_the_table_and_files_carry_interference(tmp_path: Path) -> None:
    asked = {"hogs": 2, "duty": 0.5}
    r = ctxbench.ring([2], interference=asked, **ONE_CPU)
    df = r.to_frame()
    assert (df["interference_hogs"] == 2).all() and (df["interference_duty"] == 0.5).all()
    assert (df["interference_hog_duty"] >= 0).all()
    for suffix in (".json", ".csv", ".parquet"):
        path = tmp_path / f"r{suffix}"
        files.save(r, path)
        back = files.load(path)
        assert (back["interference_hogs"] == 2).all(), suffix
        assert back["interference_hog_duty"].tolist() == pytest.approx(
            df["interference_hog_duty"].tolist()
        )
    (record,) = files.read_records(tmp_path / "r.json")
    assert record["interference"]["hog_duty"][0] == pytest.approx(r.interference["hog_duty"][0])


def test_queued_tasks_lengthen_the_run_queue_and_are_recorded(
    no_leaks: None, tmp_path: Path
) -> None:
    """Queued tasks spin under SCHED_IDLE on the measured CPU: each is still runnable when
    the ring is done, and its CPU share is recorded."""
    r = ctxbench.ring([2, 3], interference={"queued": 3}, **ONE_CPU)
    i = r.interference
    assert i is not None and i["queued"] == 3 and i["hogs"] == 0
    assert list(i["queued_runnable"]) == [3, 3]
    for point in range(2):
        assert len(i["queued_duty"][point]) == 3
        assert all(0 <= d <= 1.05 for d in i["queued_duty"][point])
    df = r.to_frame()
    assert (df["interference_queued"] == 3).all()
    assert (df["interference_queued_runnable"] == 3).all()
    first = df[df["procs"] == 2]["interference_queued_duty"].iloc[0]
    assert first == pytest.approx(np.mean(i["queued_duty"][0]))
    files.save(r, tmp_path / "r.csv")
    assert (files.load(tmp_path / "r.csv")["interference_queued"] == 3).all()


@needs_cap
def test_a_real_time_ring_leaves_queued_tasks_waiting(no_leaks: None) -> None:
    fifo = ctxbench.ring([2], interference={"queued": 2}, policy="fifo", **ONE_CPU)
    assert fifo.interference is not None and fifo.policy == "fifo"
    # The real-time ring runs first; RT throttling (5 % of each second by default), the
    # span's edges and the moments no ring task is runnable are all the queued tasks get.
    assert np.mean(fifo.interference["queued_duty"][0]) < 0.5
    assert list(fifo.interference["queued_runnable"]) == [2]


def test_a_file_from_before_queued_tasks_loads_with_none_queued(tmp_path: Path) -> None:
    r = ctxbench.ring([2], interference={"hogs": 1}, **ONE_CPU)
    files.save(r, tmp_path / "new.json")
    text = (tmp_path / "new.json").read_text()
    doc = json.loads(text)
    for rec in doc["results"]:
        for k in ("queued", "queued_duty", "queued_runnable"):
            del rec["interference"][k]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    df = files.load(tmp_path / "old.json")
    assert (df["interference_queued"] == 0).all() and (df["interference_hogs"] == 1).all()
    assert df["interference_queued_duty"].isna().all()
    assert (df["interference_queued_runnable"] == 0).all()


def _meddle_with_the_participant(sig: int, started: set[int]) -> threading.Thread:
    """Sends ``sig`` to the ring's forked participant once it and the two hogs exist."""

    def meddle() -> None:
        end = time.monotonic() + 5
        while time.monotonic() < end:
            kids = sorted(children() - started)
            # Two hogs first, then the ring's one forked participant.
            if len(kids) >= 3:
                time.sleep(0.1)
                os.kill(kids[-1], sig)
                return
            time.sleep(0.01)

    t = threading.Thread(target=meddle)
    t.start()
    return t


@pytest.mark.parametrize(
    ("sig", "words"), [(signal.SIGKILL, "signal 9"), (signal.SIGSTOP, "timeout")]
)
def test_neighbours_are_gone_after_an_error_or_a_timeout(
    no_leaks: None, sig: int, words: str
) -> None:
    """A participant killed, or stopped until the watchdog gives up: the run fails and takes
    its neighbours with it."""
    t = _meddle_with_the_participant(sig, set(children()))
    with pytest.raises(RuntimeError, match=words):
        ctxbench.ring(
            [2],
            interference={"hogs": 2},
            placement="single",
            repetitions=200,
            min_time=0.05,
            timeout=0.5,
        )
    t.join()


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_neighbours_are_gone_after_ctrl_c(no_leaks: None, ctrl_c_raises: None) -> None:
    def interrupt() -> None:
        end = time.monotonic() + 5
        while time.monotonic() < end and len(children()) < 3:
            time.sleep(0.01)
        time.sleep(0.2)
        _thread.interrupt_main()

    t = threading.Thread(target=interrupt)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        ctxbench.ring([2], interference={"hogs": 1, "rings": 1}, repetitions=200, min_time=0.05)
    t.join()


def test_the_cli_takes_interference_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    flags = ["--placement", "single", "-N", "3", "--min-time", "0.002", "-W", "0"]
    assert main(["ring", *flags, "--interference", "hogs=1,duty=0.5", "2"]) == 0
    assert main(["ring", *flags, "--interference", "queued=2", "2"]) == 0
    with pytest.raises(SystemExit):
        main(["ring", *flags, "--interference", "hogs", "2"])
    assert "key=number pairs" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_a_sweep_keys_its_points_by_interference(tmp_path: Path, suffix: str) -> None:
    """Two levels are two points of one out file; the same level again (its default named or
    not) is resumed, not measured again."""
    out = tmp_path / f"s{suffix}"
    kw: dict[str, Any] = {"placements": ["single"], "progress": False, "out": out}
    kw.update(repetitions=3, min_time=0.002, warmup=0)
    one = ctxbench.sweep([2], interference={"hogs": 1}, **kw)
    two = ctxbench.sweep([2], interference={"hogs": 2}, **kw)
    again = ctxbench.sweep([2], interference={"hogs": 1, "duty": 1.0}, **kw)
    assert (one["interference_hogs"] == 1).all() and (two["interference_hogs"] == 2).all()
    assert again["interference_hog_duty"].tolist() == one["interference_hog_duty"].tolist()
    assert sorted(set(files.load(out)["interference_hogs"])) == [1, 2]


def test_a_buffer_that_cannot_be_mapped_is_an_error_with_a_hint() -> None:
    """Under an address-space limit the thrasher's 1 GiB cannot be mapped: an OSError (or,
    where the machine has less free memory than that, a MemoryError) naming the buffer, and
    nothing left running."""
    code = (
        "import resource, ctxbench\n"
        "from tests.conftest import children\n"
        "status = open('/proc/self/status').read().splitlines()\n"
        "vm = next(int(x.split()[1]) for x in status if x.startswith('VmSize'))\n"
        "cap = (vm << 10) + (256 << 20)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (cap, cap))\n"
        "try:\n"
        "    ctxbench.ring([2], placement='single', repetitions=1, min_time=0.002,\n"
        "                  interference={'hogs': 1, 'thrash_kb': 1 << 20})\n"
        "except (OSError, MemoryError) as e:\n"
        "    print(type(e).__name__, e)\n"
        "print('children', len(children()))\n"
    )
    env = {**os.environ, "CTXBENCH_HISTORY": "off"}
    root = Path(__file__).resolve().parent.parent
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root
    )
    assert "thrasher's 1048576 KiB buffer" in p.stdout, p.stdout + p.stderr
    assert "lower thrash_kb" in p.stdout or "MemoryError" in p.stdout, p.stdout
    assert "children 0" in p.stdout, p.stdout + p.stderr


# Measures a ring with one hog on its CPU while watching the policy of every child (each
# one's last before it ended): run under `chrt -f 10`, whose policy the ring inherits.
UNDER_A_REAL_TIME_CALLER = """
import os, threading, ctxbench
from tests.conftest import children
seen, done = {}, threading.Event()
def watch():
    while not done.is_set():
        for pid in children():
            try:
                seen[pid] = os.sched_getscheduler(pid)
            except OSError:
                pass
threading.Thread(target=watch).start()
try:
    # Repetitions long enough for the watcher to see every child while it lives.
    r = ctxbench.ring([2], placement="single", interference={"hogs": 1}, timeout=2,
                      repetitions=3, min_time=0.2, warmup=0)
    print("ran", r.policy, r.priority)
finally:
    done.set()
print(sorted(seen.values()).count(os.SCHED_OTHER), sorted(seen.values()).count(os.SCHED_FIFO),
      len(seen))
"""


@needs_cap
def test_neighbours_of_a_real_time_caller_run_under_other() -> None:
    """The ring inherits the caller's SCHED_FIFO; its hog does not: one of the ring's
    priority would hold their CPU until it blocks, and the ring could never start."""
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "CTXBENCH_HISTORY": "off"}
    p = subprocess.run(
        ["chrt", "-f", "10", sys.executable, "-c", UNDER_A_REAL_TIME_CALLER],
        capture_output=True, text=True, env=env, cwd=root, timeout=50,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    ran, policies = p.stdout.splitlines()
    assert ran == "ran fifo 10"
    # Each ring instance's participant under the caller's FIFO, its hog under OTHER.
    other, fifo, seen = map(int, policies.split())
    assert other == fifo >= 1 and other + fifo == seen, p.stdout


def test_an_interference_key_given_twice_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """``hogs=1,hogs=2`` took the last; which was meant is not for the tool to guess."""
    with pytest.raises(SystemExit):
        main(["ring", "--interference", "hogs=1,hogs=2", "2"])
    assert "hogs given twice" in capsys.readouterr().err


def test_beside_neighbours_the_mean_and_the_tail_are_said() -> None:
    """Under a hog the median hop was 0.91 µs and the mean 1.64 (perf's total ÷ loops): the
    median alone leaves out what the neighbour costs."""
    from ctxbench import report

    kw = {"placement": "single", "repetitions": 3, "min_time": 0.002, "warmup": 0}
    r = ctxbench.ring([2], interference={"hogs": 1}, record_hops=True, **kw)
    (said,) = [line.text for line in report.lines(r) if "beside neighbours" in line.text]
    mean = float(np.nanmean(r.samples_us[:, 0]))
    assert said.startswith("2 procs: beside neighbours: median ")
    assert f"mean {ctxbench._format.us(mean)} µs per hop, p99 hop " in said
    plain = ctxbench.ring([2], **kw)
    assert not [line for line in report.lines(plain) if "beside neighbours" in line.text]
