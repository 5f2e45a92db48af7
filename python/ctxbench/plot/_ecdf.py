"""The distribution of each point's samples as an empirical CDF, a few curves per panel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import _layout, _ticks
from ._data import PAIR, VARIANT, dropped_note, frame
from ._style import Size, styled

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@styled
def distribution(
    data: Any,
    *,
    log: bool = True,
    size: Size = None,
    title: bool | str = True,
    fig: Any = None,
    ax: Any = None,
) -> Figure:
    """ECDF of the per-repetition samples (``value``), or of a ``hop_us`` column of
    per-hop latencies where the frame has one (the tidy frame does not: a result keeps its
    hops as ``hop_histogram``). One curve per process count, coloured in order, and a panel
    per engine/transport, size and placement (at most six curves a panel). On the log axis
    (``log=True``, the default) values ≤ 0 cannot be drawn; the title counts them.
    ``size``, ``title``, ``fig`` and ``ax`` as in ``lat_ctx``."""
    df = frame(data)
    column = "hop_us" if "hop_us" in df.columns else "value"
    found = _layout.facets(
        df, ["procs", PAIR, "size_kb", VARIANT], one_axes=ax is not None, styles=False
    )
    g = _layout.grid(len(found.panels), size, one_column=found.split, fig=fig, ax=ax)
    dropped = 0
    for stack, panel in zip(g.axes, found.panels):
        a = stack[0]
        for s in panel.series:
            values = s.rows[column].dropna().to_numpy(dtype=float)
            shown = np.sort(values[values > 0] if log else values)
            dropped += len(values) - len(shown)
            if len(shown):
                # Start each curve at 0 so its first step is drawn.
                a.step(
                    np.r_[shown[0], shown],
                    np.arange(len(shown) + 1) / len(shown),
                    where="post",
                    color=s.color,
                    linestyle=s.dash,
                    label=s.label,
                )
        if log:
            _ticks.plain_log(a, "x")
    g.axes[0][0].set_ylim(0, 1.02)
    what = "µs per hop" if column == "hop_us" else "µs per switch, one sample per repetition"
    _layout.labels(g, what, ("fraction of samples ≤ x",))
    _layout.panel_titles(g, found, markers=False)
    return _layout.finish(
        g,
        found.handles(markers=False),
        title=title,
        main="Latency distribution (ECDF)",
        detail=dropped_note(dropped, "value") if log else "",
    )
