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
from ctxbench import files, record, result
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
    for version in (99, True, "1", None):
        path.write_text(
            json.dumps({"format": "ctxbench", "format_version": version, "results": []})
        )
        with pytest.raises(ValueError) as refused:
            result.load_results(path)
        # The file, the version it holds and the versions this build reads.
        said = str(refused.value)
        assert said.startswith(f"{path}: format_version {version!r} ") and "reads version 1" in said


def test_each_format_version_has_its_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A version 2 document is read by version 2's loader into today's records; version 1
    # files still load by theirs.
    r = ctxbench.lat_ctx([2], **FAST)
    old = tmp_path / "v1.json"
    r.save(old)
    doc = json.loads(old.read_text())

    def v2(doc: dict, where: str, line: object) -> list:
        return [{**rec, "kind": rec.pop("type")} for rec in doc["runs"]]

    monkeypatch.setitem(record.LOADERS, 2, v2)
    new = tmp_path / "v2.json"
    runs = [
        {**{k: v for k, v in rec.items() if k != "kind"}, "type": "ring"} for rec in doc["results"]
    ]
    new.write_text(json.dumps({"format": "ctxbench", "format_version": 2, "runs": runs}))
    assert files.load(new).equals(files.load(old))
    with pytest.raises(ValueError, match="reads version 1, 2"):
        old.write_text(json.dumps({**doc, "format_version": 3}))
        files.load(old)


@pytest.mark.parametrize("loops", [1000, None], ids=["perf's fixed loop", "until precise"])
def test_pingpong_json(tmp_path: Path, loops: int | None) -> None:
    pingpong = ctxbench.pingpong(loops=loops, placement="single", max_time=0.05)
    path = tmp_path / "p.json"
    files.save([pingpong, ctxbench.ring([2], **FAST)], path)
    assert [r["kind"] for r in json.loads(path.read_text())["results"]] == ["pingpong", "ring"]
    back = result.load_results(path)[0]
    assert isinstance(back, ctxbench.PingpongResult)
    for f in dataclasses.fields(pingpong):
        assert_same(getattr(pingpong, f.name), getattr(back, f.name))
    df = files.load(path)
    rows = len(pingpong.samples_us)
    # Until precise: at least the first ring instance's two blocks of four.
    assert rows == 1 if loops else rows >= 8
    pd.testing.assert_frame_equal(
        df.iloc[:rows].dropna(axis=1), to_frame(pingpong).dropna(axis=1), check_dtype=False
    )


def test_kinds_name_the_classes() -> None:
    assert result.KINDS == {
        "ring": ctxbench.RingResult,
        "pingpong": ctxbench.PingpongResult,
        "matrix": ctxbench.MatrixResult,
        "ab": ctxbench.AbResult,
    }
    assert all(cls.kind == name for name, cls in result.KINDS.items())
    # The kind is the record's, not a field of the class.
    assert all("kind" not in {f.name for f in dataclasses.fields(c)} for c in result.KINDS.values())


def test_unknown_kind_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": "ctxbench", "format_version": 1,
                                "results": [{"kind": "bogus"}]}))  # fmt: skip
    with pytest.raises(ValueError, match="list of ring or pingpong or matrix or ab records"):
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


# Damaged records: read_records checks each against schema.RECORDS[kind] and names the file,
# the result's index and kind, and the field.


def _set(path: str, value: object):  # type: ignore[no-untyped-def]
    def edit(rec: dict) -> None:  # type: ignore[type-arg]
        *parents, last = path.split(".")
        for p in parents:
            rec = rec[int(p)] if isinstance(rec, list) else rec[p]
        if isinstance(rec, list):
            rec[int(last)] = value
        else:
            rec[last] = value

    return edit


