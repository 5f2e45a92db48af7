"""The versioned JSON record of a result: encode, check, decode. Data in, data out; the file
that holds records is ``ctxbench.files``' business.

A results document is ``{"format": "ctxbench", "format_version": 1, "results": [record, ...]}``;
a record is one result: its ``kind``, every field (arrays as lists, NaN as null) and its
``metadata``. Each kind's fields are declared in ``schema.RECORDS``. Every writer (``save``, a
sweep's ``out``, each subcommand's ``--json``) writes this one document at ``FORMAT_VERSION``;
each version read has its loader in ``LOADERS``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ._field import Bad, Field, check_record, show
from ._json_text import path_of
from .metadata import without_hostname
from .schema import RECORDS

FORMAT = "ctxbench"
FORMAT_VERSION = 1
# The largest record of each kind accepted from elsewhere (a fleet worker), as compact JSON.
# A ring point holds at most 10,000 repetitions of a few arrays (about 1 MiB); a matrix
# holds that per cell, and a big machine has a million cells.
MAX_RECORD_BYTES = {"ring": 64 << 20, "pingpong": 64 << 20, "matrix": 1 << 30, "ab": 64 << 20}


def _jsonable(value: Any) -> Any:
    if isinstance(value, float):
        # NaN marks "no sample" (a point that stopped early, an A/B run's ratio before a
        # round had one); JSON has no NaN, it has null.
        return None if value != value else value
    if hasattr(value, "tolist"):  # numpy arrays and numpy scalars
        return _jsonable(value.tolist())
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def encode(result: Any, *, hostname: bool = True) -> dict[str, Any]:
    """One result as a JSON-ready dict: ``kind``, every field (arrays as lists), ``metadata``
    (its hostname withheld with ``hostname=False``: see ``withhold_hostname``)."""
    kind = getattr(result, "kind", None)
    if kind not in RECORDS or not hasattr(result, "__dict__"):
        raise TypeError(f"expected a ctxbench result, got {type(result).__name__}")
    fields = dict(vars(result))
    metadata = fields.pop("metadata", None) or {}
    # Unset optional fields are left out, so a file written before they existed saves back
    # byte for byte.
    for name, spec in RECORDS[kind].items():
        value = fields.get(name)
        unset = value is None or (hasattr(value, "__len__") and len(value) == 0)
        if not spec.required and name in fields and unset:
            del fields[name]
    rec = {"kind": kind, **_jsonable(fields), "metadata": _jsonable(metadata)}
    return rec if hostname else withhold_hostname(rec)


def withhold_hostname(rec: dict[str, Any]) -> dict[str, Any]:
    """The record with ``metadata.HOSTNAME_WITHHELD`` for every field of its metadata that
    names the host (``metadata.HOST_FIELDS``)."""
    if not isinstance(rec.get("metadata"), dict):
        return rec
    return {**rec, "metadata": without_hostname(rec["metadata"])}


def document(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The results document holding ``records``."""
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "results": list(records)}


# Deeper than any record nests (a ring's ``cpus`` is 3 lists deep): what passes unchecked
# (entries a newer ctxbench adds, the metadata) may not nest deeper either.
MAX_DEPTH = 32


def check_document(
    doc: Any, where: str, line: Callable[[list[Any]], int | None] | None = None
) -> list[dict[str, Any]]:
    """The records of a parsed results document, read by the loader of its
    ``format_version`` (``LOADERS``); a ``ValueError`` starts with ``where`` (the file) and
    names the record, the line (given ``line``, which finds it from a path such as
    ``["results", 0, "engine"]``) and the field."""
    if isinstance(doc, list):
        raise ValueError(
            f"{where}: not a ctxbench results file: a JSON list, expected the object "
            f'{{"format": "{FORMAT}", "format_version": {FORMAT_VERSION}, "results": [...]}}'
        )
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'{where}: not a ctxbench results file (no "format": "{FORMAT}")')
    version = doc.get("format_version")
    # bool is an int, and True == 1: a version is a number, never a switch.
    loader = LOADERS.get(version) if type(version) is int else None
    if loader is None:
        readable = ", ".join(str(v) for v in sorted(LOADERS))
        raise ValueError(
            f"{where}: format_version {version!r} is not one this ctxbench reads "
            f"(it reads version {readable}; a newer ctxbench wrote it?)"
        )
    return loader(doc, where, line)


def _records_v1(
    doc: dict[str, Any], where: str, line: Callable[[list[Any]], int | None] | None
) -> list[dict[str, Any]]:
    """Version 1: ``"results"``, a list of records, each checked against the declaration of
    its kind (``schema.RECORDS``)."""
    records = doc.get("results")
    kinds = " or ".join(RECORDS)
    if not isinstance(records, list):
        raise ValueError(f'{where}: "results" must be a list of {kinds} records')
    for i, rec in enumerate(records):
        kind = rec.get("kind") if isinstance(rec, dict) else None
        if not isinstance(kind, str) or kind not in RECORDS:
            what = f"kind {kind!r}" if isinstance(rec, dict) else type(rec).__name__
            raise ValueError(
                f'{where}: result {i}: {what}: "results" must be a list of {kinds} records'
            )
        try:
            check_record(rec, RECORDS[kind])
            _check_depth(rec, RECORDS[kind])
        except Bad as e:
            at = line(["results", i, *path_of(e.where)]) if line else None
            on = f" (line {at})" if at else ""
            raise ValueError(f"{where}: result {i} ({kind}): {e}{on}") from None
    return records


