"""Grid sweeps that survive crashes: every finished point is on disk before the next starts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable

from . import grid as grids
from ._host_plan import say_if_long
from ._progress import progress_bar
from .api import ring
from .files import PathLike
from .frame import concat, require
from .grid import Placement
from .metadata import machine_identity
from .record import encode
from .result import RingResult

if TYPE_CHECKING:
    import pandas as pd


def sweep(
    # BEGIN written by `python -m ctxbench._codegen` from grid.AXES, grid.SWEEP_OPTIONS; edit there
    procs: Sequence[int],
    sizes_kb: Sequence[int] = (0,),
    engines: Sequence[str] = ("process",),
    transports: Sequence[str | None] = (None,),
    placements: Sequence[Placement] = ("default",),
    repetitions: int | None = None,
    out: PathLike | None = None,
    progress: bool | str = True,
    # END written by `python -m ctxbench._codegen`
    *,
    measure: Callable[..., RingResult] = ring,
    scheduler: str | None = None,
    client: Any = None,
    hostname: bool = True,
    **ring_kwargs: Any,
) -> pd.DataFrame:
    """Run ``measure`` (``ctxbench.ring``) once per grid point and return the tidy frame of
    the grid.

    The grid is engines × transports × placements × sizes_kb × procs; a transport of None
    is each engine's default (pipe, or resume for fibers). Every point is checked before the
    first is measured, and each value of an axis is named once (a value twice is a
    ``ValueError`` naming it). Other keyword arguments (``warmup``, ``parallel``, ``min_time``, ...)
    go to ``measure``.

    With ``out`` (.json, .csv or .parquet), each finished point is written to that file
    (rewritten atomically, keeping its mode) before the next starts, and points already in
    it are not measured again: rerun after a crash or Ctrl-C to resume. A point is the same
    point when everything that changes its number is the same: what was asked (engine,
    transport, placement and cpu, size_kb, procs, parallel, repetitions or precision,
    max_time, max_repetitions, min_time, warmup, timeout, record_hops) and the machine
    (``metadata.machine_identity``: after a reboot a sweep measures again). While a sweep
    runs, no other sweep may write its ``out``: see ``ctxbench.grid``.

    ``hostname=False`` keeps this machine's name out of ``out`` and the frame: every record in
    it (those already there too) holds ``metadata.HOSTNAME_WITHHELD`` instead (on a fleet, for
    the worker's host, name and address too).

    ``progress=True`` shows a tqdm bar when someone is watching: stderr is a terminal or
    this runs in Jupyter/IPython, and ``CI`` is not set in the environment; ``"force"``
    shows it always, ``False`` never. In Jupyter it is a widget when ipywidgets is
    installed, else a line of text.

    With ``scheduler`` (a Dask scheduler address) or ``client`` (a ``distributed.Client``)
    the grid runs on every machine of that cluster instead (``measure`` must be ``ring``):
    see ``ctxbench.fleet.sweep``.
    """
    axes = grids.axes_of(locals())
    if scheduler is not None or client is not None:
        from . import fleet

        if measure is not ring:
            raise ValueError("measure: a fleet sweep runs ctxbench.ring on every machine")
        return fleet.sweep(
            **axes,
            repetitions=repetitions,
            out=out,
            progress=progress,
            scheduler=scheduler,
            client=client,
            hostname=hostname,
            **ring_kwargs,
        )
    # Fail before an hour of measuring, not after it.
    require("pandas", "ctxbench.sweep")
    points = grids.grid(axes, repetitions, ring_kwargs)
    machine = machine_identity()["machine"]
    frames = []
    kept = 0
    with grids.OutFile.open(out, hostname=hostname) as book:
        if measure is ring and progress is not False:
            left = [p for p in points if not book.done(p.key(machine))]
            say_if_long("ctxbench sweep", left)
        bar = progress_bar(progress, len(points), "ctxbench sweep")
        try:
            for point in points:
                key = point.key(machine)
                if bar is not None:
                    bar.set_postfix_str(point.label())
                if book.done(key):
                    kept += 1
                else:
                    rec = encode(measure(point.procs, **point.kwargs), hostname=hostname)
                    rec["metadata"].setdefault("machine", machine)
                    book.add(key, rec)
                frames.append(book.frame(key))
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
    df = concat(frames)
    # How many of the grid's points the out file already held (not measured again).
    df.attrs.update(kept=kept, points=len(points))
    return df
