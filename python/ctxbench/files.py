"""Result files, the format picked by suffix: JSON (the records of ``ctxbench.result``: every
field and the metadata), CSV and Parquet (the tidy frame), and lmbench's xgraph text, so old
lat_ctx outputs load beside new results.
"""

from __future__ import annotations

import csv
import re
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import result
from .frame import as_frame, concat, require, to_frame
from .metadata import HOST_FIELDS, HOSTNAME_WITHHELD
from .result import PathLike, decode, read_records, record, write_atomically, write_records
from .schema import TABLE_COLUMNS, XGRAPH, Bad, check_scalar, check_table

if TYPE_CHECKING:
    import pandas as pd

XGRAPH_SUFFIXES = (".xgraph", ".txt")

# lmbench prints `"size=0 ovr=12` (no unit, integer overhead) and ctxbench `"size=0k ovr=1.38`.
_TITLE = re.compile(r'^"size=(\d+)k?\s+ovr=(\S+)$')
_POINT = re.compile(r"^(\d+)\s+(\S+)$")


def records_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The tidy frame of raw JSON records."""
    # Through plain namespaces rather than the classes, so a file written before a field was
    # added (declared ``required=False`` in ``schema.RECORDS``) still loads as a table.
    return concat(to_frame(types.SimpleNamespace(**decode(rec))) for rec in records)


def write_xgraph(ring: Any) -> str:
    """lat_ctx's xgraph text of a ring result."""
    if getattr(ring, "kind", None) != "ring":
        raise TypeError(f"lat_ctx's xgraph format holds ring results, not {type(ring).__name__}")
    return str(ring.to_xgraph())


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
            block = (_value(title[1], lineno, "size"), _value(title[2], lineno, "ovr"))
            continue
        if block is None:
            raise ValueError(f"line {lineno}: expected a title like '\"size=0k ovr=1.23'")
        point = _POINT.match(line)
        if not point:
            raise ValueError(f"line {lineno}: expected '<procs> <µs>', got {line!r}")
        procs, value = _value(point[1], lineno, "procs"), _value(point[2], lineno, "µs")
        rows.append(
            {
                "benchmark": "ring",
                "engine": "process",
                "transport": "pipe",
                "placement": "unknown",
                "size_kb": block[0],
                "parallel": 1,
                "procs": procs,
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


def _value(text: str, lineno: int, what: str) -> Any:
    """A field of the xgraph text, read and checked as ``schema.XGRAPH`` declares it."""
    spec = XGRAPH[what]
    try:
        value = int(text) if spec.type == "int" else float(text)
        check_scalar(value, spec, what)
    except ValueError:
        raise ValueError(f"line {lineno}: {what}: not a number: {text!r}") from None
    except Bad as e:
        raise ValueError(f"line {lineno}: {e}") from None
    return value


def save(results: Any, path: PathLike, *, hostname: bool = True) -> None:
    """Write results by the path's suffix: .json (everything), .csv/.parquet (the tidy
    frame; also accept a DataFrame), .xgraph/.txt (lat_ctx's text, ring results only).

    Every format is written the same way (``result.write_atomically``): whole or not at all,
    with the mode of a new file (``0o666 & ~umask``); an ``OSError`` names ``path``.
    ``hostname=False`` writes ``metadata.HOSTNAME_WITHHELD`` for the hostname (JSON records,
    and a table's ``hostname`` column if it has one)."""
    path = Path(path)
    suffix = path.suffix.lower()
    items = results if isinstance(results, (list, tuple)) else [results]
    if suffix == ".json":
        write_records([record(r, hostname=hostname) for r in items], path)
    elif suffix == ".csv":
        text = _table(results, hostname).to_csv(index=False)
        write_atomically(path, lambda f: f.write(text.encode("utf-8")))
    elif suffix == ".parquet":
        require("pyarrow", "writing .parquet", install="pyarrow")
        frame = _table(results, hostname)
        write_atomically(path, lambda f: frame.to_parquet(f, index=False))
    elif suffix in XGRAPH_SUFFIXES:
        text = "\n".join(write_xgraph(r) for r in items)
        write_atomically(path, lambda f: f.write(text.encode("utf-8")))
    else:
        raise ValueError(f"{path}: unknown suffix; use .json, .csv, .parquet or .xgraph")


def _table(results: Any, hostname: bool) -> pd.DataFrame:
    frame = as_frame(results)
    if not hostname:
        named = [c for c in HOST_FIELDS if c in frame.columns]
        frame = frame.assign(**dict.fromkeys(named, HOSTNAME_WITHHELD))
    return frame


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
    """Read a JSON, CSV, Parquet or xgraph file into the tidy frame ``to_frame`` gives.

    Every file is checked against its declaration in ``ctxbench.schema``; anything else (a
    foreign table, a missing column or field, a value of the wrong type, out of range or not
    finite) is a ``ValueError`` naming the file, where in it (result, line or row) and the
    field. Columns and record entries ctxbench does not know are kept unchecked.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".json", ".csv", ".parquet", *XGRAPH_SUFFIXES):
        suffix = _sniff(path)
    if suffix == ".json":
        return records_frame(read_records(path))
    if suffix in (".csv", ".parquet"):
        return _read_table(path, suffix)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not lat_ctx output: not UTF-8 text ({e})") from None
    try:
        return read_xgraph(text)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


# Read as text whatever they look like: a placement or a kernel release is never a number.
_TEXT_COLUMNS = {name: str for name, spec in TABLE_COLUMNS.items() if spec.type == "str"}


def _read_table(path: Path, suffix: str) -> pd.DataFrame:
    pd = require("pandas", "ctxbench.load")
    try:
        if suffix == ".csv":
            df = pd.read_csv(path, dtype=_TEXT_COLUMNS)
        else:
            require("pyarrow", "reading .parquet", install="pyarrow")
            df = pd.read_parquet(path)
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a ctxbench table: not UTF-8 text ({e})") from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: not a ctxbench table: the file is empty") from None
    except (ValueError, OSError) as e:
        if isinstance(e, (FileNotFoundError, PermissionError, IsADirectoryError)):
            raise
        raise ValueError(f"{path}: not a ctxbench table: {e}") from None
    try:
        check_table(df)
    except Bad as e:
        if e.row is None:
            raise ValueError(f"{path}: {e}") from None
        at = f"line {_csv_line(path, e.row)}" if suffix == ".csv" else f"row {e.row}"
        raise ValueError(f"{path}: {at}: {e}") from None
    return df


def _csv_line(path: Path, row: int) -> int:
    """The line a CSV data row (0-based, as pandas counts them: blank lines skipped) starts on."""
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        start, seen = 1, -1  # the header is row -1
        for fields in reader:
            if fields:
                if seen == row:
                    return start
                seen += 1
            start = reader.line_num + 1
    return start


result.register_writer(save)
