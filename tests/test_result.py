"""The result classes and their JSON record: the registry of kinds, the versioned file, and
files written by earlier versions."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import FAST

import ctxbench
from ctxbench import files, result
from ctxbench.frame import to_frame

# Written by ctxbench 0.1.0 (5d44f6c): a thread/futex ring with record_hops and a ping-pong.
V1 = Path(__file__).parent / "data" / "results-v1.json"


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


def test_kinds_name_the_classes() -> None:
    assert result.KINDS == {"ring": ctxbench.RingResult, "pingpong": ctxbench.PingpongResult}
    assert all(cls.kind == name for name, cls in result.KINDS.items())
    # The kind is the record's, not a field of the class.
    assert all("kind" not in {f.name for f in dataclasses.fields(c)} for c in result.KINDS.values())


def test_unknown_kind_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": "ctxbench", "format_version": 1,
                                "results": [{"kind": "bogus"}]}))  # fmt: skip
    with pytest.raises(ValueError, match="list of ring or pingpong records"):
        result.load_results(path)


def test_a_version_1_file_loads_and_saves_byte_for_byte(tmp_path: Path) -> None:
    loaded = result.load_results(V1)
    assert [type(r) for r in loaded] == [ctxbench.RingResult, ctxbench.PingpongResult]
    ring = loaded[0]
    assert isinstance(ring.cpus, list) and ring.hop_histogram is not None
    assert ring.samples_us.dtype == np.float64 and ring.procs.dtype == np.int64
    files.save(loaded, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == V1.read_bytes()
    assert len(files.load(V1)) == ring.repetitions * len(ring.procs) + 1


def test_xgraph_format() -> None:
    r = ctxbench.lat_ctx([2, 4], **FAST)
    lines = r.to_xgraph().splitlines()
    assert re.fullmatch(r'"size=0k ovr=-?\d+\.\d\d', lines[0])
    assert [line.split()[0] for line in lines[1:]] == ["2", "4"]
    assert all(re.fullmatch(r"\d+ -?\d+\.\d\d", line) for line in lines[1:])
    assert "process/pipe" in repr(r)


def test_precision_results_round_trip_with_their_missing_samples(tmp_path: Path) -> None:
    r = ctxbench.lat_ctx([2, 3], precision=0.5, max_time=0.2, min_time=0.002)
    r.save(tmp_path / "p.json")
    (back,) = result.load_results(tmp_path / "p.json")
    assert back.stopped == r.stopped and back.precision == r.precision
    assert back.repetitions_made.tolist() == r.repetitions_made.tolist()
    np.testing.assert_array_equal(back.samples_us, r.samples_us)  # NaN where none was made
    assert "NaN" not in (tmp_path / "p.json").read_text()
