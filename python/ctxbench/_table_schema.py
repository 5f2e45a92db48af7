"""What a tidy table (``ctxbench.frame``) must hold in a CSV or Parquet file, and its one
checker: the columns that name a point (``POINT_KEY``), each column's type and range
(``TABLE_COLUMNS``; those a record repeats, as ``schema.RECORDS`` declares them), the columns
every table has and the cells each kind of row must fill. The loaders turn a ``Bad`` into a
``ValueError`` naming the file and the line or row.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ._core import CHANGES, ENGINES
from ._field import FLAG, LARGEST, Bad, Field, check_scalar
from .schema import (
    HOP_PERCENTILES,
    INTERFERENCE_ASKED,
    MATRIX,
    PINGPONG,
    RING,
    WAKE_PERCENTILES,
    _float,
    _int,
    percentile_column,
)

if TYPE_CHECKING:
    import pandas as pd

# The tidy table (``ctxbench.frame``) as CSV and Parquet files hold it. Each column's type and
# range; empty cells (NaN) are allowed where a row's kind does not need the column.
TABLE_COLUMNS: dict[str, Field] = {
    "benchmark": Field("str", choices=("ring", "pingpong", "matrix")),
    "engine": Field("str", choices=ENGINES),
    "transport": Field("str"),
    "placement": Field("str"),
    "size_kb": _int(min=0),
    "parallel": _int(min=1),
    "procs": _int(min=2),
    "repetition": _int(min=0),
    "value": _float(),
    "unit": Field("str", choices=("us",)),
    "raw_us": _float(min=0),
    "overhead_us": _float(min=0),
    "latency_us": _float(),
    "min_us": _float(),
    "cv": _float(min=0, inf=True),
    "ci_low": _float(),
    "ci_high": _float(),
    "verdict": Field("str"),
    "below_resolution": Field("bool"),
    "block": _int(min=0),
    "instance": _int(min=0),
    "se": _float(min=0),
    "sd_run": _float(min=0),
    "runs_seen": _float(min=0),
    "runnable_per_cpu": _float(min=0),
    "source": Field("str"),
    **{k: Field("str") for k in ("kernel", "cpu_model", "ctxbench_version", "date", "test")},
    # Matrix rows: where each CPU of the cell sits (-1: unknown); its arrays are below.
    **{
        f"{what}_{end}": _int(min=-1)
        for what in ("package", "llc", "core", "node", "rank")
        for end in ("from", "to")
    },
    # On a hybrid host: the kind of core of waker and wakee ("P-core", "capacity 381").
    "core_type_from": Field("str"),
    "core_type_to": Field("str"),
    **{percentile_column("wake", k): _float(min=0) for k in WAKE_PERCENTILES},
    # Ring rows recorded with their hops: each point's wake-to-run percentiles.
    **{percentile_column("hop", k): _float(min=0) for k in HOP_PERCENTILES},
    # A/B rows (``source`` "ab"): the side, whether it ran first in its round, when the
    # round ended, and the run's word and ratio.
    "side": Field("str", choices=("a", "b")),
    "first": Field("bool"),
    "end_s": _float(min=0),
    "change": Field("str", choices=CHANGES),
    "ratio": _float(min=0),
    "ratio_low": _float(min=0),
    "ratio_high": _float(min=0, inf=True),
}
# Interference (``schema.RING["interference"]``) on a ring's rows: what was asked, then per
# point the hogs', neighbour rings' and queued tasks' mean achieved duty, how many queued
# tasks were still runnable and the thrasher's resident KiB.
TABLE_COLUMNS.update(
    {
        f"interference_{k}": replace(RING["interference"].fields[k], shape=())  # type: ignore[index]
        for k in INTERFERENCE_ASKED
    }
)
TABLE_COLUMNS.update(
    {
        "interference_hog_duty": _float(min=0),
        "interference_ring_duty": _float(min=0),
        "interference_queued_duty": _float(min=0),
        "interference_queued_runnable": _int(min=-1),
        "interference_thrash_resident_kb": _int(min=-1),
    }
)
# The summary every point repeats on its rows, a ring's and a matrix cell's alike.
POINT_SUMMARY = ("latency_us", "min_us", "cv", "ci_low", "ci_high", "verdict", "below_resolution")
# What a record repeats on its rows by name (``column=True``: a ring's per-point arrays, a
# matrix cell's, a ping-pong's figures) and what a ring was asked (``config=True``), each as
# its record declares it.
TABLE_COLUMNS.update(
    {
        name: replace(spec, shape=())
        for record in (RING, PINGPONG, MATRIX)
        for name, spec in record.items()
        if (spec.column or spec.config) and name not in TABLE_COLUMNS
    }
)
# A matrix cell's arrays in the order its rows repeat them: the cell and its class, then its
# summary (in ``POINT_SUMMARY``'s order, where the record declares the first of it), then its
# evidence.
MATRIX_CELL_ARRAYS: tuple[str, ...] = tuple(
    dict.fromkeys(
        name
        for field, spec in MATRIX.items()
        if spec.column or field in POINT_SUMMARY
        for name in (POINT_SUMMARY if field in POINT_SUMMARY else (field,))
    )
)
# The columns that name one measured point; a row adds the repetition. "benchmark" keeps a
# ping-pong (two parties, size 0) apart from a ring of two.
POINT_KEY: tuple[str, ...] = (
    "benchmark",
    "engine",
    "transport",
    "placement",
    "size_kb",
    "parallel",
    "procs",
)
# What else names a point, beyond ``POINT_KEY``: under another policy, in cgroups or beside
# neighbours it is another point, never paired with a plain one. Each with what a run that
# has no such column (a file from before it) or an empty cell measured under.
POINT_IDENTITY: dict[str, object] = {
    "policy": "other",
    "priority": 0,
    "nice": 0,
    "dl_runtime_us": None,
    "dl_deadline_us": None,
    "dl_period_us": None,
    "cgroups": "none",
    "cgroup_depth": None,
    "cgroup_weight": None,
    **{f"interference_{k}": 0 for k in INTERFERENCE_ASKED},
}


def identity_text(value: object) -> str:
    """A ``POINT_IDENTITY`` value as the text two runs' points pair by: numbers as ``%g`` (a
    CSV's 1.0 and a JSON's 1 are one value), none as "-"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return f"{float(value):g}"
    return str(value)


