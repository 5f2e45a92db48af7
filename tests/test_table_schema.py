"""A table file's matrix rows are checked as the matrix record declares the cell's arrays
(``schema.MATRIX``, from the core's ``record!``): the table restates none of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from matrices import frame

import ctxbench
from ctxbench import schema
from ctxbench._table_schema import MATRIX_CELL_ARRAYS, TABLE_COLUMNS


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
