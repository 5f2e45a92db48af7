"""Where in a JSON text a value is, for error messages that name the line: the line of a key
path (``["results", 3, "stats", "median", 0]``), and the first key an object holds twice
(which ``json`` would silently take the last of). Only called once something is wrong: it
walks the text in Python, skipping whole values with the C decoder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Union

Step = Union[str, int]

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class DuplicateKey(ValueError):
    """An object of the text holds a key twice."""


def loads(text: str) -> Any:
    """``json.loads``, refusing an object that holds a key twice (``DuplicateKey``)."""
    return json.loads(text, object_pairs_hook=_unique)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise DuplicateKey
    return obj


def _skip(text: str, i: int) -> int:
    return _SPACE.match(text, i).end()  # type: ignore[union-attr]


def _children(text: str, i: int) -> Iterator[tuple[Step, int, int]]:
    """(key or index, where the key or element starts, where its value starts) of the
    object or array at ``i``."""
    close = "}" if text[i] == "{" else "]"
    i = _skip(text, i + 1)
    index = 0
    while text[i] != close:
        at = i
        if close == "}":
            key, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            i = _skip(text, _skip(text, i) + 1)  # past the colon
            step: Step = key
        else:
            step, index = index, index + 1
        yield step, at, i
        _, i = _DECODER.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)


def _line(text: str, i: int) -> int:
    return text.count("\n", 0, i) + 1


def line_of(text: str, path: list[Step]) -> int | None:
    """The line the value at ``path`` starts on (or the deepest part of it the text has)."""
    i = _skip(text, 0)
    for step in path:
        if i >= len(text) or text[i] not in "{[":
            break
        found = next((v for s, _, v in _children(text, i) if s == step), None)
        if found is None:
            break
        i = found
    return _line(text, i)


def duplicate(text: str) -> tuple[int, str, str] | None:
    """(line, key, where) of the first key an object holds twice, ``where`` the path of that
    object (``results[0].metadata``); None if none does."""
    todo: list[tuple[int, str]] = [(_skip(text, 0), "")]
    while todo:
        i, where = todo.pop()
        seen: set[Step] = set()
        inside = []
        for step, at, value in _children(text, i):
            if text[i] == "{" and step in seen:
                return _line(text, at), str(step), where or "the document"
            seen.add(step)
            if text[value] in "{[":
                name = f"[{step}]" if isinstance(step, int) else f".{step}" if where else step
                inside.append((value, f"{where}{name}"))
        todo.extend(reversed(inside))
    return None


def path_of(where: str) -> list[Step]:
    """A field path as errors name it (``stats.median[0]``) as steps."""
    steps: list[Step] = []
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", where):
        steps.append(int(index) if index else name)
    return steps