# Columns every table has, even one without rows (what ``concat([])`` gives).
TABLE_REQUIRED = (*POINT_KEY, "repetition", "value", "unit")
# The cells each kind of row must fill: a ring result, a ping-pong, a point read from xgraph.
TABLE_ROWS: dict[str, tuple[str, ...]] = {
    "ring": (*TABLE_REQUIRED, "raw_us", "overhead_us", *POINT_SUMMARY),
    "pingpong": (*TABLE_REQUIRED, "latency_us", "min_us", "usecs_per_op", "ops_per_sec"),
    "xgraph": (*TABLE_REQUIRED, "overhead_us", "latency_us", "below_resolution"),
    "ab": (*TABLE_REQUIRED, "side", "first", "end_s", "change"),
    "matrix": (
        *TABLE_REQUIRED,
        "latency_us",
        "ci_low",
        "ci_high",
        "below_resolution",
        "cpu_from",
        "cpu_to",
        "relation",
        "rank_from",
        "rank_to",
    ),
}


def _row_kinds(df: pd.DataFrame) -> np.ndarray:
    kinds = np.array(
        ["" if _empty(b) else str(b) for b in df["benchmark"].to_numpy(dtype=object)], dtype=object
    )
    if "source" in df.columns:
        # Rows of a lat_ctx text file, or of an A/B run: their source names what they hold.
        source = df["source"].astype(object).to_numpy()
        for own in ("xgraph", "ab"):
            kinds = np.where(source == own, own, kinds)
    return kinds


def check_table(df: pd.DataFrame) -> None:
    """A tidy table read from CSV or Parquet. ``Bad.row`` is the 0-based row."""
    missing = [c for c in TABLE_REQUIRED if c not in df.columns]
    if missing:
        raise Bad("", f"not a ctxbench table: no column {', '.join(missing)}")
    for name, spec in TABLE_COLUMNS.items():
        if name in df.columns:
            _check_column(df[name], spec, name)
    kinds = _row_kinds(df)
    empty = {name: df[name].isna().to_numpy() for name in df.columns if isinstance(name, str)}
    for kind in dict.fromkeys(kinds.tolist()):
        rows = kinds == kind
        for name in TABLE_ROWS.get(kind, TABLE_REQUIRED):
            if name not in empty:
                raise Bad("", f"not a ctxbench table: no column {name} ({kind} rows need it)")
            if (bad := rows & empty[name]).any():
                raise Bad(name, f"empty or NaN (a {kind} row needs it)", int(np.argmax(bad)))
    flag, figure = FLAG
    if flag in df.columns and figure in df.columns:
        for row, (low, x) in enumerate(zip(df[flag], df[figure])):
            if not (_empty(low) or _empty(x)) and bool(low) != (x <= 0):
                raise Bad(flag, f"is {low} but {figure} is {x}", row)


def _check_column(column: pd.Series, spec: Field, name: str) -> None:
    if spec.type in ("int", "float") and column.dtype.kind in "iuf":
        # Numbers already: check them all at once, and the first bad one (if any) in detail.
        x = column.to_numpy(dtype=np.float64)
        with np.errstate(invalid="ignore"):
            ok = np.isnan(x) | np.isfinite(x)
            if spec.inf:
                ok |= x == np.inf
            if spec.min is not None:
                ok &= ~(x < spec.min)
            if spec.type == "float":
                ok &= ~(np.isfinite(x) & (np.abs(x) > LARGEST))
            if spec.type == "int":
                ok &= ~(np.isfinite(x) & (x % 1 != 0))
        if ok.all():
            return
        rows = [int(np.argmin(ok))]
    else:
        rows = range(len(column))
    values = column.to_numpy(dtype=object)
    for row in rows:
        value = values[row]
        if not _empty(value):
            try:
                check_scalar(_number(value, spec.type), spec, name)
            except Bad as e:
                raise Bad(name, e.message, row) from None


def _number(value: Any, kind: str) -> Any:
    # A CSV column with one word in it is read as text: its numbers are still numbers. And a
    # column of ints with an empty cell is read as floats: its whole numbers are still ints.
    if kind not in ("int", "float"):
        return value
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return value
    whole = isinstance(value, (float, np.floating)) and math.isfinite(value) and value % 1 == 0
    if kind == "int" and whole:
        return int(value)
    return value


def _empty(value: Any) -> bool:
    """A missing cell: None, NaN, pandas' NA."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)
