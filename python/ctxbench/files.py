"""Result files: JSON (every field and the metadata), CSV and Parquet (the tidy frame), and
lmbench's xgraph text, so old lat_ctx outputs load beside new results.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
import types
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import result as result_module
from .frame import as_frame, concat, kind, require, to_frame

if TYPE_CHECKING:
    import pandas as pd

PathLike = Union[str, "os.PathLike[str]"]

FORMAT = "ctxbench"
FORMAT_VERSION = 1
XGRAPH_SUFFIXES = (".xgraph", ".txt")

# lmbench prints `"size=0 ovr=12` (no unit, integer overhead) and ctxbench `"size=0k ovr=1.38`.
_TITLE = re.compile(r'^"size=(\d+)k?\s+ovr=(\S+)$')
_POINT = re.compile(r"^(\d+)\s+(\S+)$")


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy arrays and numpy scalars
        return value.tolist()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _fields(r: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(r):
        return {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}
    return dict(vars(r))


def record(r: Any) -> dict[str, Any]:
    """One result as a JSON-ready dict: ``kind``, every field (arrays as lists), ``metadata``."""
    fields = _fields(r)
    metadata = fields.pop("metadata", None) or {}
    return {"kind": kind(r), **_jsonable(fields), "metadata": _jsonable(metadata)}


def write_records(records: Sequence[dict[str, Any]], path: PathLike) -> None:
    """Write a results file atomically: a reader (or a crash) never sees half of it."""
    path = Path(path)
    doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "results": list(records)}
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def read_records(path: PathLike) -> list[dict[str, Any]]:
    """The raw result records of a ctxbench JSON file, after checking its format."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'{path}: not a ctxbench results file (no "format": "{FORMAT}")')
    if doc.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: format_version {doc.get('format_version')!r} is not supported "
            f"(this ctxbench reads version {FORMAT_VERSION})"
        )
    records = doc.get("results")
    if not isinstance(records, list) or not all(
        isinstance(r, dict) and r.get("kind") in ("ring", "pingpong") for r in records
    ):
        raise ValueError(f'{path}: "results" must be a list of ring or pingpong records')
    return records


def _has_str(value: Any) -> bool:
    if isinstance(value, list):
        return any(_has_str(v) for v in value)
    return isinstance(value, str)


def _numeric(value: Any) -> Any:
    # Lists of numbers were numpy arrays; lists of strings (the verdicts) stay lists.
    if isinstance(value, dict):
        return {k: _numeric(v) for k, v in value.items()}
    if isinstance(value, list) and not _has_str(value):
        try:
            return np.asarray(value)
        except ValueError:  # ragged: it was a list of arrays
            return [_numeric(v) for v in value]
    return value


def _restore(value: Any, annotation: str) -> Any:
    if value is None:
        return None
    if annotation.startswith("list[np.ndarray]"):  # ragged: one array per point
        return [np.asarray(v) for v in value]
    if annotation.startswith("list["):  # e.g. list[str], which may be empty
        return value
    if "np.ndarray" in annotation and isinstance(value, list):
        return np.asarray(value)
    return _numeric(value)


def _result_class(kind_name: str) -> Any:
    name = "RingResult" if kind_name == "ring" else "PingpongResult"
    return getattr(result_module, name, None)


