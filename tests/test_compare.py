from __future__ import annotations

import re
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import FAST

import ctxbench
from ctxbench import compare, format_comparison
from ctxbench._compare import INCONCLUSIVE

REPS = 8


@pytest.fixture(scope="module")
def base() -> pd.DataFrame:
    return steady(ctxbench.lat_ctx([2, 3], **{**FAST, "repetitions": REPS}).to_frame())


def steady(df: pd.DataFrame) -> pd.DataFrame:
    """A real run's frame with narrow, positive samples, so a 1.5x shift is unambiguous
    whatever noise the machine had (a wide real spread can overlap its own shifted copy), as
    if each repetition had been a ring instance of its own, on a quiet machine."""
    return df.assign(
        value=5.0 + 0.01 * df["repetition"], instance=df["repetition"], runnable_per_cpu=0.0
    )


def known(df: pd.DataFrame, sd: float = 0.0, runs: int = 20) -> pd.DataFrame:
    """The frame of a run that knew from `runs` earlier runs (the run history) that runs of
    its points differ by `sd` beyond their own errors."""
    return df.assign(sd_run=sd, runs_seen=runs)


def scaled(df: pd.DataFrame, factor: float) -> pd.DataFrame:
    return df.assign(value=df["value"] * factor)


def leveled(
    rng: np.random.Generator, level: float, instances: int, sd_instance: float, run: str
) -> pd.DataFrame:
    """A synthetic point measured as precision mode measures it: `instances` ring instances
    of 2 blocks of 4 repetitions, each instance at its own level (relative spread
    `sd_instance`), each block and repetition with a little noise of its own."""
    rows = []
    rep = 0
    for i in range(instances):
        at = level * (1 + sd_instance * rng.standard_normal())
        for b in range(2):
            block = at * (1 + 0.003 * rng.standard_normal())
            for _ in range(4):
                value = block * (1 + 0.003 * rng.standard_normal())
                rows.append((rep, 2 * i + b, i, value))
                rep += 1
    df = pd.DataFrame(rows, columns=["repetition", "block", "instance", "value"])
    return df.assign(
        benchmark="ring",
        engine="process",
        transport="pipe",
        placement="single",
        size_kb=0,
        parallel=1,
        procs=2,
        run_id=run,
    )


def test_self_comparison_is_no_change_where_runs_are_known_to_agree(base: pd.DataFrame) -> None:
    agreeing = known(base)
    table = compare(agreeing, agreeing)
    assert len(table) == 2
    assert (table["verdict"] == "no change").all()
    assert (table["ratio"] == 1.0).all() and not table["regressed"].any()
    assert ((table["ratio_low"] < 1) & (table["ratio_high"] > 1)).all()
    assert (table["n_base"] == REPS).all()
    assert (table["run_level_base"] == "earlier runs").all()


def test_one_run_a_side_assumes_the_spread_between_runs_it_cannot_see(
    base: pd.DataFrame,
) -> None:
    # Nothing in one run shows how the next differs: the assumed run level keeps a run's
    # own narrow interval from calling 1 % or 10 % anything, and from showing "no change"
    # within 2 %; a change far beyond the machine's drift between runs is still called.
    for factor in (1.0, 1.01, 1.1):
        table = compare(base, scaled(base, factor))
        assert (table["verdict"] == INCONCLUSIVE).all(), (factor, table["verdict"])
        assert (table["run_level_new"] == "assumed").all()
        assert (table["level_base"] == "run").all() and (table["units_base"] == 1).all()
        assert table["reason"].str.contains("between runs is assumed").all()
        assert table["reason"].str.contains(r"about \d+ more runs per side").all()
    ratio = ctxbench._core.ASSUMED_RUN_SD
    width = compare(base, base)[["ratio_low", "ratio_high"]].iloc[0]
    assert width["ratio_high"] > 1 + 2 * ratio and width["ratio_low"] < 1 / (1 + 2 * ratio)
    assert (compare(base, scaled(base, 2.0))["verdict"] == "slower").all()


