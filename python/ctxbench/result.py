"""The result classes (numpy arrays from the core, plus the run's metadata) and their JSON
record: the versioned results file every other format and the sweep build on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, ClassVar, Union

import numpy as np

from . import _core
from .metadata import without_hostname
from .schema import RECORDS, Bad, check_record

if TYPE_CHECKING:
    import pandas as pd

    from ._core import PingpongDict, RingDict

PathLike = Union[str, "os.PathLike[str]"]


def _arrays(value: list[Any]) -> list[np.ndarray]:
    return [np.asarray(v) for v in value]


@dataclass(frozen=True, eq=False)
class RingResult:
    """One ring measurement: one entry per process count in ``procs``.

    All times are microseconds. ``latency_us`` is the median net time per switch (raw per-hop
    time minus the hot-cache overhead of the same repetition), ``min_us`` the lowest;
    ``samples_us`` holds every net sample, shape (repetitions, len(procs)); in precision mode
    (``repetitions`` is None) points stop after different numbers of repetitions
    (``repetitions_made``), and a point's column is NaN below its last repetition.
    ``stopped`` says, per point, why measuring ended: "repetitions" (the fixed count),
    "precision" (the 95 % interval of the median within ± ``precision`` × median),
    "max_repetitions" or "time_cap" (``max_time`` seconds of measuring).

    Each field is declared, with its shape and range, in ``ctxbench.schema.RING``.
    """

    kind: ClassVar[str] = "ring"
    # BEGIN written by `python -m ctxbench._codegen` from schema.RECORDS; edit there
    engine: str
    transport: str
    placement: str
    size_kb: int
    repetitions: int | None
    warmup: int
    parallel: int
    min_time: float
    procs: np.ndarray
    latency_us: np.ndarray
    min_us: np.ndarray
    samples_us: np.ndarray
    raw_us: np.ndarray
    raw_samples_us: np.ndarray
    overhead_us: float
    overhead_point_us: np.ndarray
    overhead_samples_us: np.ndarray
    ring_us: np.ndarray
    below_resolution: np.ndarray
    stats: dict[str, Any]
    cpus: list[np.ndarray]
    trips: np.ndarray
    overhead_rounds: np.ndarray
    work_verified: np.ndarray
    phase_s: dict[str, Any]
    switches_per_hop: np.ndarray
    switch_source: list[str]
    counted_us: np.ndarray
    involuntary_switches: np.ndarray
    migrations: np.ndarray
    hardware: dict[str, Any]
    counters_unavailable_reason: str | None
    warnings: list[str]
    hop_percentiles_us: dict[str, Any] | None
    hop_histogram: dict[str, Any] | None
    tsc_cycles_per_switch: np.ndarray | None
    tsc: dict[str, Any]
    precision: float | None = None
    max_time: float | None = None
    stopped: list[str] = field(default_factory=list)
    repetitions_made: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    max_repetitions: int | None = None
    cpu: int | None = None
    timeout: float | None = None
    record_hops: bool | None = None
    one_cpu: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    metadata: dict[str, Any] = field(default_factory=dict)
    # END written by `python -m ctxbench._codegen`

    @classmethod
    def from_core(cls, raw: RingDict, metadata: dict[str, Any]) -> RingResult:
        return cls(**raw, metadata=metadata)

    def stop_line(self) -> str:
        """How each point stopped and what its phases cost, in one line."""
        if not self.stopped:
            return "how the points stopped was not recorded"
        parts = []
        for j, p in enumerate(self.procs.tolist()):
            half = (self.stats["ci_high"][j] - self.stats["ci_low"][j]) / 2
            rel = half / abs(self.latency_us[j]) if self.latency_us[j] else float("inf")
            parts.append(
                f"{p}: {self.stopped[j]} after {int(self.repetitions_made[j])} reps, "
                f"±{rel:.1%}, {sum(float(v[j]) for v in self.phase_s.values()):.2f} s"
            )
        return "; ".join(parts)

    def to_xgraph(self) -> str:
        """lat_ctx's output: a title line with size and overhead, then "procs µs" pairs.

        Unlike lat_ctx, a point below the method's resolution (net <= 0) is printed, not
        dropped; ``below_resolution`` flags it.
        """
        lines = [f'"size={self.size_kb}k ovr={self.overhead_us:.2f}']
        lines += [f"{p} {v:.2f}" for p, v in zip(self.procs.tolist(), self.latency_us.tolist())]
        return "\n".join(lines) + "\n"

    def to_frame(self) -> pd.DataFrame:
        """The tidy pandas frame: one row per (procs, repetition); see ``ctxbench.frame``."""
        from .frame import to_frame

        return to_frame(self)

    def save(self, path: PathLike, *, hostname: bool = True) -> None:
        """Write to .json, .csv, .parquet or .xgraph by suffix; see ``ctxbench.files``.
        ``hostname=False`` writes ``metadata.HOSTNAME_WITHHELD`` instead of this machine's."""
        _save_by_suffix([self], path, hostname=hostname)

    def _repr_html_(self) -> str:
        from .frame import result_html

        return result_html(self)

    def __repr__(self) -> str:
        points = ", ".join(
            f"{p}: {v:.3g}" + ("*" if low else "")
            for p, v, low in zip(
                self.procs.tolist(), self.latency_us.tolist(), self.below_resolution.tolist()
            )
        )
        return (
            f"RingResult({self.engine}/{self.transport}, size={self.size_kb}k, "
            f"placement={self.placement}, parallel={self.parallel}, "
            f"ovr={self.overhead_us:.2f} µs, µs/switch {{{points}}})"
        )


