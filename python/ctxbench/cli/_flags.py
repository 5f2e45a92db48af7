"""The flags several subcommands share, each declared once, and lmbench's LMBENCH_SCHED."""

from __future__ import annotations

import argparse
import os

from .. import _core
from .._exclusive import PATIENCE

# lmbench's LMBENCH_SCHED policies, for users who drive us from their lmbench scripts.
LMBENCH_SCHED = {
    "DEFAULT": "default",
    "SINGLE": "single",
    "BALANCED": "balanced",
    "UNIQUE": "spread",
}


def lmbench_sched() -> str:
    """The placement $LMBENCH_SCHED names ("default" when unset)."""
    value = os.environ.get("LMBENCH_SCHED", "DEFAULT").strip().upper()
    if value not in LMBENCH_SCHED:
        raise ValueError(f"LMBENCH_SCHED={value!r} is not one of {', '.join(LMBENCH_SCHED)}")
    return LMBENCH_SCHED[value]


def transports(*engines: str) -> list[str]:
    """Every transport of the given engines (all engines when none are named), once each."""
    names = engines or _core.ENGINES
    return list(dict.fromkeys(t for engine in names for t in _core.TRANSPORTS[engine]))


def placement(text: str) -> str | list[int]:
    """A placement policy by name, or a CPU list like ``0,1``."""
    if text in _core.PLACEMENTS:
        return text
    try:
        return [int(c) for c in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected {', '.join(_core.PLACEMENTS)} or a CPU list like 0,1; got {text!r}"
        ) from None


PLACEMENT_HELP = f"{'|'.join(_core.PLACEMENTS)} or CPU list 0,1"


def stride_flag(p: argparse.ArgumentParser) -> None:
    """``--stride``: bytes between the words each participant sums."""
    p.add_argument(
        "--stride",
        dest="stride_bytes",
        type=int,
        default=8,
        metavar="BYTES",
        help="bytes between summed words: 8 every word (lmbench3, default), 64 one per line",
    )


def counters_flag(p: argparse.ArgumentParser) -> None:
    """``--counters``: who watches the timed repetitions."""
    p.add_argument(
        "--counters",
        choices=_core.COUNTERS,
        default="evidence",
        help="evidence (default): the kernel's accounting at the timed windows' edges, perf "
        "after them; off: no perf event; timed: perf through the timed repetitions (slower)",
    )


def placement_flags(p: argparse.ArgumentParser, default: str) -> None:
    """``--placement`` and ``--cpu``; None when not given, so the handler picks the default."""
    p.add_argument(
        "--placement", type=placement, default=None, help=f"{PLACEMENT_HELP} (default: {default})"
    )
    p.add_argument("--cpu", type=int, default=None, help="the CPU for --placement single")


def no_wait_flag(p: argparse.ArgumentParser) -> None:
    """``--no-wait``: fail at once when another measurement holds this machine."""
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="when another ctxbench measurement holds this machine, fail at once naming it "
        f"(default: wait up to {PATIENCE:g} s, saying for whom after a second; a fleet's "
        "points wait on their own machines)",
    )


def repetition_flags(p: argparse.ArgumentParser) -> None:
    """lat_ctx's ``-P -W -N`` and the length of a repetition, ``--min-time``."""
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
        default=None,
        metavar="N",
        help="exactly N timed repetitions, as lmbench (lat_ctx: 11); default: until --precision",
    )
    p.add_argument(
        "--precision",
        type=float,
        default=_core.DEFAULT_PRECISION,
        help="stop a point when the 95%% interval of its median is within +-this fraction "
        f"(default {_core.DEFAULT_PRECISION})",
    )
    p.add_argument(
        "--max-time",
        type=float,
        default=_core.DEFAULT_MAX_TIME,
        help=f"seconds of measuring per point at most (default {_core.DEFAULT_MAX_TIME})",
    )
    p.add_argument(
        "--min-time",
        type=float,
        default=None,
        help=f"seconds per timed repetition (default {_core.PRECISION_MIN_TIME}; "
        f"{_core.FIXED_MIN_TIME} with -N)",
    )


def procs_flags(p: argparse.ArgumentParser) -> None:
    """The participant counts, positional as lat_ctx takes them or after ``--procs``."""
    p.add_argument(
        "procs", type=int, nargs="*", default=[], help="participant counts, e.g. 2 4 8 16 20"
    )
    p.add_argument(
        "--procs",
        dest="procs_flag",
        type=int,
        nargs="+",
        default=None,
        metavar="N",
        help="the participant counts as a flag (instead of positional)",
    )


def procs_given(args: argparse.Namespace) -> list[int]:
    """The counts ``procs_flags`` read: positional or ``--procs``, not both, at least one."""
    positional, flag = args.procs, args.procs_flag
    if positional and flag:
        raise ValueError(
            f"procs: give the participant counts once, positional ({positional}) or "
            f"--procs ({flag}), not both"
        )
    if not positional and not flag:
        raise ValueError("procs: name at least one participant count, e.g. 2 or --procs 2")
    return list(positional or flag)


def stopping(args: argparse.Namespace) -> dict[str, object]:
    """The keyword arguments of ``ring`` that ``repetition_flags`` set."""
    return {
        "repetitions": args.repetitions,
        "precision": args.precision,
        "max_time": args.max_time,
        "warmup": args.warmup,
        "parallel": args.parallel,
        "min_time": args.min_time,
    }
