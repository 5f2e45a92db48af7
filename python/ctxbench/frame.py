"""Tidy tables: one row per point (``POINT_KEY``) and repetition; for a matrix, one row per
cell (a point of two participants on the cell's two CPUs) and repetition.

pandas is optional (the ``analysis`` extra); it is imported only when a frame is built, so
``import ctxbench`` works without it.
"""

from __future__ import annotations

import html
import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _core, report
from ._format import us
from ._table_schema import MATRIX_CELL_ARRAYS, POINT_KEY, TABLE_REQUIRED
from .metadata import COMPARED, FLEET_FIELDS, column_value
from .schema import CONFIG, INTERFERENCE_ASKED, PINGPONG, RING, percentile_column

if TYPE_CHECKING:
    import pandas as pd

# The metadata each row repeats: what tells machines apart (``metadata.COMPARED``), and when.
METADATA_COLUMNS: tuple[str, ...] = (*COMPARED, "date")
# Per-point arrays a ring result repeats on its rows: those declared ``column=True`` in
# ``schema.RING``; a ping-pong's figures, in ``schema.PINGPONG``.
POINT_COLUMNS: tuple[str, ...] = tuple(name for name, spec in RING.items() if spec.column)
PINGPONG_COLUMNS: tuple[str, ...] = tuple(n for n, spec in PINGPONG.items() if spec.column)
# What was asked (``config=True``), repeated on every row, beyond the point's key above.
CONFIG_COLUMNS: tuple[str, ...] = tuple(name for name in CONFIG if name not in POINT_KEY)