# How a document of each format version is read into today's records, one loader per
# version, as pyperf keeps one: a version 2 adds its loader here, and version 1 files still
# load. Every writer writes ``FORMAT_VERSION``.
LOADERS: dict[int, Callable[..., list[dict[str, Any]]]] = {1: _records_v1}


def _check_depth(rec: dict[str, Any], fields: dict[str, Any]) -> None:
    """What the declaration does not check (undeclared entries, the metadata) nests at most
    ``MAX_DEPTH`` deep: reading it back must not exhaust the interpreter's stack."""
    todo = [(v, name, 1) for name, v in rec.items() if name not in fields or name == "metadata"]
    while todo:
        value, where, depth = todo.pop()
        if depth > MAX_DEPTH:
            raise Bad(where, f"nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            todo.extend((v, f"{where}.{k}", depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            todo.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))


def check_arrived(rec: Any, kind: str) -> None:
    """A record of ``kind`` that came from another process or machine (a fleet worker),
    checked as a file's record is and more: an object, of JSON values only (no NaN or
    infinity anywhere, declared or not), at most ``MAX_RECORD_BYTES``, of that kind, and
    every declared field as ``schema.RECORDS`` says. A ``ValueError`` names the field."""
    if not isinstance(rec, dict):
        raise ValueError(f"expected a {kind} record (a JSON object), got {type(rec).__name__}")
    try:
        size = len(json.dumps(rec, allow_nan=False))
    except ValueError:
        raise ValueError(f"{_nonfinite(rec)}: NaN and infinity are no JSON values") from None
    except (TypeError, RecursionError) as e:
        raise ValueError(f"not a JSON record: {e}") from None
    if size > MAX_RECORD_BYTES[kind]:
        raise ValueError(
            f"{size:,} bytes of JSON, more than a {kind} record holds "
            f"({MAX_RECORD_BYTES[kind]:,} at most)"
        )
    if rec.get("kind") != kind:
        raise ValueError(f"kind: {show(rec.get('kind'))}, expected {kind!r}")
    try:
        check_record(rec, RECORDS[kind])
    except Bad as e:
        raise ValueError(str(e)) from None


def _nonfinite(rec: dict[str, Any]) -> str:
    """Where in ``rec`` the first NaN or infinite number is (``latency_us[0]``)."""
    todo: list[tuple[str, Any]] = [("", rec)]
    while todo:
        where, value = todo.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return where
        if isinstance(value, dict):
            inside = [(f"{where}.{k}" if where else str(k), v) for k, v in value.items()]
        elif isinstance(value, (list, tuple)):
            inside = [(f"{where}[{i}]", v) for i, v in enumerate(value)]
        else:
            continue
        todo.extend(reversed(inside))
    return "a number"


def _has(value: Any, test: Any) -> bool:
    if isinstance(value, list):
        return any(_has(v, test) for v in value)
    return bool(test(value))


def _numeric(value: Any) -> Any:
    # Lists of numbers were numpy arrays; lists of strings (the verdicts) stay lists.
    if isinstance(value, dict):
        return {k: _numeric(v) for k, v in value.items()}
    if isinstance(value, list) and not _has(value, lambda v: isinstance(v, str)):
        try:
            # null in a list of numbers is a missing sample: NaN again.
            holes = _has(value, lambda v: v is None)
            return np.asarray(value, dtype=np.float64 if holes else None)
        except ValueError:  # ragged: it was a list of arrays
            return [_numeric(v) for v in value]
    return value


def decode(rec: dict[str, Any]) -> dict[str, Any]:
    """Every entry of a record (``kind`` included) with its numpy arrays restored: lists of
    numbers become arrays, except where the declaration says otherwise (lists of strings,
    ragged lists of arrays, lists of objects)."""
    declared = RECORDS[rec["kind"]]
    return {
        name: value if name in ("kind", "metadata") else typed(value, declared.get(name))
        for name, value in rec.items()
    }


# Integers and flags keep their type in an array that holds none of them.
_DTYPES = {"int": np.int64, "bool": np.bool_}


def typed(value: Any, spec: Field | None) -> Any:
    """One entry as its declaration says it lives in memory: a record's field, or a value the
    core hands over as a record holds it (``_core.topology``'s table)."""
    if value is None and spec is not None and spec.nan and not spec.shape:
        return math.nan  # a number that may be NaN: JSON's null is NaN again
    if value is None or spec is None:
        return _numeric(value)
    if spec.type == "dict" and spec.shape:  # a list of objects
        each = replace(spec, shape=())
        return [typed(v, each) for v in value]
    if spec.ragged:
        return [_array(v, spec, len(spec.shape) - 1) for v in value]
    if spec.type == "str" and spec.shape:
        return list(value)
    if spec.type == "dict" and spec.fields is not None and isinstance(value, dict):
        return {k: typed(v, spec.fields.get(k)) for k, v in value.items()}
    if spec.unsigned:
        return np.asarray(value, dtype=np.uint64)
    if spec.shape and spec.type in _DTYPES:
        return _array(value, spec, len(spec.shape))
    return _numeric(value)


def _array(value: list[Any], spec: Field, levels: int) -> np.ndarray:
    """A list of ``levels`` levels as an array of its declared type (``_DTYPES``; numbers
    with holes are floats), as many levels deep where it is empty."""
    dtype = np.float64 if spec.holes else _DTYPES.get(spec.type)
    if not value:
        return np.zeros((0,) * levels, dtype or np.float64)
    return np.asarray(value, dtype=dtype)
