"""One look for every figure: the style file applied in a context, the size presets, a Figure
that draws and saves in the style whatever the caller's rcParams, the stable colours, and
text measured in the style's font (to wrap titles and lay out legends before drawing)."""

from __future__ import annotations

import colorsys
import contextlib
import functools
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Union

import matplotlib as mpl
from matplotlib.figure import Figure

from .. import _core

STYLE_FILE = Path(__file__).with_name("ctxbench.mplstyle")

# Width of a figure set in one column / across the page of a two-column paper (IEEE:
# 3.5 / 7.16 in; ACM: 3.33 / 7.0 in), and the height of one row of panels, in inches.
SIZES: dict[str, tuple[float, float]] = {"column": (3.5, 1.9), "page": (7.16, 2.3)}
Size = Union[str, tuple[float, float], None]

# Colour per engine/transport, the same in every figure. The comparisons people draw most
# (process/pipe against thread/pipe, the notebook's mechanisms, threads' transports) take
# Okabe & Ito's eight colour-blind-safe colours (their yellow darkened to read on white), the
# rest Tol's muted and medium-contrast ones; fibers, the user-space switch, are black.
PAIR_COLORS: dict[tuple[str, str], str] = {
    ("process", "pipe"): "#0072B2",
    ("thread", "pipe"): "#D55E00",
    ("fiber", "resume"): "#000000",
    ("thread", "futex"): "#009E73",
    ("thread", "eventfd"): "#CC79A7",
    ("process", "futex"): "#E69F00",
    ("thread", "condvar"): "#56B4E9",
    ("process", "eventfd"): "#A89200",
    ("thread", "socket"): "#332288",
    ("process", "socket"): "#44AA99",
    ("thread", "signal"): "#882255",
    ("process", "signal"): "#777777",
    ("thread", "yield"): "#AA4499",
    ("process", "yield"): "#CC6677",
    ("process", "condvar"): "#117733",
    ("thread", "futex_waitv"): "#999933",
    ("process", "futex_waitv"): "#661100",
    ("thread", "uring_futex"): "#6699CC",
    ("process", "uring_futex"): "#88CCEE",
    ("thread", "msg_ring"): "#994455",
    ("process", "msg_ring"): "#DDAA33",
    ("thread", "uring_read"): "#117755",
    ("process", "uring_read"): "#AA7744",
}
# A pair the table above does not name yet (a transport added to the core since) takes, in the
# core's order of engines and transports, one of Tol's vibrant colours (none of them above),
# then hues evenly spaced at a lightness that reads on white: stable in every figure, distinct
# from every other pair, and no line here needed to add a transport (pick one later if wanted).
RESERVE: tuple[str, ...] = ("#EE7733", "#0077BB", "#33BBEE", "#EE3377", "#CC3311", "#009988")
# Anything else told apart by colour (runs, hosts, placements): Okabe & Ito's palette, then
# Tol's muted one for the rare figure with more than eight.
CATEGORICAL: tuple[str, ...] = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#A89200",
    "#332288",
    "#44AA99",
    "#882255",
    "#AA4499",
    "#CC6677",
    "#117733",
    "#777777",
)


@functools.cache
def _rc() -> dict[str, Any]:
    return dict(mpl.rc_params_from_file(str(STYLE_FILE), use_default_template=False))


@contextlib.contextmanager
def style() -> Iterator[None]:
    """ctxbench's figure style for the duration of a ``with`` block; the caller's rcParams
    are as they were afterwards. Wrap your own figures in it to match ctxbench's."""
    with mpl.rc_context(_rc()):
        yield


class StyledFigure(Figure):
    """A Figure that draws and saves in ctxbench's style whatever rcParams hold when it
    does: ``fig.savefig("f.pdf")`` embeds TrueType (Type 42) fonts, ``"f.png"`` is written
    at 300 dpi, ``.svg``/``.pdf``/``.eps`` are vector, by the suffix."""

    def draw(self, renderer: Any) -> Any:
        with style():
            return super().draw(renderer)

    def savefig(self, fname: Any, *args: Any, **kwargs: Any) -> Any:
        with style():
            return _save(super().savefig, fname, *args, **kwargs)


def _save(savefig: Any, fname: Any, *args: Any, **kwargs: Any) -> Any:
    """``savefig(fname, ...)``, a path written as every file of ctxbench's is
    (``files.write_atomically``: whole or not at all, never through a link, only over this
    user's own file); the format by matplotlib's rule (``format=``, else the suffix, else
    ``savefig.format`` added to the name)."""
    if not isinstance(fname, (str, os.PathLike)):
        return savefig(fname, *args, **kwargs)
    from ..files import write_atomically

    name = os.fspath(fname)
    fmt = kwargs.pop("format", None)
    if fmt is None:
        fmt = os.path.splitext(name)[1][1:]
        if not fmt:
            fmt = mpl.rcParams["savefig.format"]
            name = f"{name.rstrip('.')}.{fmt}"
    write_atomically(name, lambda f: savefig(f, *args, format=fmt, **kwargs))
    return None


def dimensions(size: Size) -> tuple[float, float, bool]:
    """(width, height of a row of panels, whether the height follows the content) of
    ``size``: a preset name, or (width, height) in inches for the whole figure."""
    if size is None:
        size = "page"
    if isinstance(size, str):
        if size not in SIZES:
            raise ValueError(
                f"size: expected 'column', 'page' or (width, height) in inches, got {size!r}"
            )
        return (*SIZES[size], True)
    try:
        width, height = (float(v) for v in size)
    except (TypeError, ValueError):
        raise TypeError(
            f"size: expected 'column', 'page' or (width, height) in inches, got {size!r}"
        ) from None
    if not (width > 0 and height > 0):
        raise ValueError(f"size: width and height must be > 0 inches, got {size!r}")
    return width, height, False


