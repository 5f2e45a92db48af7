"""The measuring subcommands: ``lat-ctx``, ``ring``, ``pipe``, ``sizes`` and ``info``."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

import numpy as np

from .. import metadata, report
from .._format import figure, interval
from ..api import pingpong, result_metadata, ring
from ..record import encode
from . import _flags


def add_parsers(sub: Any) -> None:
    """Add the subcommands to ``ctxbench``'s subparsers."""
    for add in (_add_lat_ctx, _add_ring, _add_pipe, _add_sizes, _add_info):
        add(sub)


def _add_lat_ctx(sub: Any) -> None:
    lc = sub.add_parser(
        "lat-ctx",
        help="lmbench's lat_ctx: processes in a ring of pipes",
        description="Pass a token round rings of forked processes; print µs per switch "
        "in lat_ctx's xgraph format.",
    )
    # lat_ctx is the ring with the process engine's default transport.
    lc.set_defaults(func=_ring)
    _ring_flags(lc, skip=("engine", "transport"))


def _add_ring(sub: Any) -> None:
    rg = sub.add_parser(
        "ring",
        help="the lat_ctx ring with any engine and transport",
        description="lat-ctx with the engine (who switches) and transport (how the token "
        "travels) named.",
    )
    rg.set_defaults(func=_ring)
    _ring_flags(rg)


def _add_pipe(sub: Any) -> None:
    pp = sub.add_parser(
        "pipe",
        help="perf bench sched pipe: two processes (or -T threads) ping-pong",
        description="Bounce a token between two processes; print perf bench sched pipe's "
        "fields (one op = one round trip = two switches). By default measured until its "
        "interval is within --precision, as a ring point; -l N is perf's fixed loop "
        "(perf's default 1000000).",
    )
    pp.set_defaults(func=_pipe)
    _flags.door_flags(pp, "pingpong")
    _flags.output_flags(pp, json="print the full result as JSON")
    _flags.verbose_flag(pp)
    _flags.no_wait_flag(pp)


def _add_sizes(sub: Any) -> None:
    sz = sub.add_parser(
        "sizes",
        help="the ring over a grid of sizes: direct and indirect cost, knees",
        description="Measure rings of --procs participants at every size of a log-spaced "
        "grid (default: up to 4x the largest cache share the CPUs can use, bounded in memory "
        "and time), round-robin; print per "
        "point the net µs per switch, the direct cost (size 0), the indirect cost "
        "net(size) - net(0) with its 95 % interval, the refill bandwidth beside the "
        "streaming-read bandwidth, the resident KiB; then the knees and the caches they "
        "match.",
    )
    sz.set_defaults(func=_sizes)
    _flags.door_flags(sz, "cache_sweep")
    sz.add_argument(
        "--plan",
        action="store_true",
        help="print the sizes it would measure, the memory and the time, and measure nothing "
        "(CTXBENCH_SYSFS=ROOT: the host that sysfs tree describes)",
    )
    _flags.output_flags(
        sz,
        out="save every ring result here (.json, .csv, …)",
        progress="no progress (default: a bar on a terminal, else a line per round on stderr)",
    )
    _flags.no_wait_flag(sz)


def _add_info(sub: Any) -> None:
    info = sub.add_parser(
        "info",
        help="print the metadata recorded with every result",
        description="Print this machine's metadata as every result records it: kernel, CPU "
        "model and count, affinity, SMT, governor, clocksource, hypervisor, the kernel's "
        "preemption model, sched_ext scheduler, rseq registration and CPU vulnerabilities, "
        "isolcpus/nohz_full, cgroup CPU quota, load, perf_event_paranoid, cache sizes, and "
        "the ctxbench, Python and rustc versions. Differences here explain differences in "
        "results. Last, where the run history is, what it holds and how to turn it off.",
    )
    info.set_defaults(func=_info)