@dataclass(frozen=True, eq=False)
class PingpongResult:
    """Two participants bouncing a token, as ``perf bench sched pipe`` does.

    One op is one round trip (two switches): ``usecs_per_op`` and ``ops_per_sec`` are perf's
    figures; ``usecs_per_switch`` is half an op. Raw time: no overhead is subtracted.
    """

    kind: ClassVar[str] = "pingpong"
    # BEGIN written by `python -m ctxbench._codegen` from schema.RECORDS; edit there
    loops: int
    threads: bool
    engine: str
    transport: str
    placement: str
    elapsed_s: float
    usecs_per_op: float
    ops_per_sec: float
    usecs_per_switch: float
    cycles_per_switch: float | None
    tsc: dict[str, Any]
    cpus: np.ndarray
    metadata: dict[str, Any] = field(default_factory=dict)
    # END written by `python -m ctxbench._codegen`

    @classmethod
    def from_core(cls, raw: PingpongDict, metadata: dict[str, Any]) -> PingpongResult:
        return cls(**raw, metadata=metadata)

    def to_perf(self) -> str:
        """The fields `perf bench sched pipe` prints, in its layout."""
        between = "threads" if self.threads else "processes"
        return (
            "# Running 'sched/pipe' benchmark:\n"
            f"# Executed {self.loops} {self.transport} operations between two {between}\n\n"
            f"     Total time: {self.elapsed_s:.3f} [sec]\n\n"
            f"{self.usecs_per_op:15.6f} usecs/op\n"
            f"{int(self.ops_per_sec):15d} ops/sec\n"
            f"{self.usecs_per_switch:15.6f} usecs/switch\n"
            + (
                f"{self.cycles_per_switch:15.1f} TSC cycles/switch\n"
                if self.cycles_per_switch is not None
                else ""
            )
        )

    def __repr__(self) -> str:
        return (
            f"PingpongResult({self.engine}/{self.transport}, placement={self.placement}, "
            f"loops={self.loops}, {self.usecs_per_op:.3f} µs/op, "
            f"{self.usecs_per_switch:.3f} µs/switch)"
        )


Result = Union[RingResult, PingpongResult]
# The one list of result kinds: the "kind" of a record names its class.
KINDS: dict[str, type[Result]] = {cls.kind: cls for cls in (RingResult, PingpongResult)}


# Picking a file format by suffix is ctxbench.files' business, and files imports this module
# for the JSON record; it hands its writer over when it loads (``register_writer``), so
# ``save`` can use it without an import running back up.
_writer: Callable[..., None] | None = None


def register_writer(writer: Callable[..., None]) -> None:
    """Set the function ``save`` writes through (``ctxbench.files.save``)."""
    global _writer
    _writer = writer


