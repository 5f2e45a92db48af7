"""The typed stub of ``_core`` says what the binding really returns.

``mypy.stubtest`` (run in CI) checks the stub's functions and constants against the module;
it cannot see inside the dicts the functions return. These tests hold the stub's TypedDicts
against real results, and the result classes against the TypedDicts they mirror.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import ctxbench
from ctxbench import _core

STUB = Path(_core.__file__).with_name("_core.pyi")


def _typeddicts() -> dict[str, set[str]]:
    """Every TypedDict of the stub (class or functional form) → its keys."""
    found: dict[str, set[str]] = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.ClassDef) and any(
            isinstance(b, ast.Name) and b.id == "TypedDict" for b in node.bases
        ):
            found[node.name] = {
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            if isinstance(call.func, ast.Name) and call.func.id == "TypedDict":
                fields = call.args[1]
                assert isinstance(fields, ast.Dict)
                found[call.args[0].value] = {k.value for k in fields.keys}  # type: ignore[union-attr]
    return found


def _nested(raw: dict[str, Any], name: str) -> dict[str, Any]:
    value = raw[name]
    assert isinstance(value, dict), name
    return value


def test_ring_dict_matches_the_stub_key_for_key() -> None:
    stub = _typeddicts()
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
    assert set(raw) == _typeddicts()["PingpongDict"]


def test_result_classes_mirror_their_typeddicts() -> None:
    stub = _typeddicts()
    for cls, typeddict in [
        (ctxbench.RingResult, "RingDict"),
        (ctxbench.PingpongResult, "PingpongDict"),
    ]:
        fields = {f.name for f in dataclasses.fields(cls)} - {"metadata"}
        assert fields == stub[typeddict], cls.__name__