def require(module: str, feature: str, install: str = "'ctxbench[analysis]'") -> Any:
    """Import an optional dependency, or say what to install to get it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{feature} needs {module}: pip install {install}") from None


def _metadata_columns(metadata: dict[str, Any]) -> dict[str, Any]:
    columns = {k: column_value(k, metadata.get(k)) for k in METADATA_COLUMNS}
    # Which measuring call made the rows: several runs of one point compare by their spread.
    if "run_id" in metadata:
        columns["run_id"] = metadata["run_id"]
    # How busy the machine was as the run started: a comparison of one run a side reads it.
    if metadata.get("runnable_per_cpu") is not None:
        columns["runnable_per_cpu"] = metadata["runnable_per_cpu"]
    # Set by the pytest plugin, so results can be traced back to the test that made them.
    if "test" in metadata:
        columns["test"] = metadata["test"]
    # The machine's cache sizes, so a plot of the frame can mark them (plot.sizes).
    cache = metadata.get("cache_kb")
    if isinstance(cache, dict):
        for name, kb in cache.items():
            columns[f"cache_{name}_kb"] = kb
    # Set on fleet runs: who measured the point, on which machine, and when.
    columns.update({k: metadata[k] for k in FLEET_FIELDS if k in metadata})
    return columns


def _levels(r: Any, reps: int, npoints: int) -> tuple[np.ndarray, np.ndarray]:
    """Each repetition's block and ring instance, point-major as the rows (the levels of the
    variance model). Results from before they were recorded: blocks of four in precision
    mode, of one with a fixed count, all in one instance."""
    fallback = 1 if getattr(r, "repetitions", None) else 4
    sizes = getattr(r, "block", None)
    if sizes is None or len(sizes) != npoints:
        sizes = [fallback] * npoints
    shapes = getattr(r, "instance_blocks", None)
    if shapes is None or len(shapes) != npoints:
        shapes = [None] * npoints
    block, instance = [], []
    for size, shape in zip(np.asarray(sizes, dtype=np.int64).tolist(), shapes):
        b = np.arange(reps) // max(1, size)
        ends = np.cumsum(np.asarray(shape if shape is not None else [reps], dtype=np.int64))
        block.append(b)
        instance.append(np.searchsorted(ends, b, side="right"))
    return np.concatenate(block), np.concatenate(instance)


def _ring_columns(r: Any) -> dict[str, Any]:
    samples = np.asarray(r.samples_us, dtype=np.float64)
    reps, npoints = samples.shape
    block, instance = _levels(r, reps, npoints)
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
        "block": block,
        "instance": instance,
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
    # The point's standard error and the run level the run knew of (results from before the
    # variance model have none).
    for name in ("se", "sd_run", "runs_seen"):
        if name in stats:
            columns[name] = np.asarray(stats[name], dtype=np.float64)[point]
    columns.update(_repeated(r, POINT_COLUMNS, point, npoints))
    for name, values in (getattr(r, "hop_percentiles_us", None) or {}).items():
        columns[percentile_column("hop", name)] = np.asarray(values, dtype=np.float64)[point]
    for name in CONFIG_COLUMNS:
        columns[name] = _cell(getattr(r, name, None), RING[name].type)
    columns.update(_interference_columns(getattr(r, "interference", None), point))
    return _made(columns)


def _repeated(r: Any, names: Iterable[str], at: np.ndarray, points: int) -> dict[str, Any]:
    """Each per-point (per-cell) array of ``names`` repeated on its rows (``at``: each row's
    point); one an older file lacks (empty) is no column."""
    columns = {}
    for name in names:
        values = getattr(r, name, None)
        if values is not None and len(values) == points:
            columns[name] = np.asarray(values)[at]
    return columns


def _cell(value: Any, kind: str) -> Any:
    """A record's scalar as its table cell: an empty number NaN, as a table file reads it
    back; a figure a float (a file may hold 1 for 1.0)."""
    if value is None:
        return np.nan if kind in ("int", "float") else None
    return float(value) if kind == "float" else value


def _interference_columns(asked: Any, point: np.ndarray) -> dict[str, Any]:
    """The neighbours asked, repeated on every row, and what they achieved per point: the
    hogs', neighbour rings' and queued tasks' mean duty, how many queued tasks were still
    runnable, the thrasher's resident KiB (``schema.INTERFERENCE_ASKED``). A file from
    before queued tasks asked none."""
    if not asked:
        return {}
    points = len(asked["span_s"])

    def mean(lists: Any) -> np.ndarray:
        return np.array([np.mean(v) if len(v) else np.nan for v in lists], dtype=np.float64)

    per_point = {
        "hog_duty": mean(asked["hog_duty"]),
        "ring_duty": mean(asked["ring_duty"]),
        "queued_duty": mean(asked.get("queued_duty", [[]] * points)),
        "queued_runnable": np.asarray(asked.get("queued_runnable", [0] * points), np.int64),
        "thrash_resident_kb": np.asarray(asked["thrash_resident_kb"], dtype=np.int64),
    }
    columns = {f"interference_{k}": asked.get(k, 0) for k in INTERFERENCE_ASKED}
    columns.update({f"interference_{k}": v[point] for k, v in per_point.items()})
    return columns


def _made(columns: dict[str, Any]) -> dict[str, Any]:
    """The rows of repetitions that were made: a point that stopped early has NaN where it
    made no repetition, which is no row, not a gap."""
    made = ~np.isnan(columns["value"])
    if made.all():
        return columns
    return {
        k: v[made] if isinstance(v, np.ndarray) and v.shape[:1] == made.shape else v
        for k, v in columns.items()
    }


def _pingpong_columns(r: Any) -> dict[str, Any]:
    """One row per timed repetition, its value µs per switch (half a round trip); perf's
    fixed loop is one repetition."""
    samples = getattr(r, "samples_us", None)
    per_switch = (
        np.asarray(samples, dtype=np.float64) / 2
        if samples is not None and len(samples)
        else np.asarray([float(r.usecs_per_switch)])
    )
    n = len(per_switch)
    size = int(getattr(r, "block", None) or 1)
    shape = getattr(r, "instance_blocks", None)
    block = np.arange(n) // size
    ends = np.cumsum(np.asarray(shape if shape is not None and len(shape) else [n]))
    stats = getattr(r, "stats", None) or {}

    def point(name: str, default: Any = np.nan) -> Any:
        values = stats.get(name)
        return values[0] if values is not None and len(values) else default

    columns = {
        "benchmark": "pingpong",
        "engine": getattr(r, "engine", "thread" if r.threads else "process"),
        "transport": r.transport,
        "placement": getattr(r, "placement", "default"),
        # Two parties bouncing a token with no workload: a ring of two at size 0.
        "size_kb": 0,
        "parallel": 1,
        "procs": np.full(n, 2),
        "repetition": np.arange(n),
        "block": block,
        "instance": np.searchsorted(ends, block, side="right"),
        "value": per_switch,
        "unit": "us",
        "latency_us": float(r.usecs_per_switch),
        "min_us": float(per_switch.min()),
        "ci_low": point("ci_low") / 2,
        "ci_high": point("ci_high") / 2,
        "se": point("se") / 2,
        "sd_run": point("sd_run"),
        "runs_seen": point("runs_seen", 0.0),
        "verdict": point("verdict", None),
    }
    for name in PINGPONG_COLUMNS:
        columns[name] = _cell(getattr(r, name, None), PINGPONG[name].type)
    return columns


def _where(topology: dict[str, Any], cpus: np.ndarray) -> dict[str, np.ndarray]:
    """Package, LLC, core, node and rank in the plot order (-1: unknown) of each of ``cpus``."""
    known = np.asarray(topology["cpus"], dtype=np.int64)
    at = {int(c): i for i, c in enumerate(known)}
    index = np.array([at.get(int(c), -1) for c in cpus], dtype=np.int64)
    out = {}
    for name in ("package", "llc", "core", "node"):
        values = np.append(np.asarray(topology[name], dtype=np.int64), -1)
        out[name] = values[index]
    rank = {int(c): r for r, c in enumerate(np.asarray(topology["order"]))}
    out["rank"] = np.array([rank.get(int(c), -1) for c in cpus], dtype=np.int64)
    return out


def _placements(cpu_from: np.ndarray, cpu_to: np.ndarray) -> list[str]:
    """Each cell's placement as ``_core.placement_name`` names its CPU list, once per pair."""
    names: dict[tuple[int, int], str] = {}
    out = []
    for pair in zip(cpu_from.tolist(), cpu_to.tolist()):
        if pair not in names:
            names[pair] = _core.placement_name(list(pair))
        out.append(names[pair])
    return out


