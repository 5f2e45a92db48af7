"""Where what ctxbench says goes: one object per destination, as criterion's ``Report``\\s are
(the terminal, the pytest plugin's summary, a notebook's HTML, a fleet record's warnings),
``Reports`` for several at once, and the destination in effect (``saying``)."""

from __future__ import annotations

import contextvars
import html
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, TextIO

# Each kind of line, and the label a person reads it by after "ctxbench: ".
LABELS = {
    "stopped": "stopped: ",
    "below_resolution": "",
    "hint": "hint: ",
    "warning": "warning: ",
    "wait": "",
    "note": "",
    "verdict": "",
}


@dataclass(frozen=True)
class Line:
    """One thing said: its ``kind`` (one of ``LABELS``) and its words. ``str(line)`` is how
    every text destination shows it: "ctxbench: hint: unpinned: ..."."""

    kind: str
    text: str

    def __post_init__(self) -> None:
        if self.kind not in LABELS:
            raise ValueError(f"kind: expected one of {', '.join(LABELS)}, got {self.kind!r}")

    def __str__(self) -> str:
        return f"ctxbench: {LABELS[self.kind]}{self.text}"


class Report:
    """One destination (criterion's ``Report``): ``say`` takes each line; ``wait`` each line
    of a wait for the machine's lock (``final``: the wait is over), which a ``live`` one
    rewrites in place (and is told every second, not at 1, 2, 4, ... s)."""

    live = False

    def say(self, line: Line) -> None:
        raise NotImplementedError

    def wait(self, line: Line, final: bool) -> None:
        self.say(line)


class Terminal(Report):
    """Lines written as text: to ``stream`` (None: stderr as it is at each line, the command
    line's), or through ``write`` (a line at a time: the pytest plugin's terminal, past its
    capture). A wait is rewritten in place where the stream is a terminal."""

    def __init__(
        self, stream: TextIO | None = None, write: Callable[[str], None] | None = None
    ) -> None:
        self._stream, self._write = stream, write

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    @property
    def live(self) -> bool:  # type: ignore[override]
        try:
            return self._write is None and self.stream.isatty()
        except (OSError, ValueError):
            return False

    def say(self, line: Line) -> None:
        self._put(str(line) + "\n")

    def wait(self, line: Line, final: bool) -> None:
        if self.live:
            self._put("\r" + str(line) + "\x1b[K" + ("\n" if final else ""))
        else:
            self.say(line)

    def _put(self, text: str) -> None:
        if self._write is not None:
            self._write(text.rstrip("\n"))
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the stream is closed: the measurement goes on unsaid
            pass


class Lines(Report):
    """Lines kept in the order said, each once (the same hint from ten tests is one hint):
    for the pytest plugin's summary and a notebook's HTML."""

    def __init__(self) -> None:
        self.lines: list[Line] = []

    def say(self, line: Line) -> None:
        if line not in self.lines:
            self.lines.append(line)

    def text(self) -> str:
        return "\n".join(str(line) for line in self.lines)

    def html(self) -> str:
        """Each line a ``div``, its kind its class (``ctxbench-hint``, ...)."""
        return "".join(
            f'<div class="ctxbench-{line.kind}">{html.escape(str(line))}</div>'
            for line in self.lines
        )


# What a fleet record's reader is to know: the lines that say something is off.
RECORDED = ("stopped", "below_resolution", "hint", "warning", "wait")


class Record(Report):
    """A fleet record's ``warnings`` (the list given): its words without the "ctxbench: "
    of a terminal, the end of a wait and not its progress."""

    def __init__(self, warnings: list[str]) -> None:
        self.warnings = warnings

    def say(self, line: Line) -> None:
        if line.kind in RECORDED:
            self.warnings.append(line.text)

    def wait(self, line: Line, final: bool) -> None:
        if final:
            self.say(line)


class Reports(Report):
    """Several destinations at once (criterion's ``Reports``): each line to each of them."""

    def __init__(self, *to: Report) -> None:
        self.to = to

    @property
    def live(self) -> bool:  # type: ignore[override]
        return any(r.live for r in self.to)

    def say(self, line: Line) -> None:
        for r in self.to:
            r.say(line)

    def wait(self, line: Line, final: bool) -> None:
        for r in self.to:
            r.wait(line, final)


# Where lines go when a front door names no destination: stderr, unless ``saying`` sends them
# elsewhere for a block (the pytest plugin past its capture, a fleet point into its record).
_current: contextvars.ContextVar[Report | None] = contextvars.ContextVar("report", default=None)
_STDERR = Terminal()


def current() -> Report:
    """The destination in effect here."""
    return _current.get() or _STDERR


@contextmanager
def saying(to: Report | None) -> Iterator[Report]:
    """Lines said in the block (a wait for the lock among them) go to ``to`` (None: where
    they went)."""
    if to is None:
        yield current()
        return
    token = _current.set(to)
    try:
        yield to
    finally:
        _current.reset(token)


def say(lines: Iterable[Line], to: Report | None = None) -> None:
    """Each of ``lines`` to ``to`` (None: the destination in effect, ``current()``)."""
    destination = to if to is not None else current()
    for line in lines:
        destination.say(line)
