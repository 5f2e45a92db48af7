"""A result as the store keeps it: one row set per run (see ``_schema``), read from the
result's own fields and metadata; nothing here measures."""

from __future__ import annotations

import calendar
import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

KINDS = ("ring", "pingpong")
# A matrix run: kept whole (its record), with no point rows.
MATRIX = "matrix"
# A user's label: a key as a Python name is spelled (lower case), a value of printable text.
LABEL_KEY = re.compile(r"[a-z][a-z0-9_.-]{0,39}")
MAX_VALUE = 200
# Labels every run carries, which a user's label may not replace.
OWN_LABELS = ("machine", "boot", "version")


# A point's words (``point``) are cut to this many characters.
MAX_LABEL = 200
# A run stamped later than now by more than this (a clock set back, or a line not ours) is
# left out: it would never age out.
FUTURE_S = 300.0


def digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:16]


def point(identity: str) -> tuple[str, str]:
    """A point's key (the run history's id) and its settings in words, from its canonical
    identity (the core's ``point_id``: ``key=value`` pairs sorted by key). The key is the
    digest of those pairs, as it was before the core wrote them."""
    pairs = _PAIR.split(identity)
    words = " ".join(p for p in pairs if not p.endswith(("=None", "=False")))
    label = words if len(words) <= MAX_LABEL else words[: MAX_LABEL - 3] + "..."
    return digest(*pairs), label


# Where one pair of an identity ends: a space before the next ``key=`` (a CPU list such as
# ``placement=[0, 1]`` holds spaces of its own).
_PAIR = re.compile(r" (?=[a-z_]+=)")


def check_label(key: object, value: object) -> tuple[str, str]:
    """A label ``key=value`` as the store keeps it; ValueError naming what is wrong."""
    if not isinstance(key, str) or not LABEL_KEY.fullmatch(key):
        raise ValueError(
            f"label key {str(key)[:40]!r}: expected a lower-case name of 1 to 40 letters, "
            "digits, '_', '.' or '-', starting with a letter (e.g. commit, kernel)"
        )
    if key in OWN_LABELS:
        raise ValueError(
            f"label key {key!r}: the store sets it for every run ({', '.join(OWN_LABELS)})"
        )
    if not isinstance(value, str) or not 0 < len(value) <= MAX_VALUE or not value.isprintable():
        raise ValueError(
            f"label {key}={str(value)[:40]!r}: expected 1 to {MAX_VALUE} printable characters"
        )
    return key, value


def parse_label(text: str) -> tuple[str, str]:
    """``k=v`` (``--label``) as a checked label; ValueError naming what is wrong."""
    key, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"label {text[:40]!r}: expected key=value, e.g. commit=abc123")
    return check_label(key.strip(), value)


def check_labels(labels: Any) -> dict[str, str]:
    if labels is None:
        return {}
    if not isinstance(labels, dict):
        raise TypeError(f"labels: expected a dict of str to str, got {type(labels).__name__}")
    return dict(check_label(k, v) for k, v in labels.items())


def machine_of(result: Any) -> str:
    """The machine a result was measured on: the hash of its installation's machine-id
    (``metadata.machine_identity``'s first part), which outlives reboots and kernel changes,
    so that a series spans them (the boot and kernel are the run's ``boot`` and ``kernel``).
    Results without one: a hash of the hostname and CPU model."""
    meta = _metadata(result)
    machine = meta.get("machine")
    if isinstance(machine, str) and machine:
        return machine.split("-", 1)[0]
    parts = "\x1f".join(str(meta.get(k)) for k in ("hostname", "cpu_model"))
    return hashlib.sha256(f"ctxbench:{parts}".encode()).hexdigest()[:8]


def _metadata(result: Any) -> dict[str, Any]:
    meta = result.get("metadata") if isinstance(result, dict) else getattr(result, "metadata", {})
    return meta if isinstance(meta, dict) else {}


@dataclass
class RowSet:
    """One run: its ``runs`` row, its points' rows (a matrix: its ``matrices`` row), its
    labels and its record."""

    run: dict[str, Any]
    points: list[dict[str, Any]]
    labels: dict[str, str] = field(default_factory=dict)
    record: bytes | None = None
    matrix: dict[str, Any] | None = None


