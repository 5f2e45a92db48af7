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
    _flags.door_flags(mx, "matrix", skip=("per_class",))
    mx.add_argument(
        "--classes",
        nargs="?",
        type=int,
        const=_core.MATRIX_PER_CLASS,
        default=None,
        metavar="K",
        help=f"only K cells per class of CPU pair (default K {_core.MATRIX_PER_CLASS}), "
        "chosen deterministically (default: every pair within the time budget, else as many "
        "per class as it holds)",
    )
    mx.add_argument(
        "--plan",
        action="store_true",
        help="print the cells it would measure, the memory and the time, and measure "
        "nothing (CTXBENCH_SYSFS=ROOT: the host that sysfs tree describes)",
    )
    _flags.output_flags(
        mx,
        json="print the result as JSON instead",
        out="also write the result (.json, .csv, .parquet)",
        progress="no progress bar",
    )
    mx.add_argument(
        "--plot",
        metavar="FILE",
        default=None,
        help="draw the heatmap and the per-class summary to FILE (.png at 300 dpi, .svg, .pdf, "
        ".eps, .ps); "
        "a fleet's machines side by side. `ctxbench plot FILE --kind matrix` redraws a saved one",
    )
    _flags.no_wait_flag(mx)
    mx.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="measure every machine of this Dask cluster (as sweep --scheduler); exit 1 when "
        "one dropped out",
    )


def _matrix(args: argparse.Namespace) -> int:
    from .._matrix import matrix
    from .._matrix_table import format_matrix
    from ..files import check_figure, document_text, save_figure
    from ..fleet import FleetError, kept
    from ..record import encode

    asked = {"classes": args.classes, **_flags.door_args(args, "matrix")}
    if args.plan:
        from .._host_plan import format_matrix_plan, matrix_plan

        print(format_matrix_plan(matrix_plan(**asked)), end="")
        return 0
    if args.plot is not None:
        check_figure(args.plot)  # before measuring, as --out is
    try:
        with report.heard() as heard, kept() as records:
            result = matrix(
                **asked,
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