def _ring_flags(p: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
    """lat_ctx's own flags and the rest of a ring's, shared by `lat-ctx` and `ring`."""
    _flags.door_flags(p, "ring", skip=skip, shown={"placement": "$LMBENCH_SCHED, else default"})
    _flags.output_flags(p, json="print the full result as JSON instead of xgraph text")
    p.add_argument(
        "--per-switch",
        action="store_true",
        help="print µs per context switch, not per hop as lat_ctx does (a ring of 4 or more "
        "makes more than one switch a hop: the woken task preempts the writer)",
    )
    _flags.verbose_flag(p)
    _flags.no_wait_flag(p)
    _flags.procs_flags(p)


def _emit(
    result: Any, args: argparse.Namespace, text: Callable[[], str], heard: list[report.Line]
) -> int:
    """The tool's own text format on stdout, or with --json the results document a
    ``.json`` file holds (``files.document_text``: what ``load``, ``compare`` and ``plot``
    read); then on stderr what is said about the measurement (``report.lines``), the
    warnings ``heard`` while it ran among it."""
    if args.json:
        from ..files import document_text

        sys.stdout.write(document_text([encode(result, hostname=not args.no_hostname)]))
    else:
        out = text()
        sys.stdout.write(out if out.endswith("\n") else out + "\n")
    report.say(report.lines(result, heard=heard, brief=not args.verbose))
    return 0


def ring_request(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``ring`` that a ``lat-ctx`` or ``ring`` command line asks
    for, ``procs`` among them (its positional counts, or ``--procs``)."""
    asked = _flags.door_args(args, "ring")
    asked.setdefault("placement", _flags.lmbench_sched())
    return {"procs": _flags.procs(args), **asked}


def pingpong_request(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``pingpong`` that a ``pipe`` command line asks for."""
    return _flags.door_args(args, "pingpong")


def _ring(args: argparse.Namespace) -> int:
    asked = ring_request(args)
    with report.heard() as heard:
        r = ring(asked.pop("procs"), **asked)
    return _emit(r, args, lambda: r.to_xgraph(per_switch=args.per_switch), heard)


def _pipe(args: argparse.Namespace) -> int:
    asked = pingpong_request(args)
    with report.heard() as heard:
        r = pingpong(**asked)
    return _emit(r, args, r.to_perf, heard)


def _sizes(args: argparse.Namespace) -> int:
    from .._knees import knees
    from ..cache import cache_sweep

    asked = _flags.door_args(args, "cache_sweep")
    sizes = asked.pop("sizes_kb", ["auto"])
    if "auto" in sizes and sizes != ["auto"]:
        raise ValueError(f"--sizes: expected 'auto' or KiB as integers, got {sizes}")
    if args.plan:
        from .._host_plan import format_sizes_plan, sizes_plan

        grid = "auto" if sizes == ["auto"] else sizes
        print(format_sizes_plan(sizes_plan(asked.pop("procs", None), grid, **asked)), end="")
        return 0
    sweep = cache_sweep(
        sizes_kb="auto" if sizes == ["auto"] else sizes,
        out=args.out,  # checked first, written as each ring size finishes
        hostname=not args.no_hostname,
        progress=not args.no_progress,
        **asked,
    )
    print(sizes_table(sweep.table))
    print(f"streaming read: {float(np.median(sweep.stream_kib_per_us)):.1f} KiB/µs")
    try:
        found = knees(sweep)
    except ValueError as e:  # too few sizes for a knee: the measurement stands (and is in --out)
        report.say([report.Line("note", f"no knees: {e}")])
    else:
        for line in knee_lines(found):
            print(line)
    report.say(report.lines(sweep))
    return 0


def knee_lines(found: Any) -> list[str]:
    """``knees``' findings in words: each knee with its interval and the cache it leaves, or
    where it sits when it matches none; each curve without one, and why."""
    lines = []
    for k in found.itertuples():
        spread = interval(
            k.working_set_kb, k.working_set_low_kb, k.working_set_high_kb, lambda v: f"{v:,.0f}"
        )
        at = f"knee: {k.procs} procs at {k.working_set_kb:,.0f} KiB {spread}"
        named = isinstance(k.cache, str)  # a frame read back may hold NaN for "none"
        lines.append(f"{at} -> {k.cache} ({k.cache_kb:,.0f} KiB)" if named else f"{at}: {k.note}")
    for curve in found.attrs.get("no_knee", []):
        lines.append(f"no knee: {curve['procs']} procs: {curve['reason']}")
    return lines


def sizes_table(table: Any) -> str:
    """The ``sizes`` table: one line per (procs, size). A refill rate is printed as a figure
    only where the core found it one (``refill_note``); one above the streaming read is
    marked, and explained under the table."""
    from ..cache import REFILL_ABOVE_STREAM

    head = (
        f"{'procs':>5} {'KiB':>7} {'ws KiB':>8} {'net µs':>8} {'direct':>7} "
        f"{'indirect µs [95 %]':<30} {'refill KiB/µs':>16} {'resident':>8}"
    )
    lines = [head]
    two = lambda v: f"{v:.2f}"  # noqa: E731
    for r in table.itertuples():
        bounds = (r.indirect_us, r.indirect_low_us, r.indirect_high_us)
        indirect = f"{r.indirect_us:.2f} -" if r.size_kb == 0 else figure(*bounds, two)
        lines.append(
            f"{r.procs:>5} {r.size_kb:>7} {r.working_set_kb:>8} {r.latency_us:>8.2f} "
            f"{r.direct_us:>7.2f} {indirect:<30} "
            f"{_refill_text(r):>16} {r.resident_kb:>8}"
        )
    above = table[table["refill_note"] == "above streaming read"]
    if len(above):
        stream = ", ".join(f"{v:.1f}" for v in sorted(set(above["stream_kib_per_us"])))
        lines.append(f"* {stream} KiB/µs or more: {REFILL_ABOVE_STREAM}")
    return "\n".join(lines)


def _refill_text(row: Any) -> str:
    """A refill rate as the table prints it: its figure, or the core's reason for none."""
    if row.refill_note == "nothing to refill":
        return "-"
    if row.refill_note == "above streaming read":
        return f"{row.refill_kib_per_us:.1f} *"
    return row.refill_note or f"{row.refill_kib_per_us:.1f}"


def _info(args: argparse.Namespace) -> int:
    from .. import _history

    meta = result_metadata()
    text = metadata.format_metadata(meta)
    print(text)
    summary = _history.summary(meta, _history.Conditions())
    # In the metadata's column: "key:" padded to where the values start.
    first = text.splitlines()[0] if text else "x: "
    width = len(first) - len(first.split(":", 1)[1].lstrip())
    print(f"{'run_history:':<{width}}{_history.headline(summary)}")
    return 0
