"""Result files: one registry of formats (``FORMATS``: a suffix and how that format is read
into the tidy frame and written) and the two rules every format follows: a write is atomic,
keeps the mode of the file it replaces and goes only where ``_safe_path`` lets it (the path
itself, never through a link, only over this user's own file), and a read refuses what is
not a regular file.

JSON holds the records (``ctxbench.record``: every field and the metadata; a subcommand's
``--json`` prints the same document, ``document_text``), CSV and Parquet the tidy frame
(``ctxbench.frame``), lmbench's xgraph text (``ctxbench.xgraph``) a curve per size. A new
format is a module that reads and writes it and a line in ``FORMATS``. ``as_frame`` reads
whatever a front door is given (a file of any format, a result, a frame, a list of them) into
one frame: ``compare``, the figures and the writers of tables take data through it.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import json
import os
import secrets
import stat
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Union

from . import _json_text, xgraph
from ._field import Bad
from ._safe_path import Entry, UnsafePath, entry_to_write, kind_of
from ._table_schema import TABLE_COLUMNS, check_table
from .frame import concat, require, to_frame
from .metadata import HOST_FIELDS, HOSTNAME_WITHHELD
from .record import check_document, decode, document, encode

if TYPE_CHECKING:
    import pandas as pd

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Format:
    """One file format: what it holds ("records", "table" or "text"), how a file of it is
    read into the tidy frame, and how results (or a frame, where it holds a table) are
    written to one: ``write(results, path, hostname)``."""

    name: str
    holds: str
    read: Callable[[PathLike], pd.DataFrame]
    write: Callable[[Any, PathLike, bool], None]


def _items(results: Any) -> list[Any]:
    return list(results) if isinstance(results, (list, tuple)) else [results]


# --- the two rules: regular files in, atomic writes out ----------------------------------------


def _not_regular(path: PathLike, mode: int) -> Exception:
    if stat.S_ISDIR(mode):
        return IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    return ValueError(
        f"{os.fspath(path)}: not a regular file ({kind_of(mode)}): results live in files"
    )


def open_regular(path: PathLike) -> IO[bytes]:
    """``path`` open for reading, if it is a regular file: a FIFO would hang the reader and a
    device such as /dev/zero never ends, so anything else is refused, naming ``path``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _naming(error: OSError, path: PathLike) -> OSError:
    """The same error about the user's path, not the temporary file beside it."""
    if error.errno is None or isinstance(error, UnsafePath):
        return error
    return type(error)(error.errno, error.strerror, os.fspath(path))


def _temp_in(entry: Entry, path: PathLike) -> tuple[int, str]:
    # Created 0o666 like any new file, so the umask decides its mode, whatever the format;
    # never through a link, never over anything there.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        tmp = f".{entry.name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, flags, 0o666, dir_fd=entry.fd), tmp
        except FileExistsError:
            continue
        except OSError as e:
            raise _naming(e, path) from None


def _mode_to_keep(path: PathLike, entry: Entry) -> int | None:
    """The permission bits of the file there, which a rewrite keeps; None when there is
    none. Only a regular file is replaced: never a device or a FIFO."""
    if entry.status is None:
        return None
    if not stat.S_ISREG(entry.status.st_mode):
        raise _not_regular(path, entry.status.st_mode)
    return stat.S_IMODE(entry.status.st_mode)


def check_writable(path: PathLike) -> None:
    """Raise what writing ``path`` would meet (an ``OSError`` naming it: ``UnsafePath`` where
    ``_safe_path`` refuses it; a ``ValueError`` for something that is not a regular file),
    without touching it: create and remove a file beside it, as ``write_atomically`` does."""
    with entry_to_write(path) as entry:
        _mode_to_keep(path, entry)
        fd, tmp = _temp_in(entry, path)
        os.close(fd)
        os.unlink(tmp, dir_fd=entry.fd)


def write_atomically(path: PathLike, write: Callable[[IO[bytes]], None]) -> None:
    """Write a file through ``write(binary_file)`` into a temporary file beside it, then
    rename: a reader (or a crash) never sees half of it. Where and whether: ``_safe_path``
    (the path itself, never through a link, only over this user's own regular file). A new
    file gets the mode of any new file (``0o666 & ~umask``), a rewritten one keeps its own.
    An ``OSError`` names ``path``."""
    with entry_to_write(path) as entry:
        keep = _mode_to_keep(path, entry)
        fd, tmp = _temp_in(entry, path)
        try:
            if keep is not None:
                os.fchmod(fd, keep)
            with os.fdopen(fd, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, entry.name, src_dir_fd=entry.fd, dst_dir_fd=entry.fd)
        except BaseException as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=entry.fd)
            if isinstance(e, OSError):
                raise _naming(e, path) from None
            raise


