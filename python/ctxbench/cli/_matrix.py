"""``ctxbench matrix``: the CPU×CPU wake-up matrix as text, a file, a figure."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import _core, report
from . import _flags


def add_parsers(sub: Any) -> None:
    """Add the subcommand to ``ctxbench``'s subparsers."""
    mx = sub.add_parser(
        "matrix",
        help="wake-up cost between every pair of CPUs, on the machine's topology",
        description="For each ordered pair (waker i, wakee j) of CPUs, a ring of two pinned "
        "i->j, measured until precise. Prints the matrix (rows = waker, µs per switch: the "
        "mean of the i->j and j->i wake-up) and the median and range per class of CPU pair "
        "(same-cpu, smt-sibling, shared-l2, shared-llc, same-package, cross-package).",
    )
    mx.set_defaults(func=_matrix)
    mx.add_argument(
        "--cpus",
        type=cpu_list,
        default=None,
        metavar="LIST",
        help="CPUs to pair, e.g. 0-3,8 (default: every CPU this process may use)",
    )
    mx.add_argument(
        "--engine", choices=("thread", "process"), default="thread", help="default thread"
    )
    mx.add_argument(
        "--transport",
        choices=_flags.transports("thread", "process"),
        default="futex",
        help="how the token travels (default futex; yield only with one CPU)",
    )
    mx.add_argument(
        "-s", dest="size_kb", type=int, default=0, metavar="KB", help="KiB summed per hop"
    )
    mx.add_argument(
        "--classes",
        nargs="?",
        type=int,
        const=_core.MATRIX_PER_CLASS,
        default=None,
        metavar="K",
        help=f"only K cells per class of CPU pair (default K {_core.MATRIX_PER_CLASS}), "
        "chosen deterministically: a big machine in seconds",
    )
    mx.add_argument("--passes", type=int, default=1, help="measure every cell N times (default 1)")
    mx.add_argument(
        "--record-hops",
        action="store_true",
        help="add i->j wake-to-run percentiles per cell (clock offset checked first)",
    )
    mx.add_argument(
        "--memory-node",
        type=_memory_node,
        default=None,
        metavar="NODE",
        help="NUMA node of each cell's memory: waker, wakee or a node id (default: the "
        "waker's where there are several nodes)",
    )
    _stopping_flags(mx)
    mx.add_argument("--out", default=None, help="also write the result (.json, .csv, .parquet)")
    mx.add_argument("--json", action="store_true", help="print the result as JSON instead")
    mx.add_argument(
        "--plot",
        metavar="FILE",
        default=None,
        help="draw the heatmap and the per-class summary to FILE (.png at 300 dpi, .svg, .pdf, "
        ".eps, .ps); "
        "a fleet's machines side by side. `ctxbench plot FILE --kind matrix` redraws a saved one",
    )
    mx.add_argument("--no-progress", action="store_true", help="no progress bar")
    _flags.no_wait_flag(mx)
    _flags.sched_flags(mx, "matrix")
    mx.add_argument(
        "--no-hostname",
        action="store_true",
        help="this machine's name as '(withheld)' in --json and --out",
    )
    mx.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="measure every machine of this Dask cluster (as sweep --scheduler); exit 1 when "
        "one dropped out",
    )


def _stopping_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--precision",
        type=float,
        default=_core.DEFAULT_PRECISION,
        help="stop a cell at a 95%% interval of +-this fraction "
        f"(default {_core.DEFAULT_PRECISION})",
    )
    p.add_argument(
        "--max-time",
        type=float,
        default=_core.DEFAULT_MAX_TIME,
        help=f"seconds of measuring per cell at most (default {_core.DEFAULT_MAX_TIME})",
    )
    p.add_argument(
        "--min-time",
        type=float,
        default=None,
        help=f"seconds per repetition (default {_core.PRECISION_MIN_TIME})",
    )
    p.add_argument(
        "-N", dest="repetitions", type=int, default=None, help="exactly N repetitions per cell"
    )


def cpu_list(text: str) -> list[int]:
    """ "0-3,8" -> [0, 1, 2, 3, 8], as taskset -c and sysfs write CPU lists. Held to what an
    affinity mask can name (``_core.MAX_CPUS``) while parsing: a range is never expanded
    past it."""
    most = _core.MAX_CPUS
    cpus: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi or lo)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected CPUs like 0-3,8; got {text!r}") from None
        if not 0 <= first <= last:
            raise argparse.ArgumentTypeError(f"expected CPUs like 0-3,8; got {part!r}")
        if last >= most:
            raise argparse.ArgumentTypeError(
                f"CPU ids are 0 to {most - 1} (what an affinity mask holds); got {part!r}"
            )
        if len(cpus) + last - first + 1 > most:
            raise argparse.ArgumentTypeError(
                f"lists more than {most} CPU ids, each CPU once at most; got {text!r}"
            )
        cpus.extend(range(first, last + 1))
    return cpus


def _memory_node(text: str) -> str | int:
    return int(text) if text.isdigit() else text


def _matrix(args: argparse.Namespace) -> int:
    from .._matrix import matrix
    from .._matrix_table import format_matrix
    from ..files import check_figure, document_text, save_figure
    from ..fleet import FleetError, kept
    from ..record import encode

    if args.plot is not None:
        check_figure(args.plot)  # before measuring, as --out is
    try:
        with report.heard() as heard, kept() as records:
            result = matrix(
                args.cpus,
                engine=args.engine,
                transport=args.transport,
                size_kb=args.size_kb,
                classes=args.classes if args.classes is not None else False,
                passes=args.passes,
                record_hops=args.record_hops,
                memory_node=args.memory_node,
                precision=args.precision,
                max_time=args.max_time,
                min_time=args.min_time,
                repetitions=args.repetitions,
                **_flags.sched_args(args),
                progress=not args.no_progress,
                scheduler=args.scheduler,
                out=args.out,
                hostname=not args.no_hostname,
            )
    except FleetError as e:
        print(f"ctxbench: error: {e}", file=sys.stderr)
        return 1
    local = not hasattr(result, "columns")
    if args.json:
        # The results document a .json --out holds: one record, or each machine's.
        mine = [encode(result, hostname=not args.no_hostname)] if local else records
        print(document_text(mine), end="")
    else:
        print(format_matrix(result), end="")
    if args.plot is not None:
        from ..plot import matrix as draw

        save_figure(draw(result), args.plot)
    # A fleet's frame says nothing of its own: what was heard while it ran.
    report.say(report.lines(result, heard=heard) if local else heard)
    return 0
