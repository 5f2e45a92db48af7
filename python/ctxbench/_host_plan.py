"""What a run would measure on the host, before anything runs: the core's plans
(``_core.matrix_plan``, ``_core.cache_plan``) and their text. The host is the one ``CTXBENCH_SYSFS``
describes (another machine's sysfs tree: planning a run on a cluster node), else this one."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from . import _core


def duration(seconds: float) -> str:
    """45 s, 12.5 min, 3.2 h."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def mib(n_bytes: int) -> str:
    return f"{n_bytes / 2**20:.1f} MiB"


def cells_asked(classes: bool | int | None, full: bool) -> dict[str, Any]:
    """The core's ``per_class`` and ``full`` for ``classes``: None, the host's default
    (every pair within the time budget, else a sample by class); False, every pair; True,
    ``_core.MATRIX_PER_CLASS`` per class; a count, that many."""
    if classes is None or classes is False:
        return {"per_class": None, "full": full or classes is False}
    if classes is True:
        return {"per_class": int(_core.MATRIX_PER_CLASS), "full": full}
    if not isinstance(classes, int):
        raise TypeError(f"classes: expected True, False or a count, got {type(classes).__name__}")
    return {"per_class": classes, "full": full}


def matrix_plan(cpus: Sequence[int] | None = None, **kwargs: Any) -> dict[str, Any]:
    """The cells ``ctxbench.matrix(cpus, **kwargs)`` would measure on the host, checked as a
    run checks them, before anything runs: ``cpus``; ``per_class`` (None: every pair);
    ``classes``, each a dict of ``relation``, ``numa_distance``, ``name``, ``pairs`` (its
    ordered pairs) and ``cells`` (measured of them per pass); ``cells`` and ``full_cells``
    in all; ``cell_s``, ``estimated_s`` and ``full_estimated_s``, seconds (each cell at its
    cap: an estimate, which a loaded machine may pass); ``memory_bytes``; ``notes``, what
    bounded the default. ``classes`` and ``full`` as ``matrix`` takes them."""

    classes = kwargs.pop("classes", None)
    full = kwargs.pop("full", False)
    return dict(_core.matrix_plan(cpus, **cells_asked(classes, full), **kwargs))


def starting(plan: Mapping[str, Any]) -> str:
    """One line for a long matrix as it starts: its cells and time."""
    which = "every pair" if plan["per_class"] is None else f"{plan['per_class']} per class"
    return (
        f"{plan['cells']} cells ({which}, {len(plan['classes'])} classes), about "
        f"{duration(plan['estimated_s'])} (ctxbench matrix --plan shows the plan)"
    )


def format_matrix_plan(plan: Mapping[str, Any]) -> str:
    """The plan as ``ctxbench matrix --plan`` prints it."""
    n = len(plan["cpus"])
    which = "every ordered pair" if plan["per_class"] is None else (
        f"{plan['per_class']} cells per class at most"
    )  # fmt: skip
    lines = [
        f"matrix of {n} CPUs on {plan['sysfs']}: {which}",
        f"  {'class':<32} {'pairs':>8} {'cells':>6}",
    ]
    for c in plan["classes"]:
        lines.append(f"  {c['name']:<32} {c['pairs']:>8} {c['cells']:>6}")
    lines += [
        f"cells: {plan['cells']} (the full matrix: {plan['full_cells']})",
        f"memory: {mib(plan['memory_bytes'])} at once (one cell's ring)",
        f"time: about {duration(plan['estimated_s'])}, {plan['cell_s']:.2f} s a cell at "
        f"its cap (the full matrix: {duration(plan['full_estimated_s'])})",
    ]
    lines += [f"note: {note}" for note in plan["notes"]]
    return "\n".join(lines) + "\n"


def sizes_plan(
    procs: int | Sequence[int] | None = None,
    sizes_kb: Sequence[int] | str = "auto",
    **kwargs: Any,
) -> dict[str, Any]:
    """What ``ctxbench.cache_sweep(procs, sizes_kb, **kwargs)`` would measure on the host,
    before anything runs (``_core.cache_plan``): ``cpus``, ``caches`` (the per-CPU shares
    of the CPUs used, KiB), ``line_bytes``, ``stream_kb``, ``sizes_kb`` (one grid per ring
    size), ``memory_bytes``, ``estimated_s`` and ``notes`` (what bounded a default), with
    ``procs``, the ring sizes in order (cache_sweep's default where None)."""
    if procs is None:  # cache_sweep's default, from the parameter table
        procs = next(
            p["default"]
            for p in _core.PARAMETERS
            if p["name"] == "procs" and "cache_sweep" in p["doors"]
        )
    counts = [procs] if isinstance(procs, int) else list(procs)
    named = None if isinstance(sizes_kb, str) else list(sizes_kb)
    if isinstance(sizes_kb, str) and sizes_kb != "auto":
        raise ValueError(f'sizes_kb: expected "auto" or a sequence of ints, got {sizes_kb!r}')
    return {"procs": counts, **_core.cache_plan(counts, named, **kwargs)}


def sizes_starting(plan: Mapping[str, Any]) -> str:
    """One line for a long sweep of sizes as it starts: its points and time."""
    points = sum(len(g) for g in plan["sizes_kb"])
    return (
        f"{points} sizes over {len(plan['sizes_kb'])} ring sizes, about "
        f"{duration(plan['estimated_s'])} (ctxbench sizes --plan shows the plan)"
    )


def format_sizes_plan(plan: Mapping[str, Any]) -> str:
    """The plan as ``ctxbench sizes --plan`` prints it."""
    shares = ", ".join(f"{name} {kb:,} KiB" for name, kb in plan["caches"].items())
    lines = [
        f"sweep of sizes on {plan['sysfs']}, CPUs {plan['cpus']}",
        f"caches (per-CPU shares of those CPUs): {shares or 'unknown'}",
        f"line: {plan['line_bytes']} bytes; streaming read: {plan['stream_kb']:,} KiB",
    ]
    for procs, grid in zip(plan["procs"], plan["sizes_kb"]):
        lines.append(
            f"{procs} procs: {len(grid)} sizes, 0 to {max(grid):,} KiB per participant "
            f"(a working set of {procs * max(grid):,} KiB)"
        )
    lines += [
        f"memory: {mib(plan['memory_bytes'])} at once (the largest ring and the streaming read)",
        f"time: about {duration(plan['estimated_s'])}",
    ]
    lines += [f"note: {note}" for note in plan["notes"]]
    return "\n".join(lines) + "\n"


def say_if_long(who: str, points: Sequence[Any], each: str = "") -> None:
    """A line on stderr, as a sweep starts, where its ``points`` (``grid.GridPoint``) are
    planned past ``_core.LONG_RUN_S``, each at its cap (``_core.ring_estimate``)."""
    seconds = sum(_core.ring_estimate(p.procs, **p.kwargs) for p in points)
    if seconds > _core.LONG_RUN_S:
        print(f"{who}: {len(points)} points, about {duration(seconds)}{each}", file=sys.stderr)
