"""Matrix runs in the results store: ``ctxbench matrix`` and ``ctxbench.save`` of a
MatrixResult keep one row set (a run of kind matrix, its labels, machine and record, its
``matrices`` row), read back whole; a store of the schema before them is migrated."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import ctxbench
from ctxbench import store
from ctxbench.cli import main
from ctxbench.result import from_record, load_results
from ctxbench.store import _schema

SAMPLE = Path(__file__).parent / "data" / "matrix-sample.json"
QUICK = {"repetitions": 2, "min_time": 0.001, "warmup": 0, "progress": False}
# Two CPUs at most, whatever the host's size: a matrix of every CPU is n² cells.
CPUS = sorted(os.sched_getaffinity(0))[:2]


def _count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as db:
        (n,) = db.execute(f"SELECT count(*) FROM {table}").fetchone()
    db.close()
    return int(n)


def test_a_saved_matrix_is_one_row_set_read_back_whole(place: Path, tmp_path: Path) -> None:
    (m,) = load_results(SAMPLE)
    ctxbench.save(m, tmp_path / "m.json", labels={"commit": "abc"})
    ctxbench.save(m, tmp_path / "again.json")  # the same run (its run_id): kept once
    with store.open() as s:  # type: ignore[union-attr]
        (run,) = s.runs()
        assert (run["kind"], run["source"], run["points"]) == ("matrix", "saved", 0)
        (row,) = s.matrices()
        assert row["machine"] == store.machine_of(m) == run["machine"]
        assert row["labels"] == {"commit": "abc"}
        assert (row["cpus"], row["cells"]) == (len(m.cpus), len(m.latency_us))
        assert row["median_us"] == pytest.approx(float(np.nanmedian(m.latency_us)))
        assert (row["engine"], row["transport"]) == (m.engine, m.transport)
        assert s.matrices(machine="elsewhere") == [] and s.points() == []
        (record,) = s.records([row["run_id"]])
        back = from_record(record)  # type: ignore[arg-type]
        np.testing.assert_array_equal(back.latency_us, m.latency_us)
        assert back.metadata["run_id"] == m.metadata["run_id"]
        assert s.delete({"commit": "abc"}) == 1
        assert s.matrices() == []
    assert _count(place, "matrices") == _count(place, "records") == 0


def test_measuring_a_matrix_keeps_it_with_the_commands_labels(
    place: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m = ctxbench.matrix(CPUS, **QUICK)
    with store.open() as s:  # type: ignore[union-attr]
        (row,) = s.matrices()
        assert row["source"] == "measured" and row["cells"] == len(m.latency_us)
        (record,) = s.records([row["run_id"]])
        assert record is not None and record["metadata"]["run_id"] == m.metadata["run_id"]
    mine = tmp_path / "mine.sqlite3"
    argv = [
        "matrix",
        "--cpus",
        ",".join(map(str, CPUS)),
        "-N",
        "2",
        "--min-time",
        "0.001",
        "--no-progress",
    ]
    assert main([*argv, "--store", str(mine), "--label", "kernel=a"]) == 0
    capsys.readouterr()
    with store.open(mine) as s:  # type: ignore[union-attr]
        (row,) = s.matrices(labels={"kernel": "a"})
        assert row["cpus"] == len(CPUS)
    assert main(["store", "list", "--store", str(mine)]) == 0
    assert "matrix" in capsys.readouterr().out


def test_a_store_of_the_schema_before_matrices_is_migrated(place: Path) -> None:
    with sqlite3.connect(place) as db:
        for script in _schema.MIGRATIONS[:2]:
            db.executescript(script)
        db.execute(
            "INSERT INTO runs (run_key, time, machine, kind, source) "
            "VALUES ('k', 1.0, 'm1', 'ring', 'saved')"
        )
        db.execute(f"PRAGMA application_id = {_schema.APPLICATION_ID}")
        db.execute("PRAGMA user_version = 2")
    db.close()
    (m,) = load_results(SAMPLE)
    with store.open() as s:  # type: ignore[union-attr]
        assert s.keep(m) == 1
        assert [r["kind"] for r in s.runs()] == ["ring", "matrix"]
    with sqlite3.connect(place) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (_schema.VERSION,) == (3,)
    db.close()
