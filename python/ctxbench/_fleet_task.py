"""One fleet point, measured in a fresh process: ``python -m ctxbench._fleet_task < point.json``.

A Dask worker runs its event loop, heartbeats and task threads in one process; a ring measured
there would share the interpreter (and its GIL, for the thread engine) with them. The worker
starts this module instead, waits for it, and reads back the result record it prints as JSON.

stdin: ``{"ring": {ring's arguments}, "parent": pid, "version": "x.y.z", "deadline": s}``, or
``"matrix"`` with ``_core.matrix``'s arguments (``cpus`` among them) instead of ``"ring"``.
``deadline`` (seconds, or null for none) bounds the task: past it ``PastDeadline`` is raised
from a signal handler, which the core hears on its interrupt path (as it hears Ctrl-C): it
stops, ends and reaps its children, and raises it again; this process exits 1, naming it.
stdout: the record (``record.encode``) with ``metadata["started"]``/``["finished"]`` added,
UTC ISO timestamps taken right around the measurement.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import warnings
from datetime import datetime, timezone
from typing import Any

PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Be killed when the worker that started us dies, instead of measuring for nobody."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the point just finishes as an orphan
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        sys.stderr.write(f"ctxbench: parent {parent} is gone; not measuring\n")
        os._exit(1)


class PastDeadline(TimeoutError):
    """The task ran past the deadline its client gave it."""


def keep_deadline(seconds: float | None) -> None:
    """From ``seconds`` from now, raise ``PastDeadline`` wherever this process is: the core
    checks for a raising signal handler between its steps and while a ring runs."""
    if seconds is None:
        return

    def past(signum: int, frame: object) -> None:
        raise PastDeadline(f"past its deadline of {seconds:.0f} s: stopped, its processes ended")

    signal.signal(signal.SIGALRM, past)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def measure(args: dict[str, Any]) -> dict[str, Any]:
    import ctxbench
    from ctxbench import report
    from ctxbench._exclusive import measuring
    from ctxbench.record import encode

    if args["version"] != ctxbench.__version__:
        raise RuntimeError(
            f"this machine runs ctxbench {ctxbench.__version__} ({sys.executable}), "
            f"the client {args['version']}"
        )
    # Nobody reads this process's stderr: what is said about the point (a wait for the
    # lock) goes into its record as well.
    kept: list[str] = []
    also = report.Reports(report.current(), report.Record(kept))
    # The kernel's lock around the timestamps too: they say when this point had the machine,
    # not when it started waiting for it.
    with warnings.catch_warnings(), report.saying(also), measuring():
        # They are in the record's "warnings" already.
        warnings.simplefilter("ignore")
        started = now()
        if "matrix" in args:
            from ctxbench._matrix import measure as matrix

            kwargs = dict(args["matrix"])
            result = matrix(kwargs.pop("cpus"), kwargs, progress=False)
        else:
            kwargs = dict(args["ring"])
            result = ctxbench.ring(kwargs.pop("procs"), **kwargs)
        finished = now()
    rec = encode(result)
    rec["metadata"].update(started=started, finished=finished)
    rec["warnings"].extend(kept)
    return rec


def main() -> int:
    args = json.load(sys.stdin)
    die_with_parent(int(args["parent"]))
    keep_deadline(args.get("deadline"))
    # The record owns stdout: anything else written to fd 1 while measuring goes to stderr.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    rec = measure(args)
    signal.setitimer(signal.ITIMER_REAL, 0)  # measured in time: the record is what is left
    json.dump(rec, out)
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
