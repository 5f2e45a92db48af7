"""The pytest gate against the store's series (``--ctxbench-store``, ``ctxbench._gate``): a
test whose stored points it no longer measures fails naming it, a test far slower than its
series fails, a short series is inconclusive, and every test's runs are kept labelled with
its id. The store is an in-memory stand-in of its API (tests/series_store.py)."""

from __future__ import annotations

import io
import math

import pytest
from series_store import MACHINE, Store

from ctxbench import _core, _gate
from ctxbench.report._summary import _word

pytest_plugins = ["pytester"]

TINY = {"min_time": 0.002, "repetitions": 3, "warmup": 0}
INNER = """
def test_ring(ctxbench):
    ctxbench.ring([2], engine="{engine}", placement="single", min_time=0.002, repetitions=3,
                  warmup=0)
"""
NODE = "test_g.py::test_ring"


@pytest.fixture(autouse=True, scope="module")
def _pandas_loaded_before_pytester() -> None:
    # As in test_pytest_plugin.py: pandas cannot be imported twice in one process.
    pd = pytest.importorskip("pandas")
    pd.read_csv(io.StringIO("a\nx\n"), dtype={"a": str})


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> Store:
    s = Store()
    monkeypatch.setattr(_gate, "open_store", lambda path: s)
    monkeypatch.setattr(_gate, "machine_now", lambda: MACHINE)
    return s


def point_of(engine: str) -> str:
    asked = {"engine": engine, "placement": "single", **TINY}
    return _core.ring_config([2], **asked)["point_id"][0]


def stored(s: Store, engine: str, us: float, n: int = 8) -> None:
    for i in range(n):
        s.add(point_of(engine), us * (1 + 0.01 * (i % 3)), t=1e6 + i, load=None,
              labels={"test": NODE})  # fmt: skip


def test_a_test_whose_engine_changed_fails_naming_it(
    pytester: pytest.Pytester, stand_in: Store
) -> None:
    stored(stand_in, "thread", 1.0)
    pytester.makepyfile(test_g=INNER.format(engine="process"))
    run = pytester.runpytest("--ctxbench-store")
    run.assert_outcomes(failed=1)
    text = run.stdout.str()
    assert f"{NODE} no longer measures 1 point(s)" in text
    assert "engine=thread" in text
    # Warned, not failed, where asked; named either way.
    again = pytester.runpytest("--ctxbench-store", "--ctxbench-unmatched", "warn")
    again.assert_outcomes(passed=1, warnings=2)  # unmatched, and a series of one run
    assert f"{NODE} no longer measures" in again.stdout.str()


def test_a_test_far_slower_than_its_series_fails(
    pytester: pytest.Pytester, stand_in: Store
) -> None:
    stored(stand_in, "process", 0.001)  # a series of a ring far faster than any real one
    pytester.makepyfile(test_g=INNER.format(engine="process"))
    run = pytester.runpytest("--ctxbench-store")
    if "below resolution" in run.stdout.str():
        return  # a net figure at or below 0 under load: no ratio to judge, and said so
    run.assert_outcomes(failed=1)
    assert f"{NODE} is slower than its stored series" in run.stdout.str()
    assert "series of 8 runs" in run.stdout.str()


def test_a_short_series_is_inconclusive_and_the_run_is_kept(
    pytester: pytest.Pytester, stand_in: Store
) -> None:
    stored(stand_in, "process", 1.0, n=3)
    pytester.makepyfile(test_g=INNER.format(engine="process"))
    run = pytester.runpytest("--ctxbench-store")
    run.assert_outcomes(passed=1)
    kept = [r for r in stand_in.runs if r.labels == {"test": NODE}]
    if "below resolution" in run.stdout.str():
        # A net figure at or below 0 (seen under load): not a run of the series, and said so.
        assert len(kept) == 3
        return
    run.assert_outcomes(passed=1, warnings=1)
    assert f"short series (3 of {_core.MIN_SERIES} comparable runs)" in run.stdout.str()
    assert len(kept) == 4 and kept[-1].point_id == point_of("process")


def test_a_test_with_no_series_yet_passes_and_starts_one(
    pytester: pytest.Pytester, stand_in: Store
) -> None:
    pytester.makepyfile(test_g=INNER.format(engine="process"))
    pytester.runpytest("--ctxbench-store").assert_outcomes(passed=1, warnings=1)
    assert [r.labels for r in stand_in.runs] == [{"test": NODE}]


