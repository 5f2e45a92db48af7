"""The command line's flags. A measurement's parameters are the core's table
(``_core.PARAMETERS``: name, kind, range, default, flags, help), made into flags here
(``door_flags``) and read back into keyword arguments (``door_args``): no subcommand restates
one. Also the few flags of the command line alone (``--no-wait``), and lmbench's
LMBENCH_SCHED."""

from __future__ import annotations

import argparse
import math
import os
from typing import Any

from .. import _core
from .._exclusive import PATIENCE

# lmbench's LMBENCH_SCHED policies, for users who drive us from their lmbench scripts.
LMBENCH_SCHED = {
    "DEFAULT": "default",
    "SINGLE": "single",
    "BALANCED": "balanced",
    "UNIQUE": "spread",
}


def lmbench_sched() -> str | list[int]:
    """The placement $LMBENCH_SCHED names ("default" when unset); lmbench3's ``CUSTOM 0 1 2``
    (the CPUs in turn, participant i on the i-th modulo their count) is that CPU list."""
    value = os.environ.get("LMBENCH_SCHED", "DEFAULT").strip()
    head, _, rest = value.partition(" ")
    if head.upper() == "CUSTOM":
        cpus = rest.replace(",", " ").split()
        if not cpus or not all(c.isdigit() for c in cpus):
            raise ValueError(
                f"LMBENCH_SCHED={value!r}: CUSTOM takes CPU numbers, as lmbench3 does: "
                "'CUSTOM 0 1 2 3'"
            )
        return [int(c) for c in cpus]
    if value.upper() not in LMBENCH_SCHED:
        raise ValueError(
            f"LMBENCH_SCHED={value!r} is not one of {', '.join(LMBENCH_SCHED)} or CUSTOM <cpus>"
        )
    return LMBENCH_SCHED[value.upper()]


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


def output_flags(
    p: argparse.ArgumentParser,
    *,
    json: str | None = None,
    out: str | None = None,
    out_required: bool = False,
    progress: str | None = None,
) -> None:
    """Where a result goes and what shows while it is made, the same flags in every command:
    ``--json`` (``json`` says what it prints), ``--out FILE`` (``out``: what it writes),
    ``--no-progress`` (``progress``: what it turns off), and ``--no-hostname`` for whichever
    of them writes."""
    if json is not None:
        p.add_argument("--json", action="store_true", help=json)
    if out is not None:
        p.add_argument("--out", required=out_required, default=None, help=out)
    if progress is not None:
        p.add_argument("--no-progress", action="store_true", help=progress)
    writes = " and ".join(f for f, given in (("--json", json), ("--out", out)) if given)
    p.add_argument(
        "--no-hostname",
        action="store_true",
        help=f"this machine's name as '(withheld)' in {writes}",
    )
    store_flags(p)


def store_flag(p: argparse.ArgumentParser, *, reads: bool = False) -> None:
    """``--store PATH``: the results store (``ctxbench.store``) a command keeps its runs in,
    or (``reads``) reads its series from."""
    what = "to read series from" if reads else "every run is kept in"
    p.add_argument(
        "--store",
        metavar="PATH",
        default=None,
        help=f"the results store {what} (default: $CTXBENCH_STORE, else "
        "$XDG_DATA_HOME/ctxbench/store.sqlite3)" + ("" if reads else "; off keeps none"),
    )


def store_flags(p: argparse.ArgumentParser) -> None:
    """``--store PATH`` and ``--label k=v``: where the runs a command measures or saves are
    kept (``ctxbench.store``), and the labels each is kept with."""
    store_flag(p)
    p.add_argument(
        "--label",
        metavar="KEY=VALUE",
        action="append",
        type=label,
        default=[],
        help="a label every run is kept with, e.g. --label commit=abc123 --label "
        "kernel=6.18-rc2 (repeat for more; default: none)",
    )


