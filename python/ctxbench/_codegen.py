"""The code that the core's two tables determine, written from them: the fields of each
result class (``RingResult`` in result.py, from ``schema.RECORDS``), the TypedDicts of what
the core returns (``_core.pyi``, from ``schema.RECORDS`` and ``schema.RETURNS``, a cache
sweep's), the signatures of its measuring functions (from ``_core.PARAMETERS``), and the
table's part of the API's signatures (``ctxbench.ring``, ``pingpong``, ``matrix``: every
parameter with its default, written once, in the table). A
field is declared once, in its record's ``record!`` block in the core (``src/record/``, read
as ``_core.RECORDS`` by ``ctxbench.schema``), a parameter once, in the core's
``src/request/params.rs``; after changing one, run

    python -m ctxbench._codegen            # rewrite every block (result.py, _core.pyi and
                                           # the API's signatures: ``API``, ``SWEEPS``)
    python -m ctxbench._codegen --check    # exit 1 and show the difference when out of date

(``tests/test_core_stub.py`` runs the check.) Each block sits between a ``BEGIN`` and an
``END`` line naming this module; everything outside them is written by hand.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from . import _core
from ._field import Field
from .cli._flags import KINDS as _KINDS
from .schema import RECORDS, RETURNS

HERE = Path(__file__).parent
BEGIN = "# BEGIN written by `python -m ctxbench._codegen` from _core.RECORDS; edit src/record"
BEGIN_FUNCTIONS = (
    "# BEGIN written by `python -m ctxbench._codegen` from _core.PARAMETERS; edit src/request"
)
END = "# END written by `python -m ctxbench._codegen`"
# Set by the Python side (``api.result_metadata``), not by the core.
ADDED_IN_PYTHON = ("metadata",)

_SCALARS = {"int": "int", "float": "float", "bool": "bool", "str": "str"}
# The measuring functions: (name, the door whose parameters it takes, its positional
# parameters, whether it takes a progress callback, what it returns).
FUNCTIONS = (
    ("ring", "ring", ("procs",), False, "RingDict"),
    ("ring_config", "ring", ("procs",), False, "RingConfigDict"),
    ("ring_check", "ring", ("procs",), False, "RingConfigDict"),
    ("pingpong", "pingpong", ("loops",), False, "PingpongDict"),
    ("pingpong_config", "pingpong", ("loops",), False, "RingConfigDict"),
    ("cache_sweep", "cache_sweep", ("procs", "sizes_kb"), True, "CacheSweepDict"),
    ("matrix", "matrix", ("cpus",), True, "MatrixDict"),
    ("ab", "ab", ("a", "b"), True, "AbDict"),
)
# The API functions whose keyword parameters are the table's: (module, function, door, the
# table's names it takes another way, the table's positional ones it writes with their
# defaults). The keywords' block sits inside the signature, between the positional
# parameters and the function's own (history, progress, out ...); the positional ones' first.
API = (
    ("api.py", "ring", "ring", ("procs", "history"), ()),
    ("api.py", "pingpong", "pingpong", ("loops", "history"), ()),
    ("_matrix.py", "matrix", "matrix", ("cpus", "per_class"), ()),
    ("cache.py", "cache_sweep", "cache_sweep", ("procs", "sizes_kb"), ("procs",)),
    ("_plan.py", "plan", "plan", ("detect", "procs"), ("detect", "procs")),
)
# The sweeps whose positional parameters are the grid's axes and the options every sweep
# takes (``grid.AXES``, ``grid.SWEEP_OPTIONS``): (module, function).
SWEEPS = (("_sweep.py", "sweep"), ("fleet.py", "sweep"))
BEGIN_AXES = (
    "# BEGIN written by `python -m ctxbench._codegen` from grid.AXES, grid.SWEEP_OPTIONS; "
    "edit there"
)
BEGIN_POSITIONAL = (
    "# BEGIN written by `python -m ctxbench._codegen` from _core.PARAMETERS: positional"
)
# Positional parameters that are no row of the table: an A/B run's sides.
_SIDES = "tuple[str, Mapping[str, object]]"
_EMPTY = {"int": "np.int64", "float": "np.float64", "bool": "np.bool_"}


def class_name(kind: str) -> str:
    """The result class of a kind: "ring" -> "RingResult"."""
    return f"{kind.title()}Result"


def typeddict_name(kind: str) -> str:
    """The TypedDict of what the core returns for a kind: "ring" -> "RingDict"."""
    return f"{kind.title()}Dict"


def config_typeddict_name(kind: str) -> str:
    """The TypedDict of what was asked of a kind: "ring" -> "RingConfigDict"."""
    return f"{kind.title()}ConfigDict"


# --- result.py --------------------------------------------------------------------------------


def _python_type(spec: Field) -> str:
    if spec.type == "dict":
        return "dict[str, Any]"
    if not spec.shape:
        return _SCALARS[spec.type]
    if spec.type == "str":
        return "list[str]"
    return "list[np.ndarray]" if spec.ragged else "np.ndarray"


def class_field(name: str, spec: Field) -> str:
    """One field of a result class: required ones have no default; an optional one (an older
    file may lack it) is None, or empty where it is an array."""
    annotation = _python_type(spec)
    if name in ADDED_IN_PYTHON:
        return f"{name}: {annotation} = field(default_factory=dict)"
    if spec.required:
        return f"{name}: {annotation}" + (" | None" if spec.nullable else "")
    if spec.type == "dict" and not spec.nullable:
        return f"{name}: {annotation} = field(default_factory=dict)"
    if spec.nullable or not spec.shape or spec.type == "dict":
        return f"{name}: {annotation} | None = None"
    if spec.type == "str" or spec.ragged:
        return f"{name}: {annotation} = field(default_factory=list)"
    empty = f"np.zeros(0, dtype={_EMPTY[spec.type]})"
    return f"{name}: {annotation} = field(default_factory=lambda: {empty})"


def class_fields(fields: Mapping[str, Field]) -> list[str]:
    """The field lines of a result class: the required fields, then the optional ones (a
    dataclass needs its defaults last), each in declaration order."""
    ordered = sorted(fields.items(), key=lambda item: not item[1].required)
    return [class_field(name, spec) for name, spec in ordered]


# --- _core.pyi --------------------------------------------------------------------------------


def _alias(name: str) -> str:
    """The stub's alias for the strings of field ``name``: "switch_source" -> "_SwitchSource"."""
    return "_" + "".join(part.title() for part in name.split("_"))


