"""Result files by suffix: JSON as the tidy frame, CSV, Parquet, and lmbench's xgraph text."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ctxbench
from ctxbench import files


def same_frames(a: pd.DataFrame, b: pd.DataFrame) -> None:
    # CSV and Parquet keep values, not every dtype (an all-None column comes back as NaN).
    pd.testing.assert_frame_equal(a, b, check_dtype=False)


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
