"""The research-workflow subcommands: ``sweep``, ``plot`` and ``compare``.

Each handler imports what it uses (pandas, matplotlib) when it runs, so ``--help`` and the
measuring commands work without the ``analysis`` extra.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import _flags

PLOT_KINDS = ("lat_ctx", "compare", "distribution")


def add_parsers(sub: Any) -> None:
    """Add the subcommands to ``ctxbench``'s subparsers."""
    for add in (_add_sweep, _add_plot, _add_compare):
        add(sub)


def _add_sweep(sub: Any) -> None:
    sw = sub.add_parser(
        "sweep",
        help="run a grid of ring measurements, saving each point as it finishes",
        description="Measure every combination of engines, transports, placements, sizes "
        "and process counts. Each finished point is written to --out at once; rerun with the "
        "same --out to resume after a crash or Ctrl-C.",
    )
    sw.set_defaults(func=_sweep)
    sw.add_argument("--procs", type=int, nargs="+", required=True, help="process counts")
    sw.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[0],
        metavar="KB",
        help="KiB each participant sums per hop (default 0)",
    )
    sw.add_argument("--engines", nargs="+", default=["process"], help="default: process")
    sw.add_argument(
        "--transports",
        nargs="+",
        default=[None],
        help="default: each engine's own (pipe; resume for fibers)",
    )
    sw.add_argument(
        "--placements",
        type=_flags.placement,
        nargs="+",
        default=["default"],
        help=f"{_flags.PLACEMENT_HELP}, one or more (default: default)",
    )
    _flags.repetition_flags(sw)
    sw.add_argument(
        "--no-hostname",
        action="store_true",
        help="keep this machine's name out of --out (written as '(withheld)')",
    )
    sw.add_argument("--out", required=True, help="results JSON file, appended to and resumed")
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")


def _add_plot(sub: Any) -> None:
    pl = sub.add_parser(
        "plot",
        help="draw results (JSON, CSV, Parquet or lat_ctx xgraph files) to an image",
        description="Load one or more result files and draw them; the format follows the "
        "output's suffix (.png, .svg, .pdf).",
    )
    pl.set_defaults(func=_plot)
    pl.add_argument("results", nargs="+", help="result files")
    pl.add_argument("-o", dest="output", required=True, help="the figure file, e.g. fig.png")
    pl.add_argument(
        "--kind",
        choices=PLOT_KINDS,
        default="lat_ctx",
        help="lat_ctx curve (default), compare bars or distribution ECDF",
    )


def _add_compare(sub: Any) -> None:
    cp = sub.add_parser(
        "compare",
        help="compare two result files point by point; exit 1 when a point regressed",
        description="Ratio of medians and a Mann-Whitney U test per point. Exit status 0 "
        "when no point is slower by more than --threshold, 1 when one is.",
    )
    cp.set_defaults(func=_compare)
    cp.add_argument("base", help="the reference results file")
    cp.add_argument("new", help="the results file to judge")
    cp.add_argument(
        "--threshold",
        type=float,
        default=0.05,
        help="relative slowdown that counts as a regression (default 0.05 = 5%%)",
    )


def _sweep(args: argparse.Namespace) -> int:
    from ..sweep import sweep

    df = sweep(
        procs=args.procs,
        sizes_kb=args.sizes,
        engines=args.engines,
        transports=args.transports,
        placements=args.placements,
        repetitions=args.repetitions,
        out=args.out,
        progress=not args.no_progress,
        warmup=args.warmup,
        parallel=args.parallel,
        min_time=args.min_time,
        hostname=not args.no_hostname,
    )
    points = df.groupby(
        ["engine", "transport", "placement", "size_kb", "parallel", "procs"], sort=False
    )["latency_us"].first()
    for (engine, transport, placement, size_kb, parallel, procs), us in points.items():
        print(f"{engine}/{transport} {placement} size={size_kb}k P={parallel} {procs} {us:.2f}")
    print(f"ctxbench: {len(points)} points in {args.out}", file=sys.stderr)
    return 0


def _plot(args: argparse.Namespace) -> int:
    from .. import files, plot
    from ..frame import concat

    df = concat(files.load(path) for path in args.results)
    getattr(plot, args.kind)(df).savefig(args.output, dpi=120)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from .. import files
    from ..compare import compare, format_comparison

    table = compare(files.load(args.base), files.load(args.new), threshold=args.threshold)
    print(format_comparison(table))
    return 1 if table["regressed"].any() else 0
