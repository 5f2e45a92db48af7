"""The typed stub of ``_core`` says what the binding really returns.

``mypy.stubtest`` (run in CI) checks the stub's functions and constants against the module;
it cannot see inside the dicts the functions return. These tests hold the stub's TypedDicts
against real results, the result classes against the TypedDicts they mirror, and both against
the one declaration they are written from (``schema.RECORDS``, ``ctxbench._codegen``).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import pytest
from stub_keys import typeddict_keys

import ctxbench
from ctxbench import _codegen, _core, record, schema


def _nested(raw: dict[str, Any], name: str) -> dict[str, Any]:
    value = raw[name]
    assert isinstance(value, dict), name
    return value


def test_ring_dict_matches_the_stub_key_for_key() -> None:
    stub = typeddict_keys()
    raw: dict[str, Any] = dict(
        _core.ring([2], min_time=0.002, repetitions=2, warmup=0, record_hops=True)
    )
    assert set(raw) == stub["RingDict"]
    assert set(_nested(raw, "stats")) == stub["StatsDict"]
    assert set(_nested(raw, "hardware")) == stub["HardwareDict"]
    assert set(_nested(raw, "tsc")) == stub["TscDict"]
    assert set(_nested(raw, "phase_s")) == stub["PhasesDict"]
    assert set(_nested(raw, "hop_percentiles_us")) == stub["_HopPercentilesDict"]
    assert set(_nested(raw, "hop_histogram")) == stub["HopHistogramDict"]


def test_pingpong_dict_matches_the_stub() -> None:
    raw: dict[str, Any] = dict(_core.pingpong(100))
    assert set(raw) == typeddict_keys()["PingpongDict"]


def test_result_classes_mirror_theirtypeddict_keys() -> None:
    stub = typeddict_keys()
    for cls, typeddict in [
        (ctxbench.RingResult, "RingDict"),
        (ctxbench.PingpongResult, "PingpongDict"),
    ]:
        fields = {f.name for f in dataclasses.fields(cls)} - {"metadata"}
        assert fields == stub[typeddict], cls.__name__


# The declaration of each result kind (``schema.RECORDS``) is the one list of its fields: the
# result class and the stub are written from it, and the core's values are held against it.

_DTYPES = {"int": np.int64, "float": np.float64, "bool": np.bool_}


def _check_declared(value: Any, spec: schema.Field, where: str) -> None:
    if value is None:
        assert spec.nullable, f"{where}: None, but not declared nullable"
    elif spec.type == "dict":
        assert isinstance(value, dict), where
        for key, inner in (spec.fields or {}).items():
            _check_declared(value[key], inner, f"{where}.{key}")
    elif not spec.shape:
        types = {"int": int, "float": float, "bool": bool, "str": str}[spec.type]
        assert isinstance(value, types) and (spec.type == "bool") == isinstance(value, bool), where
    elif spec.type == "str":
        assert isinstance(value, list) and all(isinstance(v, str) for v in value), where
        if spec.literals:
            assert set(value) <= set(spec.literals), f"{where}: {value} not in {spec.literals}"
    elif spec.ragged:
        assert isinstance(value, list), where
        for v in value:
            assert isinstance(v, np.ndarray) and v.dtype == _DTYPES[spec.type], where
    else:
        dtype = np.uint64 if spec.unsigned else _DTYPES[spec.type]
        assert isinstance(value, np.ndarray) and value.dtype == dtype, f"{where}: {value!r}"


@pytest.mark.parametrize("precise", [False, True])
def test_the_core_gives_what_each_field_declares(precise: bool) -> None:
    fixed = {"precision": 0.5, "max_time": 0.05} if precise else {"repetitions": 2}
    raw: dict[str, Any] = dict(
        _core.ring([2, 3], min_time=0.002, warmup=0, record_hops=True, **fixed)
    )
    declared = {k: v for k, v in schema.RING.items() if k not in _codegen.ADDED_IN_PYTHON}
    assert set(raw) == set(declared)
    # The core hands its record over as a file holds it; decode restores the arrays.
    ring = record.decode({"kind": "ring", **raw})
    for name, spec in declared.items():
        _check_declared(ring[name], spec, name)
    pingpong = record.decode({"kind": "pingpong", **_core.pingpong(100)})
    for name, spec in schema.PINGPONG.items():
        if name not in _codegen.ADDED_IN_PYTHON:
            _check_declared(pingpong[name], spec, name)


def test_the_generated_code_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    assert _codegen.main(["--check"]) == 0, capsys.readouterr().out


def test_a_new_field_is_one_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    # A row the core would export for a new ring field (``record!`` in src/record/): the
    # result class, the stub and the check take it, and nothing else changes.
    before = _codegen.expected()
    row = dict(next(r for r in _core.RECORDS["ring"] if r["name"] == "resident_kb"))
    row.update(name="knee_kb", type="float", min=0.0, column=False)
    core = {**_core.RECORDS, "ring": [*_core.RECORDS["ring"], row]}
    monkeypatch.setattr(schema, "RECORDS", schema.records(core))
    monkeypatch.setattr(_codegen, "RECORDS", schema.RECORDS)
    after = _codegen.expected()
    added = {
        path.name: lines
        for path in after
        if (lines := [line.strip() for line in after[path].splitlines() if "knee_kb" in line])
    }
    assert added == {
        "result.py": [
            "knee_kb: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))"
        ],
        "_core.pyi": ["knee_kb: list[float]"],
    }
    for path in before:
        changed = set(after[path].splitlines()) ^ set(before[path].splitlines())
        assert changed == {line for line in after[path].splitlines() if "knee_kb" in line}
    # A dataclass needs its defaults last: a required field declared after optional ones
    # comes before them in the class.
    late = {**row, "name": "late", "type": "int", "required": True}
    core = {**_core.RECORDS, "ring": [*_core.RECORDS["ring"], late]}
    monkeypatch.setattr(_codegen, "RECORDS", schema.records(core))
    lines = _codegen.class_fields(_codegen.RECORDS["ring"])
    assert lines.index("late: np.ndarray") < lines.index("precision: float | None = None")


def test_a_new_parameter_is_one_row_of_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    # A row the core would export for a new ring parameter: the stub's ring functions and
    # the API's ring take it with its default, and nothing else changes.
    before = _codegen.expected()
    row = dict(next(r for r in _core.PARAMETERS if r["name"] == "warmup"))
    row.update(name="spin_us", default=5, doors=("ring",))
    monkeypatch.setattr(_core, "PARAMETERS", (*_core.PARAMETERS, row))
    after = _codegen.expected()
    added = {
        path.name: lines
        for path in after
        if (lines := [line.strip() for line in after[path].splitlines() if "spin_us" in line])
    }
    assert added == {"_core.pyi": ["spin_us: int = 5,"] * 3, "api.py": ["spin_us: int = 5,"]}
    for path in before:
        changed = set(after[path].splitlines()) ^ set(before[path].splitlines())
        assert changed <= {line for line in after[path].splitlines() if "spin_us" in line}


def test_ring_config_is_what_a_ring_records_of_what_was_asked() -> None:
    cpu = min(os.sched_getaffinity(0))
    for kwargs in [
        {"min_time": 0.002, "repetitions": 2, "warmup": 0, "placement": "single", "cpu": cpu},
        {"min_time": 0.002, "precision": 0.5, "max_time": 0.02, "record_hops": True},
    ]:
        config = dict(_core.ring_config([2], **kwargs))
        assert set(config) == {*schema.CONFIG, "point_id"}
        raw: dict[str, Any] = dict(_core.ring([2], **kwargs))
        assert config == {k: raw[k] for k in config} == dict(_core.ring_check([2], **kwargs))


def test_ring_check_checks_this_machine_and_ring_config_does_not() -> None:
    elsewhere = max(set(range(1024)) - os.sched_getaffinity(0))
    assert _core.ring_config([2], placement=[elsewhere])["placement"] == f"[{elsewhere}]"
    with pytest.raises(ValueError, match="outside this process's affinity mask"):
        _core.ring_check([2], placement=[elsewhere])
    for check in (_core.ring_config, _core.ring_check):
        with pytest.raises(ValueError, match="transport"):
            check([2], engine="fiber", transport="pipe")
