"""The results store: every run kept as one row set, read back as a series; concurrent
writers; an older store migrated; the CLI's ``store`` subcommands, ``--store`` and
``--label``; results files and old history files imported, the store exported."""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import ctxbench
from ctxbench import store
from ctxbench.cli import main
from ctxbench.store import _schema

QUICK = {"placement": "single", "min_time": 0.002, "max_time": 0.05}


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny ring result of two points, saved (into a store of its own)."""
    where = tmp_path_factory.mktemp("measured")
    r = ctxbench.lat_ctx([2, 3], **QUICK, repetitions=3, history=False)
    # Under load a point's net figure can fall to 0 or below (below the method's
    # resolution), and is then not kept: these tests are of the store, so each has one. Such
    # a point takes its raw figure and samples, unflagged: a file that flags a figure above 0,
    # or whose figure is not its samples' median, is refused as inconsistent.
    low = r.latency_us <= 0
    kept = dataclasses.replace(
        r,
        latency_us=np.where(low, r.raw_us, r.latency_us),
        samples_us=np.where(low, r.raw_samples_us, r.samples_us),
        below_resolution=np.zeros_like(low),
    )
    ctxbench.save(kept, where / "ring.json", store="off")
    return where / "ring.json"


def _copy(result: object, run_id: str) -> object:
    meta = {**result.metadata, "run_id": run_id}  # type: ignore[attr-defined]
    return dataclasses.replace(result, metadata=meta)  # type: ignore[type-var]


def test_a_run_is_one_row_set_read_back_as_a_series(place: Path, measured: Path) -> None:
    (r,) = ctxbench.result.load_results(measured)
    with store.open() as s:  # type: ignore[union-attr]
        assert s.keep(r, {"commit": "abc123"}) == 2
        assert s.keep(r) == 0, "the same run (its metadata's run_id) is kept once"
        assert s.keep(_copy(r, "other"), {"commit": "def456"}) == 2
        machine = store.machine_of(r)
        assert s.machines() == [machine]
        assert s.points() == sorted((p, machine) for p in r.point_id)
        runs = s.series(r.point_id[0], machine=machine)
        assert [x.labels["commit"] for x in runs] == ["abc123", "def456"]
        first = runs[0]
        assert first.value_us == pytest.approx(float(r.latency_us[0]))
        assert first.labels["kernel"] == r.metadata["kernel"]
        assert first.ln_value == pytest.approx(math.log(first.value_us))
        # Its own error: NaN where the run's was wider than its figure (it tells nothing).
        assert math.isnan(first.rel_se) or 0 < first.rel_se <= 1
        assert len(first.instances_us) >= 1
        assert first.load == r.metadata["runnable_per_cpu"]
        assert first.switches_per_hop == pytest.approx(float(r.switches_per_hop[0]))
        assert [x.run_id for x in s.series(r.point_id[0], machine=machine, newest=1)] == [
            runs[1].run_id
        ]
        # (Run ids: a figure of NaN, as a loaded machine's error can make rel_se, is not ==.)
        labelled = s.series(r.point_id[0], machine=machine, labels={"commit": "def456"})
        assert [x.run_id for x in labelled] == [runs[1].run_id]
        assert s.series(r.point_id[0], machine="elsewhere") == []
        (record,) = s.records([first.run_id])
        assert record is not None and record["metadata"]["run_id"] == r.metadata["run_id"]


def test_measuring_and_saving_keep_a_run_once(place: Path, tmp_path: Path) -> None:
    r = ctxbench.lat_ctx([2], **QUICK)
    r.save(tmp_path / "r.json")
    ctxbench.save([r], tmp_path / "r.csv", labels={"commit": "abc"})
    p = ctxbench.pingpong(**QUICK)
    with store.open() as s:  # type: ignore[union-attr]
        runs = s.runs()
        # (A point below the method's resolution, net <= 0 under load, has no figure to keep.)
        assert [(x["kind"], x["source"], x["points"]) for x in runs] == [
            ("ring", "measured", int(r.latency_us[0] > 0)), ("pingpong", "measured", 1)
        ]  # fmt: skip
        (pp,) = s.series("engine=process kind=pingpong min_time=None placement=single "
                         "procs=2 transport=pipe", machine=store.machine_of(p))  # fmt: skip
        assert pp.value_us == pytest.approx(p.usecs_per_switch)
    ctxbench.save(r, tmp_path / "r2.json", store="off")


def test_a_thread_keeps_its_runs_beside_the_main_threads(place: Path) -> None:
    # The main thread's store is kept open; a connection serves only the thread that made it,
    # so a run measured on another thread (a notebook's executor, a Dask worker's pool) was
    # not kept: "SQLite objects created in a thread can only be used in that same thread".
    ctxbench.pingpong(**QUICK)
    failed: list[BaseException] = []

    def measure() -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                ctxbench.pingpong(**QUICK)
        except BaseException as e:  # noqa: BLE001 (handed to the main thread)
            failed.append(e)

    worker = threading.Thread(target=measure)
    worker.start()
    worker.join()
    assert failed == []
    with store.open() as s:  # type: ignore[union-attr]
        assert [x["kind"] for x in s.runs()] == ["pingpong", "pingpong"]


@pytest.mark.parametrize(
    ("labels", "words"),
    [
        ({"Commit": "x"}, "label key 'Commit': expected a lower-case name"),
        ({"commit": ""}, "label commit='': expected 1 to 200 printable"),
        ({"commit": "a\x1bb"}, "expected 1 to 200 printable"),
        ({"machine": "x"}, "the store sets it for every run"),
        ({"commit": 3}, "label commit='3'"),
    ],
)
def test_labels_are_checked_with_a_precise_error(
    place: Path, measured: Path, labels: dict, words: str
) -> None:
    (r,) = ctxbench.result.load_results(measured)
    with store.open() as s, pytest.raises(ValueError, match=words):  # type: ignore[union-attr]
        s.keep(r, labels)
    with pytest.raises(ValueError, match=words):
        ctxbench.save(r, place.parent / "r.json", labels=labels)
    assert not (place.parent / "r.json").exists()


def test_the_cli_checks_labels_before_it_measures(
    place: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        main(["lat-ctx", "--label", "commit", "2"])
    assert e.value.code == 2
    assert "--label: label 'commit': expected key=value" in capsys.readouterr().err
    assert main(["lat-ctx", "--label", "a=1", "--label", "a=2", "2"]) == 2
    assert "--label: a given twice ('1' and '2')" in capsys.readouterr().err
    assert not place.exists()


# Four writer processes, each keeping 50 runs as fast as it can, one transaction each.
WRITER = textwrap.dedent(
    """
    import dataclasses, sys, warnings
    warnings.simplefilter("error")
    from ctxbench import store
    from ctxbench.result import load_results
    (r,) = load_results(sys.argv[1])
    for k in range(50):
        meta = {**r.metadata, "run_id": f"{sys.argv[2]}-{k}"}
        kept = store.keep_quietly(dataclasses.replace(r, metadata=meta), labels={"w": sys.argv[2]})
        assert kept == 2, kept
    """
)


def test_four_concurrent_writers_keep_every_run_and_show_no_lock_error(
    place: Path, measured: Path
) -> None:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(measured), f"w{n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for n in range(4)
    ]
    outputs = [w.communicate(timeout=600) for w in writers]
    assert [w.returncode for w in writers] == [0] * 4, outputs
    assert all(out == ("", "") for out in outputs), outputs
    with store.open() as s:  # type: ignore[union-attr]
        runs = s.runs()
        assert len(runs) == 200
        assert sorted(len(s.runs({"w": f"w{n}"})) for n in range(4)) == [50] * 4
    with sqlite3.connect(place) as db:
        assert db.execute("SELECT count(*) FROM points").fetchone() == (400,)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    db.close()


# The first schema as it shipped: written here, not taken from the code, so that the test
# keeps a store of that version whatever the code becomes.
V1 = """
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_key TEXT NOT NULL,
    time REAL NOT NULL, machine TEXT NOT NULL, kernel TEXT, boot TEXT, version TEXT,
    kind TEXT NOT NULL, runnable_per_cpu REAL, loadavg REAL, steal REAL, observer TEXT,
    source TEXT NOT NULL, UNIQUE (run_key, machine));
