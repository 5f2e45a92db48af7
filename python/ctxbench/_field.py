"""A declared entry of a ctxbench file (``Field``) and the one checker of every declaration:
scalars, nested arrays whose dimensions the record binds, objects, whole records with their
cross-field rules (a flag and its figure, a figure and its samples). The declarations
themselves are ``ctxbench.schema``'s; a ``Bad`` names where a value breaks one."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

# A dimension of an array: a fixed length, a name bound by the record (a scalar field of that
# name, else the first array that uses it: "points" is the length of "procs"), or None (any).
Dim = Union[int, str, None]

INT64 = (-(2**63), 2**63 - 1)
# No figure a run records comes near it (µs in 31 years, a rate, a count): a number past it
# in a file is damage, and squared in a variance it would overflow to infinity.
LARGEST = 1e15


@dataclass(frozen=True)
class Field:
    """One entry of a record (or one column of a table, where ``shape`` is ``()``)."""

    type: str  # "int", "float", "bool", "str", or "dict" (with ``fields``, or any object)
    shape: tuple[Dim, ...] = ()
    min: float | None = None
    nullable: bool = False  # JSON null is a value ("unavailable"), not a missing entry
    nan: bool = False
    inf: bool = False  # +inf only
    holes: bool = False  # null entries in an array: "no sample" (NaN in memory)
    choices: tuple[str, ...] | None = None
    required: bool = True  # False: an older file may lack it
    fields: Mapping[str, Field] | None = None
    # What the code beside the files needs (``ctxbench._codegen`` writes it from these): a
    # list of arrays of different lengths; unsigned integers in memory; the name of a dict's
    # TypedDict in ``_core.pyi`` (written from ``fields``); the strings the core gives today (the
    # stub's ``Literal``, not checked in files, so that a newer ctxbench's values still load);
    # and an entry the tidy table repeats as a column of the same name on its rows (a ring's
    # per-point array, a matrix cell's, a ping-pong's figure).
    ragged: bool = False
    unsigned: bool = False
    name: str | None = None
    literals: tuple[str, ...] | None = None
    column: bool = False
    # What the caller asked, as the run used it (defaults filled in): ``_core.ring_config``
    # returns exactly these; with its procs and machine they are what makes a point of a
    # sweep the same point (``grid.point_key``); the table repeats each as a column.
    config: bool = False


class Bad(Exception):
    """A value that does not fit its declaration: ``where`` (a field path, or a table row and
    column) and what is wrong."""

    def __init__(self, where: str, message: str, row: int | None = None) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where, self.message, self.row = where, message, row


# A flag and the figure it summarises: ``below_resolution`` is true exactly where the median
# net time ``latency_us`` is <= 0.
FLAG = ("below_resolution", "latency_us")
# A figure and what it is the median of: ``latency_us`` of each point (a ring's, a matrix
# cell's) is the median of its column of ``samples_us``, the holes left out.
MEDIAN = ("latency_us", "samples_us")

_TYPE_NAMES = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "str": "a string",
    "dict": "an object",
}


def show(value: Any) -> str:
    """A value as an error message shows it: JSON's null, at most 40 characters."""
    try:
        text = "null" if value is None else repr(value)
    except RecursionError:
        text = f"a {type(value).__name__} nested too deeply to show"
    return text if len(text) <= 40 else text[:37] + "..."


def check_scalar(value: Any, spec: Field, where: str) -> None:
    """One number, flag or string against its declaration."""
    t = spec.type
    if t == "str":
        ok = isinstance(value, str)
    elif t == "bool":
        ok = isinstance(value, (bool, np.bool_))
    else:
        ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
            value, (bool, np.bool_)
        )
        if t == "int" and ok and not isinstance(value, (int, np.integer)):
            ok = False
        if ok and isinstance(value, (int, np.integer)) and not INT64[0] <= value <= INT64[1]:
            raise Bad(where, f"{value} does not fit in 64 bits")
    if not ok:
        raise Bad(where, f"expected {_TYPE_NAMES[t]}, got {show(value)}")
    if t in ("int", "float"):
        x = float(value)
        if math.isnan(x) and not spec.nan:
            raise Bad(where, "NaN is not a valid value")
        if math.isinf(x) and not (spec.inf and x > 0):
            raise Bad(where, f"{x} is not a finite number")
        if t == "float" and math.isfinite(x) and abs(x) > LARGEST:
            raise Bad(where, f"{x:g} is beyond any figure a run records (|x| <= {LARGEST:g})")
        if spec.min is not None and x < spec.min:
            raise Bad(where, f"{value} is below the minimum {spec.min:g}")
    if spec.choices is not None and value not in spec.choices:
        raise Bad(where, f"{show(value)} is not one of {', '.join(spec.choices)}")