def figure(size: Size = "page", *, rows: int = 1) -> StyledFigure:
    """A new, empty figure in ctxbench's style: ``size="column"`` or ``"page"`` wide (or
    (width, height) in inches), ``rows`` rows of panels high, with constrained layout. For
    figures of your own (or a new kind of plot) that should look like ctxbench's."""
    width, row, grows = dimensions(size)
    with style():
        return StyledFigure(figsize=(width, row * rows if grows else row), layout="constrained")


def save(fig: Any, path: str | os.PathLike[str], **kwargs: Any) -> None:
    """Save any figure in ctxbench's style: the format by the suffix (.pdf, .svg, .eps
    vector; .png at 300 dpi), Type 42 fonts in PDF/PS; written as every file of ctxbench's
    is (``files.write_atomically``). Figures from ``ctxbench.plot`` do this on their own
    ``savefig`` too."""
    with style():
        _save(fig.savefig, path, **kwargs)


def pair_colors(pairs: list[str]) -> dict[str, str]:
    """The colour of each "engine/transport": `PAIR_COLORS`, else the core's pairs it does not
    name (`reserved_colors`); a pair the core does not know (a file from another version)
    takes the categorical colours in order."""
    known = {f"{e}/{t}": c for (e, t), c in PAIR_COLORS.items()} | reserved_colors()
    spare = iter(c for c in CATEGORICAL if c not in {known.get(p) for p in pairs})
    return {p: known.get(p) or next(spare, "#777777") for p in pairs}


def reserved_colors() -> dict[str, str]:
    """The colour of each engine/transport pair of the core that `PAIR_COLORS` does not name:
    `RESERVE` in the core's order, then evenly spaced hues."""
    unnamed = [
        f"{e}/{t}" for e in _core.ENGINES for t in _core.TRANSPORTS[e] if (e, t) not in PAIR_COLORS
    ]
    beyond = max(len(unnamed) - len(RESERVE), 0)
    hues = [mpl.colors.to_hex(colorsys.hls_to_rgb(i / beyond, 0.4, 0.7)) for i in range(beyond)]
    return dict(zip(unnamed, (*RESERVE, *hues)))


def color(engine: str, transport: str) -> str:
    """The colour ctxbench's figures give this engine/transport."""
    return pair_colors([f"{engine}/{transport}"])[f"{engine}/{transport}"]


def categorical(values: list[Any]) -> dict[Any, str]:
    return {v: CATEGORICAL[i % len(CATEGORICAL)] for i, v in enumerate(values)}


def sequential(values: list[Any]) -> dict[Any, Any]:
    """Ordered values (sizes, process counts) along viridis, short of its pale end."""
    colormap = mpl.colormaps["viridis"]
    return {v: colormap(0.8 * i / max(len(values) - 1, 1)) for i, v in enumerate(values)}


@functools.lru_cache(maxsize=4096)
def text_width(text: str, points: float) -> float:
    """Width of one line of ``text`` at ``points`` in the style's font, in points."""
    from matplotlib.font_manager import FontProperties

    with style():
        prop = FontProperties(size=points)
    return max(
        (
            _renderer().get_text_width_height_descent(line, prop, ismath=False)[0]
            for line in text.split("\n")
        ),
        default=0.0,
    )


@functools.lru_cache(maxsize=1)
def _renderer() -> Any:
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(10, 10, 72)


def wrap(text: str, width: float, points: float) -> str:
    """``text`` broken into lines no wider than ``width`` points: between clauses ("; ")
    where it can, else at spaces, else after / _ - . (file names, paths), else anywhere."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for clause in re.findall(r"[^;]+(?:;\s*|$)", paragraph) or [""]:
            if line and text_width(line + clause.rstrip(), points) > width:
                lines.append(line.rstrip())
                line = ""
            if text_width(clause.rstrip(), points) <= width:
                line += clause
                continue
            pieces = _broken(line + clause, width, points)
            lines += pieces[:-1]
            line = pieces[-1]
        lines.append(line.rstrip())
    return "\n".join(lines)


def _broken(text: str, width: float, points: float) -> list[str]:
    """One clause too wide for a line, broken at spaces, punctuation or anywhere."""
    lines, line = [], ""
    for piece in re.findall(r"[^\s/_.-]*[/_.-]*\s*", text):
        if not piece:
            continue
        if line and text_width(line + piece.rstrip(), points) > width:
            lines.append(line.rstrip())
            line = ""
        while text_width(piece.rstrip(), points) > width and len(piece) > 1:
            cut = max(1, _fitting(piece, width, points))
            lines.append(piece[:cut])
            piece = piece[cut:]
        line += piece
    return [*lines, line]


def _fitting(text: str, width: float, points: float) -> int:
    """How many leading characters of ``text`` fit in ``width`` points."""
    n = len(text)
    while n > 1 and text_width(text[:n], points) > width:
        n -= 1
    return n


def styled(fn: Any) -> Any:
    """Run a figure function inside ``style()``, so everything it creates takes the style."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        with style():
            return fn(*args, **kwargs)

    return run
