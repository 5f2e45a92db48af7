from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench import PingpongResult, files, result

pytest_plugins = ["pytester"]

INNER = """
import pytest

TINY = {"min_time": 0.002, "repetitions": 3, "warmup": 0}


@pytest.mark.parametrize("procs", [2, 3])
def test_ring(ctxbench, procs):
    r = ctxbench.ring([procs], size_kb=4, **TINY)
    assert r.procs.tolist() == [procs] and r.size_kb == 4
    assert "test" not in r.metadata


def test_lat_ctx_and_pingpong(ctxbench):
    r = ctxbench.lat_ctx(2, **TINY)
    p = ctxbench.pingpong(loops=1000)
    assert ctxbench.results == [r, p]


def test_without_fixture():
    pass
"""


def test_plugin_is_registered(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.has_plugin("ctxbench")


def test_records_and_saves(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    path = pytester.path / "results.json"
    run = pytester.runpytest("--ctxbench-save", str(path))
    run.assert_outcomes(passed=4)
    run.stdout.fnmatch_lines(["ctxbench: saved 4 results to *results.json"])
    results = result.load_results(path)
    assert [r.metadata["test"] for r in results] == [
        "test_inner.py::test_ring[2]",
        "test_inner.py::test_ring[3]",
        "test_inner.py::test_lat_ctx_and_pingpong",
        "test_inner.py::test_lat_ctx_and_pingpong",
    ]
    assert [r.procs.tolist() for r in results[:3]] == [[2], [3], [2]]
    assert isinstance(results[3], PingpongResult)
    df = files.load(path)
    assert df.groupby("test").size().to_dict() == {
        "test_inner.py::test_lat_ctx_and_pingpong": 3 + 1,
        "test_inner.py::test_ring[2]": 3,
        "test_inner.py::test_ring[3]": 3,
    }


def test_csv_save(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    path = pytester.path / "results.csv"
    pytester.runpytest("--ctxbench-save", str(path)).assert_outcomes(passed=4)
    assert len(files.load(path)) == 3 * 3 + 1


def test_nothing_saved_without_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    pytester.runpytest().assert_outcomes(passed=4)
    assert not list(pytester.path.glob("*.json"))


def test_bad_save_path_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    run = pytester.runpytest("--ctxbench-save", "results.xlsx")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines(["*--ctxbench-save results.xlsx: use a .json, .csv or .parquet*"])


def test_pingpong_is_looked_up_when_called(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_inner="""
import ctxbench as module


def test_pingpong(ctxbench, monkeypatch):
    monkeypatch.setattr(module, "pingpong", lambda **kw: kw, raising=False)
    assert ctxbench.pingpong(loops=10) == {"loops": 10}
    assert ctxbench.results == [{"loops": 10}]
"""
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_saved_json_is_a_ctxbench_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner="def test_nothing(ctxbench):\n    pass\n")
    path = pytester.path / "empty.json"
    pytester.runpytest("--ctxbench-save", str(path)).assert_outcomes(passed=1)
    assert json.loads(Path(path).read_text())["results"] == []
