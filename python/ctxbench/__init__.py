"""ctxbench: context-switch benchmarks with a Rust core.

``lat_ctx`` rebuilds lmbench's token ring; ``ring`` is the same measurement with the engine
and transport named; ``matrix`` measures it between every pair of CPUs, on the ``topology``
of the machine. Every function returns a result object holding numpy arrays and the
metadata of the machine it ran on; ``load``, ``compare`` and ``plot`` take those results,
their files or their frames alike.

Each name below is imported when first used, so that ``ctxbench lat-ctx`` starts without
the modules a sweep, a plot or a matrix needs (and pandas and matplotlib come only with a
frame or a figure).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from ._core import FIXED_MIN_TIME as FIXED_MIN_TIME
from ._core import MAX_PROCS as MAX_PROCS
from ._core import PRECISION_MIN_TIME as PRECISION_MIN_TIME
from ._core import __version__ as __version__

if TYPE_CHECKING:  # what type checkers see; at run time __getattr__ imports on first use
    from . import plot as plot
    from . import store as store
    from ._ab import ab as ab
    from ._changes import change_at as change_at
    from ._changes import changes as changes
    from ._compare import compare as compare
    from ._host_plan import matrix_plan as matrix_plan
    from ._host_plan import sizes_plan as sizes_plan
    from ._knees import knees as knees
    from ._matrix import matrix as matrix
    from ._plan import plan as plan
    from ._sweep import sweep as sweep
    from ._topology import Topology as Topology
    from ._topology import topology as topology
    from .api import lat_ctx as lat_ctx
    from .api import pingpong as pingpong
    from .api import ring as ring
    from .cache import CacheSweep as CacheSweep
    from .cache import cache_sweep as cache_sweep
    from .files import load as load
    from .files import save as save
    from .frame import concat as concat
    from .report import format_comparison as format_comparison
    from .result import AbResult as AbResult
    from .result import MatrixResult as MatrixResult
    from .result import PingpongResult as PingpongResult
    from .result import RingResult as RingResult

# Public name -> the module that defines it (None: the name is that submodule).
_HOME = {
    "plot": None,
    "store": None,
    "ab": "._ab",
    "AbResult": ".result",
    "compare": "._compare",
    "format_comparison": ".report",
    "matrix": "._matrix",
    "matrix_plan": "._host_plan",
    "sizes_plan": "._host_plan",
    "plan": "._plan",
    "Topology": "._topology",
    "topology": "._topology",
    "lat_ctx": ".api",
    "pingpong": ".api",
    "ring": ".api",
    "CacheSweep": ".cache",
    "cache_sweep": ".cache",
    "knees": "._knees",
    "load": ".files",
    "save": ".files",
    "concat": ".frame",
    "MatrixResult": ".result",
    "PingpongResult": ".result",
    "RingResult": ".result",
    "sweep": "._sweep",
    # change points over time
    "changes": "._changes",
    "change_at": "._changes",
}

__all__ = sorted(["FIXED_MIN_TIME", "PRECISION_MIN_TIME", "MAX_PROCS", "__version__", *_HOME])


def __getattr__(name: str) -> Any:
    home = _HOME.get(name, "")
    if home == "" and _is_public_submodule(name):
        home = None  # ``ctxbench.api``, ``ctxbench.files``: as an eager import allowed
    if home == "":
        raise AttributeError(f"module 'ctxbench' has no attribute {name!r}")
    module = importlib.import_module(f".{name}" if home is None else home, __name__)
    value = module if home is None else getattr(module, name)
    globals()[name] = value
    return value


def _is_public_submodule(name: str) -> bool:
    if name.startswith("_"):
        return False
    return importlib.util.find_spec(f"{__name__}.{name}") is not None


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
