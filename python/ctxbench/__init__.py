"""ctxbench: context-switch benchmarks with a Rust core.

``lat_ctx`` rebuilds lmbench's token ring; ``ring`` is the same measurement with the engine
and transport named; ``matrix`` measures it between every pair of CPUs, on the ``topology``
of the machine. Every function returns a result object holding numpy arrays and the
metadata of the machine it ran on.
"""

from __future__ import annotations

# plot, files, frame and sweep import pandas and matplotlib only when used.
from . import plot
from ._core import FIXED_MIN_TIME, MAX_PROCS, PRECISION_MIN_TIME
from ._core import __version__ as __version__
from ._matrix import matrix
from ._topology import Topology, topology
from .api import lat_ctx, pingpong, ring
from .cache import CacheSweep, cache_sweep, knees
from .files import load
from .frame import concat
from .result import MatrixResult, PingpongResult, RingResult
from .sweep import sweep

__all__ = [
    "CacheSweep",
    "FIXED_MIN_TIME",
    "PRECISION_MIN_TIME",
    "MAX_PROCS",
    "MatrixResult",
    "PingpongResult",
    "RingResult",
    "cache_sweep",
    "concat",
    "knees",
    "lat_ctx",
    "load",
    "matrix",
    "pingpong",
    "plot",
    "ring",
    "sweep",
    "topology",
    "Topology",
    "__version__",
]
