"""Figures of tidy frames (or results), ready for a paper.

Every function returns a matplotlib Figure and never calls ``show()``; it draws in ctxbench's
style (``style()``, applied in a context: your rcParams are untouched) at a size preset
(``size="column"`` or ``"page"``), into a new figure, your ``fig=`` (Figure or SubFigure) or
your ``ax=``. A figure made here saves in the style too: ``fig.savefig("f.pdf")`` embeds
TrueType fonts; the format follows the suffix, PNG at 300 dpi. In Jupyter, ``%matplotlib
inline`` displays a returned figure.

matplotlib and pandas are imported when a figure is first asked for, so ``import ctxbench``
works without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time __getattr__ imports on first use
    from ._compare import compare as compare
    from ._compare import machines as machines
    from ._data import BANDS as BANDS
    from ._ecdf import distribution as distribution
    from ._lines import lat_ctx as lat_ctx
    from ._lines import sizes as sizes
    from ._matrix import matrix as matrix
    from ._style import SIZES as SIZES
    from ._style import color as color
    from ._style import figure as figure
    from ._style import save as save
    from ._style import style as style

# Public name -> the module that defines it (relative to this package, or absolute).
_HOME = {
    "lat_ctx": "._lines",
    "sizes": "._lines",
    "compare": "._compare",
    "machines": "._compare",
    "distribution": "._ecdf",
    "matrix": "._matrix",
    "BANDS": "._data",
    "SIZES": "._style",
    "color": "._style",
    "figure": "._style",
    "save": "._style",
    "style": "._style",
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'ctxbench.plot' has no attribute {name!r}")
    from ..frame import require

    require("matplotlib", "ctxbench.plot")
    value = getattr(importlib.import_module(_HOME[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
