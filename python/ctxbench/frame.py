"""Tidy tables: one row per point (``POINT_KEY``) and repetition.

pandas is optional (the ``analysis`` extra); it is imported only when a frame is built, so
``import ctxbench`` works without it.
"""

from __future__ import annotations

import html
import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from .schema import CONFIG, RING

if TYPE_CHECKING:
    import pandas as pd

# The columns that name one measured point; a row adds the repetition. "benchmark" keeps a
# ping-pong (two parties, size 0) apart from a ring of two.
POINT_KEY: tuple[str, ...] = (
    "benchmark",
    "engine",
    "transport",
    "placement",
    "size_kb",
    "parallel",
    "procs",
)
METADATA_COLUMNS: tuple[str, ...] = (
    "kernel",
    "cpu_model",
    "hypervisor",
    "ctxbench_version",
    "date",
)
# Set on fleet runs (ctxbench.fleet): who measured the point, on which machine, and when.
FLEET_COLUMNS: tuple[str, ...] = ("host", "worker", "machine", "started", "finished")
# Per-point arrays a ring result repeats on its rows: those declared ``column=True`` in
# ``schema.RING``.
POINT_COLUMNS: tuple[str, ...] = tuple(name for name, spec in RING.items() if spec.column)
# What was asked (``config=True``), repeated on every row, beyond the point's key above.
CONFIG_COLUMNS: tuple[str, ...] = tuple(name for name in CONFIG if name not in POINT_KEY)