def _drop(name: str):  # type: ignore[no-untyped-def]
    return lambda rec: rec.pop(name)


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("index", "edit", "message"),
    [
        (0, _set("latency_us", ["a", "b"]), r"latency_us\[0\]: expected a number, got 'a'"),
        (0, _set("latency_us", None), r"latency_us: expected a list, got null"),
        (0, _set("latency_us.1", None), r"latency_us\[1\]: expected a number, got null"),
        (0, _set("latency_us.1", NAN), r"latency_us\[1\]: NaN is not a valid value"),
        (0, _set("latency_us.0", -INF), r"latency_us\[0\]: -inf is not a finite number"),
        # A negative net time is legitimate, but then below_resolution must say so.
        (0, _set("latency_us.1", -0.5), r"below_resolution\[1\]: is False but latency_us\[1\]"),
        (0, _set("raw_us.1", -1.0), r"raw_us\[1\]: -1.0 is below the minimum 0"),
        (0, _set("overhead_us", -0.1), r"overhead_us: -0.1 is below the minimum 0"),
        (0, _set("overhead_samples_us.0.0", NAN), r"overhead_samples_us\[0\]\[0\]: NaN"),
        (0, _set("procs", [1, 3]), r"procs\[0\]: 1 is below the minimum 2"),
        (0, _set("procs", [2.0, 3]), r"procs\[0\]: expected an integer, got 2.0"),
        (0, _set("procs", [2**64, 3]), r"procs\[0\]: .* does not fit in 64 bits"),
        (0, _set("repetitions", True), r"repetitions: expected an integer, got True"),
        (0, _set("parallel", 0), r"parallel: 0 is below the minimum 1"),
        (0, _set("involuntary_switches.0", -1), r"involuntary_switches\[0\]: -1 is below"),
        (0, _drop("samples_us"), r"samples_us: missing"),
        (0, _drop("stats"), r"stats: missing"),
        (0, _set("stats.cv", [0.1]), r"stats\.cv: 1 entries, expected 2 \(one per point\)"),
        (0, _set("stats", []), r"stats: expected an object, got \[\]"),
        (0, _set("min_us", [1.0]), r"min_us: 1 entries, expected 2 \(one per point\)"),
        (0, _set("samples_us", [[1.0, 2.0]]), r"samples_us: 1 entries, expected 2 \(one per rep"),
        (0, _set("samples_us.1", [1.0]), r"samples_us\[1\]: 1 entries, expected 2"),
        (0, _set("switch_source", "perf"), r"switch_source: expected a list, got 'perf'"),
        (0, _set("hop_histogram.counts.0.3", -2), r"hop_histogram\.counts\[0\]\[3\]: -2 is"),
        (0, _set("metadata", "laptop"), r"metadata: expected an object, got 'laptop'"),
        (0, _set("metadata.kernel", 6), r"metadata\.kernel: expected a string, got 6"),
        (1, _set("usecs_per_op", "2.3"), r"usecs_per_op: expected a number, got '2.3'"),
        (1, _set("loops", 0), r"loops: 0 is below the minimum 1"),
        (1, _set("cpus", [0]), r"cpus: 1 entries, expected 2"),
        (1, _drop("elapsed_s"), r"elapsed_s: missing"),
    ],
)
def test_damaged_record_names_file_result_and_field(
    index: int, edit: object, message: str, tmp_path: Path
) -> None:
    doc = json.loads(V1.read_text())
    edit(doc["results"][index])  # type: ignore[operator]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    kind = ("ring", "pingpong")[index]
    with pytest.raises(ValueError, match=rf"bad\.json: result {index} \({kind}\): {message}"):
        files.load(path)
    with pytest.raises(ValueError, match=rf"bad\.json: result {index} \({kind}\): {message}"):
        result.load_results(path)


