"""A new run judged against the store's series: ``ctxbench compare NEW`` with a store, and the
pytest gate's baseline.

Each point of the new run is judged against the comparable runs the store keeps of it: the
same point (``point_id``), the same machine (the store's fingerprint), conditions like the new
run's (other tasks runnable per CPU within the run history's ``LOAD_TOLERANCE``), measured
before it; or, with ``labels``, the runs carrying those labels (``kernel=A``), whenever they
ran. The core judges (``_core.judge_series``): the newest ``_core.SERIES_WINDOW`` such runs,
their modes and the spread within them, a prediction interval around the nearest mode's
level, "no change (known mode)" inside a regime the series already holds, "inconclusive" on
fewer than ``_core.MIN_SERIES`` runs, and Holm's procedure across every point judged in one
call, so that the chance of *any* false call in a compare is ``family_alpha``.

The store is anything with the store's ``series(point_id, *, machine, labels, newest)``
(``ctxbench.store``): this module opens none itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from . import _core
from ._history import LOAD_TOLERANCE
from ._table_schema import POINT_KEY
from .files import as_frame
from .frame import require

if TYPE_CHECKING:
    import pandas as pd

# Read a few more than the window: some are set aside as not comparable.
_READ = 4 * _core.SERIES_WINDOW


def machine_of(frame: pd.DataFrame) -> str | None:
    """The store's machine fingerprint of a run's frame: ``store.machine_of`` of its
    metadata (the store's rule, its one home)."""
    from . import store  # the store package; imported here, where a store is in use

    columns = ("machine", "hostname", "cpu_model")
    meta = {c: frame[c].dropna().iloc[0] for c in columns if c in frame and frame[c].notna().any()}
    return store.machine_of({"metadata": meta})


def _new_runs(rows: pd.DataFrame) -> tuple[list[float], list[float], float | None, float | None]:
    """The new side of a point: each of its runs' figure and relative standard error (an
    empty list where a run has none: files from before the variance model), the load before
    the first, and when it was stamped (s since the epoch; None where unknown)."""
    pd = require("pandas", "ctxbench.compare")
    by_run = [rows]
    if "run_id" in rows and rows["run_id"].notna().any():
        by_run = [g for _, g in rows.groupby("run_id", sort=True)]
    # The run's own figure, as the store keeps it (``latency_us``), else its samples' median.
    figures = [
        float(g["latency_us"].dropna().iloc[0])
        if "latency_us" in g and g["latency_us"].notna().any()
        else float(g["value"].median())
        for g in by_run
    ]
    # Relative, as the store's ``rel_se`` is: the point's se over its figure.
    errors = [
        float(g["se"].dropna().iloc[0]) / f if "se" in g and g["se"].notna().any() else math.nan
        for g, f in zip(by_run, figures)
    ]
    rel_se = errors if all(math.isfinite(e) and e > 0 for e in errors) else []
    load = None
    if "runnable_per_cpu" in rows and rows["runnable_per_cpu"].notna().any():
        load = float(rows["runnable_per_cpu"].dropna().iloc[0])
    started = None
    if "date" in rows and rows["date"].notna().any():
        stamp = pd.to_datetime(rows["date"].dropna(), utc=True, errors="coerce").min()
        started = None if pd.isna(stamp) else stamp.timestamp()
    return figures, rel_se, load, started


def comparable(run: Any, load: float | None) -> bool:
    """Whether a stored run ran in conditions like the new run's: loads within
    ``LOAD_TOLERANCE`` where both are known (an imported run may not know its load)."""
    return run.load is None or load is None or abs(run.load - load) <= LOAD_TOLERANCE


def baseline(
    store: Any,
    point_id: str,
    machine: str,
    labels: dict[str, str] | None,
    load: float | None,
    started: float | None,
    new: Sequence[float],
    earlier_only: bool,
    own: Sequence[int] = (),
) -> list[Any]:
    """The comparable stored runs of a point carrying ``labels``, oldest first, at most
    ``SERIES_WINDOW``; ``earlier_only``: only runs before the new one, and never the new run
    itself (the CLI keeps it in the store as it measures it): the stored runs ``own`` where
    their ids are known, else the runs of the new figures."""
    runs = store.series(point_id, machine=machine, labels=labels or None, newest=_READ)
    kept = [r for r in runs if comparable(r, load) and r.value_us > 0]
    if earlier_only:
        kept = [r for r in kept if started is None or r.time <= started]
        if own:
            kept = [r for r in kept if r.run_id not in own]
        else:
            kept = [r for r in kept if not any(math.isclose(r.value_us, v) for v in new)]
    return kept[-_core.SERIES_WINDOW :]


def judge(
    new: Any,
    store: Any,
    *,
    machine: str | None = None,
    labels: dict[str, str] | None = None,
    threshold: float = _core.DEFAULT_PRECISION,
    family_alpha: float = _core.FAMILY_ALPHA,
    by: Sequence[str] = (),
    earlier_only: bool | None = None,
) -> pd.DataFrame:
    """Every point of ``new`` (what ``compare`` takes) judged against its series in
    ``store``: one row per point, with ``runs`` (comparable stored runs read), ``new_runs``,
    ``base_us`` (the level judged against), ``new_us``, ``ratio`` with its prediction
    interval (``ratio_low``, ``ratio_high``, at ``confidence``: Holm's level for the point),
    ``equivalent_low``/``equivalent_high`` (90 %), ``p_value``, ``adjusted_p``, ``verdict``,
    ``why``, ``modes``, ``known_mode``, ``mode_ratio``, ``sd`` (spread within modes, ln),
    ``runs_to_decide``, ``reason`` and ``regressed``; ``by`` adds columns of ``new`` to
    the point's key (the pytest gate's ``test``). ``attrs``: ``threshold``,
    ``family_alpha``, ``machine``, ``labels``, ``below_resolution`` (the point ids whose new
    figures are all at or below 0: not judged)."""
    pd = require("pandas", "ctxbench.compare")
    frame = as_frame(new).dropna(subset=["value"])
    if "point_id" not in frame:
        raise ValueError("new: the results hold no point_id (written before ctxbench 0.1?)")
    machine = machine or machine_of(frame)
    if machine is None:
        raise ValueError("new: the results name no machine to find a series of")
    key = [*POINT_KEY, *by, "point_id"]
    groups = list(frame.groupby(key, sort=True, dropna=False))
    news, rows, unjudged = [], [], []
    for values, g in groups:
        figures, rel_se, load, started = _new_runs(g)
        # A figure at or below 0 is below the method's resolution: no ratio to judge.
        kept = [i for i, f in enumerate(figures) if f > 0 and math.isfinite(f)]
        if not kept:
            unjudged.append(values[-1])
            continue
        errors = tuple(rel_se[i] for i in kept) if rel_se else ()
        news.append(New(values[-1], machine, [figures[i] for i in kept], load, started, (), errors))
        rows.append({**dict(zip(key, values)), "new_runs": len(kept)})
    earlier = not labels if earlier_only is None else earlier_only
    judged = judge_new(news, store, labels, threshold, family_alpha, earlier)
    out = pd.DataFrame([{**row, **j} for row, j in zip(rows, judged)])
    out.attrs.update(threshold=threshold, family_alpha=family_alpha, machine=machine)
    out.attrs["labels"] = dict(labels or {})
    out.attrs["below_resolution"] = unjudged
    return out


class New(NamedTuple):
    """The new side of one point: its id, machine, each new run's figure, the load before
    the first, when it was stamped (None where unknown) and, where they are stored, the
    new runs' ids and relative standard errors."""

    point_id: str
    machine: str
    figures: list[float]
    load: float | None
    started: float | None
    own: tuple[int, ...] = ()  # the new runs' ids where the store keeps them
    rel_se: tuple[float, ...] = ()  # each new run's relative standard error, where known


def judge_new(
    news: Sequence[New],
    store: Any,
    labels: dict[str, str] | None,
    threshold: float,
    family_alpha: float,
    earlier_only: bool,
) -> list[dict[str, Any]]:
    """Each point's new runs judged against its comparable stored runs (``baseline``) by
    the core, as one Holm family: each judgement's columns (``judge``'s), in order."""
    points = []
    for n in news:
        base = baseline(store, n.point_id, n.machine, labels, n.load, n.started, n.figures,
                        earlier_only, n.own)  # fmt: skip
        base_se = [r.rel_se or 0.0 for r in base]
        points.append(([r.value_us for r in base], base_se, n.figures, list(n.rel_se)))
    judged = _core.judge_series(points, threshold, family_alpha) if points else []
    return [_columns(j) for j in judged]


def _columns(j: Any) -> dict[str, Any]:
    """A judgement's columns, named as ``compare``'s where they mean the same."""
    return {
        "runs": j["runs"],
        "base_us": j["base_us"],
        "new_us": j["new_us"],
        "ratio": j["ratio"],
        "ratio_low": j["low"],
        "ratio_high": j["high"],
        "confidence": j["confidence"],
        "equivalent_low": j["equivalent_low"],
        "equivalent_high": j["equivalent_high"],
        "p_value": j["p_value"],
        "adjusted_p": j["adjusted_p"],
        "verdict": j["verdict"],
        "why": j["why"],
        "modes": j["modes"],
        "known_mode": j["known_mode"],
        "mode_ratio": j["mode_ratio"],
        "sd": j["sd"],
        "runs_to_decide": j["runs_to_decide"],
        "reason": series_reason(j),
        "regressed": j["verdict"] == "slower",
    }


def series_spread(us: Sequence[float], rel_se: Sequence[float]) -> float | None:
    """One run's relative spread in a series of run figures ``us``, as the judge measures it
    (the spread within the series' modes, ln scale, Hampel-screened; at least the runs' own
    error), read through ``_core.judge_series`` (the spread is the series' alone, whatever
    run is judged against it). None below ``_core.MIN_SERIES`` usable runs."""
    usable = [(v, e) for v, e in zip(us, rel_se) if v > 0 and math.isfinite(v)]
    if len(usable) < _core.MIN_SERIES:
        return None
    figures = [v for v, _ in usable]
    middle = sorted(figures)[len(figures) // 2]
    sd = _core.judge_series([(figures, [e for _, e in usable], [middle], [])], 0.0)[0]["sd"]
    return sd if math.isfinite(sd) else None


def series_reason(j: Any) -> str:
    """Why a point judged against its series came out as it did, where a word needs it."""
    why = j["why"]
    if why == "short series":
        return f"short series ({j['runs']} of {_core.MIN_SERIES} comparable runs)"
    if why == "known mode":
        return f"known mode ({j['mode_ratio']:.2f}x the series' main level)"
    if why == "at threshold":
        return "the ratio sits on the threshold"
    if why == "too wide":
        more = j["runs_to_decide"]
        if more is None:
            return "the series' spread is too wide for the new runs to decide"
        return f"about {more} new run{'s' if more != 1 else ''} would decide it"
    return ""
