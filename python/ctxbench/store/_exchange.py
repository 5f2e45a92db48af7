"""What goes into the store from files, and out of it into files: result files and the run
history files of earlier versions imported (so that the runs users already saved become a
series), and the stored runs exported as a table (CSV, Parquet) or a results document
(JSON) any ctxbench command reads."""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from pathlib import Path
from typing import Any

from .._format import plain
from . import _rows
from ._store import Store

# An old history file (``_history_file``): runs-<16 hex>.jsonl, one run of a point a line.
HISTORY_NAME = re.compile(r"runs-([0-9a-f]{16})\.jsonl")
MAX_LINE = 512
MAX_HISTORY_BYTES = 64 << 20
# The range of each numeric field of a history line.
_RANGES = {
    "t": (0.0, math.inf),
    "y": (-30.0, 30.0),  # ln of µs: 1e-13 to 1e13
    "s": (1e-6, 1.0),
    "l": (0.0, 1e4),
    "st": (0.0, 1.0),
}


def _refuse_constant(name: str) -> None:
    raise ValueError(name)


# A line's fields: when, the point's key, ln figure, relative error, words, load, steal.
FIELDS = ("t", "p", "y", "s", "w", "l", "st")


def parse_history_line(line: bytes, now: float) -> dict[str, Any] | str:
    """The run a history line holds, or why it is not one of ours."""
    if len(line) > MAX_LINE:
        return f"longer than {MAX_LINE} bytes"
    try:
        rec = json.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError:
        return "not UTF-8"
    except (ValueError, RecursionError):
        return "not JSON"
    if not isinstance(rec, dict):
        return "not a JSON object"
    unknown = sorted(set(rec) - set(FIELDS))
    if unknown:
        return f"unknown field {unknown[0][:20]!r}"
    for key, (low, high) in _RANGES.items():
        if key not in rec and key in ("t", "y", "s"):
            return f"field {key!r} missing"
        v = rec.get(key)
        if v is None and key in ("l", "st"):
            continue
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not low <= v <= high:
            return f"field {key!r}: {str(v)[:24]} is not a number in [{low:g}, {high:g}]"
    if rec["t"] > now + _rows.FUTURE_S:
        return "field 't': in the future"
    p, w = rec.get("p"), rec.get("w")
    if not (isinstance(p, str) and len(p) == 16 and all(c in "0123456789abcdef" for c in p)):
        return "field 'p': not a point id"
    if w is not None and not (isinstance(w, str) and len(w) <= _rows.MAX_LABEL and w.isprintable()):
        return "field 'w': not a point's settings"
    return {k: rec.get(k) for k in FIELDS}


def _history_rows(path: Path, meta: dict[str, Any]) -> list[_rows.RowSet]:
    """An old history file's runs as row sets of this machine (one per line: a line is one
    point of one run), of this kernel and build where the file's name says it was theirs.
    Any line not ours refuses the file, naming it and the line."""
    from .. import files

    with files.open_regular(path) as f:
        data = f.read(MAX_HISTORY_BYTES + 1)
    if len(data) > MAX_HISTORY_BYTES:
        raise ValueError(f"{plain(path)}: longer than {MAX_HISTORY_BYTES >> 20} MiB")
    digest = HISTORY_NAME.fullmatch(path.name)[1]  # type: ignore[index]
    parts = (meta.get(k) for k in ("hostname", "cpu_model", "kernel", "ctxbench_version"))
    ours = digest == _rows.digest(*parts)
    machine = _rows.machine_of({"metadata": meta})
    now = time.time()
    sets = []
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        run = parse_history_line(line, now)
        if isinstance(run, str):
            raise ValueError(f"{plain(path)}: line {n}: {run}: not a ctxbench history line")
        key = hashlib.sha256(line).hexdigest()
        row = {"run_key": f"history-{key[:32]}", "time": float(run["t"]), "machine": machine,
               "kernel": meta.get("kernel") if ours else None,
               "version": meta.get("ctxbench_version") if ours else None, "kind": "history",
               "runnable_per_cpu": run["l"], "steal": run["st"], "source": "imported"}  # fmt: skip
        point = {"point_id": run["w"] or f"(point {run['p']})", "point_key": run["p"],
                 "value_us": math.exp(run["y"]), "ln_value": float(run["y"]),
                 "rel_se": float(run["s"])}  # fmt: skip
        sets.append(_rows.RowSet(row, [point]))
    return sets


def import_files(s: Store, paths: list[Path], labels: dict[str, str]) -> list[tuple[Path, int]]:
    """Keeps every run of each file (a results document, or a history file of an earlier
    ctxbench: ``runs-*.jsonl``) with ``labels``; per file, the point rows added (runs kept
    before are not added twice). A file not ours is a ValueError naming it, and nothing of
    it is kept."""
    from ..api import result_metadata
    from ..result import load_results

    meta: dict[str, Any] | None = None
    out = []
    for path in paths:
        if HISTORY_NAME.fullmatch(path.name):
            meta = meta or result_metadata()
            sets = _history_rows(path, meta)
            for rows in sets:
                rows.labels = dict(labels)
            out.append((path, s.add(sets)))
        else:
            results = load_results(path)
            out.append((path, s.keep(results, labels, source="imported")))
    return out


def table(s: Store, labels: dict[str, str] | None) -> Any:
    """Every stored point of every run (carrying ``labels``) as one frame: the run's
    columns, the point's figures, each label as a ``label.<key>`` column."""
    from ..frame import require

    pd = require("pandas", "ctxbench store export")
    rows = []
    for run in s.runs(labels):
        marks = {f"label.{k}": v for k, v in run.pop("labels").items()}
        for point in s.run_points(run["run_id"]):
            instances = point.pop("instances_us")
            rows.append({**run, **point, "instances_us": json.dumps(instances), **marks})
    return pd.DataFrame(rows)


def export(s: Store, path: Path, fmt: str, labels: dict[str, str] | None) -> int:
    """Writes the stored runs (carrying ``labels``) to ``path`` as ``fmt``: ``json`` a
    results document of their records, ``csv`` or ``parquet`` a table (``table``); the
    runs written. A run kept without its record (by a v1 store, or from a history file) is
    in the tables only."""
    from .. import files

    runs = s.runs(labels)
    if fmt == "json":
        records = [r for r in s.records([run["run_id"] for run in runs]) if r is not None]
        files.write_records(records, path)
        return len(records)
    frame = table(s, labels)
    if fmt == "csv":
        # Cells a spreadsheet would run as formulas (a label's text) are neutralised.
        text = files._text_cells(frame, files._neutralised).to_csv(index=False)
        files.write_atomically(path, lambda f: f.write(text.encode("utf-8")))
    elif fmt == "parquet":
        files.write_atomically(path, lambda f: frame.to_parquet(f, index=False))
    else:
        raise ValueError(f"--format: expected csv, parquet or json, got {fmt!r}")
    return len(runs)
