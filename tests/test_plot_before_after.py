"""The before/after figure: each run's stack of points, the ratio with its interval, the
verdict marked."""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.collections import LineCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from plot_frames import (
    legend,
    series_of,
    slower,
    synthetic,
    title,
    with_ratio_interval,
)

from ctxbench import compare as compare_runs
from ctxbench import plot

# --- before/after -------------------------------------------------------------------------


def stacks(fig: Figure) -> list[tuple[Any, Any]]:
    """A before/after figure's (medians, ratios) axes, panel by panel."""
    rows = {}
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        rows[(spec.rowspan.start // 2, spec.colspan.start, spec.rowspan.start % 2)] = ax
    return [(rows[k], rows[(k[0], k[1], 1)]) for k in sorted(rows) if k[2] == 0]


def ratio_markers(ax: Any) -> list[Any]:
    """The ratio row's points (not the caps of their bars)."""
    return [c.lines[0] for c in ax.containers if isinstance(c, ErrorbarContainer)]


def ratio_points(ax: Any) -> list[float]:
    return sorted(float(y) for line in ratio_markers(ax) for y in line.get_ydata())


def test_before_after_draws_runs_and_ratios() -> None:
    base = synthetic(series_of(4, False)).assign(host="node-a")
    new = slower(base, 1.25).assign(host="node-b")
    fig = plot.compare(base, new=new)
    assert len(fig.axes) == 4  # a size per column, medians above the ratios
    expected = compare_runs(base, new)
    top, bottom = stacks(fig)[0]
    assert bottom.get_yscale() == "log"
    assert ratio_points(bottom) == pytest.approx(
        sorted(expected[expected["size_kb"] == 16]["ratio"])
    )
    # compare() gives each ratio its interval: a bar where it has one.
    bars = [c for c in bottom.collections if isinstance(c, LineCollection)]
    assert bool(bars) == bool(np.isfinite(expected["ratio_low"]).any())
    # Hosts name the runs; hollow base, filled new.
    names = legend(fig)
    assert "node-a" in names and "node-b" in names
    assert "Before and after: node-a → node-b" in title(fig)
    faces = {mpl.colors.to_hex(line.get_markerfacecolor()) for line in top.lines}
    assert "#ffffff" in faces and len(faces) > 1
    assert {"v1", "v2"} <= set(legend(plot.compare(base, new=new, labels=("v1", "v2"))))


def test_before_after_draws_the_ratio_interval() -> None:
    base = synthetic(series_of(4, False))
    comparison = with_ratio_interval(compare_runs(base, slower(base, 1.25)))
    fig = plot.compare(comparison)
    _, bottom = stacks(fig)[0]
    want = comparison[comparison["size_kb"] == 16]
    ends = np.r_[want["ratio_low"], want["ratio_high"]]
    segments = [
        s for c in bottom.collections if isinstance(c, LineCollection) for s in c.get_segments()
    ]
    assert len(segments) == len(want)
    for segment in segments:
        assert all(np.isclose(ends, y).any() for y in segment[:, 1])
    assert "with its 95% interval" in title(fig)


def test_before_after_marks_the_verdict() -> None:
    base = synthetic(series_of(1, False))
    fig = plot.compare(base, new=slower(base, 2.0))
    assert "ratio: slower" in legend(fig)
    markers = {line.get_marker() for line in ratio_markers(stacks(fig)[0][1])}
    assert markers == {"^"}