def _save_by_suffix(results: Sequence[Result], path: PathLike, *, hostname: bool) -> None:
    if _writer is None:  # ctxbench/__init__ imports files, so only a broken install sees this
        raise RuntimeError("ctxbench.files is not loaded: import ctxbench")
    _writer(results, path, hostname=hostname)


# The JSON results file: {"format": "ctxbench", "format_version": 1, "results": [record, ...]},
# one record per result: its kind, every field (arrays as lists) and its metadata.
FORMAT = "ctxbench"
FORMAT_VERSION = 1


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy arrays and numpy scalars
        return _nan_to_none(value.tolist())
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _nan_to_none(value: Any) -> Any:
    # NaN marks "no sample" (a point that stopped early); JSON has no NaN, it has null.
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    return value


def _has_none(value: Any) -> bool:
    if isinstance(value, list):
        return any(_has_none(v) for v in value)
    return value is None


def record(result: Result, *, hostname: bool = True) -> dict[str, Any]:
    """One result as a JSON-ready dict: ``kind``, every field (arrays as lists), ``metadata``
    (its hostname withheld with ``hostname=False``: see ``withhold_hostname``)."""
    if not isinstance(result, tuple(KINDS.values())):
        raise TypeError(f"expected a ctxbench result, got {type(result).__name__}")
    fields = dict(vars(result))
    metadata = fields.pop("metadata", None) or {}
    # Unset optional fields are left out, so a file written before they existed saves back
    # byte for byte.
    for name, spec in RECORDS[result.kind].items():
        value = fields.get(name)
        unset = value is None or (hasattr(value, "__len__") and len(value) == 0)
        if not spec.required and name in fields and unset:
            del fields[name]
    rec = {"kind": result.kind, **_jsonable(fields), "metadata": _jsonable(metadata)}
    return rec if hostname else withhold_hostname(rec)


def withhold_hostname(rec: dict[str, Any]) -> dict[str, Any]:
    """The record with ``metadata.HOSTNAME_WITHHELD`` for its hostname (where it has one)."""
    if not isinstance(rec.get("metadata"), dict):
        return rec
    return {**rec, "metadata": without_hostname(rec["metadata"])}


def _naming(error: OSError, path: Path) -> OSError:
    """The same error about the user's path, not the temporary file beside it."""
    if error.errno is None:
        return error
    return type(error)(error.errno, error.strerror, os.fspath(path))


def _temp_beside(path: Path) -> tuple[int, Path]:
    # Beside the file a symlink points to, so the rename replaces that file, not the link.
    # Created 0o666 like any new file, so the umask decides its mode, whatever the format.
    target = Path(os.path.realpath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    while True:
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
        except OSError as e:
            raise _naming(e, path) from None


def check_writable(path: PathLike) -> None:
    """Raise the ``OSError`` (naming ``path``) that writing ``path`` would meet, without
    touching it: create and remove a file beside it, as ``write_atomically`` does."""
    fd, tmp = _temp_beside(Path(path))
    os.close(fd)
    os.unlink(tmp)


def write_atomically(path: PathLike, write: Callable[[IO[bytes]], None]) -> None:
    """Write a file through ``write(binary_file)`` into a temporary file beside it, then
    rename: a reader (or a crash) never sees half of it, and every format gets the mode a new
    file gets (``0o666 & ~umask``). An ``OSError`` names ``path``."""
    path = Path(path)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.realpath(path))
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise _naming(e, path) from None
        raise


def write_records(records: Sequence[dict[str, Any]], path: PathLike) -> None:
    """Write a results file atomically (``write_atomically``)."""
    doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "results": list(records)}
    write_atomically(path, lambda f: f.write((json.dumps(doc, indent=1) + "\n").encode()))


