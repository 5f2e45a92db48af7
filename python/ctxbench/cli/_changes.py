"""The store's series over time: ``changes`` (where each series shifted and stayed) and
``publish`` (a static site of each machine's latest verdicts, series with their change points,
and matrices' heatmaps)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import _flags


def add_parsers(sub: Any) -> None:
    """Add the subcommands to ``ctxbench``'s subparsers."""
    ch = sub.add_parser(
        "changes",
        help="find where each stored series shifted and stayed (change points)",
        description="Scan each stored series (one point on one machine, oldest run first) "
        "with E-Divisive and name the run where each change happened: its id, time and "
        "labels, the change's size after/before with its 95 % interval, and its p-value. "
        "The chance of any false change point in one scan is held at --level (Holm). A "
        "series needs 2 x --min-runs runs to be scanned; the newest --min-runs - 1 runs "
        "cannot be a change point yet.",
    )
    ch.set_defaults(func=_changes)
    _scan_flags(ch)
    ch.add_argument("--json", action="store_true", help="print one JSON object per change")
    pu = sub.add_parser(
        "publish",
        help="write a static site of the stored series, verdicts and matrices",
        description="Write DIR/index.html, a section per machine: the latest verdicts (each "
        "point's newest run judged against the runs before it, as compare NEW judges; Holm "
        "across the page), its series (a page each: the runs with the change points marked "
        "and labelled, the latest runs) and the heatmap of each stored matrix. Plain HTML "
        "and SVG; open DIR/index.html, no server needed.",
    )
    pu.set_defaults(func=_publish)
    pu.add_argument("dir", help="the directory to write (created if missing)")
    _scan_flags(pu)


def _scan_flags(p: argparse.ArgumentParser) -> None:
    _flags.store_flag(p, reads=True)
    p.add_argument("--machine", help="only this machine's series (its fingerprint)")
    p.add_argument("--point", help="only this point's series (its point id)")
    p.add_argument(
        "--label",
        type=_flags.label,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="only runs with this label (repeatable; default: every run)",
    )
    p.add_argument("--level", type=float, help="chance of any false change point (default 5 %%)")
    p.add_argument("--min-runs", type=int, help="runs on each side of a change (default 5)")
    p.add_argument("--seed", type=int, help="the permutations' seed (default 0)")


def _scan_args(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "store": args.store,
        "machine": args.machine,
        "point": args.point,
        "labels": _flags.labels_of(args.label) or None,
        "level": args.level,
        "min_runs": args.min_runs,
        "seed": args.seed,
    }


def _changes(args: argparse.Namespace) -> int:
    from .._changes import changes
    from ..report._changes import change_lines

    frame = changes(**_scan_args(args))
    if args.json:
        for rec in frame.drop(columns=[c for c in frame if c.startswith("label.")]).to_dict(
            "records"
        ):
            rec["time"] = rec["time"].isoformat()
            sys.stdout.write(json.dumps(rec) + "\n")
    else:
        print("\n".join(change_lines(frame)))
    return 0


def _publish(args: argparse.Namespace) -> int:
    from .._publish import publish

    index = publish(args.dir, **_scan_args(args))
    print(f"wrote {index}")
    return 0
