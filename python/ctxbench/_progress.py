"""The progress bar of sweeps and matrices, local and fleet: shown when a person is watching;
and, for a call that would otherwise run in silence, a line per step where no bar shows."""

from __future__ import annotations

import os
import sys
import time
import warnings
from typing import Any

from . import report

# Said once per process: progress is garnish, its absence is no failure.
_noted = False


def watched() -> bool:
    """Whether a person is likely watching: stderr is a terminal or this is a Jupyter
    (IPython kernel) session, and the ``CI`` environment variable is not set."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        return False
    if sys.stderr.isatty():
        return True
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def check(progress: bool | str) -> None:
    """A ``progress`` argument: True, False or "force"."""
    if progress not in (True, False, "force"):
        raise ValueError(f"progress: expected True, False or 'force', got {progress!r}")


def progress_bar(progress: bool | str, total: int, desc: str, unit: str = "point") -> Any:
    """A tqdm bar (a widget in Jupyter with ipywidgets, text otherwise), or None.

    ``progress=True`` shows it when someone is watching (see ``watched``), ``"force"``
    always, ``False`` never. Without tqdm there is no bar: one note says so, and the run
    goes on as it would with ``progress=False``."""
    global _noted
    check(progress)
    if progress == "force" or (progress is True and watched()):
        with warnings.catch_warnings():
            # Without ipywidgets tqdm.auto falls back to the text bar, warning; the text bar
            # is fine in a notebook too.
            warnings.simplefilter("ignore")
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
        if tqdm is not None:
            return tqdm(total=total, unit=unit, desc=desc)
        if not _noted:
            _noted = True
            print(
                "ctxbench: no progress bar without tqdm (pip install tqdm, or "
                "'ctxbench[analysis]')",
                file=sys.stderr,
            )
    return None


class Steps:
    """A long call's progress, step by step: the bar where ``progress_bar`` shows one, else
    (``progress=True``) a line per step on stderr (``report.step``), nothing for False."""

    def __init__(self, progress: bool | str, total: int, desc: str, unit: str) -> None:
        self.bar = progress_bar(progress, total, desc, unit)
        self.lines = self.bar is None and progress is True
        self.desc, self.total, self.unit = desc, total, unit
        self.done = 0
        self.start = time.monotonic()

    def step(self, what: str) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.lines:
            seconds = time.monotonic() - self.start
            line = report.step(self.desc, self.done, self.total, self.unit, what, seconds)
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
