"""SIGTERM and SIGHUP ending a run as Ctrl-C does: ``terminations_raise`` makes them raise
``SystemExit`` (128 + the signal) in the main thread, which the core's interrupt check hears
between steps, so that children are reaped, groups removed and files left whole on the way
out. A sweep holds it while its lock is held; the command line for every command."""

from __future__ import annotations

import signal
import threading
from typing import Any, Callable


def terminations_raise() -> Callable[[], None]:
    """Until the returned function is called, SIGTERM and SIGHUP raise ``SystemExit`` (128 +
    the signal, the status a shell reports) instead of ending the process at once, so that
    the lock and a half-written temporary file are removed on the way out as after Ctrl-C.
    Only where the signal would otherwise kill (its default action) and only in the main
    thread, where Python runs handlers; a second signal acts as it did before."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    before: dict[int, Any] = {}

    def restore() -> None:
        for sig, was in before.items():
            signal.signal(sig, was)

    def handler(signum: int, frame: Any) -> None:
        restore()
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            before[sig] = signal.signal(sig, handler)
    return restore
