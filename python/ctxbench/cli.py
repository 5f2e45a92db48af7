"""The ``ctxbench`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from . import _core, metadata
from .api import lat_ctx

# lmbench's LMBENCH_SCHED policies, for users who drive us from their lmbench scripts.
LMBENCH_SCHED = {
    "DEFAULT": "default",
    "SINGLE": "single",
    "BALANCED": "balanced",
    "UNIQUE": "spread",
}


def _placement(text: str) -> str | list[int]:
    if text in ("default", "single", "spread", "balanced"):
        return text
    try:
        return [int(c) for c in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected default, single, spread, balanced or a CPU list like 0,1; got {text!r}"
        ) from None


def _lmbench_sched() -> str:
    value = os.environ.get("LMBENCH_SCHED", "DEFAULT").strip().upper()
    if value not in LMBENCH_SCHED:
        raise SystemExit(
            f"ctxbench: LMBENCH_SCHED={value!r} is not one of {', '.join(LMBENCH_SCHED)}"
        )
    return LMBENCH_SCHED[value]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ctxbench", description="Context-switch benchmarks.")
    sub = p.add_subparsers(dest="command", required=True)

    lc = sub.add_parser(
        "lat-ctx",
        help="lmbench's lat_ctx: processes in a ring of pipes",
        description="Pass a token round rings of forked processes; print µs per switch "
        "in lat_ctx's xgraph format.",
    )
    lc.add_argument(
        "-P",
        dest="parallel",
        type=int,
        default=1,
        metavar="N",
        help="run N independent rings at once (default 1)",
    )
    lc.add_argument(
        "-W",
        dest="warmup",
        type=int,
        default=1,
        metavar="N",
        help="warm-up repetitions before timing (default 1)",
    )
    lc.add_argument(
        "-N",
        dest="repetitions",
        type=int,
        default=11,
        metavar="N",
        help="timed repetitions; the median is reported (default 11)",
    )
    lc.add_argument(
        "-s",
        dest="size_kb",
        type=int,
        default=0,
        metavar="KB",
        help="KiB of private data each process sums per hop (default 0)",
    )
    lc.add_argument(
        "--placement",
        type=_placement,
        default=None,
        help="default|single|spread|balanced or CPU list 0,1 "
        "(default: $LMBENCH_SCHED, else default)",
    )
    lc.add_argument("--cpu", type=int, default=None, help="the CPU for --placement single")
    lc.add_argument(
        "--min-time",
        type=float,
        default=_core.DEFAULT_MIN_TIME,
        help=f"seconds per timed repetition (default {_core.DEFAULT_MIN_TIME})",
    )
    lc.add_argument(
        "--json", action="store_true", help="print the full result as JSON instead of xgraph text"
    )
    lc.add_argument("procs", type=int, nargs="+", help="process counts, e.g. 2 4 8 16 20")

    sub.add_parser("info", help="print the metadata recorded with every result")
    return p


def _to_json(result: object) -> dict[str, object]:
    def conv(v: object) -> object:
        if hasattr(v, "tolist"):
            return v.tolist()  # type: ignore[no-any-return,attr-defined]
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v

    return {k: conv(v) for k, v in vars(result).items()}


def _lat_ctx(args: argparse.Namespace) -> int:
    placement = args.placement if args.placement is not None else _lmbench_sched()
    r = lat_ctx(
        args.procs,
        size_kb=args.size_kb,
        repetitions=args.repetitions,
        warmup=args.warmup,
        parallel=args.parallel,
        placement=placement,
        cpu=args.cpu,
        min_time=args.min_time,
    )
    if args.json:
        json.dump(_to_json(r), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(r.to_xgraph())
    for p, low in zip(r.procs.tolist(), r.below_resolution.tolist()):
        if low:
            print(
                f"ctxbench: {p} procs: net time <= 0, below the resolution of the method "
                "(lat_ctx would have omitted this line)",
                file=sys.stderr,
            )
    unsteady = [v for v in r.stats["verdict"] if v != "stable"]
    if unsteady:
        for line in metadata.hints(r.metadata, placement=r.placement):
            print(f"ctxbench: hint: {line}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "lat-ctx":
            return _lat_ctx(args)
        if args.command == "info":
            print(
                metadata.format_metadata(
                    metadata.collect(version=_core.__version__, extra={"compiler": _core.COMPILER})
                )
            )
            return 0
    except (ValueError, TypeError, OSError, RuntimeError) as e:
        print(f"ctxbench: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ctxbench: interrupted", file=sys.stderr)
        return 130
    raise AssertionError(args.command)
