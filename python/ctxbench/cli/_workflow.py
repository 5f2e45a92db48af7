"""The research-workflow subcommands: ``sweep``, ``plot``, ``compare``, ``history`` and
``plan``.

Each handler imports what it uses (pandas, matplotlib) when it runs, so ``--help`` and the
measuring commands work without the ``analysis`` extra.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import _core, report
from .._format import us
from . import _flags

PLOT_KINDS = ("lat_ctx", "compare", "sizes", "distribution", "machines", "matrix")


def add_parsers(sub: Any) -> None:
    """Add the subcommands to ``ctxbench``'s subparsers."""
    for add in (_add_sweep, _add_plot, _add_compare, _add_history, _add_plan):
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
    from ..grid import AXES

    # The grid's axes, each a list; an axis of ints or placements parsed as one.
    parse = {"procs": int, "sizes_kb": int, "placements": _flags.placement}
    for axis in AXES:
        sw.add_argument(
            axis.flag,
            dest=axis.name,
            type=parse.get(axis.name),
            nargs="+",
            required=axis.default is None,
            default=None if axis.default is None else list(axis.default),
            metavar="KB" if axis.name == "sizes_kb" else None,
            help=axis.help,
        )
    # A point's own flags: the axes above are lists instead, and a CPU list is a placement.
    _flags.door_flags(sw, "ring", skip=(*(a.point for a in AXES), "cpu"))
    _flags.output_flags(
        sw,
        out="results file (.json, .csv or .parquet): each point written as it finishes, "
        "finished points not measured again",
        out_required=True,
        progress="no progress bar",
    )
    _flags.no_wait_flag(sw)
    sw.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run the grid on every machine of this Dask cluster, e.g. tcp://127.0.0.1:8786 "
        "(pip install 'ctxbench[fleet]'); exit 1 when a machine dropped out",
    )
    sw.add_argument(
        "--xgraph",
        action="store_true",
        help="print lat_ctx's xgraph format, one block per series (engine, transport, "
        "placement, -P, size, in that order), instead of the table",
    )


def _add_plot(sub: Any) -> None:
    pl = sub.add_parser(
        "plot",
        help="draw results (JSON, CSV, Parquet or lat_ctx xgraph files) to an image",
        description="Load one or more result files and draw them; the format follows the "
        "output's suffix (.png at 300 dpi, .svg, .pdf with TrueType fonts). Several files "
        "are one labelled series each; --kind compare with two files draws them before/after "
        "with the ratio per point.",
    )
    pl.set_defaults(func=_plot)
    pl.add_argument("results", nargs="+", help="result files")
    pl.add_argument(
        "-o",
        dest="output",
        required=True,
        help="the figure file: .png (300 dpi), .svg, .pdf, .eps or .ps, e.g. fig.png",
    )
    pl.add_argument(
        "--kind",
        choices=PLOT_KINDS,
        default="lat_ctx",
        help="lat_ctx curve (default), compare points side by side (two files: before/after), "
        "sizes (µs against procs × size, with the CPU's caches marked), distribution ECDF, "
        "machines (a fleet run's machines side by side) or matrix (a `ctxbench matrix` "
        "result's heatmap)",
    )
    pl.add_argument(
        "--size",
        choices=("column", "page"),
        default="page",
        help="width of a two-column paper's column (3.5 in) or page (7.16 in); default page",
    )
    pl.add_argument(
        "--log", action="store_true", help="µs on a logarithmic axis (matrix: colour scale)"
    )


def _add_compare(sub: Any) -> None:
    cp = sub.add_parser(
        "compare",
        help="judge a results file against the store's series of its points (or against a "
        "second file); exit 1 when a point regressed",
        description="NEW alone: each point judged against the store's earlier runs of it on "
        "this machine in comparable conditions (or the runs carrying --baseline-label): a "
        "prediction interval around the level of the nearest mode of its series, Holm across "
        "all points (the chance of any false call at most 5 %); fewer than 5 comparable runs "
        "is inconclusive. BASE NEW: per point the ratio new/base with its 95 % interval, each "
        "side's uncertainty from its ring instances (or its runs, where a file holds several). "
        "A point is slower when the interval lies above 1 and the ratio exceeds 1 + "
        "--threshold. Exit status 0 when no point is slower, 1 when one is.",
    )
    cp.set_defaults(func=_compare)
    cp.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="NEW (judged against the store), or BASE NEW (two results files); none with --by",
    )
    cp.add_argument(
        "--by",
        metavar="LABEL[=A,B]",
        default=None,
        help="compare the store's runs under one value of a label with its runs under "
        "another, e.g. --by kernel or --by kernel=6.18-rc1,6.18-rc2 (default: none; without "
        "values the store must hold exactly two, the first seen the base), each run one unit",
    )
    _flags.store_flag(cp, reads=True)
    cp.add_argument(
        "--baseline-label",
        action="append",
        default=[],
        metavar="K=V",
        help="judge NEW against the stored runs carrying this label (repeatable), e.g. "
        "kernel=6.18-rc1, whenever they ran (default: none, the comparable runs)",
    )
    cp.add_argument(
        "--threshold",
        type=float,
        default=_core.DEFAULT_PRECISION,
        help="a change smaller than this fraction is no change, whatever its p-value "
        f"(default {_core.DEFAULT_PRECISION:g})",
    )
    for side in ("base", "new"):
        cp.add_argument(
            f"--{side}-host",
            metavar="NAME",
            default=None,
            help=f"only the {side} file's rows of this host, worker or machine (fleet runs)",
        )


