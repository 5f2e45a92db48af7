"""Files from elsewhere (a fleet worker's strings, a hand-edited or hostile file) are read
as what they are or refused with the file, the field and the line; what ctxbench writes is
safe to open in a spreadsheet and reads back as it was written."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

import ctxbench
from ctxbench import files

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
