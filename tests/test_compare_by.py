"""Stored runs grouped by a label's two values and compared point by point at the level that
varies (``ctxbench compare --by``, ``ctxbench._by``, the core's ``judge_groups``), and the plan
for one (``plan --by``): each run one unit, Holm across the points, short sides said as such,
intervals printed on their side of 1. The store is the in-memory stand-in of its reading API
(tests/series_store.py)."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from series_store import Store, point_id

from ctxbench import _core
from ctxbench._by import compare_by, parse_by, plan_by
from ctxbench.report import format_groups, format_plan_by

PROCS = (2, 4, 8, 16)


class Labelled:
    """The stand-in with the store's ``runs()`` (each run's labels), as ``_by`` reads it."""

    def __init__(self, s: Store) -> None:
        self.s = s

    def runs(self, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
        return self.s.runs_of(labels)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.s, name)


def kernels(n: int = 8, slower: dict[int, float] | None = None, sd: float = 0.3,
            seed: int = 1, values: tuple[str, ...] = ("A", "B")) -> Labelled:  # fmt: skip
    """``n`` runs of each point under each kernel, runs ``sd`` apart (ln), interleaved in
    time; kernel B's runs ``slower[procs]`` x A's."""
    rng = random.Random(seed)
    s = Store()
    for i in range(n):
        for k, value in enumerate(values):
            for procs in PROCS:
                ratio = (slower or {}).get(procs, 1.0) if k else 1.0
                us = procs * ratio * math.exp(sd * rng.gauss(0, 1))
                s.add(point_id(procs), us, t=1e6 + 10 * i + k, labels={"kernel": value})
    return Labelled(s)


def test_the_same_code_under_two_labels_calls_nothing_across_many_draws() -> None:
    # Runs 1.35x apart (ln sd 0.3, this machine under load), 4 points, 8 runs a side: Holm
    # holds any call at 5 % (per point at 5 %, ~19 % of draws would hold one).
    calls = sum(
        compare_by(kernels(seed=seed), "kernel")["verdict"].isin(["slower", "faster"]).any()
        for seed in range(60)
    )
    assert calls <= 8, calls  # 5 % of 60 is 3; 8 is beyond its 99th percentile


def test_a_real_change_is_slower_with_its_interval_above_1_and_runs_a_side() -> None:
    out = compare_by(kernels(n=10, slower={2: 1.3}, sd=0.03), "kernel=A,B")
    by = out.set_index("point")
    row = by.loc[point_id(2)]
    assert row["verdict"] == "slower" and row["ratio_low"] > 1, out.T
    assert (row["base_runs"], row["new_runs"]) == (10, 10)
    assert not by.drop(point_id(2))["regressed"].any()
    text = format_groups(out)
    assert "10 vs 10" in text and "kernel=B against kernel=A" in text
    # The interval printed on its side of 1 (the report's rule), and Holm's family said.
    line = next(x for x in text.splitlines() if x.startswith(point_id(2)))
    low = float(line.split("[")[1].split(",")[0])
    assert low > 1 and "Holm across the 4 points" in text


def test_named_values_set_the_direction_and_a_short_side_is_inconclusive() -> None:
    s = kernels(n=8, slower={2: 1.3}, sd=0.03)
    out = compare_by(s, "kernel=B,A").set_index("point")
    assert out.loc[point_id(2), "verdict"] == "faster"
    short = kernels(n=2)
    row = compare_by(short, "kernel").iloc[0]
    assert (row["verdict"], row["why"]) == ("inconclusive", "short series")
    assert f"of the {_core.MIN_GROUP_RUNS} each side needs" in row["reason"]


def test_a_label_with_other_than_two_values_asks_for_the_two() -> None:
    three = kernels(values=("A", "B", "C"))
    with pytest.raises(ValueError, match=r"3 values of it \(A, B, C\).*--by kernel=A,B"):
        compare_by(three, "kernel")
    assert compare_by(three, "kernel=A,C").attrs["values"] == ("A", "C")
    with pytest.raises(ValueError, match="no stored run carries kernel=D"):
        compare_by(three, "kernel=A,D")
    for bad in ("kernel=A", "kernel=A,A", "kernel=A,B,C"):
        with pytest.raises(ValueError, match="LABEL=A,B"):
            parse_by(bad)


def test_plan_by_says_runs_a_side_and_how_many_runs_the_spread_rests_on() -> None:
    out = plan_by(kernels(n=6, sd=0.05), "kernel", 0.03)
    assert (out["runs"] == 12).all(), out
    # The spread is each value's about its own mean: the runs' 5 %, not the distance
    # between the values' levels.
    assert out["sd"].between(0.02, 0.09).all(), out
    want = _core.runs_to_detect(float(out["sd"].iloc[0]), 0.03)
    assert out["runs_per_side"].iloc[0] == want
    shifted = plan_by(kernels(n=6, sd=0.05, slower=dict.fromkeys(PROCS, 2.0)), "kernel", 0.03)
    assert shifted["sd"].between(0.02, 0.09).all(), shifted
    text = format_plan_by(out)
    assert "12 runs" in text and "change of 3%" in text
    # One value measured so far: a plan all the same, from its runs.
    one = plan_by(kernels(n=6, values=("A",)), "kernel", 0.03)
    assert (one["runs"] == 6).all() and one["runs_per_side"].notna().all()


def test_the_cli_compares_a_real_stores_two_kernels_and_exits_1_on_a_slower_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import dataclasses

    import numpy as np

    import ctxbench
    from ctxbench import store
    from ctxbench.cli import main

    where = tmp_path / "data"
    where.mkdir(mode=0o700)
    path = str(where / "store.sqlite3")
    r = ctxbench.lat_ctx([2], placement="single", min_time=0.002, max_time=0.05,
                         repetitions=3, history=False)  # fmt: skip
    net = np.where(r.latency_us > 0, r.latency_us, r.raw_us)
    with store.open(path) as s:  # type: ignore[union-attr]
        for i, (kernel, ratio) in enumerate([("A", 1.0), ("B", 1.5)] * 4):
            wobble = 1 + 0.002 * (i % 3)
            meta = {**r.metadata, "run_id": f"run{i}"}
            run = dataclasses.replace(r, latency_us=net * ratio * wobble, metadata=meta)
            s.keep(run, {"kernel": kernel})
    assert main(["compare", "--by", "kernel", "--store", path]) == 1
    out = capsys.readouterr().out
    assert "4 vs 4" in out and "slower" in out and "kernel=B against kernel=A" in out
    assert main(["plan", "--by", "kernel=A,B", "--detect", "3%", "--store", path]) == 0
    assert "8 runs" in capsys.readouterr().out
