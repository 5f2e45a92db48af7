"""``ctxbench store``: what the results store holds (``list``, ``show``), its runs labelled
or deleted by label, exported (CSV, Parquet, a JSON results document) and result files or
old run history files imported."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from . import _flags


def add_parsers(sub: Any) -> None:
    st = sub.add_parser(
        "store",
        help="list, show, label, delete, export or import the runs of the results store",
        description="The results store keeps every run ctxbench measures or saves (one row "
        "set: its points' figures, conditions and labels), so that a baseline is a series. "
        "It is $CTXBENCH_STORE, else $XDG_DATA_HOME/ctxbench/store.sqlite3 (or "
        "~/.local/share/ctxbench/store.sqlite3); --store PATH names another, off none.",
    )
    actions = st.add_subparsers(dest="action", required=True)
    ls = actions.add_parser("list", help="one line per run, oldest first (--label filters)")
    _flags.store_flags(ls)
    ls.set_defaults(func=_list)
    show = actions.add_parser("show", help="a run's conditions, labels and points")
    show.add_argument("run", type=int, help="the run's id (as list prints it)")
    _flags.store_flags(show)
    show.set_defaults(func=_show)
    lab = actions.add_parser("label", help="add --label k=v to the runs named")
    lab.add_argument("runs", type=int, nargs="+", help="run ids (as list prints them)")
    _flags.store_flags(lab)
    lab.set_defaults(func=_label)
    de = actions.add_parser("delete", help="remove every run carrying all --label k=v given")
    _flags.store_flags(de)
    de.set_defaults(func=_delete)
    ex = actions.add_parser("export", help="write the runs (--label filters) to a file")
    ex.add_argument("--format", choices=("csv", "parquet", "json"), required=True)
    ex.add_argument("--out", required=True, help="the file to write")
    _flags.store_flags(ex)
    ex.set_defaults(func=_export)
    im = actions.add_parser(
        "import",
        help="keep the runs of result files (.json) or old run history files "
        "(runs-*.jsonl), each with the --label k=v given",
    )
    im.add_argument("files", nargs="+", type=Path)
    _flags.store_flags(im)
    im.set_defaults(func=_import)


def _open(args: argparse.Namespace, create: bool = False) -> Any:
    from .. import store

    s = store.open(args.store, create=create)
    if s is None:
        where = args.store or store.default_path()
        raise OSError(f"no results store ({where or 'off'})")
    return s


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def _list(args: argparse.Namespace) -> int:
    with _open(args) as s:
        runs = s.runs(_flags.labels_of(args.label))
        print(f"{s.path}: {len(runs)} runs")
        if runs:
            print(f"{'run':>6}  {'started (UTC)':<19}  {'machine':<8}  {'kind':<8} "
                  f"{'points':>6} {'load':>5}  labels")  # fmt: skip
        for r in runs:
            load = "-" if r["load"] is None else f"{r['load']:.2f}"
            marks = " ".join(f"{k}={v}" for k, v in sorted(r["labels"].items()))
            print(f"{r['run_id']:>6}  {_when(r['time']):<19}  {r['machine']:<8}  "
                  f"{r['kind']:<8} {r['points']:>6} {load:>5}  {marks}")  # fmt: skip
    return 0


def _show(args: argparse.Namespace) -> int:
    with _open(args) as s:
        found = [r for r in s.runs() if r["run_id"] == args.run]
        if not found:
            raise ValueError(f"run {args.run}: no such run in {s.path}")
        run = found[0]
        for key in ("run_id", "machine", "kernel", "kind", "source", "load", "steal",
                    "observer"):  # fmt: skip
            print(f"{key + ':':<10}{run[key]}")
        print(f"{'started:':<10}{_when(run['time'])} UTC")
        print(f"{'labels:':<10}" + " ".join(f"{k}={v}" for k, v in sorted(run["labels"].items())))
        kept = s.run_points(args.run)
        for p in kept:
            se = "-" if p["rel_se"] is None else f"±{100 * p['rel_se']:.2f} %"
            print(f"  {p['value_us']:.4g} µs {se} ({len(p['instances_us'])} instances)  "
                  f"{p['point_id']}")  # fmt: skip
        for line in _not_in_series(s.records([args.run])[0], {p["point_id"] for p in kept}):
            print(line)
    return 0


def _not_in_series(record: dict[str, Any] | None, kept: set[str]) -> list[str]:
    """The run's points its record holds and its series does not: a net figure at or below
    0 is below the method's resolution and no run of a series (under load a ring's overhead
    can exceed it), so that ``show`` lists every point the run measured."""
    if record is None:
        return []
    if record.get("kind") == "ring":
        figures = list(zip(record.get("point_id") or [], record.get("latency_us") or []))
    else:
        figures = [] if kept else [("the ping-pong", record.get("usecs_per_switch"))]
    return [
        f"  {v if v is None else format(v, '.4g')} µs: below the method's resolution, not in "
        f"the series  {pid}"
        for pid, v in figures
        if pid not in kept
    ]


def _label(args: argparse.Namespace) -> int:
    labels = _flags.labels_of(args.label)
    if not labels:
        raise ValueError("--label: give at least one label k=v to add")
    with _open(args) as s:
        found = s.label(args.runs, labels)
    missing = len(set(args.runs)) - found
    print(f"labelled {found} runs" + (f"; {missing} run ids not found" if missing else ""))
    return 1 if missing else 0


def _delete(args: argparse.Namespace) -> int:
    labels = _flags.labels_of(args.label)
    if not labels:
        raise ValueError("--label: name at least one label of the runs to delete")
    with _open(args) as s:
        print(f"deleted {s.delete(labels)} runs from {s.path}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from ..store import _exchange

    with _open(args) as s:
        n = _exchange.export(s, Path(args.out), args.format, _flags.labels_of(args.label))
    print(f"wrote {n} runs to {args.out}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from ..store import _exchange

    with _open(args, create=True) as s:
        for path, added in _exchange.import_files(s, args.files, _flags.labels_of(args.label)):
            print(f"{path}: {added} runs of points and matrices kept")
    return 0
