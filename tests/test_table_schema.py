"""A table file's matrix rows are checked as the matrix record declares the cell's arrays
(``schema.MATRIX``, from the core's ``record!``): the table restates none of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matrices import frame

import ctxbench
from ctxbench import schema
from ctxbench._table_schema import MATRIX_CELL_ARRAYS, POINT_SUMMARY, TABLE_COLUMNS


@pytest.mark.parametrize(
    "column, value, message",
    [
        ("cpu_from", -1, "cpu_from: -1 is below the minimum 0"),
        ("numa_distance", -2, "numa_distance: -2 is below the minimum -1"),
        ("memory_node_seen", -3, "memory_node_seen: -3 is below the minimum -1"),
        ("relation", "next-door", "relation: 'next-door' is not one of same-cpu"),
    ],
)
def test_a_matrix_tables_cell_columns_are_checked_as_the_record_declares(
    tmp_path: Path, column: str, value: object, message: str
) -> None:
    df = frame().assign(memory_node_seen=-1)
    df[column] = df[column].astype(object)
    df.loc[1, column] = value
    path = tmp_path / "m.csv"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=f"m.csv: line 3: {message}"):
        ctxbench.load(path)


def test_each_cell_column_has_its_arrays_type() -> None:
    for name in MATRIX_CELL_ARRAYS:
        assert TABLE_COLUMNS[name].type == schema.MATRIX[name].type, name


def test_what_a_record_repeats_on_its_rows_is_typed_as_it_declares(tmp_path: Path) -> None:
    # Each kind's ``column`` entries: the matrix's cell arrays in their place around the
    # point's summary, a ping-pong's figures; each checked in a file as its record says.
    flagged = [name for name, spec in schema.MATRIX.items() if spec.column]
    assert [name for name in MATRIX_CELL_ARRAYS if name in flagged] == flagged
    assert MATRIX_CELL_ARRAYS[6:13] == POINT_SUMMARY
    for name in ("usecs_per_op", "ops_per_sec"):
        assert schema.PINGPONG[name].column and TABLE_COLUMNS[name].min == 0, name
    pingpong = ctxbench.PingpongResult(
        loops=10, threads=False, engine="process", transport="pipe", placement="default",
        elapsed_s=1.0, usecs_per_op=-2.0, ops_per_sec=5.0, usecs_per_switch=1.0,
        cycles_per_switch=None, tsc={}, cpus=np.array([0, 1]),
    )  # fmt: skip
    path = tmp_path / "p.csv"
    pingpong.to_frame().to_csv(path, index=False)
    with pytest.raises(
        ValueError, match="p.csv: line 2: usecs_per_op: -2.0 is below the minimum 0"
    ):
        ctxbench.load(path)
