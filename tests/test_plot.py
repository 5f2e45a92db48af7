from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import FAST
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

import ctxbench
from ctxbench import files, plot


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return ctxbench.sweep(
        procs=[2, 3],
        sizes_kb=[0, 4],
        placements=["default", "single"],
        repetitions=FAST["repetitions"],
        min_time=FAST["min_time"],
        warmup=FAST["warmup"],
        progress=False,
    )


def saves(fig: Figure, path: Path) -> None:
    fig.savefig(path)
    assert path.read_bytes().startswith(b"\x89PNG")


def test_lat_ctx_one_line_and_band_per_series(frame: pd.DataFrame, tmp_path: Path) -> None:
    fig = plot.lat_ctx(frame)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    assert len(ax.lines) == 4  # 2 sizes × 2 placements
    assert len(ax.collections) == 4  # one min–max band each
    labels = {t.get_text() for t in ax.get_legend().get_texts()}
    assert labels == {"default size=0k", "default size=4k", "single size=0k", "single size=4k"}
    assert "µs" in ax.get_ylabel() and "procs" in ax.get_xlabel()
    for line in ax.lines:
        assert line.get_xdata().tolist() == [2, 3]
    saves(fig, tmp_path / "lat_ctx.png")


def test_lat_ctx_label_is_the_size_alone(frame: pd.DataFrame) -> None:
    fig = plot.lat_ctx(frame[(frame["placement"] == "single") & (frame["size_kb"] == 4)])
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["size=4k"]


def test_compare_bars_per_series_and_panel_per_size(frame: pd.DataFrame, tmp_path: Path) -> None:
    fig = plot.compare(frame)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        bars = [c for c in ax.containers if isinstance(c, BarContainer)]
        assert len(bars) == 2 and all(len(b) == 2 for b in bars)  # 2 placements × 2 procs
        assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "3"]
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["process/pipe default", "process/pipe single"]
    saves(fig, tmp_path / "compare.png")


def test_distribution_one_curve_per_point(frame: pd.DataFrame, tmp_path: Path) -> None:
    fig = plot.distribution(frame)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert len(ax.lines) == frame.groupby(["placement", "size_kb", "procs"]).ngroups
    saves(fig, tmp_path / "distribution.png")


def test_distribution_prefers_hop_us(frame: pd.DataFrame) -> None:
    hops = frame.assign(hop_us=frame["value"] * 0 + 7.0)
    fig = plot.distribution(hops)
    assert all(set(line.get_xdata()) == {7.0} for line in fig.axes[0].lines)
    assert "hop" in fig.axes[0].get_xlabel()


def test_accepts_results_and_xgraph_frames(tmp_path: Path) -> None:
    r = ctxbench.lat_ctx([2, 3], **FAST)
    assert len(plot.lat_ctx(r).axes[0].lines) == 1
    assert len(plot.lat_ctx([r, r]).axes[0].lines) == 1
    path = tmp_path / "old.xgraph"
    path.write_text('"size=0 ovr=12\n2 34\n4 5.25\n')
    both = ctxbench.concat([r, files.load(path)])
    legend = plot.lat_ctx(both).axes[0].get_legend().get_texts()
    assert [t.get_text() for t in legend] == [
        "ctxbench default size=0k",
        "xgraph unknown size=0k",
    ]
    assert len(plot.compare(both).axes) == 1


def test_empty_frame() -> None:
    with pytest.raises(ValueError, match="nothing to plot"):
        plot.lat_ctx(pd.DataFrame(columns=["procs", "value"]))


def test_pingpong_is_its_own_series() -> None:
    ring = ctxbench.ring([2, 3], placement="single", **FAST)
    pingpong = ctxbench.pingpong(loops=1000, placement="single")
    fig = plot.compare([ring, pingpong])
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["pingpong process/pipe", "ring process/pipe"]