CREATE TABLE points (run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    point_id TEXT NOT NULL, point_key TEXT NOT NULL, value_us REAL NOT NULL,
    ln_value REAL NOT NULL, rel_se REAL, ci_low REAL, ci_high REAL, switches_per_hop REAL,
    instances_us TEXT, figures TEXT, PRIMARY KEY (run, point_id));
CREATE INDEX points_by_id ON points (point_id);
CREATE INDEX points_by_key ON points (point_key);
CREATE INDEX runs_by_machine ON runs (machine, time);
CREATE TABLE labels (run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run, key));
CREATE INDEX labels_by_pair ON labels (key, value);
INSERT INTO runs VALUES (1, 'old', 1000.0, 'm1', '6.1', NULL, '0.1.0', 'ring', 0.1, NULL,
    NULL, 'evidence', 'saved');
INSERT INTO points VALUES (1, 'engine=process procs=2', 'k', 2.0, 0.6931471805599453, 0.01,
    1.9, 2.1, 1.0, '[2.0]', '{}');
INSERT INTO labels VALUES (1, 'commit', 'v1-era');
PRAGMA application_id = 1668577378;
PRAGMA user_version = 1;
"""


def test_a_store_of_the_first_schema_is_migrated_and_keeps_its_runs(
    place: Path, measured: Path
) -> None:
    with sqlite3.connect(place) as db:
        db.executescript(V1)
    db.close()
    with store.open() as s:  # type: ignore[union-attr]
        (old,) = s.series("engine=process procs=2", machine="m1")
        assert (old.value_us, old.labels) == (2.0, {"kernel": "6.1", "commit": "v1-era"})
        assert s.records([old.run_id]) == [None], "a v1 run has no record"
        (r,) = ctxbench.result.load_results(measured)
        assert s.keep(r) == 2
    with sqlite3.connect(place) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (_schema.VERSION,)
        assert db.execute("SELECT count(*) FROM records").fetchone() == (1,)
    db.close()


def test_the_cli_keeps_runs_with_labels_and_lists_shows_labels_deletes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mine.sqlite3"
    common = ["-N", "3", "--min-time", "0.002", "--placement", "single"]
    assert main(["lat-ctx", *common, "--store", str(path), "--label", "commit=abc", "2"]) == 0
    assert main(["pipe", "--store", str(path), "--label", "commit=def", "-l", "1000"]) == 0
    capsys.readouterr()
    assert main(["store", "list", "--store", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: 1 runs" and "commit=abc" in out[-1]
    assert main(["store", "show", "1", "--store", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "labels:   commit=abc" in shown and "procs=2" in shown and "µs" in shown
    assert main(["store", "label", "1", "7", "--store", str(path), "--label", "ci=nightly"]) == 1
    assert capsys.readouterr().out == "labelled 1 runs; 1 run ids not found\n"
    assert main(["store", "list", "--store", str(path), "--label", "ci=nightly"]) == 0
    assert "ci=nightly commit=abc" in capsys.readouterr().out
    assert main(["store", "delete", "--store", str(path)]) == 2
    assert "name at least one label" in capsys.readouterr().err
    assert main(["store", "delete", "--store", str(path), "--label", "commit=abc"]) == 0
    assert capsys.readouterr().out == f"deleted 1 runs from {path}\n"


def test_show_names_a_point_below_resolution_the_series_does_not_hold(
    place: Path, measured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (r,) = ctxbench.result.load_results(measured)
    # Under load the overhead subtracted can exceed a ring's figure: planted here.
    low = dataclasses.replace(r, latency_us=np.array([r.latency_us[0], -0.05]))
    with store.open() as s:  # type: ignore[union-attr]
        assert s.keep(low) == 1
    assert main(["store", "show", "1"]) == 0
    shown = capsys.readouterr().out.splitlines()
    (kept,) = [line for line in shown if "procs=2 " in line]
    (low_line,) = [line for line in shown if "procs=3 " in line]
    assert "below" not in kept
    assert low_line.startswith("  -0.05 µs: below the method's resolution, not in the series")


def test_export_and_import_carry_runs_between_stores(
    tmp_path: Path, measured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    a, b = tmp_path / "a.sqlite3", tmp_path / "b.sqlite3"
    assert main(["store", "import", str(measured), "--store", str(a), "--label", "k=v"]) == 0
    assert capsys.readouterr().out == f"{measured}: 2 runs of points and matrices kept\n"
    for fmt in ("csv", "parquet", "json"):
        out = tmp_path / f"all.{fmt}"
        assert main(["store", "export", "--format", fmt, "--out", str(out), "--store", str(a)]) == 0
        assert capsys.readouterr().out == f"wrote 1 runs to {out}\n"
    table = pd.read_csv(tmp_path / "all.csv")
    assert len(table) == 2 and set(table["label.k"]) == {"v"}
    # (pandas < 3 reads a CSV's floats to within the last digit only.)
    assert pd.read_parquet(tmp_path / "all.parquet")["value_us"].tolist() == pytest.approx(
        table["value_us"].tolist(), rel=1e-15
    )
    # The JSON export is a results document: any command reads it, and it imports whole.
    assert len(ctxbench.load(tmp_path / "all.json")) > 0
    assert main(["store", "import", str(tmp_path / "all.json"), "--store", str(b)]) == 0
    with store.open(b) as s:  # type: ignore[union-attr]
        assert len(s.runs()) == 1 and s.runs()[0]["source"] == "imported"


def _history_line(**fields: object) -> str:
    import time

    return json.dumps({"t": time.time() - 60, "p": "0123456789abcdef", "w": "procs=2",
                       "y": 0.7, "s": 0.01, "l": 0.0, **fields})  # fmt: skip


def test_an_old_history_file_is_imported_as_a_series(
    tmp_path: Path, place: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "runs-00112233445566ff.jsonl"
    old.write_text("".join(_history_line(y=0.7 + k / 100) + "\n" for k in range(3)))
    assert main(["store", "import", str(old)]) == 0
    assert capsys.readouterr().out == f"{old}: 3 runs of points and matrices kept\n"
    assert main(["store", "import", str(old)]) == 0, "importing twice adds nothing"
    assert capsys.readouterr().out == f"{old}: 0 runs of points and matrices kept\n"
    machine = store.machine_of({"metadata": ctxbench.api.result_metadata()})
    with store.open() as s:  # type: ignore[union-attr]
        runs = s.series("procs=2", machine=machine)
    assert [round(r.ln_value, 2) for r in runs] == [0.7, 0.71, 0.72]


@pytest.mark.parametrize(
    "fields",
    [
        {"t": 10e12},  # never ages out
        {"s": 1e-300},  # a weight that drowns every other run
        {"s": 0.0},
        {"s": 5.0},
        {"y": 1e308},
        {"y": 31.0},
        {"l": -1.0},
        {"st": 2.0},
        {"p": "x" * 16},
        {"w": "\x1b[2J"},
    ],
)
def test_a_history_line_not_ours_refuses_its_file_naming_line_and_field(
    tmp_path: Path, place: Path, fields: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "runs-00112233445566ff.jsonl"
    old.write_text("\n".join([_history_line(), _history_line(**fields)]) + "\n")
    assert main(["store", "import", str(old)]) == 2
    err = capsys.readouterr().err
    assert f"{old}: line 2: field '{next(iter(fields))}'" in err
    with store.open() as s:  # type: ignore[union-attr]
        assert s.runs() == [], "nothing of a file refused is kept"


def test_saving_a_run_measuring_kept_adds_its_labels_and_a_tests_id(
    place: Path, tmp_path: Path
) -> None:
    r = ctxbench.lat_ctx([2], **QUICK)
    tagged = dataclasses.replace(r, metadata={**r.metadata, "test": "tests/t.py::test_x"})
    ctxbench.save(tagged, tmp_path / "r.json", labels={"commit": "abc"})
    with store.open() as s:  # type: ignore[union-attr]
        (run,) = s.runs()
        assert run["labels"] == {"commit": "abc", "test": "tests/t.py::test_x"}
        s.keep(r, {"commit": "other"})
        assert s.runs()[0]["labels"]["commit"] == "abc", "a label kept keeps its value"


def test_a_ping_pong_is_kept_per_switch_and_every_per_point_field_of_its_record(
    place: Path,
) -> None:
    from ctxbench.schema import RECORDS

    p = ctxbench.pingpong(**QUICK)
    with store.open() as s:  # type: ignore[union-attr]
        ((run,),) = [s.run_points(r["run_id"]) for r in s.runs()]
    # Its interval is of a round trip: kept per switch, as its figure is.
    assert run["value_us"] == pytest.approx(p.usecs_per_switch)
    low, high = p.stats["ci_low"][0] / 2, p.stats["ci_high"][0] / 2
    assert (run["ci_low"], run["ci_high"]) == pytest.approx((low, high), nan_ok=True)
    # The record's fields of its one point are kept (from the core's field table).
    kept = {n for n, f in RECORDS["pingpong"].items() if f.shape == () and f.type == "float"}
    assert {"usecs_per_op", "elapsed_s"} <= kept & set(run)