def _matrix_columns(r: Any) -> dict[str, Any]:
    samples = np.asarray(r.samples_us, dtype=np.float64).reshape(-1, len(r.cpu_from))
    reps, ncells = samples.shape
    # Cell-major rows: each cell's repetitions together.
    cell = np.repeat(np.arange(ncells), reps)

    def per_cell(values: Any) -> np.ndarray:
        return np.asarray(values)[cell]

    cpu_from, cpu_to = np.asarray(r.cpu_from), np.asarray(r.cpu_to)
    block, instance = _levels(r, reps, ncells)
    columns: dict[str, Any] = {
        "benchmark": "matrix",
        "engine": r.engine,
        "transport": r.transport,
        # The core's name of the cell's CPU list, so a cell reads like a ring point.
        "placement": per_cell(_placements(cpu_from, cpu_to)),
        "size_kb": r.size_kb,
        "parallel": 1,
        "procs": 2,
        "repetition": np.tile(np.arange(reps), ncells),
        "block": block,
        "instance": instance,
        "value": samples.T.ravel(),
        "unit": "us",
        "raw_us": np.asarray(r.raw_samples_us, dtype=np.float64).reshape(reps, -1).T.ravel(),
        "overhead_us": np.asarray(r.overhead_samples_us, dtype=np.float64)
        .reshape(reps, -1)
        .T.ravel(),
    }
    columns.update(_repeated(r, MATRIX_CELL_ARRAYS, cell, ncells))
    for end, cpus in (("from", cpu_from), ("to", cpu_to)):
        for what, values in _where(r.topology, cpus).items():
            columns[f"{what}_{end}"] = values[cell]
    kinds = r.topology.get("core_type") or []
    if any(kinds):  # a hybrid host: the kind of core at each end, part of the cell's class
        kind_of = dict(zip(np.asarray(r.topology["cpus"]).tolist(), kinds))
        for end, cpus in (("from", cpu_from), ("to", cpu_to)):
            columns[f"core_type_{end}"] = per_cell([kind_of.get(int(c), "") for c in cpus])
    for name, values in (getattr(r, "wake_us", None) or {}).items():
        columns[percentile_column("wake", name)] = per_cell(values)
    return _made(columns)


