"""What a fleet worker sends back is checked before it reaches ``out``: a record of the schema,
of the point asked, on the machine asked, of a bounded size. A worker runs on a machine of
its own and controls what it sends; a bad record is that point's failure, named, and never
written (a file that cannot be loaded cannot be resumed either)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import FAST

import ctxbench
from ctxbench import _fleet_matrix, fleet, grid, record
from ctxbench.record import encode

MACHINE = "m" * 16


@pytest.fixture(scope="module")
def good() -> tuple[dict[str, Any], grid.GridPoint]:
    """A ring record of the point asked, as a worker would send it back."""
    axes = {"procs": [2], "sizes_kb": [0], "engines": ["process"], "transports": [None]}
    (point,) = grid.grid({**axes, "placements": ["single"]}, 3, {"min_time": 0.002})
    rec = encode(ctxbench.ring(point.procs, **{**point.kwargs, "warmup": FAST["warmup"]}))
    rec["metadata"]["machine"] = MACHINE
    # The sweep asked for warmup=1 (the default); measured with 0 to keep it quick, the
    # record says what the sweep asked.
    rec["warmup"] = point.config["warmup"]
    return rec, point


def _changed(rec: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    bad = copy.deepcopy(rec)
    *parents, last = path.split(".")
    where = bad
    for name in parents:
        where = where[name]
    where[last] = value
    return bad


def test_a_good_record_of_the_point_arrives(good: tuple[dict[str, Any], grid.GridPoint]) -> None:
    rec, point = good
    assert grid.arrived(copy.deepcopy(rec), point, MACHINE) == rec


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("latency_us", [float("nan")], r"^latency_us\[0\]: NaN and infinity are no JSON"),
        ("latency_us", [float("inf")], r"^latency_us\[0\]: NaN and infinity are no JSON"),
        ("metadata.extra", [{"a": float("-inf")}], r"^metadata\.extra\[0\]\.a: NaN and"),
        ("metadata.extra", {1, 2}, r"not a JSON record: Object of type set"),
        ("latency_us", ["fast"], r"latency_us\[0\]: expected a number, got 'fast'"),
        ("latency_us", 3.0, r"latency_us: expected a list, got 3\.0"),
        ("stats.median", None, r"stats\.median: expected a list, got null"),
        ("engine", 7, r"engine: expected a string, got 7"),
        ("kind", "matrix", r"kind: 'matrix', expected 'ring'"),
        ("procs", [3], r"procs: \(3,\), but the point asked was \(2,\)"),
        ("size_kb", 64, r"size_kb: 64, but the point asked was 0"),
        ("placement", "default", r"placement: 'default', but the point asked was 'single'"),
        ("warmup", 5, r"warmup: 5, but the point asked was 1"),
        ("metadata.machine", "x" * 16, r"metadata\.machine: 'x{16}', but the point asked"),
        ("metadata", None, r"metadata\.machine: null, but the point asked"),
    ],
)
def test_a_bad_record_is_refused_naming_the_field(
    good: tuple[dict[str, Any], grid.GridPoint], path: str, value: Any, message: str
) -> None:
    rec, point = good
    with pytest.raises(ValueError, match=message):
        grid.arrived(_changed(rec, path, value), point, MACHINE)


@pytest.mark.parametrize("rec", [[1, 2], "ring", None, 42])
def test_what_is_no_record_is_refused_naming_its_type(
    good: tuple[dict[str, Any], grid.GridPoint], rec: Any
) -> None:
    _, point = good
    with pytest.raises(ValueError, match=r"expected a ring record \(a JSON object\), got "):
        grid.arrived(rec, point, MACHINE)


def test_an_oversized_record_is_refused_by_its_size(
    good: tuple[dict[str, Any], grid.GridPoint],
) -> None:
    rec, point = good
    big = _changed(rec, "metadata.padding", "x" * record.MAX_RECORD_BYTES["ring"])
    with pytest.raises(ValueError, match=r"[\d,]+ bytes of JSON, more than a ring record holds"):
        grid.arrived(big, point, MACHINE)


def test_a_refused_record_is_the_points_failure_and_out_is_untouched(
    good: tuple[dict[str, Any], grid.GridPoint], tmp_path: Any
) -> None:
    rec, point = good
    out = tmp_path / "s.json"
    failed: dict[str, str] = {}
    with grid.OutFile.open(out) as book:
        fleet._add(book, rec, point, MACHINE, failed, "w1")
        fleet._add(book, _changed(rec, "latency_us", [float("nan")]), point, "n" * 16, failed, "w2")
    assert list(failed) == [f"w2: {point.label()}"]
    assert failed[f"w2: {point.label()}"].startswith("its record was refused: latency_us[0]: NaN")
    assert len(record.check_document(json.loads(out.read_text()), str(out))) == 1


@pytest.mark.filterwarnings("ignore:ctxbench. only CPU 0 is in the matrix")
def test_a_matrix_record_of_another_matrix_is_refused() -> None:
    rec = encode(ctxbench.matrix([0], max_time=0.01, progress=False))
    rec["metadata"]["machine"] = MACHINE
    task = {"cpus": [0], "engine": "thread", "transport": "futex", "size_kb": 0, "passes": 1}
    assert _fleet_matrix.matrix_arrived(copy.deepcopy(rec), task, MACHINE) == rec
    with pytest.raises(ValueError, match=r"size_kb: 0, but the matrix asked 64"):
        _fleet_matrix.matrix_arrived(rec, {**task, "size_kb": 64}, MACHINE)
    with pytest.raises(ValueError, match=r"cpus: \[0\], but the matrix asked \[0, 1\]"):
        _fleet_matrix.matrix_arrived(rec, {**task, "cpus": [1, 0]}, MACHINE)
    with pytest.raises(ValueError, match=r"latency_us\[0\]: expected a number"):
        _fleet_matrix.matrix_arrived(_changed(rec, "latency_us", ["x"]), task, MACHINE)


class _Workers:
    """A client whose one worker names itself, its host and its version with escape
    sequences (a worker controls every string it sends)."""

    def run(self, function: Any, on_error: str = "raise") -> dict[str, Any]:
        return {
            "tcp://10.0.0.2:1\x1b[2J": {
                "worker": "w\x1b]0;owned\x07",
                "worker_address": "tcp://10.0.0.2:1\r",
                "host": "h\x1b[31mred",
                "version": "0.0\x1b[0m\nctxbench: all fine",
                "machine": "m",
            }
        }


def test_what_a_worker_says_is_printed_with_its_control_characters_escaped() -> None:
    with pytest.raises(fleet.FleetError) as e:
        fleet._machines(_Workers(), "tcp://10.0.0.1:8786")
    said = str(e.value)
    assert "runs ctxbench 0.0" in said and "\\x1b]0;owned\\x07" in said and "\\n" in said
    assert not any(c in said for c in "\x1b\x07\r\n"), said


def test_names_a_fleet_file_holds_are_printed_escaped() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"machine": ["m\x1b[2J"], "worker": ["w"], "host": ["h\x07"]})
    with pytest.raises(ValueError, match=r"known: h\\x07, m\\x1b\[2J, w$"):
        fleet.select(df, "z")
