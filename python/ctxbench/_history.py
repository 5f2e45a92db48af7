"""What earlier runs on this machine showed: each point's figure and its run's own error, so
that the next run's interval can hold the spread between runs that no single run can see (the
run level of the variance model; ``_core.ring(history=...)`` turns it into
``stats.sd_run``).

Where: the directory ``$CTXBENCH_HISTORY`` (``off`` keeps and reads nothing), else
``$XDG_CACHE_HOME/ctxbench``, else ``~/.cache/ctxbench``. One file per machine and build, named
by a hash of the hostname, CPU model, kernel and ctxbench version; each line is one point of
one run: when, which point (a hash of what changes its figure), the ln of its figure and its
relative standard error. Numbers and hashes only. A run reads the last ``WINDOW`` runs of each
point from the last ``MAX_AGE_S`` seconds. History only ever sharpens what a run says of
itself: a directory that cannot be read or written means no history, never an error.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

ENV = "CTXBENCH_HISTORY"
WINDOW = 30
MAX_AGE_S = 24 * 3600.0
# Past this many lines the file is cut back to the newest half.
MAX_LINES = 20_000

History = tuple[list[float], list[float], list[float]]


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:16]


def _file(metadata: dict[str, Any]) -> Path | None:
    where = os.environ.get(ENV)
    if where is not None and where.strip().lower() in ("off", "0", "no", "false", ""):
        return None
    if where is None:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
        where = os.path.join(cache, "ctxbench")
    machine = _digest(
        *(metadata.get(k) for k in ("hostname", "cpu_model", "kernel", "ctxbench_version"))
    )
    return Path(where) / f"runs-{machine}.jsonl"


def point_id(**what: object) -> str:
    """A point's identity for history: everything that changes its expected figure."""
    return _digest(*(f"{k}={what[k]}" for k in sorted(what)))


@contextlib.contextmanager
def _locked(path: Path, mode: str) -> Iterator[IO[str]]:
    with open(path, mode, encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX if "a" in mode or "+" in mode else fcntl.LOCK_SH)
        yield f


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    with _locked(path, "r") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash: skip it, keep the rest
            if isinstance(rec, dict):
                out.append(rec)
    return out


def earlier(metadata: dict[str, Any], points: Sequence[str]) -> list[History | None]:
    """For each point id, the ln figures, relative errors and ages (s) of its latest earlier
    runs on this machine (None: none known)."""
    path = _file(metadata)
    if path is None or not path.is_file():
        return [None] * len(points)
    try:
        lines = _lines(path)
    except OSError:
        return [None] * len(points)
    now = time.time()
    oldest = now - MAX_AGE_S
    out: list[History | None] = []
    for point in points:
        runs = [
            (float(r["y"]), float(r["s"]), max(0.0, now - r["t"]))
            for r in lines
            if r.get("p") == point
            and isinstance(r.get("t"), (int, float))
            and r["t"] >= oldest
            and isinstance(r.get("y"), (int, float))
            and isinstance(r.get("s"), (int, float))
        ][-WINDOW:]
        out.append(
            ([r[0] for r in runs], [r[1] for r in runs], [r[2] for r in runs]) if runs else None
        )
    return out


def remember(
    metadata: dict[str, Any],
    points: Sequence[str],
    figures: Sequence[float],
    errors: Sequence[float],
) -> None:
    """Keep this run's figure and own standard error of every point that has both."""
    path = _file(metadata)
    if path is None:
        return
    now = time.time()
    lines = [
        json.dumps({"t": now, "p": p, "y": math.log(x), "s": e / x})
        for p, x, e in zip(points, figures, errors)
        if x > 0 and math.isfinite(x) and math.isfinite(e) and e > 0
    ]
    if not lines:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path, "a") as f:
            f.write("".join(line + "\n" for line in lines))
        if path.stat().st_size > MAX_LINES * 100:
            _trim(path)
    except OSError:
        return


def _trim(path: Path) -> None:
    with _locked(path, "r+") as f:
        kept = f.readlines()[-MAX_LINES // 2 :]
        f.seek(0)
        f.writelines(kept)
        f.truncate()
