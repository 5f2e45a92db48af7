"""``ctxbench.ab``: two configurations against each other until the data decide. Each side is
one request of the core's (``_core.ab``): a dict naming its measurement, or one command line
of ``ctxbench``'s own, read by the command line's parser (``cli._sides``). The rounds, the
interval and the word are the core's; this module turns sides into requests and the record
into an ``AbResult``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _core
from ._exclusive import measuring
from .api import result_metadata
from .result import AbResult

# What a dict side may name as its ``measure``: the core's doors an A/B side takes.
MEASURES = ("ring", "pingpong")
_EXAMPLE = '{"measure": "ring", "procs": 2, "placement": "single"}'
# The run's own parameters' defaults, as the core declares them.
_DEFAULTS = {p["name"]: p["default"] for p in _core.PARAMETERS if "ab" in p["doors"]}


def ab(
    a: Mapping[str, Any] | str,
    b: Mapping[str, Any] | str,
    *,
    budget: float = _DEFAULTS["budget"],
    threshold: float = _DEFAULTS["threshold"],
    seed: int | None = None,
) -> AbResult:
    """Measure ``a`` against ``b`` in rounds until the ratio B / A is decided or ``budget``
    seconds end, and say slower, faster, no change or inconclusive.

    Each side is a dict, ``{"measure": "ring", "procs": 2, "placement": "single"}``
    (``measure`` one of ``MEASURES``, every other key a parameter of ``ctxbench.ring`` or
    ``ctxbench.pingpong``, one participant count), or one ``ctxbench`` command line as a
    string, ``"ring --procs 2 --placement single"`` (``ring``, ``lat-ctx`` or ``pipe``, read
    by the command line's own parser into the same request).

    Each round measures one fresh ring instance of each side, the two in a fresh random
    order (``seed`` fixes it), and the log of their ratio; after every round a 95 %
    confidence sequence for the mean log ratio (valid however often it is read, so stopping
    as soon as it decides keeps its error rate) gives B / A an interval. ``slower`` or
    ``faster``: the interval lies beyond 1 and the ratio beyond ± ``threshold``; ``no
    change``: the whole interval lies within ± ``threshold``; else ``inconclusive``, with
    what would decide it (``AbResult.why``). Holds the machine's measuring lock; Ctrl-C stops
    it within about a second.
    """
    sides = (_side("a", a), _side("b", b))
    meta = result_metadata()
    with measuring():
        raw = _core.ab(*sides, budget=budget, threshold=threshold, seed=seed)
    return AbResult.from_core(raw, meta)


def _side(name: str, side: object) -> tuple[str, dict[str, Any]]:
    """One side as the core takes it, ``(measure, parameters)``, checked as the core checks
    a request; an error names the side."""
    if isinstance(side, str):
        from .cli._sides import side_request

        try:
            measure, params = side_request(side)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None
    elif isinstance(side, Mapping):
        measure, params = _from_dict(name, side)
    else:
        raise TypeError(
            f"{name}: expected a dict such as {_EXAMPLE} or a command line such as "
            f"'ring --procs 2 --placement single', got {type(side).__name__}"
        )
    check = _core.ring_config if measure == "ring" else _core.pingpong_config
    try:
        check(**params)
    except (ValueError, TypeError) as e:
        raise type(e)(f"{name}: {e}") from None
    return measure, params


def _from_dict(name: str, side: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    params = dict(side)
    if "measure" not in params:
        raise ValueError(f"{name}: a dict side names its measurement: {_EXAMPLE}")
    measure = params.pop("measure")
    if measure == "matrix":
        raise ValueError(
            f"{name}: measure: a matrix cell is a ring of two pinned on its CPUs: "
            '{"measure": "ring", "procs": 2, "placement": [0, 1], "engine": "thread", '
            '"transport": "futex"}'
        )
    if measure not in MEASURES:
        raise ValueError(f"{name}: measure: expected one of {', '.join(MEASURES)}, got {measure!r}")
    if measure == "ring" and "procs" not in params:
        raise ValueError(f"{name}: procs: a ring side names one participant count")
    for key in ("history",):
        if key in params:
            raise TypeError(f"{name}: {key}: an A/B run keeps no run history (both sides pair)")
    bad = [k for k in params if not isinstance(k, str)]
    if bad:
        raise TypeError(f"{name}: parameter names are strings, got {bad[0]!r}")
    return measure, params
