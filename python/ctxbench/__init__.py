"""ctxbench: context-switch benchmarks with a Rust core.

``lat_ctx`` rebuilds lmbench's token ring; ``ring`` is the same measurement with the engine
and transport named. Every function returns a result object holding numpy arrays and the
metadata of the machine it ran on.
"""

from __future__ import annotations

from ._core import DEFAULT_MIN_TIME, MAX_PROCS
from ._core import __version__ as __version__
from .api import lat_ctx, ring
from .result import RingResult

__all__ = ["DEFAULT_MIN_TIME", "MAX_PROCS", "RingResult", "lat_ctx", "ring", "__version__"]