def test_legitimate_odd_values_load(tmp_path: Path) -> None:
    doc = json.loads(V1.read_text())
    ring = doc["results"][0]
    # A net time below resolution (flagged), an infinite CV (mean 0 with spread), a hop
    # percentile of a point without hops, entries a newer ctxbench may add.
    ring["latency_us"][0], ring["below_resolution"][0] = -0.25, True
    for row in ring["samples_us"]:  # whose median it is
        row[0] = -0.25
    ring["stats"]["cv"][0] = INF
    ring["hop_percentiles_us"]["p99.9"][1] = NAN
    ring["future_field"] = {"anything": [1, "two"]}
    ring["metadata"]["cache_kb"] = {"L1d": 48}
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(doc))
    (back, _) = result.load_results(path)
    assert back.latency_us[0] == -0.25 and back.stats["cv"][0] == INF
    assert len(files.load(path)) == 5


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"not a ctxbench results file: not JSON"),
        (bytes(range(256)), r"not a ctxbench results file: not UTF-8 text"),
        (
            '{"format": "ctxbench", "résumé": 1}'.encode("latin-1"),
            r"not a ctxbench results file: not UTF-8 text",
        ),
        (b"{" * 100_000, r"not a ctxbench results file: (nested too deeply|not JSON)"),
        (b'{"format": "ctxbench", "format_version": 1, "results": [', r".*: not JSON"),
        (b"[]", r"not a ctxbench results file: a JSON list, expected the object"),
        (b'"ctxbench"', r'not a ctxbench results file \(no "format": "ctxbench"\)'),
        (b'{"format": "ctxbench", "format_version": 1}', r'"results" must be a list'),
        (b'{"format": "ctxbench", "format_version": 1, "results": {}}', r'"results" must be'),
        (b'{"format": "ctxbench", "format_version": 1, "results": [3]}', r"result 0: int: "),
        (b'{"format": "ctxbench", "format_version": 1, "results": [{}]}', r"result 0: kind None"),
        (
            b'{"format": "ctxbench", "format_version": 1, "results": [{"kind": ["ring"]}]}',
            r"result 0: kind \['ring'\]",
        ),  # fmt: skip
        (
            b'{"format": "ctxbench", "format_version": 1, "results": [{"kind": "ring"}]}',
            r"result 0 \(ring\): engine: missing",
        ),  # fmt: skip
    ],
)
def test_not_a_results_file(content: bytes, message: str, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=rf"r\.json: {message}"):
        result.load_results(path)
    with pytest.raises(ValueError, match=rf"r\.json: {message}"):
        files.load(path)


def test_every_field_of_every_kind_is_declared() -> None:
    from ctxbench import schema

    assert schema.RECORDS.keys() == result.KINDS.keys()
    for kind, cls in result.KINDS.items():
        assert {f.name for f in dataclasses.fields(cls)} == set(schema.RECORDS[kind])


def test_repeated_records_are_kept(tmp_path: Path) -> None:
    doc = json.loads(V1.read_text())
    doc["results"] *= 2
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(doc))
    assert len(result.load_results(path)) == 4
    assert len(files.load(path)) == 2 * len(files.load(V1))


def test_precision_results_round_trip_with_their_missing_samples(tmp_path: Path) -> None:
    r = ctxbench.lat_ctx([2, 3], precision=0.5, max_time=0.2, min_time=0.002)
    r.save(tmp_path / "p.json")
    (back,) = result.load_results(tmp_path / "p.json")
    assert back.stopped == r.stopped and back.precision == r.precision
    assert back.repetitions_made.tolist() == r.repetitions_made.tolist()
    np.testing.assert_array_equal(back.samples_us, r.samples_us)  # NaN where none was made
    assert "NaN" not in (tmp_path / "p.json").read_text()


def test_precision_records_are_checked_too(tmp_path: Path) -> None:
    r = ctxbench.lat_ctx([2, 3], precision=0.5, max_time=0.2, min_time=0.002)
    path = tmp_path / "p.json"
    r.save(path)
    doc = json.loads(path.read_text())
    rec = doc["results"][0]
    assert rec["repetitions"] is None and len(rec["samples_us"]) == max(rec["repetitions_made"])
    assert len(files.load(path)) == sum(rec["repetitions_made"])  # holes are no rows
    for name, value, message in [
        ("repetitions_made", [-1, 2], r"repetitions_made\[0\]: -1 is below the minimum 0"),
        ("stopped", ["precision"], r"stopped: 1 entries, expected 2"),
        ("precision", "tight", r"precision: expected a number, got 'tight'"),
        ("latency_us", [None, 1.0], r"latency_us\[0\]: expected a number, got null"),
    ]:
        bad = json.loads(json.dumps(doc))
        bad["results"][0][name] = value
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=rf"p\.json: result 0 \(ring\): {message}"):
            files.load(path)