def _decode(rec: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    cls = _result_class(rec["kind"])
    annotations = {f.name: str(f.type) for f in dataclasses.fields(cls)} if cls else {}
    fields = {
        k: v if k == "metadata" else _restore(v, annotations.get(k, ""))
        for k, v in rec.items()
        if k != "kind"
    }
    return cls, fields


def load_results(path: PathLike) -> list[Any]:
    """The result objects of a ctxbench JSON file, with numpy arrays restored."""
    out = []
    for i, rec in enumerate(read_records(path)):
        cls, fields = _decode(rec)
        if cls is None:
            raise ValueError(f"{path}: result {i}: this ctxbench has no {rec['kind']} results")
        known = {f.name for f in dataclasses.fields(cls)}
        try:
            out.append(cls(**{k: v for k, v in fields.items() if k in known}))
        except TypeError as e:
            raise ValueError(f"{path}: result {i}: {e}") from None
    return out


def records_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The tidy frame of raw JSON records."""
    # Through plain namespaces rather than the classes, so a file written before a field was
    # added still loads as a table.
    return concat(to_frame(types.SimpleNamespace(**_decode(rec)[1])) for rec in records)


def write_xgraph(result: Any) -> str:
    """lat_ctx's xgraph text of a ring result."""
    return str(result.to_xgraph())


def read_xgraph(text: str) -> pd.DataFrame:
    """Parse lat_ctx output (one or more ``"size=..k ovr=..`` blocks) into the tidy frame.

    lmbench records neither placement nor engine; rows say ``"process"``/``"pipe"`` (what
    lat_ctx runs), placement ``"unknown"`` and parallel 1 (lat_ctx's default).
    """
    pd = require("pandas", "ctxbench.files.read_xgraph")
    rows: list[dict[str, Any]] = []
    block: tuple[int, float] | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        title = _TITLE.match(line)
        if title:
            block = (int(title[1]), _float(title[2], lineno, "ovr"))
            continue
        if block is None:
            raise ValueError(f"line {lineno}: expected a title like '\"size=0k ovr=1.23'")
        point = _POINT.match(line)
        if not point:
            raise ValueError(f"line {lineno}: expected '<procs> <µs>', got {line!r}")
        value = _float(point[2], lineno, "µs")
        rows.append(
            {
                "benchmark": "ring",
                "engine": "process",
                "transport": "pipe",
                "placement": "unknown",
                "size_kb": block[0],
                "parallel": 1,
                "procs": int(point[1]),
                "repetition": 0,
                "value": value,
                "unit": "us",
                "overhead_us": block[1],
                "latency_us": value,
                "below_resolution": value <= 0,
                "source": "xgraph",
            }
        )
    if not rows:
        raise ValueError("no data points: expected lat_ctx output ('\"size=0k ovr=1.23' + lines)")
    return pd.DataFrame(rows)


def _float(text: str, lineno: int, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"line {lineno}: {what}: not a number: {text!r}") from None


def save(results: Any, path: PathLike) -> None:
    """Write results by the path's suffix: .json (everything), .csv/.parquet (the tidy
    frame; also accept a DataFrame), .xgraph/.txt (lat_ctx's text, ring results only)."""
    path = Path(path)
    suffix = path.suffix.lower()
    items = results if isinstance(results, (list, tuple)) else [results]
    if suffix == ".json":
        write_records([record(r) for r in items], path)
    elif suffix == ".csv":
        as_frame(results).to_csv(path, index=False)
    elif suffix == ".parquet":
        require("pyarrow", "writing .parquet", install="pyarrow")
        as_frame(results).to_parquet(path, index=False)
    elif suffix in XGRAPH_SUFFIXES:
        path.write_text("\n".join(write_xgraph(r) for r in items), encoding="utf-8")
    else:
        raise ValueError(f"{path}: unknown suffix; use .json, .csv, .parquet or .xgraph")


def _sniff(path: Path) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip():
                if line.lstrip().startswith('"size='):
                    return ".xgraph"
                if line.lstrip().startswith("{"):
                    return ".json"
                break
    raise ValueError(f"{path}: not a ctxbench JSON, CSV, Parquet or xgraph file")


def load(path: PathLike) -> pd.DataFrame:
    """Read a JSON, CSV, Parquet or xgraph file into the tidy frame ``to_frame`` gives."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".json", ".csv", ".parquet", *XGRAPH_SUFFIXES):
        suffix = _sniff(path)
    if suffix == ".json":
        return records_frame(read_records(path))
    pd = require("pandas", "ctxbench.load")
    if suffix == ".csv":
        return pd.read_csv(path)
    if suffix == ".parquet":
        require("pyarrow", "reading .parquet", install="pyarrow")
        return pd.read_parquet(path)
    try:
        return read_xgraph(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