def read_records(path: PathLike) -> list[dict[str, Any]]:
    """The raw result records of a ctxbench JSON file, each checked against the declaration of
    its kind (``ctxbench.schema.RECORDS``); a ``ValueError`` names the file, the record and the
    field of anything wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a ctxbench results file: not UTF-8 text ({e})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a ctxbench results file: not JSON: {e}") from None
    except RecursionError:
        raise ValueError(f"{path}: not a ctxbench results file: nested too deeply") from None
    if isinstance(doc, list):
        raise ValueError(
            f"{path}: not a ctxbench results file: a JSON list, expected the object "
            f'{{"format": "{FORMAT}", "format_version": {FORMAT_VERSION}, "results": [...]}}'
        )
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'{path}: not a ctxbench results file (no "format": "{FORMAT}")')
    if doc.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: format_version {doc.get('format_version')!r} is not supported "
            f"(this ctxbench reads version {FORMAT_VERSION})"
        )
    records = doc.get("results")
    kinds = " or ".join(KINDS)
    if not isinstance(records, list):
        raise ValueError(f'{path}: "results" must be a list of {kinds} records')
    for i, rec in enumerate(records):
        kind = rec.get("kind") if isinstance(rec, dict) else None
        if not isinstance(kind, str) or kind not in KINDS:
            what = f"kind {kind!r}" if isinstance(rec, dict) else type(rec).__name__
            raise ValueError(
                f'{path}: result {i}: {what}: "results" must be a list of {kinds} records'
            )
        try:
            check_record(rec, RECORDS[kind])
        except Bad as e:
            raise ValueError(f"{path}: result {i} ({kind}): {e}") from None
    return records


def _has_str(value: Any) -> bool:
    if isinstance(value, list):
        return any(_has_str(v) for v in value)
    return isinstance(value, str)


def _numeric(value: Any) -> Any:
    # Lists of numbers were numpy arrays; lists of strings (the verdicts) stay lists.
    if isinstance(value, dict):
        return {k: _numeric(v) for k, v in value.items()}
    if isinstance(value, list) and not _has_str(value):
        try:
            # null in a list of numbers is a missing sample: NaN again.
            return np.asarray(value, dtype=np.float64 if _has_none(value) else None)
        except ValueError:  # ragged: it was a list of arrays
            return [_numeric(v) for v in value]
    return value


def decode(rec: dict[str, Any]) -> dict[str, Any]:
    """Every entry of a record (``kind`` included) with its numpy arrays restored: lists of
    numbers become arrays, except where the declaration says otherwise (lists of strings,
    ragged lists of arrays)."""
    declared = RECORDS[rec["kind"]]
    fields = {}
    for name, value in rec.items():
        spec = declared.get(name)
        if name in ("kind", "metadata") or value is None:
            fields[name] = value
        elif spec is not None and spec.ragged:
            fields[name] = _arrays(value)
        elif spec is not None and spec.type == "str" and spec.shape:
            fields[name] = list(value)
        else:
            fields[name] = _numeric(value)
    return fields


def from_record(rec: dict[str, Any]) -> Result:
    """The result object of one record; entries its class does not know are dropped."""
    cls = KINDS[rec["kind"]]
    fields = decode(rec)
    known = [f.name for f in dataclasses.fields(cls)]
    return cls(**{name: fields[name] for name in known if name in fields})


def load_results(path: PathLike) -> list[Result]:
    """The result objects of a ctxbench JSON file, with numpy arrays restored."""
    out = []
    for i, rec in enumerate(read_records(path)):
        try:
            out.append(from_record(rec))
        except TypeError as e:
            raise ValueError(f"{path}: result {i}: {e}") from None
    return out


# What makes two points the same measurement: engine, transport, placement name, size_kb,
# procs, the stopping rule (a fixed repetition count, or a precision), parallel.
Key = tuple[str, str, str, int, tuple[int, ...], str, int]


def point_key(rec: dict[str, Any]) -> Key:
    """The identity of the point a ring record measured (one procs per record in a sweep)."""
    return (
        rec["engine"],
        rec["transport"],
        rec["placement"],
        int(rec["size_kb"]),
        tuple(int(p) for p in rec["procs"]),
        _stopping_rule(rec.get("repetitions"), rec.get("precision")),
        int(rec["parallel"]),
    )


def _stopping_rule(repetitions: Any, precision: Any) -> str:
    if repetitions is not None:
        return f"repetitions={int(repetitions)}"
    return f"precision={float(precision if precision is not None else _core.DEFAULT_PRECISION)}"


def planned_key(procs: list[int], args: dict[str, Any]) -> Key:
    """The key of the result ``measure(procs, **args)`` will give, without measuring."""
    # What the core records of what was asked, so a finished point is found again.
    config = _core.ring_config(procs, **{k: v for k, v in args.items() if k != "procs"})
    return point_key({**config, "procs": procs})
