from __future__ import annotations

import pandas as pd
import pytest
from conftest import FAST

import ctxbench
from ctxbench.compare import compare, format_comparison

# Enough samples per point for a rank test to reach p < 0.05 (3 against 3 cannot).
REPS = 8


@pytest.fixture(scope="module")
def base() -> pd.DataFrame:
    return steady(ctxbench.lat_ctx([2, 3], **{**FAST, "repetitions": REPS}).to_frame())


def steady(df: pd.DataFrame) -> pd.DataFrame:
    """A real run's frame with narrow, positive samples, so a 1.5x shift is unambiguous
    whatever noise the machine had (a wide real spread can overlap its own shifted copy)."""
    return df.assign(value=5.0 + 0.01 * df["repetition"])


def scaled(df: pd.DataFrame, factor: float) -> pd.DataFrame:
    return df.assign(value=df["value"] * factor)


def test_self_comparison_is_no_change(base: pd.DataFrame) -> None:
    table = compare(base, base)
    assert len(table) == 2
    assert (table["verdict"] == "no change").all()
    assert (table["ratio"] == 1.0).all() and not table["regressed"].any()
    assert (table["n_base"] == REPS).all()


def test_slower_and_regressed(base: pd.DataFrame) -> None:
    table = compare(base, scaled(base, 1.5), threshold=0.05)
    assert (table["verdict"] == "slower").all() and table["regressed"].all()
    assert table["ratio"].round(6).eq(1.5).all()
    assert (table["p_value"] < 0.05).all()
    # Slower but within the threshold: reported, not a regression.
    assert not compare(base, scaled(base, 1.5), threshold=0.6)["regressed"].any()


def test_faster(base: pd.DataFrame) -> None:
    table = compare(base, scaled(base, 0.5))
    assert (table["verdict"] == "faster").all() and not table["regressed"].any()


def test_only_matching_points(base: pd.DataFrame) -> None:
    new = base[base["procs"] == 2]
    table = compare(base, new)
    assert table["procs"].tolist() == [2]
    assert len(table.attrs["only_base"]) == 1 and table.attrs["only_new"] == []
    assert "1 points only in the base run" in format_comparison(table)
    with pytest.raises(ValueError, match="no point in common"):
        compare(base, base.assign(size_kb=64))


def test_format(base: pd.DataFrame) -> None:
    text = format_comparison(compare(base, scaled(base, 1.5)))
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["engine/transport", "placement"]
    assert len(lines) == 1 + 2 + 1
    assert "1.50x" in lines[1] and "slower (regressed)" in lines[1]
    assert lines[-1] == "2 slower, 0 faster, 0 no change; 2 regressed by more than 5%"


def test_threshold_must_be_non_negative(base: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="threshold"):
        compare(base, base, threshold=-1)


def test_test_ids_are_part_of_the_point(base: pd.DataFrame) -> None:
    # Files saved by the pytest plugin name the test of each point; two tests measuring the
    # same point are compared each with its own baseline.
    a = base.assign(test="test_x.py::test_a")
    b = base.assign(test="test_x.py::test_b")
    table = compare(pd.concat([a, b]), pd.concat([a, scaled(b, 1.5)]))
    assert len(table) == 4
    verdicts = table.groupby("test")["verdict"].agg(set).to_dict()
    assert verdicts == {"test_x.py::test_a": {"no change"}, "test_x.py::test_b": {"slower"}}
    text = format_comparison(table)
    assert text.splitlines()[0].split()[:2] == ["test", "engine/transport"]
    assert "test_x.py::test_b" in text.splitlines()[-2]