def test_compare_is_a_function_taking_what_the_command_takes(tmp_path: Path) -> None:
    # Files of every format `save` writes, results, lists of results and frames: each side
    # is read as `ctxbench.load` and `ctxbench.plot` read it.
    assert callable(ctxbench.compare) and not isinstance(ctxbench.compare, types.ModuleType)
    r = ctxbench.lat_ctx([2, 3], **{**FAST, "repetitions": REPS})
    paths = [tmp_path / f"r.{suffix}" for suffix in ("json", "csv", "parquet")]
    for path in paths:
        r.save(path)
    direct = compare(r, r)
    for base, new in [
        (paths[0], paths[1]),
        (str(paths[2]), [r]),
        (r.to_frame(), paths[0]),
        ([paths[1]], (r,)),
    ]:
        table = compare(base, new)
        assert table["procs"].tolist() == direct["procs"].tolist() == [2, 3]
        assert np.allclose(table["ratio"], 1.0) and not table["regressed"].any()
        assert np.allclose(table["base_us"], direct["base_us"])
    with pytest.raises(FileNotFoundError, match="nope.json"):
        compare(tmp_path / "nope.json", r)


def test_one_run_measured_under_load_speaks_for_no_other(base: pd.DataFrame) -> None:
    # Among other runnable tasks one run a side differs from the next by up to a factor of
    # two: even a doubling is not called from it, unless earlier runs of such conditions
    # (the run history) say how such runs differ, or the side holds several runs.
    busy = base.assign(runnable_per_cpu=ctxbench._core.LOADED_RUNNABLE)
    for a, b in ((busy, scaled(base, 2.0)), (base, scaled(busy, 2.0))):
        table = compare(a, b)
        assert (table["verdict"] == INCONCLUSIVE).all() and (table["why"] == "under load").all()
        assert table["reason"].str.contains("other tasks were runnable").all()
    calm = base.assign(runnable_per_cpu=ctxbench._core.LOADED_RUNNABLE / 2)
    assert (compare(calm, scaled(calm, 2.0))["verdict"] == "slower").all()
    told = compare(known(busy, 0.01), known(scaled(busy, 2.0), 0.01))
    assert (told["verdict"] == "slower").all()
    runs = pd.concat(
        [busy.assign(run_id=f"r{k}", value=busy["value"] * (1 + 0.01 * k)) for k in range(3)]
    )
    assert (compare(runs, scaled(runs, 2.0))["verdict"] == "slower").all()


def test_one_ring_instance_carries_the_assumed_run_level(base: pd.DataFrame) -> None:
    # lmbench's fixed count: many repetitions of one ring, not independent draws of the
    # next run, whatever they look like. Its interval is the run level's, not theirs.
    one_ring = base.assign(instance=0)
    table = compare(one_ring, scaled(one_ring, 1.1))
    assert (table["verdict"] == INCONCLUSIVE).all() and (table["why"] == "too wide").all()
    assert (table["level_base"] == "run").all() and (table["run_level_base"] == "assumed").all()
    naive = compare(known(one_ring), known(scaled(one_ring, 1.1)))
    assert (naive["verdict"] == "slower").all()


def test_slower_and_regressed(base: pd.DataFrame) -> None:
    table = compare(base, scaled(base, 1.5), threshold=0.05)
    assert (table["verdict"] == "slower").all() and table["regressed"].all()
    assert table["ratio"].round(6).eq(1.5).all()
    assert (table["ratio_low"] > 1).all() and (table["p_value"] < 0.05).all()


def test_a_difference_below_the_threshold_is_no_change_whatever_its_p_value(
    base: pd.DataFrame,
) -> None:
    table = compare(known(base), known(scaled(base, 1.5)), threshold=0.6)
    assert (table["p_value"] < 0.001).all()
    assert (table["verdict"] == "no change").all() and not table["regressed"].any()


def test_faster(base: pd.DataFrame) -> None:
    table = compare(base, scaled(base, 0.5))
    assert (table["verdict"] == "faster").all() and not table["regressed"].any()
    assert (table["ratio_high"] < 1).all()


