"""``ctxbench ab``: two command lines measured against each other until the data decide."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import report
from . import _flags


def add_parsers(sub: Any) -> None:
    """Add the subcommand to ``ctxbench``'s subparsers."""
    ab = sub.add_parser(
        "ab",
        help="measure two configurations against each other until slower, faster or no "
        "change is decided, or a time budget ends",
        description="Each side is one quoted ring, lat-ctx or pipe command line, e.g. "
        "'ring --procs 2 --placement single'. Rounds of one fresh ring instance per side, "
        "the two in a fresh random order, until the 95 % confidence sequence of B/A "
        "decides: slower or faster (the interval beyond 1 and the ratio beyond "
        "--threshold), no change (the interval within +-THRESHOLD), or the budget ends "
        "(inconclusive, with what would decide it). Exit status 0, or 1 when B is slower.",
    )
    ab.set_defaults(func=_ab)
    ab.add_argument("a", help="side A: a quoted command line, e.g. 'ring --procs 2'")
    ab.add_argument("b", help="side B, the same way")
    _flags.door_flags(ab, "ab")
    _flags.output_flags(ab, json="print the results document (what load reads)")
    _flags.no_wait_flag(ab)


def _ab(args: argparse.Namespace) -> int:
    from .._ab import ab
    from ..record import encode

    r = ab(args.a, args.b, **_flags.door_args(args, "ab"))
    if args.json:
        from ..files import document_text

        sys.stdout.write(document_text([encode(r, hostname=not args.no_hostname)]))
        report.say(report.ab_lines(r))
    else:
        print(report.format_ab(r))
    return 1 if r.verdict == "slower" else 0