# --- JSON: the records -------------------------------------------------------------------------


def record_text(rec: dict[str, Any]) -> bytes:
    """One record as a results document holds it: JSON indented one space per level, as
    deep as the document's list of results nests it."""
    return b"\n".join(b"  " + line for line in json.dumps(rec, indent=1).encode().split(b"\n"))


def write_records(records: Sequence[dict[str, Any]], path: PathLike) -> None:
    """Write a results document atomically (``write_atomically``)."""
    write_record_texts([record_text(rec) for rec in records], path)


def write_record_texts(texts: Sequence[bytes], path: PathLike) -> None:
    """Write the results document of records already encoded (``record_text``): a sweep
    that keeps each record's text rewrites its file by copying, not by encoding every
    record again."""

    def write(f: IO[bytes]) -> None:
        for chunk in _document_chunks(texts):
            f.write(chunk)

    write_atomically(path, write)


def document_text(records: Sequence[dict[str, Any]]) -> str:
    """The results document of ``records`` as text, byte for byte what ``write_records``
    writes to a file: what a subcommand's ``--json`` prints, so that its output is a file
    ``load``, ``compare`` and ``plot`` read."""
    return b"".join(_document_chunks([record_text(rec) for rec in records])).decode()


def _document_chunks(texts: Sequence[bytes]) -> Iterator[bytes]:
    """The results document (``record.document``) holding the encoded records ``texts``."""
    empty = json.dumps(document([]), indent=1)
    head, _, tail = empty.partition("[]")
    yield head.encode()
    if texts:
        yield b"[\n"
        for i, text in enumerate(texts):
            yield b",\n" if i else b""
            yield text
        yield b"\n ]"
    else:
        yield b"[]"
    yield tail.encode() + b"\n"


def read_records(path: PathLike) -> list[dict[str, Any]]:
    """The raw result records of a ctxbench JSON file, each checked against the declaration of
    its kind (``ctxbench.schema.RECORDS``); a ``ValueError`` names the file, the record and the
    field of anything wrong."""
    try:
        with open_regular(path) as f:
            text = f.read().decode("utf-8")
        doc = _json_text.loads(text)
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a ctxbench results file: not UTF-8 text ({e})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a ctxbench results file: not JSON: {e}") from None
    except RecursionError:
        raise ValueError(f"{path}: not a ctxbench results file: nested too deeply") from None
    except _json_text.DuplicateKey:
        at, key, where = _json_text.duplicate(text) or (0, "?", "?")
        raise ValueError(
            f"{path}: line {at}: {where} holds the key {key!r} twice (JSON would keep the "
            "last without a word)"
        ) from None
    return check_document(doc, str(path), lambda steps: _json_text.line_of(text, steps))