def test_one_sample_is_inconclusive(base: pd.DataFrame) -> None:
    one = base[base["repetition"] == 0]
    table = compare(one, scaled(base, 3.0))
    assert (table["verdict"] == INCONCLUSIVE).all() and not table["regressed"].any()
    text = format_comparison(table)
    assert "2 inconclusive" in text
    assert text.count("inconclusive: process/pipe") == 2


def test_an_interval_reaching_beyond_the_threshold_is_never_no_change() -> None:
    # A loaded machine: instances of both sides scatter by a third, the ratio's interval
    # includes 1 and reaches far beyond ±2 %: nothing is shown, and the output says what
    # would decide it.
    rng = np.random.default_rng(7)
    table = compare(leveled(rng, 5.0, 3, 0.35, "a"), leveled(rng, 5.0, 3, 0.35, "b"))
    row = table.iloc[0]
    assert row["ratio_low"] < 1 < row["ratio_high"]
    assert row["verdict"] == INCONCLUSIVE and row["why"] == "too wide"
    assert re.search(r"about \d+ more runs per side would decide it", row["reason"])
    assert row["data_factor"] > 1


def test_a_true_difference_of_twice_the_threshold_is_never_no_change() -> None:
    # Sides drawn 4 % apart (twice the 2 % threshold), instances scattered as on a quiet
    # host and as on a noisy one: "no change" would have to be shown, and never is.
    rng = np.random.default_rng(11)
    for spread in (0.01, 0.03, 0.08):
        pairs = [
            (leveled(rng, 5.0, 4, spread, f"b{k}"), leveled(rng, 5.2, 4, spread, f"n{k}"))
            for k in range(150)
        ]
        verdicts = [compare(base, new)["verdict"].iloc[0] for base, new in pairs]
        assert "no change" not in verdicts, spread


def test_instances_are_the_replicate_when_they_differ() -> None:
    rng = np.random.default_rng(1)
    a = known(leveled(rng, 5.0, 6, 0.05, "a"))
    table = compare(a, known(leveled(rng, 5.0, 6, 0.05, "b")))
    assert table["level_base"].tolist() == ["instance"]
    assert table["units_base"].tolist() == [6]
    # Taking every repetition for an independent draw would claim far more certainty.
    flat = a.assign(instance=a["repetition"], block=a["repetition"])
    naive = compare(flat, flat)
    assert naive["level_base"].tolist() == ["instance"] and naive["units_base"].tolist() == [48]
    width = float(table["ratio_high"].iloc[0] - table["ratio_low"].iloc[0])
    assert width > 2 * float(naive["ratio_high"].iloc[0] - naive["ratio_low"].iloc[0])


def test_several_runs_of_a_side_are_its_replicates() -> None:
    rng = np.random.default_rng(2)
    runs = pd.concat([leveled(rng, 5.0, 4, 0.02, f"r{k}") for k in range(3)])
    table = compare(runs, leveled(rng, 5.0, 4, 0.02, "new"))
    assert table["level_base"].tolist() == ["run"] and table["units_base"].tolist() == [3]
    assert table["run_level_base"].tolist() == ["measured"]
    assert table["run_level_new"].tolist() == ["assumed"] and table["units_new"].tolist() == [1]


def test_same_code_is_rarely_called_different_and_a_real_change_is_found() -> None:
    # The model's promise on fixed samples: A/A pairs drawn from one process with an
    # instance effect, whose runs are known not to differ beyond it, are called different
    # in about 5 % of pairs at most; a 10 % slowdown measured the same way is found in
    # almost all.
    rng = np.random.default_rng(3)
    alarms = found = 0
    pairs = 200
    for k in range(pairs):
        base = known(leveled(rng, 5.0, 6, 0.02, f"b{k}"))
        same = compare(base, known(leveled(rng, 5.0, 6, 0.02, f"n{k}")), threshold=0.0)
        alarms += same["verdict"].iloc[0] in ("slower", "faster")
        slower = compare(base, known(leveled(rng, 5.5, 6, 0.02, f"s{k}")), threshold=0.02)
        found += slower["verdict"].iloc[0] == "slower"
    assert alarms / pairs <= 0.08, alarms
    assert found / pairs >= 0.9, found


