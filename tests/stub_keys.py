"""The stub of ``_core`` as the tests read it: the keys of each of its TypedDicts."""

from __future__ import annotations

import ast
from pathlib import Path

from ctxbench import _core

STUB = Path(_core.__file__).with_name("_core.pyi")


def typeddict_keys() -> dict[str, set[str]]:
    """Every TypedDict of the stub (class or functional form) → its keys, those it inherits
    from another TypedDict of the stub included."""
    found: dict[str, set[str]] = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.ClassDef):
            bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
            if not bases or not all(b == "TypedDict" or b in found for b in bases):
                continue  # no TypedDict
            found[node.name] = {
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }.union(*(found.get(b, set()) for b in bases))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            if isinstance(call.func, ast.Name) and call.func.id == "TypedDict":
                fields = call.args[1]
                assert isinstance(fields, ast.Dict)
                found[call.args[0].value] = {k.value for k in fields.keys}  # type: ignore[union-attr]
    return found