def _check_array(value: Any, spec: Field, shape: tuple[Dim, ...], where: str, dims: dict) -> None:
    if not shape:
        if value is None and spec.holes:
            return
        if spec.type == "dict":
            if not isinstance(value, dict):
                raise Bad(where, f"expected an object, got {show(value)}")
            if spec.fields is not None:
                check_fields(value, spec.fields, dims, prefix=f"{where}.")
            return
        if value is None:
            raise Bad(where, f"expected {_TYPE_NAMES[spec.type]}, got null")
        check_scalar(value, spec, where)
        return
    if not isinstance(value, list):
        raise Bad(where, f"expected a list, got {show(value)}")
    dim, rest = shape[0], shape[1:]
    if isinstance(dim, str):
        want = dims.setdefault(dim, len(value))
        if len(value) != want:
            raise Bad(where, f"{len(value)} entries, expected {want} (one per {dim[:-1]})")
    elif dim is not None and len(value) != dim:
        raise Bad(where, f"{len(value)} entries, expected {dim}")
    for i, v in enumerate(value):
        _check_array(v, spec, rest, f"{where}[{i}]", dims)


def check_value(value: Any, spec: Field, where: str, dims: dict[str, int]) -> None:
    """A record entry (scalar, object, or nested list of either) against its declaration."""
    if value is None and spec.nullable:
        return
    _check_array(value, spec, spec.shape, where, dims)


def check_fields(
    rec: Mapping[str, Any], fields: Mapping[str, Field], dims: dict[str, int], prefix: str = ""
) -> None:
    """Every declared entry of ``rec``; undeclared entries pass."""
    for name, spec in fields.items():
        if name not in rec:
            if spec.required:
                raise Bad(f"{prefix}{name}", "missing")
            continue
        check_value(rec[name], spec, f"{prefix}{name}", dims)


def check_record(rec: Mapping[str, Any], fields: Mapping[str, Field]) -> None:
    """A JSON record: its scalars first (they fix the dimensions), then everything else."""
    dims: dict[str, int] = {}
    scalars = {n: f for n, f in fields.items() if f.type != "dict" and not f.shape}
    check_fields(rec, scalars, dims)
    # A scalar that is null (repetitions in precision mode) fixes nothing: the first array
    # with that dimension does.
    dims.update(
        {n: rec[n] for n, f in scalars.items() if f.type == "int" and rec.get(n) is not None}
    )
    check_fields(rec, fields, dims)
    flag, figure = FLAG
    if flag in fields and figure in fields:
        for i, (low, x) in enumerate(zip(rec[flag], rec[figure])):
            if bool(low) != (x <= 0):
                raise Bad(f"{flag}[{i}]", f"is {low} but {figure}[{i}] is {x}")
    _check_median(rec, fields)
    _check_rounds(rec, fields)


def _check_median(rec: Mapping[str, Any], fields: Mapping[str, Field]) -> None:
    """``MEDIAN``: each point's figure is the median of its samples (where it has any)."""
    figure, samples = MEDIAN
    if figure not in fields or samples not in fields or not rec[samples]:
        return
    values = np.array(rec[samples], dtype=np.float64)  # null (a hole) is NaN
    for k, x in enumerate(rec[figure]):
        column = values[:, k][~np.isnan(values[:, k])]
        if column.size and not math.isclose(x, float(np.median(column)), rel_tol=1e-9):
            raise Bad(
                f"{figure}[{k}]",
                f"is {x} but the median of its {column.size} samples ({samples}[:, {k}]) is "
                f"{float(np.median(column))}",
            )


def _check_rounds(rec: Mapping[str, Any], fields: Mapping[str, Field]) -> None:
    """An A/B run's rounds and ratio as the core makes them (``ab::run``): every round above
    0 but a last one at or below 0, which stops the run "below resolution"; a ratio exactly
    where some round gave one, inside its interval."""
    if not {"a_us", "b_us", "ratio", "stopped"} <= set(fields):
        return
    rounds = list(zip(rec["a_us"], rec["b_us"]))
    below = [k for k, (a, b) in enumerate(rounds) if not (a > 0 and b > 0)]
    if below and below != [len(rounds) - 1]:
        raise Bad(f"a_us[{below[0]}]", "a round at or below 0 before the last: the run stops there")
    if bool(below) != (rec["stopped"] == "below resolution"):
        said = "at or below 0" if below else "above 0"
        raise Bad("stopped", f"is {rec['stopped']!r} but the last round is {said}")
    ratio, low, high = (_number(rec[k]) for k in ("ratio", "ratio_low", "ratio_high"))
    measured = len(rounds) - len(below)
    if math.isnan(ratio) != (measured == 0):
        raise Bad("ratio", f"is {show(rec['ratio'])} after {measured} rounds with a ratio")
    if not math.isnan(ratio) and not low <= ratio <= high:
        raise Bad("ratio", f"{ratio} is outside its interval [{low}, {high}]")


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)
