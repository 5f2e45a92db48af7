"""The machine's run history: what earlier runs showed of the spread between runs."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import QUIET

import ctxbench
from ctxbench import _core, _history
from ctxbench.store._rows import digest

META = {"hostname": "h", "cpu_model": "c", "kernel": "k", "ctxbench_version": "v"}


def test_a_point_keeps_the_history_id_it_had_before_the_core_wrote_its_identity() -> None:
    # The digest of the pairs Python wrote itself before the core's ``point_id``: a
    # default ring point, and one with a CPU list (spaces inside a value) and neighbours.
    old = ("fixed=False", "min_time=None", "parallel=1", "record_hops=False", "size_kb=0")
    pairs = ("engine=process", *old, "placement=default", "procs=2", "transport=pipe")
    assert ctxbench.api.ring_points([2]) == [
        (digest(*sorted(pairs)), "engine=process parallel=1 placement=default "
         "procs=2 size_kb=0 transport=pipe")
    ]  # fmt: skip
    listed = ctxbench.api.ring_points([2], placement=[0, 0], interference={"hogs": 2})
    pairs = (
        "engine=process", *old, "interference=duty=1,hogs=2", "placement=[0, 0]", "procs=2",
        "transport=pipe",
    )  # fmt: skip
    assert listed is not None and listed[0][0] == digest(*sorted(pairs))


def _usable(kept: Path, point: str) -> int:
    """How many runs the store holds of the point (its history id) that a run level can
    use: those whose own error is within their figure (under load some are not)."""
    if not (kept / "store.sqlite3").exists():
        return 0
    with sqlite3.connect(f"file:{kept / 'store.sqlite3'}?mode=ro", uri=True) as db:
        (n,) = db.execute(
            "SELECT count(*) FROM points WHERE point_key = ? AND rel_se IS NOT NULL", (point,)
        ).fetchone()
    db.close()
    return int(n)


def test_a_run_with_history_is_one_trip_into_the_core(
    kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The core resolves the points once and asks for their earlier runs by id: nothing in
    # Python resolves a configuration of its own first.
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a second trip into the core")

    def stored(point: str) -> int:
        return _usable(kept, point)

    # Each call hands the core every earlier run kept under the point's id (a run whose error
    # exceeds its figure, as a loaded machine makes some, is not kept).
    handed: list[tuple[int, int]] = []
    read = _history.earlier

    def spied(meta: Any, points: list[str], now: Any) -> list[_history.History | None]:
        out = read(meta, points, now)
        handed.extend((len(h[0]) if h else 0, stored(p)) for h, p in zip(out, points))
        return out

    # Earlier runs of the ring's point planted first, so that its last call has some to be
    # handed whatever the load (beside two CPU hogs every measured run's own error passed
    # its figure and none was kept: run 1 of the two-hog series).
    first = ctxbench.lat_ctx([2], **KW)
    ids = ctxbench.api.ring_points([2], **KW)
    assert ids is not None
    x = float(first.raw_us[0])  # positive, where the net figure under load may not be
    for f in (1.0, 1.02, 0.98):
        _history.remember(first.metadata, ids, [f * x], [f * x * 0.01], QUIET)
    monkeypatch.setattr(ctxbench.api._core, "ring_config", refused)
    monkeypatch.setattr(ctxbench.api._core, "pingpong_config", refused)
    monkeypatch.setattr(_history, "earlier", spied)
    for _ in range(_core.MIN_RUNS + 1):
        r = ctxbench.lat_ctx([2], **KW)
        p = ctxbench.pingpong(placement="single", min_time=0.002, max_time=0.05)
    assert len(handed) == 2 * (_core.MIN_RUNS + 1)
    assert all(found == kept_runs for found, kept_runs in handed), handed
    assert handed[-2][0] >= 3
    # The run level uses them all, or none where fewer than MIN_RUNS pass its screens.
    for result, (found, _) in ((r, handed[-2]), (p, handed[-1])):
        assert round(result.stats["runs_seen"][0], 6) in (0, *range(_core.MIN_RUNS, found + 1))


def test_runs_are_kept_per_point_and_read_back_newest_last(kept: Path) -> None:
    a, b = _history.point("procs=2 size_kb=0"), _history.point("procs=4 size_kb=0")
    assert a != b and a[0] == digest("procs=2", "size_kb=0")
    assert a[1] == "procs=2 size_kb=0"
    assert _history.earlier(META, [a[0], b[0]], QUIET) == [None, None]
    for k in range(3):
        _history.remember(META, [a, b], [2.0 + k, 4.0], [0.02, 0.04], QUIET)
    got = _history.earlier(META, [a[0], b[0]], QUIET)
    assert got[0] is not None and got[1] is not None
    assert np.allclose(got[0][0], np.log([2.0, 3.0, 4.0]))
    assert np.allclose(got[0][1], [0.01, 0.02 / 3, 0.005])
    assert all(0 <= age < _history.MAX_AGE_S for age in got[0][2])
    assert len(got[1][0]) == 3
    # One home: the history is the results store's rows, and nothing else is written.
    assert sorted(p.name for p in kept.iterdir())[0] == "store.sqlite3"
    assert all(p.name.startswith("store.sqlite3") for p in kept.iterdir())


def _age_every_run(kept: Path, seconds: float) -> None:
    with sqlite3.connect(kept / "store.sqlite3") as db:
        db.execute("UPDATE runs SET time = time - ?", (seconds,))
    db.close()


def test_only_the_window_of_recent_runs_counts(kept: Path) -> None:
    p = _history.point("procs=2")
    _history.remember(META, [p], [1.0], [0.01], QUIET)
    _age_every_run(kept, 2 * _history.MAX_AGE_S)
    assert _history.earlier(META, [p[0]], QUIET) == [None]
    for k in range(_history.WINDOW + 5):
        _history.remember(META, [p], [1.0 + k], [0.01], QUIET)
    figures, _, _ = _history.earlier(META, [p[0]], QUIET)[0]  # type: ignore[misc]
    assert len(figures) == _history.WINDOW
    assert math.isclose(figures[-1], math.log(_history.WINDOW + 5))


def test_runs_of_another_kernel_or_build_are_not_this_ones_history(kept: Path) -> None:
    p = _history.point("procs=2")
    for _ in range(3):
        _history.remember(META, [p], [1.0], [0.01], QUIET)
    for other in ({"kernel": "k2"}, {"ctxbench_version": "v2"}, {"hostname": "h2"}):
        assert _history.earlier({**META, **other}, [p[0]], QUIET) == [None], other
    assert _history.earlier(META, [p[0]], QUIET)[0] is not None


def test_a_damaged_store_means_no_history_with_one_warning_naming_it(kept: Path) -> None:
    p = _history.point("procs=2")
    _history.remember(META, [p], [1.0], [0.01], QUIET)
    path = kept / "store.sqlite3"
    ctxbench.store._close_kept()  # damaged while no process has it open
    for companion in kept.glob("store.sqlite3-*"):
        companion.unlink()
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4096)
    with pytest.warns(UserWarning, match=rf"run history not used: .*{path}: not usable"):
        assert _history.earlier(META, [p[0]], QUIET) == [None]


def test_off_keeps_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXBENCH_STORE", "off")
    monkeypatch.setenv(_history.ENV, "on")
    _history.remember(META, [("0" * 16, "")], [1.0], [0.01], QUIET)
    assert _history.earlier(META, ["0" * 16], QUIET) == [None]
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("CTXBENCH_STORE", str(tmp_path / "file-not-dir" / "store.sqlite3"))
    monkeypatch.setattr(_history, "_warned", set())
    (tmp_path / "file-not-dir").write_text("")
    with pytest.warns(UserWarning, match="file-not-dir"):
        _history.remember(META, [("0" * 16, "")], [1.0], [0.01], QUIET)  # no error


def test_history_off_reads_nothing_but_measuring_still_keeps_the_run(
    kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _history.point("procs=2")
    for _ in range(3):
        _history.remember(META, [p], [1.0], [0.01], QUIET)
    monkeypatch.setenv(_history.ENV, "off")
    assert _history.earlier(META, [p[0]], QUIET) == [None]
    r = ctxbench.lat_ctx([2], **KW)
    with ctxbench.store.open() as s:  # type: ignore[union-attr]
        assert len(s.series(r.point_id[0], machine=ctxbench.store.machine_of(r))) == 1


KW = {"placement": "single", "min_time": 0.002, "max_time": 0.05}


def test_a_run_learns_the_run_level_from_the_runs_before_it(kept: Path) -> None:
    first = ctxbench.lat_ctx([2], **KW)
    assert first.stats["runs_seen"][0] == 0 and np.isnan(first.stats["sd_run"][0])
    assert first.stats["level"][0] != "run"
    # Three runs 2 % apart planted beside it: what the next run reads is decided by the rule,
    # not by how loaded this machine is (under load a run's own error may pass its figure,
    # and it is then no use to a run level).
    ids = ctxbench.api.ring_points([2], **KW)
    assert ids is not None
    x = float(first.raw_us[0])  # positive, where the net figure under load may not be
    for f in (1.0, 1.02, 0.98):
        _history.remember(first.metadata, ids, [f * x], [f * x * 0.01], QUIET)
    usable = _usable(kept, ids[0][0])
    later = ctxbench.lat_ctx([2], **KW)
    # Runs seconds old: as many effective runs, to the decay of a few seconds; Hampel's
    # screen may leave out the first, measured run if it lies far from the planted ones.
    assert _core.MIN_RUNS - 1e-3 <= later.stats["runs_seen"][0] <= usable + 1e-6
    assert later.stats["sd_run"][0] >= 0
    # A different point has its own history.
    assert ctxbench.lat_ctx([3], **KW).stats["runs_seen"][0] == 0
    assert ctxbench.lat_ctx([2], **KW, history=False).stats["runs_seen"][0] == 0


def test_a_machine_whose_runs_differ_widely_stops_early_with_an_honest_interval(
    kept: Path,
) -> None:
    # Earlier runs 50 % apart, each sure of itself to 1 %: the run level dominates any
    # interval this run could reach, so measuring on would not help.
    point = ctxbench.lat_ctx([2], **KW)
    figure = float(point.raw_us[0])  # positive, where the net figure under load may not be
    ids = ctxbench.api.ring_points([2], **KW)
    assert ids is not None
    for factor in (0.5, 1.5, 0.7, 1.3, 1.0, 0.6, 1.4):
        f = figure * factor
        _history.remember(point.metadata, ids, [f], [f * 0.01], QUIET)
    r = ctxbench.lat_ctx([2], **{**KW, "max_time": 5.0})
    assert r.stats["level"][0] == "run" and r.stats["sd_run"][0] > 0.2
    # It stops as soon as the run level dominates what measuring on could reach; under load
    # its own samples may stay wide until a cap ends it first, the run level still its
    # interval's.
    assert r.stopped[0] in ("run_spread", "max_repetitions", "time_cap")
    half = (r.stats["ci_high"][0] - r.stats["ci_low"][0]) / 2 / r.latency_us[0]
    assert half > 0.3
    # Not "stable" nor "noisy": its samples may also split in two groups under load.
    assert r.stats["verdict"][0] in ("unstable", "bimodal")
    assert r.stopped[0] in r.stop_line()
