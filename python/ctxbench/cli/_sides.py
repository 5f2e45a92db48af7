"""One side of an A/B run given as a ``ctxbench`` command line (``"ring --procs 2 --placement
single"``): read by the command line's own parser and turned into the request its handler
would make, so that a side means exactly what the command means."""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex
from typing import Any

from . import _measure, parser

# The subcommands a side may be, and the measurement each asks the core for.
SIDE_COMMANDS = {"ring": "ring", "lat-ctx": "ring", "pipe": "pingpong"}
# Flags of those subcommands that shape their output or their wait, not what is measured:
# a side has no output of its own, and the A/B run waits for the machine once.
_NOT_MEASURED = {"json": "--json", "no_hostname": "--no-hostname", "no_wait": "--no-wait"}


def side_request(line: str) -> tuple[str, dict[str, Any]]:
    """``(measure, keyword arguments)`` of the core's request that the command ``line``
    makes; a ``ValueError`` says what is wrong with it, in the parser's words."""
    try:
        argv = shlex.split(line)
    except ValueError as e:
        raise ValueError(f"{line!r}: not a command line: {e}") from None
    if not argv or argv[0] not in SIDE_COMMANDS:
        got = repr(argv[0]) if argv else "nothing"
        *first, last = SIDE_COMMANDS
        raise ValueError(
            f"{line!r}: a side is a {', '.join(first)} or {last} command line (without "
            f"'ctxbench'), got {got}"
        )
    args = _parse(line, argv)
    given = [flag for dest, flag in _NOT_MEASURED.items() if getattr(args, dest, False)]
    if given:
        raise ValueError(f"{line!r}: {given[0]} has no meaning in a side: it measures only")
    if SIDE_COMMANDS[argv[0]] == "ring":
        return "ring", _measure.ring_request(args)
    return "pingpong", _measure.pingpong_request(args)


def _parse(line: str, argv: list[str]) -> argparse.Namespace:
    """The parsed command line; argparse's complaint (which would print and exit) as a
    ``ValueError``."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
            return parser().parse_args(argv)
    except SystemExit:
        error = [ln for ln in said.getvalue().splitlines() if ": error: " in ln]
        why = error[-1].split(": error: ", 1)[1] if error else "asks for help, measures nothing"
        raise ValueError(f"{line!r}: {why}") from None