def _literal(alias: str, values: tuple[str, ...]) -> list[str]:
    """``alias = Literal[...]`` laid out as ruff format lays it out."""
    items = ", ".join(f'"{v}"' for v in values)
    if len(f"{alias} = Literal[{items}]") <= 100:
        return [f"{alias} = Literal[{items}]"]
    if len(items) <= 96:
        return [f"{alias} = Literal[", f"    {items}", "]"]
    return [f"{alias} = Literal[", *(f'    "{v}",' for v in values), "]"]


def _stub_type(spec: Field, name: str = "") -> str:
    if spec.type == "dict":
        text = spec.name or "dict[str, Any]"
    elif spec.type == "str" and (spec.literals or spec.choices):
        text = spec.name or _alias(name)
    else:
        text = _SCALARS[spec.type]
    # The core hands over its record as a file holds it: lists (one per level), which
    # ``record.decode`` makes numpy arrays.
    for _ in spec.shape:
        text = f"list[{text}]"
    return f"{text} | None" if spec.nullable else text


def _typeddicts(fields: Mapping[str, Field]) -> Iterator[tuple[str, Mapping[str, Field]]]:
    """Every named dict inside ``fields``, innermost first."""
    for spec in fields.values():
        if spec.type == "dict" and spec.fields is not None and spec.name:
            yield from _typeddicts(spec.fields)
            yield spec.name, spec.fields


def _typeddict(
    name: str, fields: Mapping[str, Field], doc: str | None = None, parent: str = "TypedDict"
) -> list[str]:
    if not all(key.isidentifier() for key in fields):  # "p99.9": the functional form
        pairs = [f'"{key}": {_stub_type(spec, key)}' for key, spec in fields.items()]
        one_line = f"    {{{', '.join(pairs)}}},"
        if len(one_line) <= 100:
            return [f"{name} = TypedDict(", f'    "{name}",', one_line, ")"]
        body = ["    {", *(f"        {p}," for p in pairs), "    },"]
        return [f"{name} = TypedDict(", f'    "{name}",', *body, ")"]
    lines = ["@type_check_only", f"class {name}({parent}):"]
    if doc:
        lines += [f'    """{doc}"""', ""]
    return lines + [f"    {key}: {_stub_type(spec, key)}" for key, spec in fields.items()]