def _add_history(sub: Any) -> None:
    hi = sub.add_parser(
        "history",
        help="show (or clear) the machine's run history, which widens intervals by the spread "
        "between runs",
        description="Each measuring run keeps its points' figures in the results store "
        "(ctxbench store); a later run of the same point in comparable conditions (other tasks "
        "runnable, steal) adds the spread between those runs to its interval. Per point: the "
        "runs of the last day, those comparable to now, the spread a run now would add, and "
        "the ages of the newest and oldest. $CTXBENCH_HISTORY=off reads none; --store or "
        "$CTXBENCH_STORE names the store, or off.",
    )
    hi.set_defaults(func=_history)
    hi.add_argument(
        "--clear",
        action="store_true",
        help="remove from the results store this machine's runs the history reads (those "
        "of this kernel and build, of the last 24 h)",
    )


def _history(args: argparse.Namespace) -> int:
    from .. import _history as history
    from ..api import result_metadata

    meta = result_metadata()
    if args.clear:
        path, removed = history.clear(meta)
        if path is None:
            print("no run history to remove (the results store is off)")
        else:
            print(f"removed {removed} runs of the last {history.MAX_AGE_S / 3600:g} h from {path}")
        return 0
    now = history.conditions()
    s = history.summary(meta, now)
    print(f"run history: {history.headline(s)}")
    if s.path is None:
        return 0
    steal = "unknown" if now.steal is None else f"{100 * now.steal:.1f} %"
    load = "unknown" if now.load is None else f"{now.load:.2f}"
    print(
        f"now: {load} other tasks runnable per CPU, steal {steal}; runs within "
        f"±{history.LOAD_TOLERANCE:g} of that load are comparable"
    )
    if not s.points:
        return 0
    print(f"{'runs':>5} {'alike':>5} {'spread':>7} {'newest':>7} {'oldest':>7}  point")
    for p in s.points:
        spread = f"{100 * p.sd:.1f} %" if p.sd is not None else f"<{_core.MIN_RUNS}"
        print(
            f"{p.runs:>5} {p.comparable:>5} {spread:>7} {_age(p.newest_s):>7} "
            f"{_age(p.oldest_s):>7}  {p.label}"
        )
    return 0


