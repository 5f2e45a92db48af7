"""A matrix frame (``MatrixResult.to_frame``, or a loaded file) as numbers a reader scans: the
per-class summary and the matrix as text, rows = waker, in the topology's order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._core import RELATIONS
from ._format import plain
from ._table_schema import TABLE_ROWS
from .files import as_frame
from .frame import require

if TYPE_CHECKING:
    import pandas as pd

# The columns that tell two matrices apart in one frame: the machines of a fleet run, or the
# files `ctxbench plot` (or a user) labelled with a "run" column. The first one present.
MACHINE = ("machine", "host", "run")
# Text matrices wider than this many CPUs are not printed: the figure reads better.
TEXT_MAX_CPUS = 64


def cells(data: Any) -> pd.DataFrame:
    """One row per measured cell of a matrix frame (its first repetition's row), matrix rows
    only; with several passes, one row per pass."""
    df = as_frame(data)
    if "cpu_from" not in df.columns:
        raise ValueError("not a matrix: the rows have no cpu_from (measure with ctxbench.matrix)")
    missing = [c for c in TABLE_ROWS["matrix"] if c not in df.columns]
    if missing:
        raise ValueError(f"data: a matrix frame needs the column(s) {', '.join(missing)}")
    df = df[df["benchmark"] == "matrix"]
    keys = [c for c in (*_machines(df), "cpu_from", "cpu_to", "pass_index") if c in df.columns]
    return df.drop_duplicates(keys).reset_index(drop=True)


def _machines(df: pd.DataFrame) -> list[str]:
    return [c for c in MACHINE if c in df.columns][:1]


def _class_order(relation: str, distance: Any) -> tuple[int, float]:
    d = float(distance) if distance is not None and distance == distance else -1.0
    return (RELATIONS.index(relation) if relation in RELATIONS else len(RELATIONS), d)


def class_summary(data: Any) -> pd.DataFrame:
    """Per relation class (and NUMA distance, where there are several nodes; the kinds of
    core of waker and wakee on a hybrid host; per machine in a fleet frame): how many
    cells, and the median, lowest and highest of their medians, in µs per switch. Rows
    closest class first."""
    pd = require("pandas", "ctxbench matrix summaries")
    c = cells(data)
    if "numa_distance" not in c.columns:
        c = c.assign(numa_distance=-1)
    # On a hybrid host the kinds of core at each end are part of the class.
    kinds = [k for k in ("core_type_from", "core_type_to") if k in c.columns]
    keys = [*_machines(c), "relation", "numa_distance", *kinds]
    out = (
        c.groupby(keys, sort=False)["latency_us"]
        .agg(cells="size", median_us="median", min_us="min", max_us="max")
        .reset_index()
    )
    machine = keys[: len(_machines(c))]
    order = [
        (
            *(str(r[k]) for k in machine),
            *_class_order(r["relation"], r["numa_distance"]),
            *(str(r[k]) for k in kinds),
        )
        for _, r in out.iterrows()
    ]
    out = out.iloc[sorted(range(len(out)), key=lambda i: order[i])].reset_index(drop=True)
    return pd.DataFrame(out)


def grid(data: Any) -> tuple[list[int], np.ndarray]:
    """The CPUs in the topology's order and the matrix of median µs per switch (rows =
    waker, columns = wakee, the median over passes; NaN where not measured), of one
    machine's frame."""
    c = cells(data)
    rank = {}
    for end in ("from", "to"):
        for cpu, r in zip(c[f"cpu_{end}"], c[f"rank_{end}"]):
            rank[int(cpu)] = int(r)
    cpus = sorted(rank, key=lambda cpu: (rank[cpu], cpu))
    at = {cpu: i for i, cpu in enumerate(cpus)}
    m = np.full((len(cpus), len(cpus)), np.nan)
    medians = c.groupby(["cpu_from", "cpu_to"])["latency_us"].median()
    for (a, b), v in medians.items():
        m[at[int(a)], at[int(b)]] = v
    return cpus, m


def _table(rows: list[list[str]], left: int = 0) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(
            x.ljust(w) if i < left else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths))
        ).rstrip()
        + "\n"
        for r in rows
    )


def matrix_text(data: Any) -> str:
    """The matrix as text, rows = waker (``from``), columns = wakee, µs per switch with two
    decimals, ``.`` where a cell was not measured."""
    cpus, m = grid(data)
    if len(cpus) > TEXT_MAX_CPUS:
        return f"({len(cpus)} CPUs: too wide for text; draw it with --plot)\n"
    head = ["from\\to", *map(str, cpus)]
    body = [[str(a), *("." if np.isnan(v) else f"{v:.2f}" for v in row)] for a, row in zip(cpus, m)]
    return _table([head, *body], left=1)


def summary_text(data: Any) -> str:
    """``class_summary`` as an aligned table."""
    s = class_summary(data)
    machines = _machines(s)
    hybrid = "core_type_from" in s.columns
    kinds = ["cores"] if hybrid else []
    head = [*machines, "relation", *kinds, "distance", "cells", "median µs", "min µs", "max µs"]
    rows = [head]
    for _, r in s.iterrows():
        distance = "" if r["numa_distance"] < 0 else str(int(r["numa_distance"]))
        cores = [f"{r['core_type_from']} to {r['core_type_to']}"] if hybrid else []
        rows.append(
            [*(plain(r[k]) for k in machines), plain(r["relation"]), *cores, distance]
            + [str(r["cells"])]
            + [f"{r[k]:.2f}" for k in ("median_us", "min_us", "max_us")]
        )
    return _table(rows, left=len(machines) + 1 + len(kinds))


def format_matrix(data: Any) -> str:
    """The matrix as text, then the per-class summary: per machine in a fleet frame."""
    df = cells(data)
    machines = _machines(df)
    if not machines:
        return matrix_text(df) + "\n" + summary_text(df)
    blocks = []
    for name, g in df.groupby(machines[0], sort=False):
        blocks.append(f"# {plain(name)}\n{matrix_text(g)}")
    return "\n".join(blocks) + "\n" + summary_text(df)
