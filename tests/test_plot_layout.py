"""Text layout of every figure, measured on the drawn figure: nothing collides or is clipped,
at any number of series, names of any length and every size preset."""

from __future__ import annotations

import re
from typing import Any

import matrices
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from plot_frames import (
    drawn_texts,
    every_figure,
    layout_faults,
    matrix_frame,
    series_colours,
    series_of,
    synthetic,
)

import ctxbench
from ctxbench import plot
from ctxbench._matrix_table import grid
from ctxbench.plot import _heatmap
from ctxbench.plot import _matrix as matrix_module

# --- text layout, measured on the drawn figure ------------------------------------------


def test_layout_check_sees_collisions() -> None:
    """The check itself: a legend over the title, a text off the edge, two texts on one
    spot are each reported."""
    fig = plot.lat_ctx(synthetic(series_of(1, False)), size="column")
    fig.legends[0].set_loc("upper center")
    fig.legends[0].set_bbox_to_anchor((0.5, 1.0), transform=fig.transFigure)
    fig.text(1.02, 0.5, "off the edge")
    fig.axes[0].text(0.5, 0.5, "here", transform=fig.axes[0].transAxes)
    fig.axes[0].text(0.5, 0.5, "here too", transform=fig.axes[0].transAxes)
    faults = layout_faults(fig)
    assert any(f.startswith("legend over 'Context-switch") for f in faults)
    assert "clipped: 'off the edge'" in faults
    assert "overlap: 'here' / 'here too'" in faults


def layout_cases() -> list[Any]:
    """(figure, size, series, long names) for every figure at both presets with 1, 4 and
    12 series, and long names with 4 and 12. The quick loop takes the hardest case of each
    (12 series with long names); the full suite every case."""
    counts = [(1, False), (4, False), (12, False), (4, True), (12, True)]
    return [
        pytest.param(
            kind,
            size,
            n,
            long,
            id=f"{kind}-{size}-{n}{'-long' if long else ''}",
            marks=() if (n, long) == (12, True) else pytest.mark.slow,
        )
        for kind in [*every_figure(pd.DataFrame(), "page"), "matrix"]
        for size in ("column", "page")
        for n, long in counts
    ]


@pytest.mark.parametrize("kind, size, n, long", layout_cases())
def test_no_text_collides_or_is_clipped(kind: str, size: str, n: int, long: bool) -> None:
    # A matrix's series are the machines of a fleet run, drawn side by side.
    if kind == "matrix":
        fig = plot.matrix(matrix_frame(n, long), size=size)
        assert len([ax for ax in fig.axes if ax.images]) == n
    else:
        fig = every_figure(synthetic(series_of(n, long)), size)[kind]()
    assert layout_faults(fig) == []
    width = {"column": 3.5, "page": 7.16}[size]
    assert fig.get_size_inches()[0] == pytest.approx(width)
    # Small multiples: never more than six series on one axes.
    assert all(len(series_colours(ax)) <= 6 for ax in fig.axes)


MATRICES = {
    "2-cpus": lambda: matrices.frame(1, 1, 2, 1),
    "16-cpus": lambda: matrices.frame(2, 1, 4, 2),
    "64-cpus": lambda: matrices.frame(2, 2, 8, 2),
    "16-cpus-classes": lambda: matrices.frame(2, 1, 4, 2, every=3),
}


