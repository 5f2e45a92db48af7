"""Groups of stored runs at the level that varies: ``ctxbench compare --by LABEL`` and ``plan
--by LABEL``.

The store's runs of each point on one machine are grouped by the value of one label (``kernel``,
``commit``, any ``--label``): two values, the first seen the base unless named (``--by
kernel=A,B``). Each run is one unit, so the spread between runs, boots and days is what each
side's uncertainty is made of, never assumed. The core judges (``_core.judge_groups``: Welch's t
on the runs' ln figures, Holm across every point of one call) and plans
(``_core.run_spread``, ``_core.runs_to_detect``); this module gathers the rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _core
from .frame import require

if TYPE_CHECKING:
    import pandas as pd


def parse_by(text: str) -> tuple[str, tuple[str, str] | None]:
    """``--by`` as (label, the two values or None): ``kernel`` or ``kernel=A,B``."""
    from . import store

    label, sep, named = text.partition("=")
    label = label.strip()
    if not sep:
        store.parse_label(f"{label}=x")  # the label's name checked as the store checks it
        return label, None
    values = [v.strip() for v in named.split(",")]
    if len(values) != 2 or not all(values) or values[0] == values[1]:
        raise ValueError(f"--by {text[:60]!r}: expected LABEL or LABEL=A,B (two values)")
    for v in values:
        store.parse_label(f"{label}={v}")
    return label, (values[0], values[1])


def _value(run: dict[str, Any], label: str) -> str | None:
    """A stored run's value of ``label`` (``kernel``: the run's own release where no label
    names one, as the store's label queries read it)."""
    value = run["labels"].get(label)
    if value is None and label == "kernel":
        value = run.get("kernel")
    return value


def label_values(store: Any, label: str, values: tuple[str, str] | None) -> tuple[str, str]:
    """The base and new values of ``label``: ``values`` where named, else the store's two
    (the first seen is the base); ValueError naming what the store holds otherwise."""
    seen: list[str] = []
    for run in store.runs():
        v = _value(run, label)
        if v is not None and v not in seen:
            seen.append(v)
    if values is None:
        if len(seen) != 2:
            shown = ", ".join(seen[:10]) or "none"
            raise ValueError(
                f"--by {label}: the store's runs carry {len(seen)} values of it ({shown}); "
                f"name the two to compare: --by {label}=A,B"
            )
        return seen[0], seen[1]
    missing = [v for v in values if v not in seen]
    if missing:
        raise ValueError(f"--by {label}: no stored run carries {label}={missing[0]}")
    return values


def gathered(
    store: Any, label: str, values: tuple[str, ...], machine: str | None = None
) -> list[tuple[str, str, list[list[float]]]]:
    """Every point on a machine with stored runs under any of ``values``: (point id,
    machine, each value's runs' figures, oldest first)."""
    sides = [{label: v} for v in values]
    keys = sorted({k for side in sides for k in store.points(machine=machine, labels=side)})
    out = []
    for point, m in keys:
        runs = [[r.value_us for r in store.series(point, machine=m, labels=side)]
                for side in sides]  # fmt: skip
        out.append((point, m, runs))
    return out


def compare_by(
    store: Any,
    by: str,
    *,
    machine: str | None = None,
    threshold: float = _core.DEFAULT_PRECISION,
    family_alpha: float = _core.FAMILY_ALPHA,
) -> pd.DataFrame:
    """Each stored point's runs under one value of a label against its runs under the other
    (``by``: ``kernel`` or ``kernel=A,B``): one row per point with ``point``, ``machine``,
    ``base_runs``, ``new_runs``, ``base_us``/``new_us`` (geometric means), ``ratio`` with its
    interval at ``confidence`` (Holm's level for the point), ``equivalent_low``/``_high``,
    ``p_value``, ``adjusted_p``, ``sd`` (one run's spread, ln), ``verdict``, ``why``,
    ``reason``, ``regressed``. ``attrs``: ``label``, ``values`` (base, new), ``threshold``,
    ``family_alpha``."""
    pd = require("pandas", "ctxbench compare --by")
    label, named = parse_by(by)
    values = label_values(store, label, named)
    rows = gathered(store, label, values, machine)
    if not rows:
        raise ValueError(f"--by {label}: no stored point of machine {machine} has runs under it")
    judged = _core.judge_groups([(b, n) for _, _, (b, n) in rows], threshold, family_alpha)
    out = pd.DataFrame(
        [
            {
                "point": point,
                "machine": m,
                **{k: j[k] for k in ("base_runs", "new_runs", "base_us", "new_us", "ratio")},
                "ratio_low": j["low"],
                "ratio_high": j["high"],
                **{k: j[k] for k in ("confidence", "equivalent_low", "equivalent_high")},
                **{k: j[k] for k in ("p_value", "adjusted_p", "sd", "verdict", "why")},
                "reason": _reason(j),
                "regressed": j["verdict"] == "slower",
            }
            for (point, m, _), j in zip(rows, judged)
        ]
    )
    out.attrs.update(label=label, values=values, threshold=threshold)
    out.attrs["family_alpha"] = family_alpha
    return out


def _reason(j: Any) -> str:
    if j["why"] == "short series":
        return (
            f"{j['base_runs']} and {j['new_runs']} runs a side, of the "
            f"{_core.MIN_GROUP_RUNS} each side needs"
        )
    if j["why"] == "too wide":
        return "the runs' spread is too wide for this many runs a side"
    return ""


def plan_by(
    store: Any,
    by: str,
    detect: float,
    *,
    machine: str | None = None,
    power: float | None = None,
) -> pd.DataFrame:
    """Runs per side a ``compare --by`` needs to tell a change of ``detect`` per stored point:
    ``point``, ``machine``, ``runs`` the spread was estimated from (every run of the point
    under the label's values, the two named or all the store holds, each about its own
    value's mean: a plan can be made before the second value is measured), ``sd`` (one
    run's spread, ln), ``runs_per_side`` (None: more than the core plans, or fewer than two
    runs under one value). ``attrs``: ``label``, ``values``, ``detect``, ``power``."""
    pd = require("pandas", "ctxbench plan --by")
    label, named = parse_by(by)
    values: tuple[str, ...]
    if named is None:
        values = tuple(dict.fromkeys(v for r in store.runs() if (v := _value(r, label))))
        if not values:
            raise ValueError(f"--by {label}: no stored run carries the label")
    else:
        values = label_values(store, label, named)
    rows = []
    for point, m, sides in gathered(store, label, values, machine):
        spread = _core.run_spread(sides)
        sd, runs = spread if spread is not None else (float("nan"), sum(map(len, sides)))
        per_side = _core.runs_to_detect(sd, detect, power) if spread is not None else None
        rows.append(
            {"point": point, "machine": m, "runs": runs, "sd": sd, "runs_per_side": per_side}
        )
    out = pd.DataFrame(rows, columns=["point", "machine", "runs", "sd", "runs_per_side"])
    out.attrs.update(label=label, values=values, detect=detect)
    out.attrs["power"] = _core.DEFAULT_POWER if power is None else power
    return out