def records_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The tidy frame of raw JSON records."""
    # Through plain namespaces rather than the classes, so a file written before a field was
    # added (declared ``required=False`` in ``schema.RECORDS``) still loads as a table.
    return concat(to_frame(types.SimpleNamespace(**decode(rec))) for rec in records)


def _write_json(results: Any, path: PathLike, hostname: bool) -> None:
    write_records([encode(r, hostname=hostname) for r in _items(results)], path)


# --- CSV and Parquet: the tidy table -----------------------------------------------------------

# Read as text whatever they look like: a placement or a kernel release is never a number.
_TEXT_COLUMNS = {name: str for name, spec in TABLE_COLUMNS.items() if spec.type == "str"}


def table(results: Any, hostname: bool = True) -> pd.DataFrame:
    """The tidy frame a table file holds of ``results`` (results, frames or one frame), its
    columns that name the host (``metadata.HOST_FIELDS``, where it has them) withheld with
    ``hostname=False``."""
    frame = as_frame(results)
    if not hostname:
        named = [c for c in HOST_FIELDS if c in frame.columns]
        frame = frame.assign(**dict.fromkeys(named, HOSTNAME_WITHHELD))
    return frame


# A spreadsheet runs a cell that starts with one of these as a formula; a fleet worker
# controls its host and CPU strings. Such a text cell is written with a leading "'" (as
# spreadsheets themselves escape one), and so is a text cell that starts with "'" already, so
# that reading strips exactly one and every string comes back as it was.
_FORMULA_STARTS = frozenset("=+-@\t\r'")


def _text_cells(frame: pd.DataFrame, change: Callable[[str], str | None]) -> pd.DataFrame:
    """``frame`` with each text cell ``v`` for which ``change(v)`` is not None replaced."""
    replaced = {}
    for name in frame.columns:
        column = frame[name]
        if column.dtype.kind != "O" and str(column.dtype) not in ("string", "str"):
            continue  # numbers (a negative one starts with "-") are no formulas
        new = column.map(lambda v: change(v) if isinstance(v, str) else None)
        hit = new.notna().to_numpy()
        if hit.any():
            replaced[name] = column.astype(object).where(~hit, new)
    return frame.assign(**replaced) if replaced else frame


def _neutralised(v: str) -> str | None:
    return "'" + v if v[:1] in _FORMULA_STARTS else None


def _restored(v: str) -> str | None:
    return v[1:] if v[:1] == "'" else None


def _write_csv(results: Any, path: PathLike, hostname: bool) -> None:
    text = _text_cells(table(results, hostname), _neutralised).to_csv(index=False)
    write_atomically(path, lambda f: f.write(text.encode("utf-8")))


def _exact_floats(pd: Any) -> dict[str, str]:
    # pandas before 3 parses a CSV's floats fast and not exactly (a figure read back differs
    # in its last digit, and a resumed sweep's key no longer matches); 3 parses them exactly
    # and deprecates the option.
    return {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def _write_parquet(results: Any, path: PathLike, hostname: bool) -> None:
    require("pyarrow", "writing .parquet", install="pyarrow")
    frame = table(results, hostname)
    write_atomically(path, lambda f: frame.to_parquet(f, index=False))


def _read_csv(path: PathLike) -> pd.DataFrame:
    def read(pd: Any, f: IO[bytes]) -> pd.DataFrame:
        return _text_cells(pd.read_csv(f, dtype=_TEXT_COLUMNS, **_exact_floats(pd)), _restored)

    return _read_table(path, read, "line")


def _read_parquet(path: PathLike) -> pd.DataFrame:
    require("pyarrow", "reading .parquet", install="pyarrow")
    return _read_table(path, lambda pd, f: pd.read_parquet(f), "row")


def _read_table(path: PathLike, read: Callable[[Any, IO[bytes]], pd.DataFrame], at: str) -> Any:
    pd = require("pandas", "ctxbench.load")
    with open_regular(path) as f:
        try:
            df = read(pd, f)
        except UnicodeDecodeError as e:
            raise ValueError(f"{path}: not a ctxbench table: not UTF-8 text ({e})") from None
        except pd.errors.EmptyDataError:
            raise ValueError(f"{path}: not a ctxbench table: the file is empty") from None
        except (ValueError, OSError) as e:
            raise ValueError(f"{path}: not a ctxbench table: {e}") from None
    try:
        check_table(df)
    except Bad as e:
        if e.row is None:
            raise ValueError(f"{path}: {e}") from None
        where = f"line {_csv_line(path, e.row)}" if at == "line" else f"row {e.row}"
        raise ValueError(f"{path}: {where}: {e}") from None
    if df.empty:  # a header alone: its number columns are numbers, as a table with rows has
        numbers = [n for n, spec in TABLE_COLUMNS.items() if spec.type in ("int", "float")]
        df = df.astype(dict.fromkeys(set(numbers) & set(df.columns), "float64"))
    return df


def _csv_line(path: PathLike, row: int) -> int:
    """The line a CSV data row (0-based, as pandas counts them: blank lines skipped) starts on."""
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        start, seen = 1, -1  # the header is row -1
        for fields in reader:
            if fields:
                if seen == row:
                    return start
                seen += 1
            start = reader.line_num + 1
    return start


# --- lmbench's xgraph text ---------------------------------------------------------------------


def _read_xgraph(path: PathLike) -> pd.DataFrame:
    with open_regular(path) as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not lat_ctx output: not UTF-8 text ({e})") from None
    try:
        return xgraph.read(text)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def _write_xgraph(results: Any, path: PathLike, hostname: bool) -> None:
    text = "\n".join(xgraph.write(r) for r in _items(results))
    write_atomically(path, lambda f: f.write(text.encode("utf-8")))


# --- the registry ------------------------------------------------------------------------------

JSON = Format("JSON", "records", lambda path: records_frame(read_records(path)), _write_json)
CSV = Format("CSV", "table", _read_csv, _write_csv)
PARQUET = Format("Parquet", "table", _read_parquet, _write_parquet)
XGRAPH = Format("lat_ctx xgraph text", "text", _read_xgraph, _write_xgraph)
# Every format by its suffix (lower case): the one list of what ctxbench reads and writes.
FORMATS: dict[str, Format] = {
    ".json": JSON,
    ".csv": CSV,
    ".parquet": PARQUET,
    ".xgraph": XGRAPH,
    ".txt": XGRAPH,
}


def suffixes(*holds: str) -> list[str]:
    """The suffixes of the formats that hold ``holds`` ("records", "table", "text")."""
    return [suffix for suffix, fmt in FORMATS.items() if fmt.holds in holds]


def _suffix(path: PathLike, allowed: Sequence[str], what: str) -> str:
    """``path``'s suffix (lower case) if it is one of ``allowed``, else a ``ValueError``
    naming the path and listing them: a name without one is not given a default."""
    name = os.fspath(path)
    suffix = Path(name).suffix.lower()
    if suffix in allowed:
        return suffix
    if not name:
        why = "an empty file name"
    elif suffix:
        why = f"unknown suffix {suffix!r}"
    else:
        why = "no suffix"
    raise ValueError(f"{name!r}: {why}; name {what} ending in {', '.join(allowed)}")


def format_of(path: PathLike) -> Format:
    """The format ``path``'s suffix names, or a ``ValueError`` listing the suffixes."""
    return FORMATS[_suffix(path, list(FORMATS), "a results file")]