@pytest.mark.parametrize(
    "case, size",
    [
        pytest.param(case, size, marks=() if case == "64-cpus" else pytest.mark.slow)
        for case in MATRICES
        for size in ("column", "page")
    ],
)
def test_a_matrix_of_any_size_reads(case: str, size: str) -> None:
    """2, 16 and 64 CPUs (and class mode's gaps): CPU ids thinned to where they fit,
    always at the start of a core, LLC or package; the topology's lines; values written in
    cells big enough for them."""
    df = MATRICES[case]()
    fig = plot.matrix(df, size=size)
    assert layout_faults(fig) == []
    assert fig.get_size_inches()[0] == pytest.approx({"column": 3.5, "page": 7.16}[size])
    (heatmap,) = [ax for ax in fig.axes if ax.images]
    texts, _ = drawn_texts(fig)
    shown = [t for t, _ in texts]
    cpus, _ = grid(df)
    where = _heatmap.places(df)
    starts = set(_heatmap.starts(cpus, where, "core"))
    for axis in (heatmap.xaxis, heatmap.yaxis):
        ticks = [t for t in axis.get_ticklabels() if t in shown]
        at = [round(t.get_position()[0 if axis is heatmap.xaxis else 1]) for t in ticks]
        assert 2 <= len(ticks) <= len(cpus)
        assert [t.get_text() for t in ticks] == [str(cpus[i]) for i in at]
        assert set(at) <= starts or len(ticks) == len(cpus), at
    widths = {round(line.get_linewidth(), 1) for line in heatmap.lines}
    assert {"2-cpus": {0.4}, "64-cpus": {0.9, 1.6}}.get(case, {0.4, 1.6}) <= widths
    values = [t for t in heatmap.texts if t in shown]
    assert len(values) == (4 if case == "2-cpus" else 0)
    assert np.ma.is_masked(heatmap.images[0].get_array()) == (case == "16-cpus-classes")


def test_layout_check_sees_a_crowded_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check on the matrix: 12 long host names left whole over small maps, and every
    CPU id of a 64-CPU axis, are reported."""
    whole = monkeypatch.context()
    with whole as m:
        m.setattr(matrix_module, "_shortened", lambda names, width: (names, ""))
        faults = layout_faults(plot.matrix(matrix_frame(12, True), size="column"))
    assert any("compute-node-" in f for f in faults), faults
    monkeypatch.setattr(_heatmap.GroupLocator, "tick_values", lambda self, lo, hi: self.choices[0])
    faults = layout_faults(plot.matrix(matrices.frame(2, 2, 8, 2), size="column"))
    assert any(f.startswith("overlap: '") for f in faults), faults


def test_matrix_composes_and_keeps_its_options() -> None:
    one = matrices.frame(2, 1, 4, 2)
    with plot.style():
        fig = Figure(figsize=(7.16, 3), layout="constrained")
    left, right = fig.subplots(1, 2)
    assert plot.matrix(one, summary=False, ax=left, title=False) is fig
    assert left.images and len(fig.axes) == 3, "the heatmap's colour bar beside it"
    with pytest.raises(ValueError, match="ax: this figure draws a heatmap and the per-class"):
        plot.matrix(one, ax=right)
    with pytest.raises(ValueError, match=r"ax: this figure draws a heatmap per machine \(4 here"):
        plot.matrix(matrix_frame(4, False), summary=False, ax=right)
    with pytest.raises(ValueError, match="ax, fig"):
        plot.matrix(one, summary=False, ax=right, fig=fig)
    sub = Figure(figsize=(7.16, 8)).subfigures(2, 1)
    assert plot.matrix(one, fig=sub[0]) is sub[0].figure
    assert plot.matrix(matrix_frame(4, False), fig=sub[1], title="Figure 4") is sub[1].figure
    assert layout_faults(sub[0].figure) == []
    assert len(plot.matrix(one, summary=False).axes) == 2
    assert plot.matrix(one, title=False)._suptitle is None
    # The colour scale: linear for 2-14 µs, log where asked (plain numbers), refused at 0.
    bar = plot.matrix(one).axes[-1]
    assert bar.get_yscale() == "linear"
    log = plot.matrix(one, log=True)
    labels = [t.get_text() for t, _ in drawn_texts(log)[0] if t in log.axes[-1].get_yticklabels()]
    assert log.axes[-1].get_yscale() == "log" and labels
    assert all(re.fullmatch(r"\d+(\.\d+)?", t) for t in labels), labels
    with pytest.raises(ValueError, match="log: a cell's median is <= 0"):
        plot.matrix(one.assign(latency_us=one["latency_us"] - 3), log=True)
    # Two files of `ctxbench plot`, labelled by a run column, are two matrices.
    runs = pd.concat([one.assign(run="a.json"), one.assign(run="b.json")])
    assert len([ax for ax in plot.matrix(runs).axes if ax.images]) == 2


def test_every_class_has_its_look() -> None:
    assert set(matrix_module.CLASS_STYLE) == set(ctxbench._core.RELATIONS)
    looks = list(matrix_module.CLASS_STYLE.values())
    assert len(set(looks)) == len(looks)
