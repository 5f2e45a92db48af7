"""Grid sweeps that survive crashes: every finished point is on disk before the next starts."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Union

from . import _core
from ._progress import progress_bar
from .api import ring
from .files import XGRAPH_SUFFIXES, records_frame
from .frame import concat, require, to_frame
from .result import (
    PathLike,
    RingResult,
    check_writable,
    planned_key,
    point_key,
    read_records,
    record,
    withhold_hostname,
    write_records,
)

if TYPE_CHECKING:
    import pandas as pd

Placement = Union[str, Sequence[int]]
# Suffixes ctxbench.load reads as another format than the JSON a sweep writes.
OTHER_FORMATS = (".csv", ".parquet", *XGRAPH_SUFFIXES)


def _grid(
    engines: Sequence[str],
    transports: Sequence[str | None],
    placements: Sequence[Placement],
    sizes_kb: Sequence[int],
    procs: Sequence[int],
) -> list[tuple[str, str | None, Placement, int, int]]:
    return [
        (engine, transport, placement, size_kb, p)
        for engine in engines
        for transport in transports
        for placement in placements
        for size_kb in sizes_kb
        for p in procs
    ]


def _check_listed(**axes: Any) -> None:
    """Each axis of the grid is a list: a str is one name, not a list of one-letter names
    (``engines="process"`` would run engines "p", "r", ...), an int one count."""
    for param, value in axes.items():
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise TypeError(
                f"{param}: expected a list, got {type(value).__name__} {value!r} "
                f"(write {param}=[{value!r}])"
            )


def _open(out: PathLike | None) -> list[dict[str, Any]]:
    """The records already in ``out``; a new ``out`` is created empty. Either way, an ``out``
    that cannot be written fails here, before the first point is measured."""
    if out is None:
        return []
    if Path(out).suffix.lower() in OTHER_FORMATS:
        raise ValueError(
            f"{out}: sweep writes a JSON results file; name it .json (save the frame it "
            "returns, or ctxbench.load(out), to CSV or Parquet)"
        )
    if os.path.exists(out):
        records = read_records(out)
        check_writable(out)
        return records
    write_records([], out)
    return []


def sweep(
    procs: Sequence[int],
    sizes_kb: Sequence[int] = (0,),
    engines: Sequence[str] = ("process",),
    transports: Sequence[str | None] = (None,),
    placements: Sequence[Placement] = ("default",),
    repetitions: int | None = None,
    out: PathLike | None = None,
    progress: bool | str = True,
    *,
    measure: Callable[..., RingResult] = ring,
    scheduler: str | None = None,
    client: Any = None,
    hostname: bool = True,
    **ring_kwargs: Any,
) -> pd.DataFrame:
    """Run ``measure`` (``ctxbench.ring``) once per grid point and return the tidy frame of
    the grid.

    ``hostname=False`` keeps this machine's name out of ``out``: every record in it (those
    already there too) holds ``metadata.HOSTNAME_WITHHELD`` instead.

    The grid is engines × transports × placements × sizes_kb × procs; a transport of None
    is each engine's default (pipe, or resume for fibers). With ``out``, each
    finished point is appended to that JSON file (rewritten atomically) before the next
    starts, and points already in it (same engine, transport, placement, size_kb, procs,
    repetitions and parallel) are not measured again: rerun after a crash or Ctrl-C to resume.
    Other keyword arguments (``warmup``, ``parallel``, ``min_time``, ...) go to ``measure``.

    ``progress=True`` shows a tqdm bar when someone is watching: stderr is a terminal or
    this runs in Jupyter/IPython, and ``CI`` is not set in the environment; ``"force"``
    shows it always, ``False`` never. In Jupyter it is a widget when ipywidgets is
    installed, else a line of text.

    With ``scheduler`` (a Dask scheduler address) or ``client`` (a ``distributed.Client``)
    the grid runs on every machine of that cluster instead (``measure`` must be ``ring``):
    see ``ctxbench.fleet.sweep``.
    """
    _check_listed(
        procs=procs,
        sizes_kb=sizes_kb,
        engines=engines,
        transports=transports,
        placements=placements,
    )
    if scheduler is not None or client is not None:
        from . import fleet

        if measure is not ring:
            raise ValueError("measure: a fleet sweep runs ctxbench.ring on every machine")
        return fleet.sweep(
            procs,
            sizes_kb,
            engines,
            transports,
            placements,
            repetitions,
            out,
            progress,
            scheduler=scheduler,
            client=client,
            hostname=hostname,
            **ring_kwargs,
        )
    # Fail before an hour of measuring, not after it.
    require("pandas", "ctxbench.sweep")
    records = _open(out)
    if not hostname and records:
        records = [withhold_hostname(rec) for rec in records]
        write_records(records, out)  # even when every point is done already
    # Points a fleet measured on some machine are not this machine's points.
    done = {
        point_key(rec): rec
        for rec in records
        if rec["kind"] == RingResult.kind and "machine" not in rec.get("metadata", {})
    }
    grid = _grid(engines, transports, placements, sizes_kb, procs)
    bar = progress_bar(progress, len(grid), "ctxbench sweep")
    frames = []
    try:
        for engine, transport, placement, size_kb, p in grid:
            transport = transport or _core.default_transport(engine)
            args = {"engine": engine, "transport": transport, "size_kb": size_kb}
            args.update(placement=placement, repetitions=repetitions, **ring_kwargs)
            key = planned_key([p], args)
            if bar is not None:
                bar.set_postfix_str(f"{engine}/{transport} {key[2]} {size_kb}k procs={p}")
            if key in done:
                frames.append(records_frame([done[key]]))
            else:
                result = measure([p], **args)
                if out is not None:
                    done[key] = record(result, hostname=hostname)
                    records.append(done[key])
                    write_records(records, out)
                frames.append(to_frame(result))
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return concat(frames)
