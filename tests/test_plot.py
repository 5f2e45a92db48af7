from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import FAST
from matplotlib.collections import PathCollection, PolyCollection
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


def legend(fig: Figure) -> list[str]:
    """The texts of the figure's legend, which sits outside the axes."""
    assert not any(ax.get_legend() for ax in fig.axes), "a legend inside the axes"
    (only,) = fig.legends
    return [t.get_text() for t in only.get_texts()]


def bands(ax: Any) -> list[PolyCollection]:
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def test_lat_ctx_one_line_and_band_per_series(frame: pd.DataFrame, tmp_path: Path) -> None:
    fig = plot.lat_ctx(frame)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    assert len(ax.lines) == 4  # 2 sizes × 2 placements
    assert len(bands(ax)) == 4  # one band each
    labels = set(legend(fig)) - {
        "below resolution (net ≤ 0)",
        "bimodal: two modes, the median is neither",
    }
    assert labels == {"default size=0k", "default size=4k", "single size=0k", "single size=4k"}
    assert "µs" in ax.get_ylabel() and "procs" in ax.get_xlabel()
    for line in ax.lines:
        assert line.get_xdata().tolist() == [2, 3]
    saves(fig, tmp_path / "lat_ctx.png")


def test_lat_ctx_label_is_the_size_alone(frame: pd.DataFrame) -> None:
    fig = plot.lat_ctx(frame[(frame["placement"] == "single") & (frame["size_kb"] == 4)])
    assert legend(fig)[0] == "size=4k"


def test_compare_bars_per_series_and_panel_per_size(frame: pd.DataFrame, tmp_path: Path) -> None:
    fig = plot.compare(frame)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        bars = [c for c in ax.containers if isinstance(c, BarContainer)]
        assert len(bars) == 2 and all(len(b) == 2 for b in bars)  # 2 placements × 2 procs
        assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "3"]
    assert legend(fig)[:2] == ["process/pipe default", "process/pipe single"]
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
    assert legend(plot.lat_ctx(both))[:2] == [
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
    assert legend(fig)[:2] == ["pingpong process/pipe", "ring process/pipe"]


# --- what an outlier cannot do -----------------------------------------------------------


def with_outliers(frame: pd.DataFrame) -> pd.DataFrame:
    """Each point's fastest sample moved to -33 µs and its slowest to +1000 µs: the
    medians and the recorded confidence intervals stay as they were."""
    out = frame.copy()
    for _, g in out.groupby(["placement", "size_kb", "procs"]):
        out.loc[g["value"].idxmin(), "value"] = -33.0
        out.loc[g["value"].idxmax(), "value"] = 1000.0
    return out


def test_band_is_the_confidence_interval(frame: pd.DataFrame) -> None:
    ax = plot.lat_ctx(frame).axes[0]
    ends = np.r_[frame["ci_low"].unique(), frame["ci_high"].unique()]
    for band in bands(ax):
        for y in band.get_paths()[0].vertices[:, 1]:
            assert np.isclose(ends, y).any(), f"band at {y} is not a CI end"
    assert "95% CI of the median" in ax.get_title()


def test_iqr_band_and_bad_band(frame: pd.DataFrame) -> None:
    ax = plot.lat_ctx(frame, band="iqr").axes[0]
    q = frame.groupby(["placement", "size_kb", "procs"])["value"].quantile([0.25, 0.75])
    for band in bands(ax):
        for y in band.get_paths()[0].vertices[:, 1]:
            assert np.isclose(q.to_numpy(), y).any()
    assert not bands(plot.lat_ctx(frame, band=None).axes[0])
    with pytest.raises(ValueError, match="band"):
        plot.lat_ctx(frame, band="minmax")


@pytest.mark.parametrize("kind", ["lat_ctx", "compare", "sizes"])
def test_far_outliers_do_not_move_the_axes(frame: pd.DataFrame, kind: str) -> None:
    before = [ax.get_ylim() for ax in getattr(plot, kind)(frame).axes]
    after = [ax.get_ylim() for ax in getattr(plot, kind)(with_outliers(frame)).axes]
    # The limits come from the medians (and their intervals, within bounds), so samples at
    # -33 and +1000 µs change nothing; how wide the limits are depends on the measured frame.
    assert after == before


def test_flagged_points_are_marked(frame: pd.DataFrame, tmp_path: Path) -> None:
    flagged = frame.copy()
    low = (flagged["placement"] == "single") & (flagged["procs"] == 2)
    two = (flagged["placement"] == "default") & (flagged["procs"] == 3)
    flagged.loc[:, "below_resolution"] = low
    flagged.loc[:, "verdict"] = np.where(two, "bimodal", "stable")
    fig = plot.lat_ctx(flagged)
    # One hollow marker per flagged point: two sizes of each flagged (placement, procs).
    marks = sorted(
        (c.get_label(), c.get_offsets()[:, 0].tolist())
        for c in fig.axes[0].collections
        if isinstance(c, PathCollection)
    )
    assert marks == [("_flag below_resolution", [2.0])] * 2 + [("_flag bimodal", [3.0])] * 2
    assert legend(fig)[-2:] == [
        "below resolution (net ≤ 0)",
        "bimodal: two modes, the median is neither",
    ]
    saves(fig, tmp_path / "flagged.png")
    bars = plot.compare(flagged)
    hatched = [p for ax in bars.axes for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 2 * 2  # two flagged points per size, two sizes
    assert "bimodal: two modes, the median is neither" in legend(bars)


def test_sizes_draws_the_caches(frame: pd.DataFrame, tmp_path: Path) -> None:
    cached = frame.assign(cache_L1d_kb=16, cache_L1i_kb=16, cache_L2_kb=32, cache_L3_kb=2**20)
    fig = plot.sizes(cached)
    ax = fig.axes[0]
    lines = {line.get_label(): line.get_xdata()[0] for line in ax.lines}
    assert lines.pop("_cache L1d") == 16 and lines.pop("_cache L2") == 32
    assert "_cache L3" not in lines and "L3 1 GiB: off the axis" in ax.get_title()
    assert {t.get_text().strip() for t in ax.texts} == {"L1d 16 KiB", "L2 32 KiB"}
    # Working set = procs × size: only size 4 has one, at 2 × 4 and 3 × 4 KiB.
    assert sorted(lines) == ["default size=4k", "single size=4k"]
    assert all(list(ax.lines[i].get_xdata()) == [8, 12] for i in range(2))
    assert ax.get_xscale() == "log"
    saves(fig, tmp_path / "sizes.png")
    given = plot.sizes(frame, cache_kb={"L2": 10})
    assert [line.get_label() for line in given.axes[0].lines][-1] == "_cache L2"
    with pytest.raises(ValueError, match="size 0"):
        plot.sizes(frame[frame["size_kb"] == 0])


def test_frames_carry_the_machines_caches(frame: pd.DataFrame) -> None:
    cache = ctxbench.api.result_metadata()["cache_kb"]
    if not cache:
        pytest.skip("this machine does not show its caches in sysfs")
    assert frame["cache_L1d_kb"].iloc[0] == cache["L1d"]


def test_compare_log_axis(frame: pd.DataFrame) -> None:
    ax = plot.compare(frame[frame["value"] > 0], log=True).axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] > 0
