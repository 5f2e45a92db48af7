"""ctxbench: context-switch benchmarks with a Rust core.

``lat_ctx`` rebuilds lmbench's token ring; ``ring`` is the same measurement with the engine
and transport named. Every function returns a result object holding numpy arrays and the
metadata of the machine it ran on.
"""

from __future__ import annotations

# plot, files, frame and sweep import pandas and matplotlib only when used.
from . import plot
from ._core import DEFAULT_MIN_TIME_PRECISION, DEFAULT_MIN_TIME_REPETITIONS, MAX_PROCS
from ._core import __version__ as __version__
from .api import lat_ctx, pingpong, ring
from .files import load
from .frame import concat
from .result import PingpongResult, RingResult
from .sweep import sweep

__all__ = [
    "DEFAULT_MIN_TIME_PRECISION",
    "DEFAULT_MIN_TIME_REPETITIONS",
    "MAX_PROCS",
    "PingpongResult",
    "RingResult",
    "concat",
    "lat_ctx",
    "load",
    "pingpong",
    "plot",
    "ring",
    "sweep",
    "__version__",
]