def _age(seconds: float) -> str:
    for unit, size in (("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


def _sweep(args: argparse.Namespace) -> int:
    from .._sweep import sweep
    from ..fleet import FleetError
    from ..grid import axes_of

    try:
        df = sweep(
            **axes_of(vars(args)),
            out=args.out,
            progress=not args.no_progress,
            **_flags.door_args(args, "ring"),
            scheduler=args.scheduler,
            hostname=not args.no_hostname,
        )
    except FleetError as e:
        print(f"ctxbench: error: {e}", file=sys.stderr)
        return 1
    show = _xgraph if args.xgraph else _table
    if "worker" in df.columns:  # a fleet run: one block per machine's worker
        for (host, worker), g in df.groupby(["host", "worker"], sort=False):
            print(f"# {host} {worker}\n{show(g)}")
    else:
        print(show(df), end="")
    points = df.groupby(list(_SERIES) + ["procs"]).ngroups
    said = [report.Line("note", f"{points} points in {args.out}"), *_hop_lines(df)]
    kept, asked = int(df.attrs.get("kept", 0)), int(df.attrs.get("points", 0))
    if kept:
        again = "to measure again, name another --out or remove it"
        how = (
            f"every point was already in {args.out}: nothing measured"
            if kept == asked
            else f"{kept} of {asked} points were already in {args.out}, not measured again"
        )
        said.append(report.Line("note", f"{how}; {again}"))
    report.say(said)
    return 0


# A series is one line of lat_ctx's graph; the sweep's grid order is kept (sort=False).
_SERIES = ["engine", "transport", "placement", "parallel", "size_kb"]


def _hop_lines(df: Any) -> list[report.Line]:
    """Each point's hop percentiles where its hops were recorded, as ``ring`` says them."""
    from ..schema import HOP_PERCENTILES, percentile_column

    columns = {k: percentile_column("hop", k) for k in HOP_PERCENTILES}
    columns = {k: c for k, c in columns.items() if c in df.columns}
    if not columns:
        return []
    keys = [k for k in ("host", "worker") if k in df.columns] + [*_SERIES, "procs"]
    out = []
    for point, g in df.groupby(keys, sort=False):
        text = report.hops_said({k: g[c].iloc[0] for k, c in columns.items()})
        *where, engine, transport, placement, parallel, size, procs = point
        name = " ".join([*map(str, where), f"{engine}/{transport} {placement} size={size}k"])
        if text:
            out.append(report.Line("note", f"{name} P={parallel} {procs} procs: {text}"))
    return out


def _table(df: Any) -> str:
    """One aligned row per point: what was measured, median µs per switch, CV, verdict."""
    points = df.groupby([*_SERIES, "procs"], sort=False).agg(
        median_us=("latency_us", "first"), cv=("cv", "first"), verdict=("verdict", "first")
    )
    header = (
        "engine",
        "transport",
        "placement",
        "size",
        "P",
        "procs",
        "median µs",
        "CV %",
        "verdict",
    )
    rows = [header] + [
        (engine, transport, str(placement), f"{size}k", str(parallel), str(procs),
         us(r.median_us), f"{100 * r.cv:.1f}", str(r.verdict))
        for (engine, transport, placement, parallel, size, procs), r in points.iterrows()
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    left = {0, 1, 2, len(header) - 1}
    return "".join(
        "  ".join(c.ljust(w) if i in left else c.rjust(w)
                  for i, (c, w) in enumerate(zip(row, widths))).rstrip() + "\n"
        for row in rows
    )  # fmt: skip


def _xgraph(df: Any) -> str:
    """lat_ctx's text per series: a '"size=..k ovr=..' title (the median overhead of the
    series' samples) and "procs µs" lines, blocks separated by a blank line."""
    from .. import xgraph

    blocks = []
    for (_, _, _, _, size), g in df.groupby(_SERIES, sort=False):
        points = g.groupby("procs", sort=False)["latency_us"].first()
        blocks.append(xgraph.block(size, g["overhead_us"].median(), points.items()))
    return "\n".join(blocks)


def _plot(args: argparse.Namespace) -> int:
    from .. import files, plot
    from ..frame import concat

    files.check_figure(args.output)  # before loading and drawing
    frames = [files.load(path) for path in args.results]
    options: dict[str, Any] = {"size": args.size, **({"log": True} if args.log else {})}
    if len(frames) > 1:
        # One labelled series per file, never one curve through all of them.
        names = _run_names(args.results)
        frames = [f.assign(run=name) for f, name in zip(frames, names)]
        if args.kind == "compare" and len(frames) == 2:
            fig = plot.compare(frames[0], new=frames[1], labels=tuple(names), **options)
            files.save_figure(fig, args.output)
            return 0
    files.save_figure(getattr(plot, args.kind)(concat(frames), **options), args.output)
    return 0


def _run_names(paths: list[str]) -> list[str]:
    """Each file by its name; by its path as given where two names are the same; numbered
    where a file is given twice."""
    import os

    for names in ([os.path.basename(p) for p in paths], list(paths)):
        if len(set(names)) == len(names):
            return names
    return [f"{i}: {p}" for i, p in enumerate(paths, 1)]


def _compare(args: argparse.Namespace) -> int:
    from .. import files
    from .._compare import compare
    from ..fleet import select

    if args.by is not None:
        return _compare_by(args)
    if len(args.files) == 1:
        return _compare_series(args)
    if len(args.files) != 2 or args.baseline_label:
        raise ValueError(
            "compare: give NEW (judged against the store, --baseline-label allowed) or BASE NEW"
        )
    base, new = files.load(args.files[0]), files.load(args.files[1])
    if args.base_host is not None:
        base = select(base, args.base_host)
    if args.new_host is not None:
        new = select(new, args.new_host)
    table = compare(base, new, threshold=args.threshold)
    print(report.format_comparison(table))
    return 1 if table["regressed"].any() else 0


def _compare_series(args: argparse.Namespace) -> int:
    """``compare NEW``: each point of NEW judged against the store's series of it."""
    from .. import files, store
    from .._series import judge
    from ..fleet import select

    new = files.load(args.files[0])
    if args.new_host is not None:
        new = select(new, args.new_host)
    labels = dict(store.parse_label(text) for text in args.baseline_label)
    kept = store.open(args.store, create=False)
    if kept is None:
        raise ValueError(
            "compare: no results store to judge against (off, or none yet): give BASE NEW, "
            "or keep runs in a store first (--store PATH, $CTXBENCH_STORE)"
        )
    with kept:
        table = judge(new, kept, labels=labels, threshold=args.threshold)
    print(report.format_series(table))
    return 1 if table["regressed"].any() else 0


def _opened_store(args: argparse.Namespace, command: str) -> Any:
    from .. import store

    kept = store.open(args.store, create=False)
    if kept is None:
        raise ValueError(
            f"{command} --by: no results store to read runs from (off, or none yet): keep "
            "runs in a store first (--store PATH, $CTXBENCH_STORE), labelled --label K=V"
        )
    return kept


def _compare_by(args: argparse.Namespace) -> int:
    """``compare --by LABEL``: the store's runs under two values of a label, point by point."""
    from .._by import compare_by

    if args.files or args.baseline_label:
        raise ValueError("compare --by: reads the store's runs; give no FILE, no --baseline-label")
    with _opened_store(args, "compare") as kept:
        table = compare_by(kept, args.by, threshold=args.threshold)
    print(report.format_groups(table))
    return 1 if table["regressed"].any() else 0


# What a plan's points are: the point's own parameters, not how it is measured.
_PLAN_TAKES = ("engine", "transport", "size_kb", "stride_bytes", "placement", "cpu")
_RING_PARAMETERS = tuple(p["name"] for p in _flags.parameters("ring"))
# A plan's own parameters and their defaults: the core's table's.
_PLAN = {p["name"]: p for p in _core.PARAMETERS if "plan" in p["doors"]}


def _add_plan(sub: Any) -> None:
    pl = sub.add_parser(
        "plan",
        help="how many runs per side (compare) or rounds (ab) tell a change of a given size "
        "on this machine now",
        description="From the spread this machine's own recent runs of each point show (the "
        "run history, runs in conditions comparable to now): the runs per side a comparison "
        "needs, and the rounds `ctxbench ab` needs, to tell a change of --detect with --power "
        "probability. Points as `ctxbench ring` takes them (default: "
        + " ".join(map(str, _PLAN["procs"]["default"]))
        + ").",
    )
    pl.set_defaults(func=_plan)
    pl.add_argument(
        "--detect",
        type=_flags.fraction,
        default=_PLAN["detect"]["default"],
        help=f"the change to tell, e.g. 10%% (default {100 * _PLAN['detect']['default']:g}%%)",
    )
    _flags.door_flags(pl, "plan", skip=("detect",))
    _flags.door_flags(
        pl,
        "ring",
        skip=tuple(n for n in _RING_PARAMETERS if n not in _PLAN_TAKES),
        shown={"placement": "$LMBENCH_SCHED, else default"},
    )
    pl.add_argument(
        "--by",
        metavar="LABEL[=A,B]",
        default=None,
        help="plan a `compare --by LABEL` from the store's runs of each point under the "
        "label's values (default: none, this machine's run history)",
    )
    _flags.store_flag(pl, reads=True)
    pl.add_argument("procs", type=int, nargs="*", help="participant counts")


def _plan(args: argparse.Namespace) -> int:
    from .._plan import DEFAULT_PROCS, POWER, plan

    if args.by is not None:
        return _plan_by(args)
    asked = _flags.door_args(args, "ring")
    asked.setdefault("placement", _flags.lmbench_sched())
    own = _flags.door_args(args, "plan")
    plans = plan(procs=args.procs or list(DEFAULT_PROCS), **own, **asked)
    print(report.format_plan(plans, args.detect, own.get("power", POWER)))
    return 0


def _plan_by(args: argparse.Namespace) -> int:
    """``plan --by LABEL``: runs a side for a ``compare --by``, from the stored runs' spread."""
    from .._by import plan_by

    own = _flags.door_args(args, "plan")
    if args.procs or own.get("pilot"):
        raise ValueError("plan --by: plans the store's points; give no procs, no --pilot")
    with _opened_store(args, "plan") as kept:
        table = plan_by(kept, args.by, args.detect, power=own.get("power"))
    print(report.format_plan_by(table))
    return 0
