"""Ticks that read as plain numbers (0.5, 1, 2, 5, 10 on a log axis, never 2×10⁰) and that are
thinned to the room the axis has. Both are decided when the figure is drawn, after the layout,
so they hold at any size preset and after the caller changes limits or size."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np
from matplotlib import ticker

# At most this many labelled ticks on an axis, and at least this many where the room allows.
_MOST, _FEWEST = 8, 3


def plain(x: float) -> str:
    """A tick value as people write it: 0.002, 0.5, 1, 20, 1500 (4 significant digits)."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    return np.format_float_positional(float(f"{x:.4g}"), trim="-")


def kib(kb: float) -> str:
    """A size in KiB as 512 KiB, 1 MiB, 2 GiB."""
    for unit, scale in (("GiB", 1024 * 1024), ("MiB", 1024)):
        if kb >= scale:
            return f"{plain(kb / scale)} {unit}"
    return f"{plain(kb)} KiB"


class PlainFormatter(ticker.Formatter):
    """Tick labels by a function of the value (``plain`` unless told)."""

    def __init__(self, text: Callable[[float], str] = plain) -> None:
        self.text = text

    def __call__(self, x: float, pos: int | None = None) -> str:
        return self.text(x)


def _fits(axis: Any, values: Sequence[float], text: Callable[[float], str]) -> bool:
    """Whether the labels of ``values`` leave a gap between neighbours on the drawn axis."""
    inside = _in_view(axis, values)
    if len(inside) < 2:
        return True
    scale = axis.get_transform()
    view = scale.transform(np.asarray(axis.get_view_interval(), dtype=float))
    span = float(view[1] - view[0]) or 1.0
    length, size = _room(axis)
    at = (scale.transform(np.asarray(inside, dtype=float)) - view[0]) / span * length
    if axis.axis_name == "x":
        # Label widths: about 0.6 em a character, plus one character of air between them.
        extent = np.array([(len(text(v)) + 1) * 0.62 * size for v in inside])
        need = (extent[1:] + extent[:-1]) / 2
    else:
        need = np.full(len(inside) - 1, 1.6 * size)
    return bool(np.all(np.abs(np.diff(at)) >= need))


def _room(axis: Any) -> tuple[float, float]:
    """The axis' length and a tick label's font size, both in pixels."""
    axes = axis.axes
    length = axes.bbox.width if axis.axis_name == "x" else axes.bbox.height
    ticks = axis.get_major_ticks(1)
    points = ticks[0].label1.get_fontsize() if ticks else 8.0
    return float(length), float(points) * axes.figure.dpi / 72


def _in_view(axis: Any, values: Sequence[float]) -> list[float]:
    lo, hi = sorted(axis.get_view_interval())
    slack = (hi - lo) * 1e-9
    return [v for v in values if lo - slack <= v <= hi + slack]


class PlainLogLocator(ticker.Locator):
    """Major ticks of a log axis: 1-2-5 in each decade, or one per decade, or every n-th
    decade, whichever is the densest whose labels fit (3 to 8 of them); on an axis spanning
    less than a decade, nicely stepped values (2, 3, 4, 5 or 0.9, 1, 1.1) instead, which
    read better than one or two 1-2-5 ticks. ``base=2`` ticks powers of two (sizes)."""

    def __init__(self, base: int = 10, text: Callable[[float], str] = plain) -> None:
        self.base = base
        self.text = text

    def __call__(self) -> Sequence[float]:
        lo, hi = self.axis.get_view_interval()
        return self.tick_values(lo, hi)

    def tick_values(self, vmin: float, vmax: float) -> Sequence[float]:
        lo, hi = sorted((float(vmin), float(vmax)))
        if not hi > 0 or not math.isfinite(hi):
            return []
        lo = max(lo, hi * 1e-12)
        choices = self._choices(lo, hi)
        if self.axis is None:
            return choices[0]
        fitting = [c for c in choices if _fits(self.axis, c, self.text)]
        for fewest in (_FEWEST, 2, 1):
            for ticks in fitting:
                if fewest <= len(_in_view(self.axis, ticks)) <= _MOST:
                    return ticks
        return fitting[-1] if fitting else choices[-1]

    def _choices(self, lo: float, hi: float) -> list[list[float]]:
        """Candidate tick sets, densest first."""
        b = self.base
        first, last = math.floor(math.log(lo, b)) - 1, math.ceil(math.log(hi, b)) + 1
        powers = [float(b) ** e for e in range(first, last + 1)]
        choices = []
        if hi / lo < 10:
            for bins in (6, 4):
                steps = ticker.MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10])
                choices.append([v for v in steps.tick_values(lo, hi) if v > 0])
        if b == 10:
            choices.append([p * s for p in powers for s in (1, 2, 5)])
        for stride in range(1, max(len(powers), 2)):
            # Anchored at b**0, so the ticks stay on round values (1, 100, 10⁴ …).
            choices.append([p for e, p in zip(range(first, last + 1), powers) if e % stride == 0])
        return choices


class SpacedLocator(ticker.Locator):
    """Ticks at given values (say the measured process counts), every n-th of them where
    their labels would otherwise touch."""

    def __init__(self, values: Sequence[float], text: Callable[[float], str] = plain) -> None:
        self.values = sorted(float(v) for v in values)
        self.text = text

    def __call__(self) -> Sequence[float]:
        return self.tick_values(*self.axis.get_view_interval())

    def tick_values(self, vmin: float, vmax: float) -> Sequence[float]:
        if self.axis is None:
            return self.values
        for stride in range(1, len(self.values) + 1):
            ticks = self.values[::stride]
            if _fits(self.axis, ticks, self.text):
                return ticks
        return self.values[:1]


def plain_log(ax: Any, which: str, base: int = 10, text: Callable[[float], str] = plain) -> None:
    """Put the ``which`` ("x" or "y") axis of ``ax`` on a log scale labelled in plain numbers,
    with unlabelled minor ticks (none between powers of 2)."""
    getattr(ax, f"set_{which}scale")("log", base=base)
    axis = getattr(ax, f"{which}axis")
    axis.set_major_locator(PlainLogLocator(base, text))
    axis.set_major_formatter(PlainFormatter(text))
    axis.set_minor_formatter(ticker.NullFormatter())
    if base != 10:
        axis.set_minor_locator(ticker.NullLocator())