def test_runs_k_measures_each_point_k_times_and_the_gate_judges_k_runs(
    pytester: pytest.Pytester, stand_in: Store
) -> None:
    stored(stand_in, "process", 0.001)  # a series far faster than any real ring
    pytester.makepyfile(test_g=INNER.format(engine="process"))
    run = pytester.runpytest("--ctxbench-store", "--ctxbench-runs", "3")
    kept = [r for r in stand_in.runs if r.time > 1e6 + 100]
    assert len(kept) == 3 and len({r.run_id for r in kept}) == 3
    if "below resolution" in run.stdout.str():
        return  # a net figure at or below 0 under load: no ratio to judge, and said so
    run.assert_outcomes(failed=1)
    assert "(geometric mean of 3 runs)" in run.stdout.str()


def test_runs_k_saves_k_runs_of_each_point_where_no_store_is_kept(
    pytester: pytest.Pytester,
) -> None:
    import pandas as pd

    pytester.makepyfile(test_g=INNER.format(engine="process"))
    pytester.runpytest("--ctxbench-save", "out.csv", "--ctxbench-runs", "2").assert_outcomes(
        passed=1
    )
    saved = pd.read_csv(pytester.path / "out.csv")
    assert saved.groupby("point_id")["run_id"].nunique().tolist() == [2]
    bad = pytester.runpytest("--ctxbench-runs", "0")
    assert "--ctxbench-runs 0: expected runs from 1 to" in bad.stderr.str()


def test_gate_usage_errors(pytester: pytest.Pytester, stand_in: Store) -> None:
    pytester.makepyfile(test_g=INNER.format(engine="process"))
    run = pytester.runpytest("--ctxbench-store", "--ctxbench-compare", "x.json")
    assert "choose one" in run.stderr.str()


def test_stable_is_said_only_where_the_samples_are() -> None:
    assert _word("stable", 0.29) == "steady median, noisy samples"
    assert _word("stable", 0.02) == "stable"
    assert _word("noisy", 0.29) == "noisy"
    assert _word("stable", math.nan) == "stable"
    assert _core.NOISY_CV == 0.10


def _series_with(s: Store, levels: list[float], test: str = NODE) -> str:
    pid = point_of("process")
    for i, us in enumerate(levels):
        s.add(pid, us * (1 + 0.01 * (i % 3)), t=1e6 + len(s.runs), load=None,
              labels={"test": test})  # fmt: skip
    return pid


def _answer(s: Store) -> str:
    pd = pytest.importorskip("pandas")
    gate = _gate.Gate(s, MACHINE)
    table = gate.change_points(NODE, pd.DataFrame({"point_id": [point_of("process")]}))
    return str(table["change_point"].iloc[0])


def test_the_gate_says_whether_its_series_has_a_change_point_and_where() -> None:
    s = Store()
    # Another test's runs of the same point, far slower: not this test's series.
    _series_with(s, [3.0] * 30, test="test_other.py::test_ring")
    _series_with(s, [1.0] * 6)
    assert _answer(s) == "series too short to scan (6 runs, 10 needed)"
    s.runs = [r for r in s.runs if r.labels["test"] != NODE]
    _series_with(s, [1.0] * 20 + [1.5] * 5)  # the newest run is the 5th after the shift
    first_slow = [r for r in s.runs if r.labels["test"] == NODE][20].run_id
    said = _answer(s)
    assert said.startswith(f"confirmed now at run {first_slow} (test={NODE}), 4 runs back: 1.5")
    assert "slower" in said
    _series_with(s, [1.5] * 3)
    assert _answer(s).startswith(f"none new; the last at run {first_slow}")
    assert "7 runs back" in _answer(s)


def test_an_unchanged_series_has_no_change_point() -> None:
    s = Store()
    _series_with(s, [1.0] * 28)
    assert _answer(s) == "none (this run seeable after 4 more)"


def test_the_gates_table_has_the_change_point_column(
    pytester: pytest.Pytester, stand_in: Store
) -> None:
    stored(stand_in, "process", 1.0, n=12)
    pytester.makepyfile(test_g=INNER.format(engine="process"))
    text = pytester.runpytest("--ctxbench-store").stdout.str()
    lines = text.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("test ")]
    assert lines[at].rstrip().endswith("change point")
    # The table's row; what the run said of the measurement (a stop line under load, say)
    # follows the table and starts with the test's id too.
    row = next(line for line in lines[at + 1 :] if line.startswith(NODE))
    if "below resolution" in text:
        # A net figure at or below 0 (under load) is no run of the series: the column answers
        # for the series as stored.
        answers = ("seeable after", "confirmed now", "none new", "too short")
        assert any(a in row for a in answers), row
        return
    assert "seeable after 4 more" in row or "confirmed now" in row, row
