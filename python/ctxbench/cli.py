"""The ``ctxbench`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from . import _core, cli_workflow, metadata
from .api import pingpong, ring
from .result import record

# lmbench's LMBENCH_SCHED policies, for users who drive us from their lmbench scripts.
LMBENCH_SCHED = {
    "DEFAULT": "default",
    "SINGLE": "single",
    "BALANCED": "balanced",
    "UNIQUE": "spread",
}
ENGINES = ("process", "thread", "fiber")
TRANSPORTS = ("pipe", "eventfd", "futex", "socket", "signal", "yield", "resume")


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
        raise ValueError(f"LMBENCH_SCHED={value!r} is not one of {', '.join(LMBENCH_SCHED)}")
    return LMBENCH_SCHED[value]


def _placement_args(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "--placement",
        type=_placement,
        default=None,
        help=f"default|single|spread|balanced or CPU list 0,1 (default: {default})",
    )
    p.add_argument("--cpu", type=int, default=None, help="the CPU for --placement single")


def _ring_args(p: argparse.ArgumentParser) -> None:
    """lat_ctx's own flags, shared by `lat-ctx` and `ring`."""
    p.add_argument(
        "-P",
        dest="parallel",
        type=int,
        default=1,
        metavar="N",
        help="run N independent rings at once (default 1)",
    )
    p.add_argument(
        "-W",
        dest="warmup",
        type=int,
        default=1,
        metavar="N",
        help="warm-up repetitions before timing (default 1)",
    )
    p.add_argument(
        "-N",
        dest="repetitions",
        type=int,
        default=11,
        metavar="N",
        help="timed repetitions; the median is reported (default 11)",
    )
    p.add_argument(
        "-s",
        dest="size_kb",
        type=int,
        default=0,
        metavar="KB",
        help="KiB of private data each participant sums per hop (default 0)",
    )
    _placement_args(p, "$LMBENCH_SCHED, else default")
    p.add_argument(
        "--min-time",
        type=float,
        default=_core.DEFAULT_MIN_TIME,
        help=f"seconds per timed repetition (default {_core.DEFAULT_MIN_TIME})",
    )
    p.add_argument(
        "--json", action="store_true", help="print the full result as JSON instead of xgraph text"
    )
    p.add_argument("procs", type=int, nargs="+", help="participant counts, e.g. 2 4 8 16 20")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ctxbench", description="Context-switch benchmarks.")
    sub = p.add_subparsers(dest="command", required=True)

    lc = sub.add_parser(
        "lat-ctx",
        help="lmbench's lat_ctx: processes in a ring of pipes",
        description="Pass a token round rings of forked processes; print µs per switch "
        "in lat_ctx's xgraph format.",
    )
    _ring_args(lc)

    rg = sub.add_parser(
        "ring",
        help="the lat_ctx ring with any engine and transport",
        description="lat-ctx with the engine (who switches) and transport (how the token "
        "travels) named.",
    )
    rg.add_argument(
        "--engine", choices=ENGINES, default="process", help="who switches (default process)"
    )
    rg.add_argument(
        "--transport",
        choices=TRANSPORTS,
        default=None,
        help="how the token travels (default pipe; resume for fibers)",
    )
    _ring_args(rg)

    pp = sub.add_parser(
        "pipe",
        help="perf bench sched pipe: two processes (or -T threads) ping-pong",
        description="Bounce a token between two processes; print perf bench sched pipe's "
        "fields (one op = one round trip = two switches).",
    )
    pp.add_argument(
        "-l", "--loops", type=int, default=1_000_000, help="round trips (default 1000000)"
    )
    pp.add_argument(
        "-T",
        "--threaded",
        action="store_true",
        help="two threads of one process instead of two processes",
    )
    pp.add_argument(
        "--transport",
        choices=TRANSPORTS[:-1],
        default="pipe",
        help="how the token travels (default pipe)",
    )
    _placement_args(pp, "default")
    pp.add_argument("--json", action="store_true", help="print the full result as JSON")

    sub.add_parser("info", help="print the metadata recorded with every result")
    cli_workflow.add_parsers(sub)
    return p


def _emit(output: str | dict[str, object]) -> None:
    """The tool's own text format, or with --json the record result files hold."""
    sys.stdout.write(output if isinstance(output, str) else json.dumps(output, indent=1) + "\n")


def _ring(args: argparse.Namespace, engine: str, transport: str | None) -> int:
    placement = args.placement if args.placement is not None else _lmbench_sched()
    r = ring(
        args.procs,
        engine=engine,
        transport=transport,
        size_kb=args.size_kb,
        repetitions=args.repetitions,
        warmup=args.warmup,
        parallel=args.parallel,
        placement=placement,
        cpu=args.cpu,
        min_time=args.min_time,
    )
    _emit(record(r) if args.json else r.to_xgraph())
    for p, low in zip(r.procs.tolist(), r.below_resolution.tolist()):
        if low:
            print(
                f"ctxbench: {p} procs: net time <= 0, below the resolution of the method "
                "(lat_ctx would have omitted this line)",
                file=sys.stderr,
            )
    if any(v != "stable" for v in r.stats["verdict"]):
        for line in metadata.hints(r.metadata, placement=r.placement):
            print(f"ctxbench: hint: {line}", file=sys.stderr)
    return 0


def _pipe(args: argparse.Namespace) -> int:
    r = pingpong(
        args.loops,
        threads=args.threaded,
        transport=args.transport,
        placement=args.placement if args.placement is not None else "default",
        cpu=args.cpu,
    )
    _emit(record(r) if args.json else r.to_perf())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        rc = cli_workflow.run(args)
        if rc is not None:
            return rc
        if args.command == "lat-ctx":
            return _ring(args, "process", "pipe")
        if args.command == "ring":
            return _ring(args, args.engine, args.transport)
        if args.command == "pipe":
            return _pipe(args)
        if args.command == "info":
            meta = metadata.collect(version=_core.__version__, extra={"compiler": _core.COMPILER})
            print(metadata.format_metadata(meta))
            return 0
    except (ValueError, TypeError, OSError, RuntimeError) as e:
        print(f"ctxbench: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ctxbench: interrupted", file=sys.stderr)
        return 130
    raise AssertionError(args.command)
