"""``ctxbench.changes()``, ``ctxbench.change_at()`` and ``ctxbench changes`` over stored series
(a stand-in of the store's API: ``tests/store_standin.py``), with seeded figures."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from store_standin import StandinStore

import ctxbench
from ctxbench import _changes
from ctxbench.cli import main

POINT = "engine=process placement=single procs=2 transport=pipe"


def filled(seed: int = 1) -> StandinStore:
    """Machine m1: a point that got 25 % slower at its 21st run (commit b), one that did not,
    one with 6 runs; machine m2: the first point, quiet."""
    rng = random.Random(seed)
    s = StandinStore()
    for i in range(40):
        commit = "a" if i < 20 else "b"
        s.add(POINT, "m1", 2.0 * (1.25 if i >= 20 else 1.0) * rng.lognormvariate(0, 0.03),
              {"commit": commit, "kernel": "6.18"})  # fmt: skip
        s.add("quiet", "m1", 3.0 * rng.lognormvariate(0, 0.03), {"commit": commit})
        s.add(POINT, "m2", 2.0 * rng.lognormvariate(0, 0.03), {"commit": commit})
    for _ in range(6):
        s.add("short", "m1", 1.0)
    return s


def test_a_shift_is_named_by_its_run_labels_and_size() -> None:
    s = filled()
    frame = ctxbench.changes(s)
    assert len(frame) == 1
    row = frame.iloc[0]
    assert (row["point"], row["machine"], row["index"]) == (POINT, "m1", 20)
    run = s.series(POINT, machine="m1")[20]
    assert row["run_id"] == run.run_id
    assert row["labels"] == {"commit": "b", "kernel": "6.18"}
    assert row["label.commit"] == "b"
    assert row["time"].timestamp() == run.time
    assert 1.0 < row["ratio_lo"] < row["ratio"] < row["ratio_hi"]
    assert row["p"] <= row["level"] <= 0.05
    assert frame.attrs == {
        "series_scanned": 3,
        "series_too_short": 1,
        "level": 0.05,
        "min_runs": 5,
    }


def test_filters_and_settings_reach_the_scan() -> None:
    s = filled()
    assert ctxbench.changes(s, machine="m2").empty
    assert ctxbench.changes(s, labels={"commit": "a"}).empty  # the runs before it only
    frame = ctxbench.changes(s, point="short", min_runs=3)
    assert frame.attrs["series_scanned"] == 1 and frame.empty
    with pytest.raises(ValueError, match="level"):
        ctxbench.changes(s, level=0.9)


def test_change_at_answers_the_gates_question() -> None:
    s = filled()
    runs = s.series(POINT, machine="m1")
    assert ctxbench.change_at(runs[20], store=s)["status"] == "change"
    assert ctxbench.change_at(runs[20].run_id, POINT, store=s)["status"] == "change"
    quiet = ctxbench.change_at(runs[10], store=s)
    assert quiet["status"] == "none found" and [c["index"] for c in quiet["changes"]] == [20]
    assert ctxbench.change_at(runs[-1], store=s)["status"] == "too few runs"
    with pytest.raises(ValueError, match="run"):
        ctxbench.change_at(10_000, POINT, store=s)


def test_the_command_names_the_run_and_what_was_not_scanned(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    s = filled()
    monkeypatch.setattr(_changes, "opened", lambda store: s)
    assert main(["changes"]) == 0
    out = capsys.readouterr().out
    assert "changed at run" in out and "commit=b" in out and "slower" in out
    assert "1 series too short to scan" in out and "not no change" in out
    assert main(["changes", "--json", "--label", "kernel=6.18"]) == 0
    recs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["index"] for r in recs] == [20]
    assert main(["changes", "--level", "2"]) == 2
    assert "--level" in capsys.readouterr().err


def test_a_store_not_made_yet_is_said_and_not_created(tmp_path: Path) -> None:
    where = tmp_path / "store.sqlite3"
    with pytest.raises(ValueError, match="no results store at"):
        ctxbench.changes(where)
    assert not where.exists()
    with pytest.raises(ValueError, match="off"):
        ctxbench.changes("off")


def test_the_real_store_series_are_scanned_and_published(tmp_path: Path) -> None:
    # One tiny measured ring, kept 30 times with seeded figures: slower by 1.3 from the 16th
    # run on, under commit=b. The figures are planted (2 µs times the draw): a net figure
    # measured at load 13-16 can be at or below 0, which is not kept as a run of the series.
    import dataclasses

    from ctxbench import store
    from ctxbench._publish import publish

    r = ctxbench.lat_ctx([2], placement="single", min_time=0.002, max_time=0.05,
                         repetitions=3, history=False)  # fmt: skip
    where = tmp_path / "data"
    where.mkdir(mode=0o700)
    rng = random.Random(3)
    with store.open(where / "store.sqlite3") as s:  # type: ignore[union-attr]
        for i in range(30):
            f = (1.3 if i >= 15 else 1.0) * rng.lognormvariate(0, 0.02)
            copy = dataclasses.replace(
                r,
                latency_us=np.full_like(r.latency_us, 2.0 * f),
                metadata={**r.metadata, "run_id": f"run {i}"},
            )
            s.keep(copy, {"commit": "b" if i >= 15 else "a"})
    frame = ctxbench.changes(where / "store.sqlite3")
    assert list(frame["index"]) == [15] and list(frame["label.commit"]) == ["b"]
    assert frame.attrs["series_scanned"] == 1
    index = publish(tmp_path / "site", store=where / "store.sqlite3")
    assert "change points: 1" in index.read_text()