def _started(meta: dict[str, Any]) -> float:
    date = meta.get("date")
    try:
        return float(calendar.timegm(time.strptime(str(date), "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return time.time()


def _number(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def run_row(result: Any, record: bytes, source: str, at: Any,
            steal: float | None, started: float | None) -> dict[str, Any]:  # fmt: skip
    meta = _metadata(result)
    boot = str(meta.get("machine", "")).partition("-")[2] or None
    loads = meta.get("loadavg")
    key = meta.get("run_id")
    return {
        "run_key": key if isinstance(key, str) and key else hashlib.sha256(record).hexdigest(),
        "time": started if started is not None else _started(meta),
        "machine": machine_of(result),
        "kernel": meta.get("kernel"),
        "boot": boot,
        "version": meta.get("ctxbench_version"),
        "kind": result.kind,
        "runnable_per_cpu": at.load if at is not None else _number(meta.get("runnable_per_cpu")),
        "loadavg": _number(loads[0]) if isinstance(loads, list) and loads else None,
        "steal": steal,
        "observer": getattr(result, "counters", None),
        "source": source,
    }


def _instances(column: np.ndarray, block: int, shape: Any) -> list[float]:
    """Each ring instance's median of one point's samples (NaN below its last repetition)."""
    values = column[~np.isnan(column)]
    if values.size == 0:
        return []
    if shape is None or len(shape) == 0:
        return [float(np.median(values))]
    ends = np.cumsum(np.asarray(shape, dtype=np.int64)) * max(1, int(block))
    parts = np.split(values, ends[ends < values.size])
    return [float(np.median(p)) for p in parts if p.size]


def _stat(stats: dict[str, Any], name: str, i: int) -> Any:
    values = stats.get(name)
    if values is None:
        return None
    try:
        value = values[i]
    except (IndexError, TypeError, KeyError):
        return None
    return value.item() if hasattr(value, "item") else value


# The point columns of the store's rows of its own; every other per-point field of a kind's
# record (``schema.RECORDS``, the core's ``_core.RECORDS``) is kept in ``figures``.
_OWN = ("point_id", "latency_us", "switches_per_hop", "samples_us")


def _per_point(kind: str) -> tuple[list[str], list[str]]:
    """The fields of a kind's record that hold one value per point (a ring's arrays over its
    points; a ping-pong's scalars, its one point, but not its settings, which its point id
    holds), and those of its ``stats``, as the record declares them."""
    from ..schema import RECORDS

    fields = RECORDS[kind]
    one = ("points",) if kind == "ring" else ()
    scalar = ("int", "float", "str", "bool")
    top = [n for n, f in fields.items() if f.shape == one and f.type in scalar
           and n not in _OWN and not (kind != "ring" and f.config)]  # fmt: skip
    # A ping-pong's stats are a ring's, of one point (its record leaves them undeclared).
    stats = fields["stats"].fields or RECORDS["ring"]["stats"].fields or {}
    own = ("ci_low", "ci_high")  # columns of their own, per switch as value_us is
    listed = [n for n, f in stats.items() if f.shape == ("points",) and f.type in scalar]
    return top, [n for n in listed if n not in own]


def _point(pid: str, value: float, se: Any, stats: dict[str, Any], i: int, **more: Any) -> dict:
    rel = _number(se)
    rel = max(rel / value, 1e-6) if rel is not None and 0 < rel <= value else None
    factor = more.pop("per_value", 1.0)
    figures = {k: v for k, v in more.pop("figures", {}).items() if v is not None}
    for k in more.pop("stats_fields"):
        v = _json_safe(_stat(stats, k, i))
        if v is not None:
            figures.setdefault(k, v)
    return {
        "point_id": pid,
        "point_key": point(pid)[0],
        "value_us": value,
        "ln_value": math.log(value),
        "rel_se": rel,
        "ci_low": _scaled(_stat(stats, "ci_low", i), factor),
        "ci_high": _scaled(_stat(stats, "ci_high", i), factor),
        **more,
        "figures": json.dumps(figures, sort_keys=True),
    }


def _scaled(value: Any, factor: float) -> float | None:
    x = _number(value)
    return None if x is None else x * factor


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _seq(value: Any) -> list[Any]:
    return [] if value is None else list(value)


def _ring_points(r: Any, ids: list[str] | None) -> list[dict[str, Any]]:
    procs = np.asarray(r.procs).tolist()
    ids = list(ids if ids else _seq(getattr(r, "point_id", None)))
    if len(ids) != len(procs):
        ids = [_words(r, procs=p, size_kb=r.size_kb, parallel=r.parallel) for p in procs]
    samples = np.asarray(r.samples_us, dtype=np.float64).reshape(-1, len(procs))
    blocks = _seq(getattr(r, "block", None))
    shapes = _seq(getattr(r, "instance_blocks", None))
    se = r.stats.get("se_within")
    top, stats_fields = _per_point("ring")
    rows = []
    for i, pid in enumerate(ids):
        value = _number(r.latency_us[i])
        if value is None or value <= 0:
            continue  # below the method's resolution: no figure a series can take
        inst = _instances(
            samples[:, i],
            blocks[i] if i < len(blocks) else 1,
            shapes[i] if i < len(shapes) else None,
        )
        hop = np.asarray(r.switches_per_hop, dtype=np.float64)
        rows.append(_point(
            pid, value, None if se is None else se[i], r.stats, i,
            switches_per_hop=_number(hop[i]) if i < hop.size else None,
            instances_us=json.dumps(inst),
            figures={k: _json_safe(_item(getattr(r, k, None), i)) for k in top},
            stats_fields=stats_fields,
        ))  # fmt: skip
    return rows


def _pingpong_points(r: Any, ids: list[str] | None) -> list[dict[str, Any]]:
    pid = ids[0] if ids else _words(r, procs=2)
    value = _number(r.usecs_per_switch)
    if value is None or value <= 0:
        return []
    stats = r.stats or {}
    se = stats.get("se_within")
    samples = np.asarray(r.samples_us, dtype=np.float64) / 2
    inst = _instances(samples, r.block or 1, _seq(getattr(r, "instance_blocks", None)))
    op_se = None if se is None or len(se) == 0 else se[0]
    top, stats_fields = _per_point("pingpong")
    return [_point(
        pid, value, None if op_se is None else op_se / 2, stats, 0,
        switches_per_hop=None, instances_us=json.dumps(inst),
        per_value=0.5,  # its interval is of a round trip, two switches: value_us is one
        figures={k: _json_safe(_item(getattr(r, k, None), None)) for k in top},
        stats_fields=stats_fields,
    )]  # fmt: skip


def _item(value: Any, i: int | None) -> Any:
    """A field's value of point ``i`` (None: a scalar), as JSON holds it; None where absent."""
    if value is None:
        return None
    if i is not None:
        try:
            value = value[i]
        except (IndexError, TypeError, KeyError):
            return None
    value = value.item() if hasattr(value, "item") else value
    return value if isinstance(value, (int, float, str, bool)) else None


def _words(r: Any, **more: Any) -> str:
    """A point id for a result saved before the core wrote its own: its settings as the
    core's id spells them (key=value sorted by key), with ``kind``."""
    pairs = {"kind": r.kind, "engine": r.engine, "transport": r.transport,
             "placement": r.placement, **more}  # fmt: skip
    return " ".join(f"{k}={pairs[k]}" for k in sorted(pairs))


def _matrix_row(result: Any) -> dict[str, Any]:
    """A matrix's ``matrices`` row: its size and the median of its cells."""
    cells = np.asarray(result.latency_us, dtype=np.float64)
    finite = cells[np.isfinite(cells)]
    return {
        "cpus": int(np.asarray(result.cpus).size),
        "cells": int(cells.size),
        "engine": result.engine,
        "transport": result.transport,
        "median_us": float(np.median(finite)) if finite.size else None,
    }


def row_set(result: Any, record: bytes, *, source: str, labels: dict[str, str],
            ids: list[str] | None = None, at: Any = None,
            steal: float | None = None, started: float | None = None) -> RowSet | None:  # fmt: skip
    """The row set of one result; None for a kind the store does not keep (an A/B result:
    its two sides are not one run of a point). A matrix is a run of no points with its
    ``matrices`` row."""
    if result.kind == MATRIX:
        run = run_row(result, record, source, at, steal, started)
        return RowSet(run, [], dict(labels), matrix=_matrix_row(result))
    if result.kind not in KINDS:
        return None
    points = (_ring_points if result.kind == "ring" else _pingpong_points)(result, ids)
    run = run_row(result, record, source, at, steal, started)
    test = _metadata(result).get("test")  # the pytest plugin's test id
    if isinstance(test, str) and test and "test" not in labels:
        labels = {**labels, "test": test[:MAX_VALUE]}
    return RowSet(run, points, labels)
