"""The ``ctxbench`` command line: one parser, each subcommand's handler set on its parser."""

from __future__ import annotations

import argparse
import errno
import os
import re
import stat
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .._core import __version__
from .._exclusive import patience
from .._terminate import terminations_raise
from ..store import using
from . import _ab, _flags, _matrix, _measure, _store, _workflow
from . import _changes as _changes_cli

# Exit status of a writer whose reader went away (128 + SIGPIPE), as `yes | head` gives.
BROKEN_PIPE = 141


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ctxbench", description="Context-switch benchmarks.")
    p.add_argument("--version", action="version", version=f"ctxbench {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    _measure.add_parsers(sub)
    _workflow.add_parsers(sub)
    _matrix.add_parsers(sub)
    _ab.add_parsers(sub)
    _store.add_parsers(sub)
    _changes_cli.add_parsers(sub)
    return p


class StdoutFailed(OSError):
    """Writing the command's output to stdout failed (a full disk, an I/O error)."""


class _Stdout:
    """stdout, whose failures say that it was stdout that failed: a bare "No space left on
    device" names nothing."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, text: str) -> int:
        return self._call(self._out.write, text)

    def flush(self) -> None:
        self._call(self._out.flush)

    def _call(self, how: Any, *args: Any) -> Any:
        try:
            return how(*args)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise StdoutFailed(e.errno, f"writing the output to stdout: {e.strerror}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._out, name)


def _check_stdout() -> None:
    """``StdoutFailed`` before anything is measured where stdout is a file on a file system
    with no room left, which would lose what was measured when it is written at the end."""
    try:
        fd = sys.stdout.fileno()
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return  # a terminal, a pipe, a device: no file system to fill
        fs = os.fstatvfs(fd)
    except (AttributeError, ValueError, OSError):
        return  # no descriptor (a captured stdout): nothing to look at
    free = (fs.f_bfree if os.geteuid() == 0 else fs.f_bavail) * fs.f_frsize
    if free < fs.f_frsize:
        raise StdoutFailed(
            errno.ENOSPC,
            f"writing the output to stdout: {os.strerror(errno.ENOSPC)} (its file system has "
            f"{free} bytes free); nothing was measured",
        )


def _quiet_stdout() -> None:
    """Nothing more reaches stdout, not even the interpreter's final flush of what could not
    be written."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    real = sys.stdout
    sys.stdout = _Stdout(real)  # type: ignore[assignment]
    try:
        _check_stdout()
        # SIGTERM and SIGHUP end a command as Ctrl-C does (children reaped, groups removed),
        # with exit status 128 + the signal: killed at once, a run left its cgroup tree.
        restore = terminations_raise()
        try:
            labels = _flags.labels_of(getattr(args, "label", None) or [])
            where = getattr(args, "store", None)
            with patience(0 if getattr(args, "no_wait", False) else None), using(where, labels):
                code = int(args.func(args))
        finally:
            restore()
        sys.stdout.flush()  # a failure to write is found here, not at exit
        return code
    except BrokenPipeError:
        # `ctxbench info | head`: the reader has what it wanted. Quietly.
        _quiet_stdout()
        return BROKEN_PIPE
    except StdoutFailed as e:
        print(f"ctxbench: error: {e}", file=sys.stderr)
        _quiet_stdout()
        return 2
    # ImportError: an optional extra is missing; its message says what to install.
    # MemoryError: the core's memory check refused a ring (its message names the need, what
    # is available and what to lower), a bad request like any other.
    except (ValueError, TypeError, OSError, RuntimeError, ImportError, MemoryError) as e:
        print(f"ctxbench: error: {in_flags(str(e), p, args.command)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ctxbench: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout = real


def _flags_of(p: argparse.ArgumentParser, command: str) -> dict[str, str]:
    """Python parameter name -> the command's flag for it (``size_kb`` -> ``-s``)."""
    found: dict[str, str] = {}
    for action in p._actions:  # argparse keeps no public list
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            for a in action.choices[command]._actions:
                if a.option_strings:
                    longest = max(a.option_strings, key=len)
                    found.setdefault(a.dest, longest)
    return found


def in_flags(message: str, p: argparse.ArgumentParser, command: str) -> str:
    """An API error in the command's words: ``placement='single'`` is ``--placement single``
    and a leading ``size_kb:`` is ``-s:``, where the command has such a flag."""
    flags = _flags_of(p, command)

    def call(m: re.Match[str]) -> str:
        flag = flags.get(m[1])
        return f"{flag} {m[2]}" if flag else m[0]

    message = re.sub(r"\b([a-z_]+)='([^']*)'", call, message)
    head, sep, rest = message.partition(": ")
    if sep and head in flags:
        return f"{flags[head]}: {rest}"
    return message