@pytest.mark.parametrize("loops", [1000, None], ids=["perf-loop", "until-precise"])
def test_a_pingpong_result_frames_and_saves_as_a_ring_result_does(
    loops: int | None, tmp_path: Path
) -> None:
    p = ctxbench.pingpong(loops, max_time=0.05)
    frame = p.to_frame()
    assert set(frame["benchmark"]) == {"pingpong"} and len(frame) >= 1
    for suffix in (".json", ".csv"):
        p.save(tmp_path / f"p{suffix}", hostname=False)
        assert len(ctxbench.load(tmp_path / f"p{suffix}")) == len(frame)
    (again,) = result.load_results(tmp_path / "p.json")
    assert isinstance(again, ctxbench.PingpongResult) and again.usecs_per_op == p.usecs_per_op
    assert again.metadata["hostname"] == "(withheld)"
    with pytest.raises(TypeError, match="xgraph format holds ring results, not PingpongResult"):
        p.save(tmp_path / "p.xgraph")


def test_a_sweep_out_that_keeps_too_little_names_a_save_that_exists(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"ctxbench\.files\.save") as e:
        ctxbench.sweep([2], out=tmp_path / "s.xgraph", progress=False)
    assert "(ctxbench.save " not in str(e.value)


MATRIX_SAMPLE = Path(__file__).parent / "data" / "matrix-sample.json"


def _matrix_with_topology(tmp_path: Path, **topology: object) -> Path:
    doc = json.loads(MATRIX_SAMPLE.read_text())
    doc["results"][0]["topology"].update(topology)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_matrix_topology_reads_back_with_its_declared_types(tmp_path: Path) -> None:
    # A host without NUMA nodes, a CPU without caches, no cpuset: empty lists of integers
    # are integer arrays too, the distances a square.
    path = _matrix_with_topology(
        tmp_path, cpu_caches=[[], [4, 5, 6, 3]], nodes=[], distances=[], cpuset=None
    )
    (m,) = result.load_results(path)
    t = m.topology
    for name in ("cpus", "package", "core", "llc", "node", "order", "nodes", "affinity"):
        assert t[name].dtype == np.int64, name
    assert t["online"].dtype == np.bool_ and t["cpuset"] is None
    assert [(a.dtype, a.shape) for a in t["cpu_caches"]] == [(np.int64, (0,)), (np.int64, (4,))]
    assert t["distances"].dtype == np.int64 and t["distances"].shape == (0, 0)
    assert t["caches"][0]["type"] == "Data" and t["caches"][0]["cpus"].dtype == np.int64
    assert t["cache_share_kb"]["L2"].dtype == np.float64 and t["notes"] == []


@pytest.mark.parametrize(
    ("topology", "message"),
    [
        ({"caches": {"L1d": 32}}, r"topology\.caches: expected a list"),
        ({"caches": [[0]]}, r"topology\.caches\[0\]: expected an object"),
        (
            {"caches": [{"name": "L2", "level": 2, "type": "Unified", "size_kb": 1, "cpus": [-2]}]},
            r"topology\.caches\[0\]\.cpus\[0\]: -2 is below the minimum 0",
        ),
        ({"distances": [[10, -1]]}, r"topology\.distances\[0\]\[1\]: -1 is below the minimum 0"),
        ({"smt_siblings": [[0], ["1"]]}, r"topology\.smt_siblings\[1\]\[0\]: expected an integer"),
        ({"order": None}, r"topology\.order: expected a list"),
    ],
)
def test_a_damaged_matrix_topology_is_refused_by_name(
    tmp_path: Path, topology: dict[str, object], message: str
) -> None:
    path = _matrix_with_topology(tmp_path, **topology)
    with pytest.raises(ValueError, match=rf"m\.json: result 0 \(matrix\): {message}"):
        result.load_results(path)
