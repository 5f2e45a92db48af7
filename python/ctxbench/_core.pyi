"""Typed stub of the native module built from src/python.rs."""

from collections.abc import Sequence
from typing import Any

DEFAULT_MIN_TIME: float
DEFAULT_TIMEOUT: float
MAX_PROCS: int
ENGINES: tuple[str, ...]
TRANSPORTS: dict[str, tuple[str, ...]]
PLACEMENTS: tuple[str, ...]
COMPILER: str
__version__: str

def ring(
    procs: Sequence[int],
    *,
    engine: str = "process",
    transport: str | None = None,
    size_kb: int = 0,
    repetitions: int = 11,
    warmup: int = 1,
    parallel: int = 1,
    placement: str | Sequence[int] | None = None,
    cpu: int | None = None,
    min_time: float = ...,
    timeout: float = 10.0,
    record_hops: bool = False,
) -> dict[str, Any]: ...
def workload_checksum(size_kb: int) -> int: ...
def mann_whitney(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]: ...
def pingpong(
    loops: int = 1_000_000,
    *,
    threads: bool = False,
    transport: str = "pipe",
    placement: str | Sequence[int] | None = None,
    cpu: int | None = None,
    timeout: float = 10.0,
) -> dict[str, Any]: ...
def fiber_baseline_ns(pairs: int) -> float: ...
def default_transport(engine: str) -> str: ...
def placement_name(placement: str | Sequence[int] | None = None, cpu: int | None = None) -> str: ...
