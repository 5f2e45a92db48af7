from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import FAST

import ctxbench
from ctxbench import files, result
from ctxbench.frame import to_frame


@pytest.fixture(scope="module")
def results() -> list[ctxbench.RingResult]:
    return [
        ctxbench.lat_ctx([2, 3], size_kb=0, **FAST),
        ctxbench.ring([2], size_kb=4, placement="single", **FAST),
    ]


def assert_same(a: object, b: object) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert type(a) is type(b) and a == b


def same_frames(a: pd.DataFrame, b: pd.DataFrame) -> None:
    # CSV and Parquet keep values, not every dtype (an all-None column comes back as NaN).
    pd.testing.assert_frame_equal(a, b, check_dtype=False)


def test_json_round_trip(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    files.save(results, path)
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["format_version"]) == ("ctxbench", 1)
    assert [r["kind"] for r in doc["results"]] == ["ring", "ring"]
    loaded = result.load_results(path)
    assert len(loaded) == len(results)
    for a, b in zip(results, loaded):
        assert isinstance(b, ctxbench.RingResult)
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name))
        assert all(c.dtype == np.int64 and c.ndim == 2 for c in b.cpus)
        assert isinstance(b.stats["verdict"], list)


def test_json_single_point_keeps_cpus_a_list(tmp_path: Path) -> None:
    r = ctxbench.ring([2], **FAST)
    r.save(tmp_path / "one.json")
    (back,) = result.load_results(tmp_path / "one.json")
    assert isinstance(back.cpus, list) and back.cpus[0].shape == r.cpus[0].shape


def test_load_json_is_to_frame(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    files.save(results, tmp_path / "r.json")
    pd.testing.assert_frame_equal(files.load(tmp_path / "r.json"), ctxbench.concat(results))


def test_csv(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    files.save(results, tmp_path / "r.csv")
    same_frames(files.load(tmp_path / "r.csv"), ctxbench.concat(results))


def test_parquet(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    files.save(results, tmp_path / "r.parquet")
    same_frames(files.load(tmp_path / "r.parquet"), ctxbench.concat(results))


def test_parquet_without_pyarrow_names_it(
    results: list[ctxbench.RingResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match="pip install pyarrow"):
        files.save(results, tmp_path / "r.parquet")


def test_unknown_suffix(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="suffix"):
        files.save(results, tmp_path / "r.xlsx")


def test_wrong_format_or_version(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": "pyperf", "results": []}))
    with pytest.raises(ValueError, match="not a ctxbench results file"):
        files.load(path)
    path.write_text(json.dumps({"format": "ctxbench", "format_version": 99, "results": []}))
    with pytest.raises(ValueError, match="format_version 99"):
        result.load_results(path)


def test_pingpong_json(tmp_path: Path) -> None:
    pingpong = ctxbench.pingpong(loops=1000)
    path = tmp_path / "p.json"
    files.save([pingpong, ctxbench.ring([2], **FAST)], path)
    assert [r["kind"] for r in json.loads(path.read_text())["results"]] == ["pingpong", "ring"]
    back = result.load_results(path)[0]
    assert isinstance(back, ctxbench.PingpongResult)
    for f in dataclasses.fields(pingpong):
        assert_same(getattr(pingpong, f.name), getattr(back, f.name))
    df = files.load(path)
    pd.testing.assert_frame_equal(df.iloc[:1].dropna(axis=1), to_frame(pingpong))


def test_xgraph_round_trip(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    path = tmp_path / "lat_ctx.xgraph"
    files.save(results, path)
    df = files.load(path)
    assert len(df) == sum(len(r.procs) for r in results)
    for r in results:
        rows = df[df["size_kb"] == r.size_kb]
        assert rows["procs"].tolist() == r.procs.tolist()
        np.testing.assert_allclose(rows["value"], r.latency_us, atol=0.005)
        np.testing.assert_allclose(rows["overhead_us"], r.overhead_us, atol=0.005)
    assert set(df["placement"]) == {"unknown"} and set(df["source"]) == {"xgraph"}
    assert files.write_xgraph(results[0]) == results[0].to_xgraph()


LMBENCH = """
"size=0 ovr=12
2 34
4 5.25

"size=16k ovr=1.50
2 3.00
"""


def test_lmbench_xgraph_sniffed(tmp_path: Path) -> None:
    path = tmp_path / "lat_ctx.out"
    path.write_text(LMBENCH)
    df = files.load(path)
    assert df[["size_kb", "procs", "value", "overhead_us"]].values.tolist() == [
        [0, 2, 34.0, 12.0],
        [0, 4, 5.25, 12.0],
        [16, 2, 3.0, 1.5],
    ]
    assert (df["repetition"] == 0).all() and (df["engine"] == "process").all()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('"size=0k ovr=1.0\n2 3.0\n4 x\n', 3),
        ('"size=0k ovr=1.0\n2 3.0\n\n4 5 6\n', 4),
        ("2 3.0\n", 1),
        ('"size=0k ovr=?\n2 3.0\n', 1),
    ],
)
def test_malformed_xgraph_names_the_line(text: str, line: int, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=rf"line {line}: "):
        files.read_xgraph(text)
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"bad.txt: line {line}: "):
        files.load(path)


def test_xgraph_error_message() -> None:
    with pytest.raises(ValueError, match=r"line 4: expected '<procs> <µs>'"):
        files.read_xgraph('"size=0k ovr=1.0\n2 3.0\n\n4 5 6\n')


def test_empty_xgraph() -> None:
    with pytest.raises(ValueError, match="no data points"):
        files.read_xgraph("\n\n")
