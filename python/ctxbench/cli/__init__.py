"""The ``ctxbench`` command line: one parser, each subcommand's handler set on its parser."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import _matrix, _measure, _workflow


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ctxbench", description="Context-switch benchmarks.")
    sub = p.add_subparsers(dest="command", required=True)
    _measure.add_parsers(sub)
    _workflow.add_parsers(sub)
    _matrix.add_parsers(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    # ImportError: an optional extra is missing; its message says what to install.
    except (ValueError, TypeError, OSError, RuntimeError, ImportError) as e:
        print(f"ctxbench: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ctxbench: interrupted", file=sys.stderr)
        return 130