def require(module: str, feature: str, install: str = "'ctxbench[analysis]'") -> Any:
    """Import an optional dependency, or say what to install to get it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{feature} needs {module}: pip install {install}") from None


def _metadata_columns(metadata: dict[str, Any]) -> dict[str, Any]:
    columns = {k: metadata.get(k) for k in METADATA_COLUMNS}
    # Set by the pytest plugin, so results can be traced back to the test that made them.
    if "test" in metadata:
        columns["test"] = metadata["test"]
    # The machine's cache sizes, so a plot of the frame can mark them (plot.sizes).
    cache = metadata.get("cache_kb")
    if isinstance(cache, dict):
        for name, kb in cache.items():
            columns[f"cache_{name}_kb"] = kb
    columns.update({k: metadata[k] for k in FLEET_COLUMNS if k in metadata})
    return columns


def _ring_columns(r: Any) -> dict[str, Any]:
    samples = np.asarray(r.samples_us, dtype=np.float64)
    reps, npoints = samples.shape
    # Point-major rows: each point's repetitions together, as a reader scans the table.
    point = np.repeat(np.arange(npoints), reps)
    procs = np.asarray(r.procs)
    stats = r.stats
    columns: dict[str, Any] = {
        "benchmark": "ring",
        "engine": r.engine,
        "transport": r.transport,
        "placement": r.placement,
        "size_kb": r.size_kb,
        "parallel": r.parallel,
        "procs": procs[point],
        "repetition": np.tile(np.arange(reps), npoints),
        "value": samples.T.ravel(),
        "unit": "us",
        "raw_us": np.asarray(r.raw_samples_us, dtype=np.float64).T.ravel(),
        "overhead_us": np.asarray(r.overhead_samples_us, dtype=np.float64).T.ravel(),
        "latency_us": np.asarray(r.latency_us)[point],
        "min_us": np.asarray(r.min_us)[point],
        "cv": np.asarray(stats["cv"])[point],
        "ci_low": np.asarray(stats["ci_low"])[point],
        "ci_high": np.asarray(stats["ci_high"])[point],
        "verdict": np.asarray(stats["verdict"], dtype=object)[point],
        "below_resolution": np.asarray(r.below_resolution, dtype=bool)[point],
    }
    for name in POINT_COLUMNS:
        values = getattr(r, name, None)
        if values is not None and len(values) == npoints:
            columns[name] = np.asarray(values)[point]
    for name in CONFIG_COLUMNS:
        value = getattr(r, name, None)
        # An empty numeric cell is NaN, as a table file reads it back.
        numeric = RING[name].type in ("int", "float")
        columns[name] = np.nan if value is None and numeric else value
    # A point that stopped early has NaN where it made no repetition: no row, not a gap.
    made = ~np.isnan(columns["value"])
    if not made.all():
        columns = {
            k: v[made] if isinstance(v, np.ndarray) and v.shape[:1] == made.shape else v
            for k, v in columns.items()
        }
    return columns


def _pingpong_columns(r: Any) -> dict[str, Any]:
    switch = float(r.usecs_per_switch)
    return {
        "benchmark": "pingpong",
        "engine": getattr(r, "engine", "thread" if r.threads else "process"),
        "transport": r.transport,
        "placement": getattr(r, "placement", "default"),
        # Two parties bouncing a token with no workload: a ring of two at size 0.
        "size_kb": 0,
        "parallel": 1,
        "procs": [2],
        "repetition": [0],
        "value": [switch],
        "unit": "us",
        "latency_us": switch,
        "min_us": switch,
        "usecs_per_op": float(r.usecs_per_op),
        "ops_per_sec": float(r.ops_per_sec),
    }


# How each kind of result becomes rows, by the ``kind`` every result (and record) names.
_COLUMNS = {"ring": _ring_columns, "pingpong": _pingpong_columns}


def _columns_of(result: Any) -> dict[str, Any]:
    columns = _COLUMNS.get(getattr(result, "kind", None))
    if columns is None:
        raise TypeError(f"expected a ctxbench result, got {type(result).__name__}")
    return columns(result)


def to_frame(result: Any) -> pd.DataFrame:
    """The tidy frame of one ring or ping-pong result: one row per sample.

    ``value`` is the net µs per switch of that repetition; the per-point summary
    (``latency_us``, ``min_us``, ``cv``, ``ci_low``, ``ci_high``, ``verdict``,
    ``below_resolution``) and the key metadata are repeated on every row of the point.
    """
    pd = require("pandas", "ctxbench.frame")
    columns = _columns_of(result)
    columns.update(_metadata_columns(getattr(result, "metadata", None) or {}))
    return pd.DataFrame(columns)


def concat(results: Iterable[Any]) -> pd.DataFrame:
    """One tidy frame from any mix of results and frames (columns missing in one are NaN)."""
    pd = require("pandas", "ctxbench.concat")
    frames = [r if isinstance(r, pd.DataFrame) else to_frame(r) for r in results]
    if not frames:
        return pd.DataFrame(columns=[*POINT_KEY, "repetition", "value", "unit"])
    return pd.concat(frames, ignore_index=True)


def as_frame(data: Any) -> pd.DataFrame:
    """A frame as is, a result or a list of results/frames concatenated."""
    pd = require("pandas", "ctxbench")
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, (list, tuple)):
        return concat(data)
    return to_frame(data)


def _machine_line(r: Any) -> str:
    """CPU, kernel, placement and hypervisor in one line: what tells two results apart."""
    meta = getattr(r, "metadata", None) or {}
    hypervisor = meta.get("hypervisor")
    if hypervisor is True:
        vendor = meta.get("hypervisor_vendor")
        where = f"VM ({vendor})" if vendor else "VM"
    elif hypervisor is False:
        where = "bare metal"
    else:
        where = "hypervisor unknown"
    parts = [
        str(meta.get("cpu_model") or "CPU unknown"),
        f"{meta.get('cpu_count') or '?'} CPUs",
        f"Linux {meta['kernel']}" if meta.get("kernel") else "kernel unknown",
        f"placement {r.placement}",
        where,
    ]
    return " · ".join(parts)


def _metadata_html(r: Any) -> str:
    """The compact machine line, and every metadata entry folded under it."""
    from .metadata import format_metadata

    meta = getattr(r, "metadata", None) or {}
    esc = html.escape
    folded = (
        f"<details><summary>all metadata ({len(meta)} entries)</summary>"
        f"<pre>{esc(format_metadata(meta))}</pre></details>"
        if meta
        else ""
    )
    return f"<p>{esc(_machine_line(r))}</p>{folded}"


def result_html(r: Any) -> str:
    """A ring result for Jupyter: the table of points, one line naming the machine (CPU,
    kernel, placement, hypervisor) and the full metadata folded (``<details>``)."""
    esc = html.escape
    caption = (
        f"{esc(r.engine)}/{esc(r.transport)}, size={r.size_kb}k, "
        f"placement={esc(str(r.placement))}, parallel={r.parallel}, "
        f"ovr={r.overhead_us:.2f} µs, "
        + (
            f"{r.repetitions} repetitions"
            if r.repetitions is not None
            else f"precision ±{r.precision:.0%}, up to {r.max_time} s a point"
        )
    )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("procs", "latency µs", "min µs", "raw µs", "CV %", "verdict", "flagged")
    )
    rows = []
    for p, lat, low, raw, cv, verdict, flagged in zip(
        r.procs.tolist(),
        r.latency_us.tolist(),
        r.min_us.tolist(),
        r.raw_us.tolist(),
        np.asarray(r.stats["cv"]).tolist(),
        r.stats["verdict"],
        r.below_resolution.tolist(),
    ):
        rows.append(
            f"<tr><td>{p}</td><td>{lat:.2f}</td><td>{low:.2f}</td><td>{raw:.2f}</td>"
            f"<td>{100 * cv:.1f}</td><td>{esc(str(verdict))}</td>"
            f"<td>{'below resolution' if flagged else ''}</td></tr>"
        )
    return (
        f"<div><table><caption>{caption}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>{_metadata_html(r)}</div>"
    )
