"""``ctxbench.ab``: sides as dicts or command lines, precise errors for bad ones, the result
object (verdict, why, rounds, frame, files, repr, HTML), the GIL released and Ctrl-C heard
while it measures, and the core's stopping rule replayed on given rounds."""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import children

import ctxbench
from ctxbench import _core, files
from ctxbench._ab import _side
from ctxbench.result import AbResult, load_results

PINNED = {"measure": "ring", "procs": 2, "placement": "single"}


@pytest.fixture(scope="module")
def aa() -> AbResult:
    """A short A/A run: the same pinned ring on both sides, a dict and a command line."""
    return ctxbench.ab(PINNED, "ring --procs 2 --placement single", budget=1.0, seed=4)


def test_a_command_line_side_is_the_request_its_dict_is() -> None:
    measure, from_line = _side("a", "ring --procs 2 --placement single -s 4")
    _, from_dict = _side("b", {**PINNED, "size_kb": 4})
    assert measure == "ring"
    assert _core.ring_config(**from_line) == _core.ring_config(**from_dict)
    # lat-ctx is the ring of processes over pipes; pipe is the ping-pong.
    assert _side("a", "lat-ctx 2")[0] == "ring"
    measure, params = _side("a", "pipe -T --placement single")
    assert measure == "pingpong" and params["threads"] is True


@pytest.mark.parametrize(
    ("side", "error", "words"),
    [
        (3, TypeError, "b: expected a dict"),
        ({"procs": 2}, ValueError, "b: a dict side names its measurement"),
        ({"measure": "matrix"}, ValueError, "b: measure: a matrix cell is a ring of two"),
        ({"measure": "fibre", "procs": 2}, ValueError, "b: measure: expected one of ring"),
        ({"measure": "ring"}, ValueError, "b: procs: a ring side names one"),
        ({**PINNED, "placement": "nowhere"}, ValueError, "b: placement"),
        ({**PINNED, "size_kb": "big"}, TypeError, "b: size_kb"),
        ({**PINNED, "history": True}, TypeError, "b: history"),
        ("sweep --procs 2", ValueError, "b: 'sweep --procs 2': a side is a ring, lat-ctx"),
        ("", ValueError, "got nothing"),
        ("ring --procs two", ValueError, "invalid int value: 'two'"),
        ("ring --json --procs 2", ValueError, "--json has no meaning in a side"),
        ("ring 2 --procs 2", ValueError, "give the participant counts once"),
        ("ring 'unclosed", ValueError, "not a command line"),
        ("ring --help", ValueError, "asks for help"),
    ],
)
def test_a_bad_side_is_refused_naming_it(side: object, error: type, words: str) -> None:
    with pytest.raises(error, match=None) as e:
        ctxbench.ab(PINNED, side, budget=1.0)  # type: ignore[arg-type]
    assert words in str(e.value), e.value


def test_a_side_of_several_counts_and_a_bad_budget_are_refused() -> None:
    with pytest.raises(ValueError, match="b: must name one participant count"):
        ctxbench.ab(PINNED, {**PINNED, "procs": [2, 4]}, budget=1.0)
    with pytest.raises(ValueError, match="budget"):
        ctxbench.ab(PINNED, PINNED, budget=-1.0)
    with pytest.raises(ValueError, match="threshold"):
        ctxbench.ab(PINNED, PINNED, threshold=1.5)


def test_the_result_says_the_word_why_and_every_round(aa: AbResult) -> None:
    assert aa.verdict in _core.CHANGES and aa.stopped in _core.AB_STOPS
    assert aa.decided == (aa.verdict != "inconclusive")
    assert aa.rounds == len(aa.a_us) == len(aa.b_us) == len(aa.end_s) >= 1
    assert np.all(np.diff(aa.end_s) > 0) and aa.seed == 4
    assert aa.a["measure"] == aa.b["measure"] == "ring"
    assert aa.a["placement"] == aa.b["placement"] == "single"
    # No round starts that the budget cannot hold (at the pace so far), bar the first.
    assert aa.stopped != "budget" or aa.rounds == 1 or aa.end_s[-2] <= aa.budget_s
    assert aa.why() and aa.verdict in repr(aa) and "2 procs" in repr(aa)
    html = aa._repr_html_()
    assert "<table" in html and aa.verdict in html


