"""A sweep's out file in a directory others can write, under big records and signals: the lock
(``.<name>.lock`` beside it) is this user's own regular file or the sweep is refused, nothing
is written through a link, nothing that is not ours is removed, and each point costs the
encoding of its own record."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import FAST

import ctxbench
from ctxbench import grid

OPTS: dict[str, Any] = {"progress": False, **FAST}


def _lock_of(out: Path) -> Path:
    return out.with_name(f".{out.name}.lock")


def test_a_planted_symlink_lock_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("root's secret\n")
    out = tmp_path / "res.json"
    _lock_of(out).symlink_to(secret)
    with pytest.raises(OSError, match=r"symbolic link.*\.res\.json\.lock") as e:
        ctxbench.sweep(procs=[2], out=out, **OPTS)
    assert e.value.filename == str(_lock_of(out))
    assert secret.read_text() == "root's secret\n"
    assert _lock_of(out).is_symlink() and not out.exists()


def test_a_lock_that_is_a_hard_link_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("root's secret\n")
    out = tmp_path / "res.json"
    os.link(secret, _lock_of(out))
    with pytest.raises(OSError, match=r"2 links.*\.res\.json\.lock"):
        ctxbench.sweep(procs=[2], out=out, **OPTS)
    assert secret.read_text() == "root's secret\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's file needs root")
def test_a_lock_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "res.json"
    lock = _lock_of(out)
    lock.write_text("12345\n")
    os.chown(lock, 4321, 4321)
    with pytest.raises(OSError, match=r"owned by uid 4321.*\.res\.json\.lock"):
        ctxbench.sweep(procs=[2], out=out, **OPTS)
    assert lock.read_text() == "12345\n"


def test_a_fifo_lock_is_refused_without_hanging(tmp_path: Path) -> None:
    out = tmp_path / "res.json"
    os.mkfifo(_lock_of(out))
    with pytest.raises(OSError, match=r"a FIFO.*\.res\.json\.lock"):
        ctxbench.sweep(procs=[2], out=out, **OPTS)


def test_the_end_of_a_sweep_removes_only_its_own_lock(tmp_path: Path) -> None:
    out = tmp_path / "res.json"
    book = grid.OutFile.open(out)
    lock = _lock_of(out)
    assert stat.S_ISREG(lock.lstat().st_mode)
    # Someone moved the lock away while the sweep ran and put a link to it in its place:
    # the link is theirs, and stays.
    moved = tmp_path / "moved"
    lock.rename(moved)
    lock.symlink_to(moved)
    book.close()
    assert lock.is_symlink() and moved.exists()


def test_each_point_encodes_its_own_record_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every point rewrites the file (atomically); encoding every record again each time made
    # a sweep of big records quadratic (8 points of 60 MB: minutes).
    rec = ctxbench.record.encode(ctxbench.ring([2], **FAST))
    encoded: list[str] = []
    real = json.dumps

    def counting(obj: Any, *args: Any, **kwargs: Any) -> str:
        if isinstance(obj, dict):
            found = obj.get("results", [obj] if "kind" in obj else [])
            encoded.extend(r.get("size_kb") for r in found)
        return real(obj, *args, **kwargs)

    out = tmp_path / "res.json"
    monkeypatch.setattr(json, "dumps", counting)
    with grid.OutFile.open(out) as book:
        for size in range(5):
            book.add(("m", size), {**rec, "size_kb": size})
    monkeypatch.undo()
    assert encoded == [0, 1, 2, 3, 4]
    assert [r["size_kb"] for r in json.loads(out.read_text())["results"]] == encoded


SWEEPING = """
import sys, ctxbench
ctxbench.sweep(procs=list(range(2, 200)), out=sys.argv[1], progress=False, repetitions=2,
               min_time=0.002, warmup=0)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_a_sweep_ended_by_a_signal_leaves_no_lock_and_no_temporary_file(
    tmp_path: Path, sig: int
) -> None:
    out = tmp_path / "res.json"
    # The sweep handles only a signal whose action is the default (under nohup SIGHUP is
    # ignored, and stays so): the child starts with the default, whatever this process has.
    proc = subprocess.Popen(
        [sys.executable, "-c", SWEEPING, str(out)],
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and json.loads(out.read_text() or "{}").get("results")):
            assert proc.poll() is None and time.monotonic() < deadline, "no point written"
            time.sleep(0.01)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, err.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res.json"], "lock or .tmp left"
    assert len(ctxbench.load(out)) > 0