def test_one_run_a_side_holds_its_false_alarms_where_runs_drift_as_assumed() -> None:
    # Runs whose level drifts by the assumed spread (each run's instances near its own
    # level): one run a side calls A/A different in about 5 % of pairs at most, and a
    # doubling in every pair.
    rng = np.random.default_rng(5)
    sd = ctxbench._core.ASSUMED_RUN_SD
    alarms = found = 0
    pairs = 200
    for k in range(pairs):
        drift = np.exp(sd * rng.standard_normal(3))
        base = leveled(rng, 5.0 * drift[0], 4, 0.02, f"b{k}")
        same = compare(base, leveled(rng, 5.0 * drift[1], 4, 0.02, f"n{k}"))
        alarms += same["verdict"].iloc[0] in ("slower", "faster")
        double = compare(base, leveled(rng, 10.0 * drift[2], 4, 0.02, f"d{k}"))
        found += double["verdict"].iloc[0] == "slower"
    assert alarms / pairs <= 0.08, alarms
    assert found == pairs, found


def test_only_matching_points(base: pd.DataFrame) -> None:
    new = base[base["procs"] == 2]
    table = compare(base, new)
    assert table["procs"].tolist() == [2]
    assert len(table.attrs["only_base"]) == 1 and table.attrs["only_new"] == []
    assert "1 points only in the base run" in format_comparison(table)
    with pytest.raises(ValueError, match="no point in common"):
        compare(base, base.assign(size_kb=64))


def test_runs_from_different_machines_say_so(base: pd.DataFrame) -> None:
    other = base.assign(cpu_model="Some Other CPU")
    table = compare(base, scaled(other, 1.5))
    assert any(note.startswith("cpu_model") for note in table.attrs["context"])
    assert "may be the machine's, not the code's" in format_comparison(table).splitlines()[-1]
    assert compare(base, base).attrs["context"] == []


def test_runs_under_another_scheduler_or_mitigations_say_so(base: pd.DataFrame) -> None:
    from ctxbench import metadata

    states = {"spectre_v2": "Mitigation: Retpolines; IBPB: conditional", "mds": "Not affected"}
    before = base.assign(
        preempt="none",
        sched_ext="absent",
        vulnerabilities=metadata.column_value("vulnerabilities", states),
    )
    after = before.assign(
        preempt="full",
        sched_ext="enabled: rusty",
        vulnerabilities=metadata.column_value(
            "vulnerabilities", {**states, "spectre_v2": "Vulnerable"}
        ),
    )
    notes = compare(before, after).attrs["context"]
    assert "preempt none vs full" in notes
    assert "sched_ext absent vs enabled: rusty" in notes
    assert (
        "vulnerabilities (spectre_v2 'Mitigation: Retpolines; IBPB: conditional' vs "
        "'Vulnerable')" in notes
    )
    assert compare(before, before).attrs["context"] == []


def test_format(base: pd.DataFrame) -> None:
    text = format_comparison(compare(known(base), known(scaled(base, 1.5)), threshold=0.05))
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["engine/transport", "placement"]
    assert len(lines) == 1 + 2 + 2
    assert "1.500x [" in lines[1] and "slower (regressed)" in lines[1]
    assert "8 instances" in lines[1]
    assert lines[3] == "2 slower, 0 faster, 0 no change, 0 inconclusive"
    assert "no change: the 90 % interval within ±5% (shown, not assumed)" in lines[4]


@pytest.mark.parametrize("threshold", [-1, 1.0, "5%", float("nan")])
def test_threshold_must_be_a_fraction(base: pd.DataFrame, threshold: object) -> None:
    with pytest.raises(ValueError, match="threshold"):
        compare(base, base, threshold=threshold)  # type: ignore[arg-type]


