"""What a ctxbench file must hold (``ctxbench._field`` checks every declaration): the JSON record
of every result kind (``RECORDS``), the tidy table that CSV and Parquet files hold
(``_table_schema``, its columns repeating these declarations) and lmbench's xgraph text
(``XGRAPH``). A record's fields are declared once, in the core, beside the serde struct that
writes them (``record!``: ``src/record/``, and the types a record holds, such as a matrix's
topology): ``RECORDS`` reads them from ``_core.RECORDS`` and adds what Python adds
(``metadata``). The result classes, the stub of what the core returns and the table's columns
are written from it (``python -m ctxbench._codegen``). The loaders turn a ``_field.Bad`` into a
``ValueError`` naming the file and where in it (record, line or row).

Net figures (``latency_us``, ``samples_us``, ``value`` ...) may be negative: a switch below the
method's resolution gives a net time <= 0, and ``below_resolution`` says so (``FLAG``). Raw
times, overheads and counts cannot be negative. No number may be NaN or infinite unless its
field says so: NaN is a hop percentile of a point without hops, +inf a CV whose mean is 0.

What is not declared passes unchecked and is kept: entries a newer ctxbench adds to a record,
columns a user adds to a table, the metadata beyond the columns the table repeats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import _core
from ._field import Dim, Field


def _float(*shape: Dim, **kw: Any) -> Field:
    return Field("float", shape, **kw)


def _int(*shape: Dim, **kw: Any) -> Field:
    return Field("int", shape, **kw)


def _field(row: Mapping[str, Any]) -> Field:
    """A field as the core declares it (``_core.RECORDS``)."""
    kw = {k: v for k, v in row.items() if k not in ("name", "doc", "alias", "fields", "shape")}
    for key in ("choices", "literals"):
        kw[key] = None if row[key] is None else tuple(row[key])
    fields = row["fields"]
    return Field(
        **kw,
        shape=tuple(row["shape"]),
        name=row["alias"],
        fields=None if fields is None else _fields(fields),
    )


def _fields(rows: Sequence[Mapping[str, Any]]) -> dict[str, Field]:
    return {row["name"]: _field(row) for row in rows}


# The metadata is free-form (collected, or added by the pytest plugin); only what the table
# repeats (``frame.METADATA_COLUMNS``) has a type.
METADATA = Field(
    "dict",
    nullable=True,
    required=False,
    fields={
        **{
            k: Field("str", nullable=True, required=False)
            for k in ("kernel", "cpu_model", "ctxbench_version", "date", "hostname", "test")
        },
        "hypervisor": Field("bool", nullable=True, required=False),
    },
)


def records(core: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, dict[str, Field]]:
    """The record of each result kind from the core's declarations (``_core.RECORDS``): its
    fields in the core's order, then what Python adds, ``metadata``."""
    return {kind: {**_fields(rows), "metadata": METADATA} for kind, rows in core.items()}


# The record of each result kind (``result.KINDS``).
RECORDS = records(_core.RECORDS)
RING, PINGPONG, MATRIX, AB = (RECORDS[k] for k in ("ring", "pingpong", "matrix", "ab"))
# What the core returns besides a kind's record (a cache sweep's), by the stub's name of it.
RETURNS = {name: _fields(rows) for name, rows in _core.RETURNS.items()}
WAKE_PERCENTILES = tuple(MATRIX["wake_us"].fields or ())
HOP_PERCENTILES = tuple(RING["hop_percentiles_us"].fields or ())


def percentile_column(prefix: str, name: str) -> str:
    """The table column of percentile ``name`` of ``prefix`` ("wake", "hop"): wake_p999_us."""
    return f"{prefix}_{name.replace('.', '')}_us"


# What the caller asked of a ring (``config=True``), in declaration order, one value each
# (a point's canonical ``point_id`` is one per point).
CONFIG: tuple[str, ...] = tuple(
    name for name, spec in RING.items() if spec.config and not spec.shape
)
# The neighbours asked (``interference=``), as the core resolves every key of them.
INTERFERENCE_ASKED: tuple[str, ...] = _core.INTERFERENCE_KEYS

# lmbench's lat_ctx text: a title '"size=<KiB>k ovr=<µs>' and lines '<procs> <µs per switch>'.
XGRAPH: dict[str, Field] = {
    "size": _int(min=0),
    "ovr": _float(min=0),
    "procs": _int(min=2),
    "µs": _float(),
}