# What the figures ctxbench draws are saved as, by suffix (matplotlib's writers): the one list.
FIGURES = (".png", ".svg", ".pdf", ".eps", ".ps")


def check_figure(path: PathLike) -> None:
    """Raise what saving a figure to ``path`` would meet (a suffix not in ``FIGURES``, a
    place that cannot be written), before anything is measured or drawn."""
    _suffix(path, FIGURES, "a figure")
    check_writable(path)


def save_figure(fig: Any, path: PathLike) -> None:
    """Save a matplotlib figure by ``path``'s suffix (``FIGURES``) the way results are
    written (``write_atomically``): whole or not at all, an ``OSError`` naming ``path``."""
    suffix = _suffix(path, FIGURES, "a figure")
    write_atomically(path, lambda f: fig.savefig(f, format=suffix[1:]))


def save(
    results: Any,
    path: PathLike,
    *,
    hostname: bool = True,
    store: PathLike | None = None,
    labels: dict[str, str] | None = None,
) -> None:
    """Write results by the path's suffix (``FORMATS``): .json (everything), .csv/.parquet
    (the tidy frame; also accept a DataFrame), .xgraph/.txt (lat_ctx's text, ring results
    only).

    Every format is written the same way (``write_atomically``): whole or not at all, a new
    file with the mode of a new file (``0o666 & ~umask``), a rewritten one with its own; an
    ``OSError`` names ``path``. ``hostname=False`` writes ``metadata.HOSTNAME_WITHHELD`` for
    the hostname (JSON records, and a table's ``hostname`` column if it has one).

    Each result saved is also kept in the results store (``ctxbench.store``; ``store``: its
    path, None the default, ``"off"`` none) with ``labels``, once: a run measuring kept is
    not kept again."""
    if labels is not None:
        from .store import check_labels

        check_labels(labels)
    format_of(path).write(results, Path(path), hostname)
    kept = [r for r in _items(results) if hasattr(r, "kind") and hasattr(r, "metadata")]
    if kept:
        from . import store as results_store

        results_store.keep_quietly(kept, path=store, labels=labels, source="saved")


def as_frame(data: Any) -> pd.DataFrame:
    """The tidy frame of ``data``, whatever a front door was given: a frame as is, a file
    (any format of ``FORMATS``: what ``load`` reads), a result, or a list or tuple of any of
    these, concatenated. ``compare``, the figures and the table writers take data through
    it."""
    pd = require("pandas", "ctxbench")
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, (str, os.PathLike)):
        return load(data)
    if isinstance(data, (list, tuple)):
        return concat(as_frame(item) for item in data)
    return to_frame(data)


def _sniff(path: Path) -> Format:
    with open_regular(path) as f:
        for raw in f:
            line = raw.decode("utf-8", errors="replace").lstrip()
            if line.strip():
                if line.startswith('"size='):
                    return XGRAPH
                if line.startswith("{"):
                    return JSON
                break
    raise ValueError(f"{path}: not a ctxbench JSON, CSV, Parquet or xgraph file")


def load(path: PathLike) -> pd.DataFrame:
    """Read a file of any format in ``FORMATS`` into the tidy frame ``to_frame`` gives; a file
    with another suffix is recognised by its content (JSON or xgraph).

    Every file is checked against its declaration in ``ctxbench.schema``; anything else (a
    foreign table, a missing column or field, a value of the wrong type, out of range or not
    finite) is a ``ValueError`` naming the file, where in it (result, line or row) and the
    field. Columns and record entries ctxbench does not know are kept unchecked. Only regular
    files are read: a FIFO or a device is a ``ValueError`` naming it.
    """
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower()) or _sniff(path)
    return fmt.read(path)
