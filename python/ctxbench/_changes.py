"""Change points over time: each stored series (one point on one machine, oldest run first)
scanned by the core's E-Divisive (``_core.change_points``, ``src/changes``), and each change
named by the run where it happened: its id, time and labels (commit, kernel), with its size
as a ratio with its interval and its significance. The chance of any false change point in
one scan is held at ``level`` (Holm, in the core).

``store`` is the results store's API (``ctxbench.store``): a path or None opens it
(``store.open``), an opened store is used as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _core
from .frame import require

if TYPE_CHECKING:
    import pandas as pd

    from ._core import ChangeDict, ScanDict

COLUMNS = (
    "point",
    "machine",
    "index",
    "run_id",
    "time",
    "labels",
    "ratio",
    "ratio_lo",
    "ratio_hi",
    "confidence",
    "p",
    "level",
    "runs_before",
    "runs_after",
    "before_us",
    "after_us",
)


def opened(store: Any) -> Any:
    """The store to read: ``store`` itself where it is one (has ``series``), else the store
    at that path (``ctxbench.store.open``; None: the default one), never created here.
    ``ValueError`` where the store is off or holds nothing yet."""
    if hasattr(store, "series"):
        return store
    from . import store as store_module

    found = store_module.open(store, create=False)
    if found is None:
        where = store if store is not None else store_module.default_path()
        raise ValueError(
            "store: "
            + (f"no results store at {where} yet" if where else "the results store is off")
            + " (runs are kept there by ctxbench's commands, ctxbench.save and the plugin)"
        )
    return found


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def scan(
    store: Any = None,
    *,
    machine: str | None = None,
    labels: dict[str, str] | None = None,
    point: str | None = None,
    level: float | None = None,
    min_runs: int | None = None,
    seed: int | None = None,
) -> tuple[list[tuple[str, str, list[Any]]], list[ScanDict]]:
    """Every series the filters select, as (point, machine, runs), and the core's scan of
    each (``_core.change_points``), in the same order."""
    s = opened(store)
    keys = [(p, m) for p, m in s.points(machine=machine, labels=labels) if point in (None, p)]
    series = [(p, m, s.series(p, machine=m, labels=labels)) for p, m in keys]
    scans = _core.change_points(
        [(f"{p} @ {m}", [r.ln_value for r in runs]) for p, m, runs in series],
        level=level,
        min_runs=min_runs,
        seed=seed,
    )
    return series, scans


def row(point: str, machine: str, runs: list[Any], change: ChangeDict) -> dict[str, Any]:
    """One change point as a frame's row: the run where it happened and its size."""
    i = change["index"]
    before = runs[i - change["runs_before"] : i]
    after = runs[i : i + change["runs_after"]]
    run = runs[i]
    return {
        "point": point,
        "machine": machine,
        "index": i,
        "run_id": run.run_id,
        "time": run.time,
        "labels": dict(run.labels),
        **{k: change[k] for k in ("ratio", "ratio_lo", "ratio_hi", "confidence", "p", "level")},
        "runs_before": change["runs_before"],
        "runs_after": change["runs_after"],
        "before_us": _median([r.value_us for r in before]),
        "after_us": _median([r.value_us for r in after]),
    }


def changes(
    store: Any = None,
    *,
    machine: str | None = None,
    labels: dict[str, str] | None = None,
    point: str | None = None,
    level: float | None = None,
    min_runs: int | None = None,
    seed: int | None = None,
) -> pd.DataFrame:
    """The change points of every stored series (one point on one machine; only runs with
    ``labels``, where given), one row each: ``point``, ``machine``, the run where it happened
    (``index`` in its series, ``run_id``, ``time`` as a UTC timestamp, its ``labels`` and one
    ``label.<name>`` column per label), its size after/before (``ratio``, ``ratio_lo``,
    ``ratio_hi`` at ``confidence``; ``before_us``/``after_us``, the segments' medians) and
    its significance (``p``, the ``level`` it passed). ``frame.attrs``: ``series_scanned``,
    ``series_too_short`` (fewer than 2 × ``min_runs`` runs: no change can be seen there, which
    is not "no change"), ``level``, ``min_runs``."""
    pd = require("pandas", "ctxbench.changes")
    series, scans = scan(
        store, machine=machine, labels=labels, point=point, level=level, min_runs=min_runs,
        seed=seed,
    )  # fmt: skip
    rows = [
        row(p, m, runs, c) for (p, m, runs), found in zip(series, scans) for c in found["changes"]
    ]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True)
    for name in sorted({k for r in rows for k in r["labels"]}):
        frame[f"label.{name}"] = [r["labels"].get(name) for r in rows]
    frame.attrs.update(
        series_scanned=sum(s["status"] == "scanned" for s in scans),
        series_too_short=sum(s["status"] == "too short" for s in scans),
        # The core's settings as applied (its defaults where none was given).
        level=scans[0]["level"] if scans else level,
        min_runs=scans[0]["min_runs"] if scans else min_runs,
    )
    return frame


def change_at(
    run: Any,
    point_id: str | None = None,
    *,
    machine: str | None = None,
    store: Any = None,
    level: float | None = None,
    min_runs: int | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """Is ``run`` (a ``store.Run``, or a run id with ``point_id``) a change point of its series
    (its point on its machine)? The core's answer (``_core.change_at``): ``status`` "change"
    (with ``change``: its size and significance), "none found" (with the series' ``changes``
    elsewhere), or "too few runs" (fewer than ``min_runs`` before or after it: not yet
    seeable, which is not "no change"); plus ``run_id``, ``point``, ``machine``, ``index``."""
    s = opened(store)
    point = point_id if point_id is not None else getattr(run, "point_id", None)
    if point is None:
        raise TypeError("point_id: name the point of a run given by its id")
    run_id = run if isinstance(run, int) else run.run_id
    machines = [machine or getattr(run, "machine", None)]
    if machines[0] is None:
        machines = [m for p, m in s.points() if p == point]
    for m in machines:
        runs = s.series(point, machine=m)
        ids = [r.run_id for r in runs]
        if run_id in ids:
            index = ids.index(run_id)
            answer = _core.change_at(
                f"{point} @ {m}",
                [r.ln_value for r in runs],
                index,
                level=level,
                min_runs=min_runs,
                seed=seed,
            )
            return {**answer, "run_id": run_id, "point": point, "machine": m, "index": index}
    raise ValueError(f"run: run {run_id} is not in the stored series of {point!r}")