def _inheriting(
    name: str, fields: Mapping[str, Field], configs: dict[str, dict[str, str]], doc: str | None
) -> list[str]:
    """A dict's TypedDict, inheriting the largest config dict (what a kind records of what
    was asked) whose every field it holds, of the same type: a ring's result and an A/B
    run's side hold what was asked of a ring, and say so once."""
    types = {key: _stub_type(spec, key) for key, spec in fields.items()}
    held = [c for c, inner in configs.items() if inner.items() <= types.items()]
    if not held or not all(key.isidentifier() for key in fields):
        return _typeddict(name, fields, doc)
    parent = max(held, key=lambda c: len(configs[c]))
    own = {key: spec for key, spec in fields.items() if key not in configs[parent]}
    return _typeddict(name, own, doc, parent)


def _literals(fields: Mapping[str, Field], found: dict[str, tuple[str, ...]]) -> None:
    """Every set of strings inside ``fields`` by the alias the stub names it by."""
    for key, spec in fields.items():
        values = spec.literals or spec.choices
        if spec.type == "str" and values:
            alias = spec.name or _alias(key)
            if found.setdefault(alias, tuple(values)) != tuple(values):
                raise ValueError(f"two different sets of strings are both called {alias}")
        if spec.fields is not None:
            _literals(spec.fields, found)


def stub_block() -> list[str]:
    """The TypedDicts of ``_core.pyi``: each kind's dict and the named dicts inside it, a
    kind's config dict before them (they inherit it)."""
    blocks: list[list[str]] = []
    named: dict[str, list[str]] = {}
    configs: dict[str, dict[str, str]] = {}
    for kind, fields in RECORDS.items():
        core = {k: v for k, v in fields.items() if k not in ADDED_IN_PYTHON}
        config = {k: v for k, v in core.items() if v.config}
        if config:
            doc = f"What `{kind}_config` returns: what a `{kind}` records of what was asked."
            blocks.append(_typeddict(config_typeddict_name(kind), config, doc))
            configs[config_typeddict_name(kind)] = {k: _stub_type(v, k) for k, v in config.items()}
        for name, inner in _typeddicts(core):
            block = _inheriting(name, inner, configs, None)
            if name in named:
                if named[name] != block:
                    raise ValueError(f"two different dicts are both called {name}")
                continue
            named[name] = block
            blocks.append(block)
        doc = f"What `{kind}` returns: the fields of `ctxbench.{class_name(kind)}` but `metadata`."
        blocks.append(_inheriting(typeddict_name(kind), core, configs, doc))
    for returned, fields in RETURNS.items():
        blocks += [_typeddict(name, inner) for name, inner in _typeddicts(fields)]
        function = next(f for f, *_, returns in FUNCTIONS if returns == returned)
        blocks.append(_typeddict(returned, fields, f"What `{function}` returns."))
    literals: dict[str, tuple[str, ...]] = {}
    for fields in [*RECORDS.values(), *RETURNS.values()]:
        _literals(fields, literals)
    lines: list[str] = []
    for alias, values in literals.items():
        lines += _literal(alias, values)
    lines.append("")
    for block in blocks:
        lines += [*block, ""]
    return lines  # a blank line before the next statement, as ruff format has it


def _parameter(row: dict[str, Any], derived: str) -> str:
    """A parameter of a signature with its annotation and default: the table's value, or
    ``derived`` where a rule derives it (the stub's ``...``, the API's None)."""
    default = derived if row["derived"] is not None else repr(row["default"]).replace("'", '"')
    return f"{row['name']}: {_KINDS[row['kind']][0]} = {default},"


def _signature(name: str, door: str, positional: tuple[str, ...], progress: bool) -> list[str]:
    rows = [r for r in _core.PARAMETERS if door in r["doors"]]
    by_name = {r["name"]: r for r in rows}
    lines = [f"def {name}("]
    for p in positional:
        if p not in by_name:
            lines.append(f"    {p}: {_SIDES},")
            continue
        r = by_name[p]
        default = "" if r["kind"] == "counts" or p == "sizes_kb" else " = None"
        lines.append(f"    {p}: {_KINDS[r['kind']][0]}{default},")
    lines.append("    *,")
    lines += [f"    {_parameter(r, '...')}" for r in rows if r["name"] not in positional]
    if progress:
        lines.append("    progress: Callable[[int, int], object] | None = None,")
    return lines