def label(text: str) -> tuple[str, str]:
    """``--label k=v`` checked (``store.parse_label``)."""
    from ..store import parse_label

    try:
        return parse_label(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def labels_of(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """The ``--label`` pairs as one dict; a key given twice with two values is an error."""
    out: dict[str, str] = {}
    for key, value in pairs:
        if out.setdefault(key, value) != value:
            raise ValueError(f"--label: {key} given twice ({out[key]!r} and {value!r})")
    return out


def verbose_flag(p: argparse.ArgumentParser) -> None:
    """``-v``: each point's sentence on how it stopped, not one summary line."""
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="say how each point stopped and what would narrow it (default: one line a run)",
    )


def no_wait_flag(p: argparse.ArgumentParser) -> None:
    """``--no-wait``: fail at once when another measurement holds this machine."""
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="when another ctxbench measurement holds this machine, fail at once naming it "
        f"(default: wait up to {PATIENCE:g} s, saying for whom after a second; a fleet's "
        "points wait on their own machines)",
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


def fraction(text: str) -> float:
    """A fraction given as "5%" or "0.05" (a bare 5 is refused: 5 % or 500 %?)."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf) or (not text.endswith("%") and value >= 1):
        raise argparse.ArgumentTypeError(f"expected a fraction like 5% or 0.05, got {text!r}")
    return value


def pairs(text: str) -> dict[str, float]:
    """``hogs=2,duty=0.5`` -> {"hogs": 2.0, "duty": 0.5}; the core checks names and ranges.
    A key given twice is refused: which of ``hogs=1,hogs=2`` was meant?"""
    out: dict[str, float] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        if key in out:
            raise argparse.ArgumentTypeError(f"{key} given twice in {text!r}; give it once")
        try:
            out[key] = float(value) if sep else math.nan
        except ValueError:
            out[key] = math.nan
        if not sep or math.isnan(out[key]):
            raise argparse.ArgumentTypeError(
                f"expected key=number pairs like hogs=2,duty=0.5; got {part!r}"
            )
    return out


def _memory_node(text: str) -> str | int:
    return int(text) if text.isdigit() else text


def _size(text: str) -> str | int:
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'auto' or KiB as an integer, got {text!r}"
        ) from None


# Each kind of parameter (``_core.PARAMETERS``' "kind"), the one home of their vocabulary in
# Python: how a signature types it (the stub's and the API's, ``ctxbench._codegen``) and how
# the command line reads it (None: never a flag).
KINDS: dict[str, tuple[str, dict[str, Any] | None]] = {
    "counts": ("int | Sequence[int]", {"type": int, "nargs": "+", "metavar": "N"}),
    "count": ("int", {"type": int, "metavar": "N"}),
    "count?": ("int | None", {"type": int, "metavar": "N"}),
    "int?": ("int | None", {"type": int, "metavar": "N"}),
    "real": ("float", {"type": float, "metavar": "X"}),
    "real?": ("float | None", {"type": float, "metavar": "X"}),
    "switch": ("bool", {"action": "store_true"}),
    "choice": ("str", {}),
    "choice?": ("str | None", {}),
    "placement": ("str | Sequence[int] | None", {"type": placement, "metavar": "PLACEMENT"}),
    "cpu": ("int | None", {"type": int, "metavar": "CPU"}),
    "cpus": ("Sequence[int] | None", {"type": cpu_list, "metavar": "LIST"}),
    "sizes": ("Sequence[int] | str | None", {"type": _size, "nargs": "+", "metavar": "KB"}),
    "memory": ("str | int | None", {"type": _memory_node, "metavar": "NODE"}),
    # Earlier runs of each point, or a function the core asks for them with the points' ids.
    "history": ("_Histories | Callable[[list[str]], _Histories] | None", None),
    "interference": (
        "Mapping[str, float] | None",
        {"type": pairs, "metavar": ",".join(f"{k}=N" for k in _core.INTERFERENCE_KEYS)},
    ),
}


def parameters(door: str) -> list[dict[str, Any]]:
    """The table's parameters of one measurement that the command line takes as flags."""
    return [p for p in _core.PARAMETERS if door in p["doors"] and p["flags"]]


def _default_text(p: dict[str, Any]) -> str:
    if p["name"] in ("precision", "max_time"):
        figures = ", ".join(f"{n} {v[p['name']]:g}" for n, v in _core.PRESETS.items())
        return f"the preset's: {figures}"
    if p["derived"] is not None:
        return p["derived"]
    if p["default"] is None or p["default"] is False:
        return ""
    if isinstance(p["default"], tuple):  # counts, as the command line takes them
        return " ".join(map(str, p["default"]))
    return str(p["default"])


def door_flags(
    parser: argparse.ArgumentParser,
    door: str,
    *,
    skip: tuple[str, ...] = (),
    shown: dict[str, str] | None = None,
) -> None:
    """Add a flag for each of ``door``'s parameters in the table but those in ``skip`` (which
    the subcommand takes another way). A flag not given is absent from the namespace, so the
    measurement's own default applies; ``shown`` words a default the subcommand picks itself
    (as lat_ctx's placement from $LMBENCH_SCHED)."""
    for p in parameters(door):
        if p["name"] in skip:
            continue
        kw = dict(KINDS[p["kind"]][1] or {})
        if p["kind"].startswith("real") and p["hi"] is not None and p["hi"] <= 1:
            kw.update(type=fraction, metavar="FRACTION")  # 5% or 0.05
        elif "metavar" in kw and "seconds" in p["help"]:
            kw["metavar"] = "SECONDS"
        elif "metavar" in kw and p["name"].endswith(("_kb", "_bytes")):
            kw["metavar"] = p["name"].rsplit("_", 1)[1].upper()
        if p["choices"] is not None:
            kw["choices"] = p["choices"]
        default = (shown or {}).get(p["name"]) or _default_text(p)
        text = p["help"] + (f" (default: {default})" if default else "")
        parser.add_argument(
            *p["flags"],
            dest=p["name"],
            default=argparse.SUPPRESS,
            help=text.replace("%", "%%"),
            **kw,
        )
        if p["name"] == "preset":
            for name in ("fast", "rigorous"):
                parser.add_argument(
                    f"--{name}",
                    dest="preset",
                    action="store_const",
                    const=name,
                    default=argparse.SUPPRESS,
                    help=f"--preset {name}",
                )


def door_args(args: argparse.Namespace, door: str) -> dict[str, Any]:
    """The keyword arguments of ``door``'s parameters given on the command line."""
    given = vars(args)
    return {p["name"]: given[p["name"]] for p in parameters(door) if p["name"] in given}


def procs_flags(p: argparse.ArgumentParser) -> None:
    """A ring's participant counts, as lat_ctx takes them (``2 4 8``) or as a flag
    (``--procs 2 4 8``, the form a side of ``ctxbench ab`` reads best in)."""
    p.add_argument("procs", type=int, nargs="*", help="participant counts, e.g. 2 4 8 16 20")
    p.add_argument(
        "--procs",
        dest="procs_flag",
        type=int,
        nargs="+",
        default=None,
        metavar="N",
        help="the participant counts as a flag",
    )


def procs(args: argparse.Namespace) -> list[int]:
    """The counts ``procs_flags`` read: one of the two forms, not both."""
    if args.procs and args.procs_flag:
        raise ValueError("procs: give the participant counts once, positionally or --procs")
    counts = args.procs or args.procs_flag
    if not counts:
        raise ValueError("procs: give participant counts, e.g. 2 4 8 (or --procs 2 4 8)")
    return list(counts)
