"""Files from elsewhere (a fleet worker's strings, a hand-edited or hostile file) are read
as what they are or refused with the file, the field and the line; what ctxbench writes is
safe to open in a spreadsheet and reads back as it was written."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ctxbench
from ctxbench import files

pytest_plugins = ["pytester"]

# What a spreadsheet would run as a formula, and strings that must survive the escaping.
CELLS = {
    "hostname": '=HYPERLINK("http://x")',
    "host": "@SUM(A1)",
    "worker": "+cmd",
    "kernel": "-1+2",
    "cpu_model": "'quoted",
    "test": "\tindent",
    "run": "plain",
}


def test_csv_text_cells_never_start_a_formula_and_read_back_the_same(
    results: list[ctxbench.RingResult], tmp_path: Path
) -> None:
    frame = ctxbench.concat(results).assign(**CELLS)
    path = tmp_path / "r.csv"
    files.save(frame, path)
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    for name in CELLS:
        cells = {row[header.index(name)] for row in body}
        assert cells == {CELLS[name] if name == "run" else "'" + CELLS[name]}, (name, cells)
    back = ctxbench.load(path)
    for name, value in CELLS.items():
        assert set(back[name]) == {value}, name
    # Numbers are numbers: a negative one is written as it is.
    assert pd.api.types.is_float_dtype(back["value"])
    assert back["value"].tolist() == pytest.approx(frame["value"].tolist())


# --- a results file that lies is refused: file, field and line --------------------------------


@pytest.fixture
def saved(results: list[ctxbench.RingResult], tmp_path: Path) -> Path:
    path = tmp_path / "r.json"
    files.save(results, path)
    return path


def _edited(saved: Path, edit: Any) -> Path:
    doc = json.loads(saved.read_text())
    edit(doc["results"][0])
    saved.write_text(json.dumps(doc, indent=1))
    return saved


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_a_key_held_twice_is_refused_naming_it_and_its_line(saved: Path) -> None:
    twice = '"engine": "thread",\n  "engine": "process"'
    saved.write_text(saved.read_text().replace('"engine": "process"', twice, 1))
    line = _line_of(saved, '"engine": "process"')
    message = rf"r\.json: line {line}: results\[0\] holds the key 'engine' twice"
    with pytest.raises(ValueError, match=message):
        ctxbench.load(saved)


def test_a_metadata_key_held_twice_is_refused_naming_where(saved: Path) -> None:
    saved.write_text(saved.read_text().replace('"kernel":', '"hostname": "x", "kernel":', 1))
    with pytest.raises(ValueError, match=r"results\[0\]\.metadata holds the key 'hostname' twice"):
        ctxbench.load(saved)


def test_a_latency_that_is_not_the_median_of_its_samples_is_refused(saved: Path) -> None:
    def planted(rec: dict[str, Any]) -> None:
        rec["latency_us"][0] = 99.0
        # A point measured below resolution (under load) says so; 99.0 is not below it.
        rec["below_resolution"][0] = False

    path = _edited(saved, planted)
    line = _line_of(path, "99.0")
    with pytest.raises(
        ValueError,
        match=rf"result 0 \(ring\): latency_us\[0\]: is 99\.0 but the median of its 3 samples "
        rf"\(samples_us\[:, 0\]\) is [\d.]+ \(line {line}\)",
    ):
        ctxbench.load(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda rec: rec.__setitem__("engine", "quantum"),
         r"engine: 'quantum' is not one of process, thread, fiber"),
        (lambda rec: rec["overhead_point_us"].__setitem__(0, 1e308),
         r"overhead_point_us\[0\]: 1e\+308 is beyond any figure a run records"),
        (lambda rec: rec.__setitem__("extra", json.loads("[" * 900 + "]" * 900)),
         r"extra(\[0\])+: nests deeper than 32 levels"),
        (lambda rec: rec["metadata"].__setitem__("x", json.loads("[" * 900 + "]" * 900)),
         r"metadata\.x(\[0\])+: nests deeper than 32 levels"),
    ],
    ids=["engine", "1e308", "deep-field", "deep-metadata"],
)  # fmt: skip
def test_what_no_run_writes_is_refused_naming_the_field(
    saved: Path, edit: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=rf"r\.json: result 0 \(ring\): {message}"):
        ctxbench.load(_edited(saved, edit))


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("engine", "quantum", r"engine: 'quantum' is not one of process, thread, fiber"),
        ("value", 1e308, r"value: 1e\+308 is beyond any figure a run records"),
    ],
)
def test_a_table_cell_no_run_writes_is_refused(
    results: list[ctxbench.RingResult], tmp_path: Path, column: str, value: Any, message: str
) -> None:
    path = tmp_path / "r.csv"
    files.save(ctxbench.concat(results).assign(**{column: value}), path)
    with pytest.raises(ValueError, match=rf"r\.csv: line 2: {message}"):
        ctxbench.load(path)


def test_a_header_only_csv_is_an_empty_table_of_numbers(
    results: list[ctxbench.RingResult], tmp_path: Path
) -> None:
    from ctxbench.cli import main

    full = tmp_path / "full.csv"
    files.save(results, full)
    header = tmp_path / "header.csv"
    header.write_text(full.read_text().splitlines()[0] + "\n")
    empty = ctxbench.load(header)
    assert empty.empty and pd.api.types.is_float_dtype(empty["latency_us"])
    # Drawn beside a file with rows, it was a numpy message naming no file.
    assert main(["plot", str(header), str(full), "-o", str(tmp_path / "f.png")]) == 0


def test_a_broken_baseline_is_a_usage_error_not_an_internal_error(
    pytester: pytest.Pytester, saved: Path
) -> None:
    deep = _edited(saved, lambda rec: rec.__setitem__("extra", json.loads("[" * 900 + "]" * 900)))
    pytester.makepyfile(test_x="def test_x(): pass\n")
    run = pytester.runpytest_subprocess("--ctxbench-compare", str(deep))
    assert run.ret == pytest.ExitCode.USAGE_ERROR, run.stderr.str()
    run.stderr.fnmatch_lines(["*--ctxbench-compare: *r.json: result 0 (ring): extra*nests deeper*"])
    assert "INTERNALERROR" not in run.stdout.str() + run.stderr.str()