def function_block() -> list[str]:
    """The measuring functions of ``_core.pyi``, each taking its door's parameters."""
    lines: list[str] = []
    for name, door, positional, progress, returns in FUNCTIONS:
        lines += [*_signature(name, door, positional, progress), f") -> {returns}: ..."]
    return [*lines, ""]  # a blank line before the next statement, as ruff format has it


def api_block(door: str, skip: tuple[str, ...], only: tuple[str, ...] = ()) -> list[str]:
    """An API function's keyword parameters from the table (or ``only`` those named): its
    defaults, None where the core derives one."""
    rows = [
        r
        for r in _core.PARAMETERS
        if door in r["doors"] and (r["name"] in only if only else r["name"] not in skip)
    ]
    return [_parameter(r, "None") for r in rows]


# --- rewriting the files ----------------------------------------------------------------------


def _replace_block(
    text: str, lines: list[str], indent: str, where: str, begin_line: str = BEGIN
) -> str:
    head, begin, rest = text.partition(indent + begin_line + "\n")
    body, end, tail = rest.partition(indent + END + "\n")
    if not begin or not end:
        raise ValueError(f"{where}: no {begin_line!r} ... {END!r} block")
    return head + begin + "".join(f"{indent}{x}\n" if x else "\n" for x in lines) + end + tail


def _inside(text: str, start: str, stop: str, lines: list[str], begin: str = BEGIN) -> str:
    """``text`` with the block between ``start`` and the next ``stop`` (or the end) written
    as ``lines``: a class's fields, a function's signature."""
    i = text.index(start)
    j = text.find(stop, i + len(start))
    j = len(text) if j < 0 else j
    return text[:i] + _replace_block(text[i:j], lines, "    ", start.strip(), begin) + text[j:]


def _result_py(text: str) -> str:
    for kind, fields in RECORDS.items():
        text = _inside(text, f"\nclass {class_name(kind)}(", "\nclass ", class_fields(fields))
    return text


def axes_block() -> list[str]:
    """A sweep's positional parameters: the grid's axes with their defaults, then the
    options every sweep takes."""
    from .grid import AXES, SWEEP_OPTIONS

    def default(a: Any) -> str:
        return "" if a.default is None else " = " + repr(a.default).replace("'", '"')

    return [f"{a.name}: {a.annotation}{default(a)}," for a in AXES] + [
        f"{option}," for option in SWEEP_OPTIONS
    ]


def _api_py(path: Path, text: str) -> str:
    """``text`` of the module ``path`` with each of its functions' blocks written: the
    table's parameters, a sweep's axes."""
    for module, function, door, skip, positional in API:
        signature = f"\ndef {function}("
        if module == path.name:
            text = _inside(text, signature, ") -> ", api_block(door, skip), BEGIN_FUNCTIONS)
        if module == path.name and positional:
            lines = api_block(door, skip, only=positional)
            text = _inside(text, signature, ") -> ", lines, BEGIN_POSITIONAL)
    for module, function in SWEEPS:
        if module == path.name:
            text = _inside(text, f"\ndef {function}(", ") -> ", axes_block(), BEGIN_AXES)
    return text


def expected() -> dict[Path, str]:
    """Each generated file as it should read."""
    result, stub = HERE / "result.py", HERE / "_core.pyi"
    typed = _replace_block(stub.read_text(), stub_block(), "", stub.name)
    files = {
        result: _result_py(result.read_text()),
        stub: _replace_block(typed, function_block(), "", stub.name, BEGIN_FUNCTIONS),
    }
    for module in dict.fromkeys([*(m for m, *_ in API), *(m for m, _ in SWEEPS)]):
        path = HERE / module
        files[path] = _api_py(path, path.read_text())
    return files


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print(__doc__, file=sys.stderr)
        return 2
    stale = 0
    for path, text in expected().items():
        current = path.read_text()
        if text == current:
            continue
        stale += 1
        if check:
            diff = difflib.unified_diff(
                current.splitlines(True), text.splitlines(True), str(path), "generated"
            )
            sys.stdout.writelines(diff)
        else:
            path.write_text(text)
            print(f"rewrote {path}")
    if check and stale:
        print(f"{stale} file(s) out of date: run python -m ctxbench._codegen", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