def _ab_columns(r: Any) -> dict[str, Any]:
    """One row per (round, side), A's rounds first: the side's point as a ring's rows name
    it (``benchmark`` what it measured), ``repetition`` the round, ``value`` its figure,
    ``side`` "a" or "b", whether it ran ``first`` in its round and when the round ended;
    the run's word and ratio repeated (``change``, ``ratio``, ``ratio_low``,
    ``ratio_high``). ``source`` "ab" says whose rows they are; rows of one side compare with
    ``ctxbench.compare`` as a point of a run."""
    n = len(r.a_us)
    rounds = np.arange(n)
    columns: dict[str, list[Any]] = {}
    for name, asked, values, first in (
        ("a", r.a, r.a_us, np.asarray(r.a_first, dtype=bool)),
        ("b", r.b, r.b_us, ~np.asarray(r.a_first, dtype=bool)),
    ):
        side = {
            "benchmark": np.full(n, asked["measure"], dtype=object),
            **{k: np.full(n, asked[k], dtype=object) for k in ("engine", "transport", "placement")},
            **{k: np.full(n, asked[k]) for k in ("size_kb", "parallel", "procs")},
            "repetition": rounds,
            "value": np.asarray(values, dtype=np.float64),
            "side": np.full(n, name, dtype=object),
            "first": first,
            "end_s": np.asarray(r.end_s, dtype=np.float64),
        }
        for k, v in side.items():
            columns.setdefault(k, []).append(v)
    out: dict[str, Any] = {k: np.concatenate(v) for k, v in columns.items()}
    out.update(
        unit="us",
        source="ab",
        change=r.verdict,
        ratio=float(r.ratio),
        ratio_low=float(r.ratio_low),
        ratio_high=float(r.ratio_high),
    )
    return out


# How each kind of result becomes rows, by the ``kind`` every result (and record) names.
_COLUMNS = {
    "ring": _ring_columns,
    "pingpong": _pingpong_columns,
    "matrix": _matrix_columns,
    "ab": _ab_columns,
}


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
        return pd.DataFrame(columns=list(TABLE_REQUIRED))
    return pd.concat(frames, ignore_index=True)


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
    """A ring result for Jupyter: the table of points, what the command line would say of
    it (``ctxbench.report``: how its points stopped, its warnings, the hints that apply), one
    line naming the machine (CPU, kernel, placement, hypervisor) and the full metadata
    folded (``<details>``)."""
    said = report.Lines()
    report.say(report.lines(r), said)
    esc = html.escape
    caption = (
        f"{esc(r.engine)}/{esc(r.transport)}, size={r.size_kb}k, "
        f"placement={esc(str(r.placement))}, parallel={r.parallel}, "
        f"ovr={us(r.overhead_us)} µs, "
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
            f"<tr><td>{p}</td><td>{us(lat)}</td><td>{us(low)}</td><td>{us(raw)}</td>"
            f"<td>{100 * cv:.1f}</td><td>{esc(str(verdict))}</td>"
            f"<td>{'below resolution' if flagged else ''}</td></tr>"
        )
    return (
        f"<div><table><caption>{caption}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>{said.html()}{_metadata_html(r)}</div>"
    )