def test_test_ids_are_part_of_the_point(base: pd.DataFrame) -> None:
    # Files saved by the pytest plugin name the test of each point; two tests measuring the
    # same point are compared each with its own baseline.
    a = known(base).assign(test="test_x.py::test_a")
    b = known(base).assign(test="test_x.py::test_b")
    table = compare(pd.concat([a, b]), pd.concat([a, scaled(b, 1.5)]))
    assert len(table) == 4
    verdicts = table.groupby("test")["verdict"].agg(set).to_dict()
    assert verdicts == {"test_x.py::test_a": {"no change"}, "test_x.py::test_b": {"slower"}}
    text = format_comparison(table)
    assert text.splitlines()[0].split()[:2] == ["test", "engine/transport"]
    assert "test_x.py::test_b" in text.splitlines()[4]


@pytest.mark.parametrize(
    "kw", [{}, {"threads": True}, {"engine": "thread", "transport": "futex"}, {"engine": "fiber"}]
)
def test_ping_pong_compares_and_perf_s_fixed_loop_is_too_few(kw: dict) -> None:
    kw = {"placement": "single", "max_time": 0.2, "min_time": 0.001, **kw}
    a, b = ctxbench.pingpong(**kw), ctxbench.pingpong(**kw)
    table = compare(a, b)
    assert table["benchmark"].tolist() == ["pingpong"]
    assert table["n_base"].iloc[0] == len(a.samples_us) > 1
    # Many samples a side: whatever else it says (under load, "under load"), never "one
    # sample", even where a loaded machine's time cap left a side one instance (that side
    # carries the run level known from earlier runs, or assumed).
    assert table["why"].iloc[0] != "one sample"
    fixed = ctxbench.pingpong(2000, **kw)
    assert compare(fixed, b)["why"].tolist() == ["one sample"]


def test_strings_from_the_files_print_with_their_control_characters_escaped(
    base: pd.DataFrame,
) -> None:
    evil = "\x1b[2J\x1b]0;owned\x07\r"
    a = base.assign(placement=evil, cpu_model="A" + evil)
    text = format_comparison(compare(a, scaled(a.assign(cpu_model="B"), 1.5)))
    assert not any(c in text for c in "\x1b\x07\r"), repr(text)
    assert "\\x1b[2J\\x1b]0;owned\\x07\\r" in text
    assert "cpu_model A\\x1b[2J" in text.splitlines()[-1]


def test_points_under_another_policy_cgroups_or_neighbours_are_other_points(
    base: pd.DataFrame,
) -> None:
    """Plain against hogs=3 was compared as one point (5.26x); a file of plain, hogs=3 and
    idle as "3 runs" of one. Each is a point of its own, named where the table shows it."""
    crowded = scaled(base, 5.0).assign(interference_hogs=3)
    with pytest.raises(ValueError, match="no point in common"):
        compare(base, crowded)
    idle = base.assign(policy="idle", run_id="idle")
    mixed = pd.concat([base.assign(run_id="plain"), crowded.assign(run_id="crowded"), idle])
    table = compare(base, mixed)
    assert len(table) == 2 and (table["units_new"] == table["units_base"]).all()
    assert table["ratio"].round(6).eq(1.0).all()
    table = compare(mixed, mixed)
    assert len(table) == 6
    text = format_comparison(table)
    assert "[interference_hogs=3]" in text and "[policy=idle]" in text
    # A column one side lacks reads as the default it measured under: old files still pair.
    assert len(compare(base.drop(columns=["policy"], errors="ignore"), base)) == 2


def test_a_change_in_switches_per_hop_is_said(base: pd.DataFrame) -> None:
    """The figures are per hop (lat_ctx's): where one side made more switches per hop, the
    ratio partly counts switches, and the table says so."""
    table = compare(base.assign(switches_per_hop=1.0), base.assign(switches_per_hop=1.4))
    text = format_comparison(table)
    assert "1.00 switches per hop in base, 1.40 in new" in text
    assert "per switch: 0.714x" in text
    assert "switches per hop in base" not in format_comparison(compare(base, base))
