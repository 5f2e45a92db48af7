"""Every front door takes a measurement's parameters as the core's table declares them
(``_core.PARAMETERS``): the API's signatures, the command line's flags. A parameter added to
the table and missed by a door fails here."""

from __future__ import annotations

import argparse
import inspect
from typing import Any, Callable

import pytest

import ctxbench
from ctxbench import _core
from ctxbench.cache import cache_sweep
from ctxbench.cli import _flags
from ctxbench.cli import parser as build_parser

# What each function takes beyond the table: how it is run and where it goes, never what is
# measured. ``history`` is the table's run-level parameter, taken as a switch by the API
# (use this machine's history or not) and as earlier runs by the core.
BEYOND_THE_TABLE = {
    "ring": {"history"},
    "pingpong": {"history"},
    "matrix": {"classes", "progress", "out", "hostname", "scheduler", "client"},
    "cache_sweep": {"progress", "out", "hostname"},
}
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "ring": ctxbench.ring,
    "pingpong": ctxbench.pingpong,
    "matrix": ctxbench.matrix,
    "cache_sweep": cache_sweep,
}
# Where the function's name differs from the table's: the matrix's classes (True or K)
# stands for the core's per_class (K or None).
RENAMED = {"matrix": {"per_class": "classes"}}


def _table(door: str) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in _core.PARAMETERS if door in p["doors"]}


@pytest.mark.parametrize("door", sorted(FUNCTIONS))
def test_each_function_takes_its_tables_parameters_with_their_defaults(door: str) -> None:
    signature = inspect.signature(FUNCTIONS[door]).parameters
    table = _table(door)
    renamed = RENAMED.get(door, {})
    names = {renamed.get(n, n) for n in table}
    extra = set(signature) - names - BEYOND_THE_TABLE[door]
    assert not extra, f"{door} takes {sorted(extra)}, which the table does not declare"
    missing = names - set(signature)
    assert not missing, f"{door} lacks the table's {sorted(missing)}"
    for name, p in table.items():
        if name in renamed or p["kind"] == "history":
            continue
        default = signature[name].default
        if p["derived"] is not None or name in ("precision", "max_time"):
            # Decided by the core (a preset, another parameter) where the caller says None;
            # the cache sweep's arguments read as the core's own spelling of "auto".
            assert default in (None, "auto", inspect.Parameter.empty), (door, name, default)
        elif p["kind"] == "counts":
            continue  # required, or the function's own grid
        else:
            assert default == p["default"], f"{door}({name}=...): {default!r} != {p['default']!r}"


def test_lat_ctx_restates_nothing_of_ring() -> None:
    code = ctxbench.lat_ctx.__code__
    assert code.co_varnames[: code.co_argcount] == ("procs",)
    assert code.co_flags & inspect.CO_VARKEYWORDS, "the rest is ring's, passed on"
    # help() shows ring's parameters but the two lat_ctx fixes.
    shown = inspect.signature(ctxbench.lat_ctx).parameters
    ring = inspect.signature(ctxbench.ring).parameters
    assert list(shown) == [n for n in ring if n not in ("engine", "transport")]


def _options(command: str) -> dict[str, argparse.Action]:
    sub = next(
        a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
    ).choices[command]
    return {flag: action for action in sub._actions for flag in action.option_strings}


# Each subcommand, the measurement whose flags it carries and those it takes another way.
COMMANDS = {
    "ring": ("ring", ()),
    "lat-ctx": ("ring", ("engine", "transport")),
    "pipe": ("pingpong", ()),
    "matrix": ("matrix", ("per_class",)),
    "sizes": ("cache_sweep", ()),
    "sweep": ("ring", ("engine", "transport", "placement", "cpu", "size_kb")),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_subcommand_has_the_tables_flags(command: str) -> None:
    door, elsewhere = COMMANDS[command]
    options = _options(command)
    for p in _flags.parameters(door):
        if p["name"] in elsewhere:
            continue
        for flag in p["flags"]:
            assert flag in options, f"ctxbench {command} lacks {flag} ({p['name']})"
            assert options[flag].dest == p["name"]
            assert options[flag].default is argparse.SUPPRESS, "the measurement's default"


def test_a_flag_not_given_is_not_passed_and_a_given_one_is_converted() -> None:
    parser = build_parser()
    args = parser.parse_args(["ring", "2", "--precision", "5%", "--rigorous", "--cpu", "1"])
    assert _flags.door_args(args, "ring") == {"precision": 0.05, "preset": "rigorous", "cpu": 1}
    args = parser.parse_args(["ring", "--procs", "2", "8"])
    assert _flags.procs(args) == [2, 8] and _flags.door_args(args, "ring") == {}
    with pytest.raises(ValueError, match="procs: give the participant counts once"):
        _flags.procs(parser.parse_args(["ring", "2", "--procs", "8"]))
    with pytest.raises(ValueError, match="procs: give participant counts"):
        _flags.procs(parser.parse_args(["ring"]))


def test_presets_are_the_cores_and_every_door_names_the_same() -> None:
    assert set(_core.PRESETS) == {"fast", "default", "rigorous"}
    figures = _core.PRESETS
    assert figures["fast"]["precision"] > figures["default"]["precision"]
    assert figures["default"]["precision"] > figures["rigorous"]["precision"]
    assert figures["default"] == {
        "precision": _core.DEFAULT_PRECISION,
        "max_time": _core.DEFAULT_MAX_TIME,
    }
    for door in ("ring", "pingpong", "matrix"):
        assert _table(door)["preset"]["choices"] == tuple(figures)