def test_the_frame_holds_each_round_of_each_side(aa: AbResult) -> None:
    df = aa.to_frame()
    assert len(df) == 2 * aa.rounds
    assert sorted(df["side"].unique()) == ["a", "b"]
    a = df[df["side"] == "a"].sort_values("repetition")
    assert np.allclose(a["value"], aa.a_us) and (a["first"].to_numpy() == aa.a_first).all()
    assert set(df["change"]) == {aa.verdict} and set(df["source"]) == {"ab"}
    # A side's rows are a point of a run: compare takes them as one.
    table = ctxbench.compare(df[df["side"] == "a"], df[df["side"] == "b"])
    assert len(table) == 1


@pytest.mark.parametrize("suffix", [".json", ".csv", ".parquet"])
def test_saved_and_loaded_it_reads_back_the_same(aa: AbResult, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"ab{suffix}"
    aa.save(path)
    back = ctxbench.load(path)
    frame = aa.to_frame()
    assert list(back["value"]) == pytest.approx(list(frame["value"]))
    assert list(back["side"]) == list(frame["side"])
    if suffix == ".json":
        again = load_results(path)[0]
        assert isinstance(again, AbResult) and repr(again) == repr(aa)
        assert math.isnan(again.data_factor) == math.isnan(aa.data_factor)


def test_a_nan_figure_reads_back_as_nan(aa: AbResult, tmp_path: Path) -> None:
    from dataclasses import replace

    # What a run whose first round was below resolution records: no ratio.
    undecided = replace(
        aa,
        a_us=np.array([-0.1]),
        b_us=np.array([1.0]),
        end_s=np.array([0.1]),
        a_first=np.array([True]),
        a_switches_per_hop=np.array([1.0]),
        b_switches_per_hop=np.array([1.0]),
        ratio=math.nan,
        ratio_low=math.nan,
        ratio_high=math.nan,
        stopped="below resolution",
        verdict="inconclusive",
        decided=False,
        data_factor=math.nan,
    )
    path = tmp_path / "nan.json"
    files.save(undecided, path)
    again = load_results(path)[0]
    assert math.isnan(again.ratio) and math.isnan(again.data_factor)  # type: ignore[union-attr]


def test_the_gil_is_free_while_it_measures() -> None:
    done: list[AbResult] = []
    t = threading.Thread(target=lambda: done.append(ctxbench.ab(PINNED, PINNED, budget=1.5)))
    t.start()
    ticks = 0
    while t.is_alive():
        time.sleep(0.01)
        ticks += 1
    t.join()
    # With the GIL held through a round this thread would wake once a round, not 100 times
    # a second: a property of the binding, not a speed.
    assert done and ticks >= 3 * done[0].rounds, (ticks, done[0].rounds)


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """Python's own SIGINT handler (a suite started in the background inherits it
    ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_stops_it_in_a_round_that_makes_no_progress(
    no_leaks: None, ctrl_c_raises: None
) -> None:
    """Ctrl-C ends an A/B run mid-round, its processes reaped. The round's participants are
    stopped first, so nothing but the interrupt can end the run: no decision, no figure below
    resolution (which ended it before the interrupt came beside two CPU hogs), no watchdog
    within the hour its timeout allows."""
    import _thread

    sent: list[float] = []

    def stop_then_interrupt() -> None:
        end = time.monotonic() + 60
        while not (kids := children()) and time.monotonic() < end:
            time.sleep(0.01)
        for kid in kids:
            os.kill(kid, signal.SIGSTOP)
        sent.append(time.monotonic())
        _thread.interrupt_main()

    t = threading.Thread(target=stop_then_interrupt)
    t.start()
    sides = ({**PINNED, "timeout": 3600}, {**PINNED, "procs": 8, "timeout": 3600})
    with pytest.raises(KeyboardInterrupt):
        ctxbench.ab(*sides, budget=600.0, threshold=0.0001)
    t.join()
    # Acted on, not waited out: the stopped round would hold the run for the hour.
    assert sent and time.monotonic() - sent[0] < 60.0


def test_a_replay_stops_where_a_run_would() -> None:
    n = 40
    end = [0.1 * (k + 1) for k in range(n)]
    a = [10.0 * (1 + 0.01 * ((k % 5) - 2)) for k in range(n)]
    slower = _core.ab_replay(a, [11.0] * n, end, budget=30.0, threshold=0.02)
    assert (slower["verdict"], slower["stopped"]) == ("slower", "decided")
    assert slower["rounds"] < n and slower["ratio_low"] > 1.0
    same = _core.ab_replay(a, a, end, budget=30.0, threshold=0.02)
    assert same["verdict"] == "no change" and same["ratio"] == 1.0
    short = _core.ab_replay(a[:3], [11.0] * 3, end[:3], budget=30.0)
    assert (short["verdict"], short["stopped"]) == ("inconclusive", "no more rounds")
    with pytest.raises(ValueError, match="one entry per round"):
        _core.ab_replay(a, a[:3], end)
    with pytest.raises(ValueError, match="budget"):
        _core.ab_replay(a, a, end, budget=0.0)


def test_sides_that_differ_never_read_the_same() -> None:
    """The header named measure, procs, engine, transport, placement and size only: two sides
    that differed in policy, cgroups or interference read the same twice."""
    from ctxbench.report import ab_side

    a = {"measure": "ring", "procs": 2, "engine": "process", "transport": "pipe",
         "placement": "single", "size_kb": 0, "policy": "other", "cgroups": None,
         "interference": {}}  # fmt: skip
    b = {**a, "policy": "fifo", "cgroups": "split", "interference": {"hogs": 1.0}}
    assert ab_side(a, b) != ab_side(b, a)
    assert ab_side(b, a).endswith("cgroups=split interference=hogs=1 policy=fifo")
    assert ab_side(a, b).endswith("cgroups=none interference=none policy=other")
    assert ab_side(a, a) == ab_side(a) == "ring 2 procs process/pipe placement=single size=0k"


def test_a_file_is_checked_against_what_a_run_makes(aa: AbResult, tmp_path: Path) -> None:
    """load() took policy "evil", a NaN ratio after rounds that gave one, rounds below 0 in a
    run that went on, and a ratio outside its own interval."""
    import json

    path = tmp_path / "ab.json"
    aa.save(path)
    doc = json.loads(path.read_text())
    rec = doc["results"][0]
    rec.update(a_us=[1.0, 1.0], b_us=[1.1, 1.2], end_s=[0.1, 0.2], a_first=[True, False])
    rec.update(a_switches_per_hop=[1.0, 1.0], b_switches_per_hop=[1.0, 1.0])
    rec.update(ratio=1.15, ratio_low=0.5, ratio_high=2.0, stopped="budget")
    rec.update(verdict="inconclusive", decided=False)
    path.write_text(json.dumps(doc))
    load_results(path)  # as a run makes it
    for change, words in [
        ({"a": {**rec["a"], "policy": "evil"}}, r"a\.policy: 'evil' is not one of"),
        ({"ratio": None}, r"ratio: is null after 2 rounds with a ratio"),
        ({"a_us": [-1.0, 1.0]}, r"a_us\[0\]: a round at or below 0 before the last"),
        ({"b_us": [1.1, -1.0]}, r"stopped: is 'budget' but the last round is at or below 0"),
        ({"ratio_low": 1.5}, r"ratio: 1.15 is outside its interval \[1.5, 2.0\]"),
    ]:
        bad = json.loads(json.dumps(doc))
        bad["results"][0].update(change)
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=words):
            load_results(path)


def test_a_change_in_switches_per_hop_between_the_sides_is_said(aa: AbResult) -> None:
    """The figures are per hop: a side that makes 1.39 switches a hop (4 and more pinned)
    against one that makes 1.0 differs partly in what it counts."""
    from dataclasses import replace

    from ctxbench.report import ab_lines

    n = len(aa.a_us)
    assert len(aa.a_switches_per_hop) == len(aa.b_switches_per_hop) == n
    more = replace(aa, a_switches_per_hop=np.full(n, 1.0), b_switches_per_hop=np.full(n, 1.4))
    (said,) = [line.text for line in ab_lines(more) if line.kind == "note"]
    assert said.startswith("A made 1.00 context switches per hop, B 1.40: the figures are per")
    same = replace(aa, a_switches_per_hop=np.full(n, 1.0), b_switches_per_hop=np.full(n, 1.02))
    assert not [line for line in ab_lines(same) if line.kind == "note"]
