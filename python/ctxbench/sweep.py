"""Grid sweeps that survive crashes: every finished point is on disk before the next starts."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Union

import ctxbench

from . import _core
from .files import PathLike, read_records, record, records_frame, write_records
from .frame import concat, require, to_frame

if TYPE_CHECKING:
    import pandas as pd

Placement = Union[str, Sequence[int]]
Key = tuple[str, str, str, int, tuple[int, ...], int, int]


def _placement_name(placement: Placement) -> str:
    # The core records a CPU list as "[0, 1]", which is how Python prints a list of ints.
    return placement if isinstance(placement, str) else str([int(c) for c in placement])


def _key(rec: dict[str, Any]) -> Key:
    return (
        rec["engine"],
        rec["transport"],
        rec["placement"],
        int(rec["size_kb"]),
        tuple(int(p) for p in rec["procs"]),
        int(rec["repetitions"]),
        int(rec["parallel"]),
    )


def _bar(progress: bool | str, total: int) -> Any:
    if progress not in (True, False, "force"):
        raise ValueError(f"progress: expected True, False or 'force', got {progress!r}")
    if progress == "force" or (progress is True and sys.stderr.isatty()):
        tqdm = require("tqdm", "ctxbench.sweep's progress bar")
        return tqdm.tqdm(total=total, unit="point", desc="ctxbench sweep")
    return None


def sweep(
    procs: Sequence[int],
    sizes_kb: Sequence[int] = (0,),
    engines: Sequence[str] = ("process",),
    transports: Sequence[str | None] = (None,),
    placements: Sequence[Placement] = ("default",),
    repetitions: int = 11,
    out: PathLike | None = None,
    progress: bool | str = True,
    scheduler: str | None = None,
    client: Any = None,
    **ring_kwargs: Any,
) -> pd.DataFrame:
    """Run ``ctxbench.ring`` once per grid point and return the tidy frame of the grid.

    The grid is engines × transports × placements × sizes_kb × procs; a transport of None
    is each engine's default (pipe, or resume for fibers). With ``out``, each
    finished point is appended to that JSON file (rewritten atomically) before the next
    starts, and points already in it (same engine, transport, placement, size_kb, procs,
    repetitions and parallel) are not measured again: rerun after a crash or Ctrl-C to resume.
    Other keyword arguments (``warmup``, ``parallel``, ``min_time``, ...) go to ``ring``.

    With ``scheduler`` (a Dask scheduler address) or ``client`` (a ``distributed.Client``)
    the grid runs on every machine of that cluster instead: see ``ctxbench.fleet.sweep``.
    """
    if scheduler is not None or client is not None:
        from . import fleet

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
            **ring_kwargs,
        )
    # Fail before an hour of measuring, not after it.
    require("pandas", "ctxbench.sweep")
    records: list[dict[str, Any]] = []
    if out is not None:
        if os.path.exists(out):
            records = read_records(out)
        else:
            write_records(records, out)  # also proves the path is writable
    done = {_key(rec): rec for rec in records if rec["kind"] == "ring"}
    parallel = int(ring_kwargs.get("parallel", 1))
    grid = [
        (engine, transport, placement, size_kb, p)
        for engine in engines
        for transport in transports
        for placement in placements
        for size_kb in sizes_kb
        for p in procs
    ]
    bar = _bar(progress, len(grid))
    frames = []
    try:
        for engine, transport, placement, size_kb, p in grid:
            transport = transport or _core.default_transport(engine)
            key = (
                engine,
                transport,
                _placement_name(placement),
                size_kb,
                (p,),
                repetitions,
                parallel,
            )
            if bar is not None:
                bar.set_postfix_str(f"{engine}/{transport} {key[2]} {size_kb}k procs={p}")
            if key in done:
                frames.append(records_frame([done[key]]))
            else:
                result = ctxbench.ring(
                    [p],
                    engine=engine,
                    transport=transport,
                    size_kb=size_kb,
                    placement=placement,
                    repetitions=repetitions,
                    **ring_kwargs,
                )
                if out is not None:
                    done[key] = record(result)
                    records.append(done[key])
                    write_records(records, out)
                frames.append(to_frame(result))
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return concat(frames)
