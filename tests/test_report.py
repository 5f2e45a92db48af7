"""The reporter (ctxbench.report): one set of words, said through one object per destination,
the same by every front door; hints, each only where it applies."""

from __future__ import annotations

import dataclasses
import io
import warnings

import numpy as np
import pytest

import ctxbench
from ctxbench import report
from ctxbench.cli import main
from ctxbench.report import Line, hints

UNPINNED_HINT = "ctxbench: hint: unpinned: "


@pytest.fixture(scope="module")
def ring() -> ctxbench.RingResult:
    return ctxbench.lat_ctx([2, 3], precision=0.5, max_time=0.1, min_time=0.002, warmup=0)


def capped(r: ctxbench.RingResult) -> ctxbench.RingResult:
    """``r`` as if its points had stopped on the time cap, the first below resolution, with a
    warning of its own."""
    return dataclasses.replace(
        r,
        stopped=["time_cap"] * len(r.procs),
        below_resolution=np.array([True] + [False] * (len(r.procs) - 1)),
        warnings=["a warning of its own"],
        placement="default",
    )


def test_a_ring_says_how_its_points_stopped_below_resolution_warnings_and_hints(
    ring: ctxbench.RingResult,
) -> None:
    # Notes on what the figure counts (switches per hop not 1 under load) are said too.
    said = [line for line in report.lines(capped(ring)) if line.kind != "note"]
    kinds = [line.kind for line in said]
    assert kinds[:3] == ["stopped", "below_resolution", "warning"]
    assert set(kinds[3:]) == {"hint"}
    assert said[0].text == capped(ring).stop_line() and "time_cap" in said[0].text
    assert said[0].text.startswith("2: time_cap") and "; 3: time_cap" in said[0].text
    assert str(said[1]).startswith("ctxbench: 2 procs: net time <= 0, below the resolution")
    assert str(said[2]) == "ctxbench: warning: a warning of its own"
    assert str(said[3]).startswith(UNPINNED_HINT)
    # A point that got the precision asked, above the resolution, says nothing of how it
    # stopped; a point pinned says no "unpinned". (Above the resolution as planted: under load
    # the measured ring's 2-process point came out below it, at -0.216 µs.)
    quiet = dataclasses.replace(
        ring,
        stopped=["precision"] * 2,
        placement="single",
        below_resolution=np.array([False, False]),
    )
    assert not [
        line for line in report.lines(quiet) if line.kind in ("stopped", "below_resolution")
    ]
    assert not any("unpinned" in line.text for line in report.lines(quiet))


def test_lines_are_named_by_where_and_heard_warnings_are_said_once(
    ring: ctxbench.RingResult,
) -> None:
    with report.heard() as heard:
        warnings.warn("ctxbench: a warning of its own", UserWarning, stacklevel=1)
        warnings.warn("ctxbench: run history not used: off", UserWarning, stacklevel=1)
    said = report.lines(capped(ring), where="t.py::test", heard=heard)
    assert said[0].text.startswith("t.py::test: 2: time_cap")
    assert said[1].text.startswith("t.py::test: 2 procs: net time <= 0")
    assert [line.text for line in said if line.kind == "warning"] == [
        "a warning of its own",
        "run history not used: off",
    ]
    assert not [
        line for line in report.lines(capped(ring), warnings=False) if line.kind == "warning"
    ]


def test_a_pingpong_gets_its_stop_line_and_the_hints_that_apply() -> None:
    fixed = ctxbench.pingpong(loops=1000, placement="single")
    assert not [line for line in report.lines(fixed) if line.kind == "stopped"]
    assert not any("unpinned" in line.text for line in report.lines(fixed))
    unpinned = dataclasses.replace(fixed, placement="default")
    assert any(str(line).startswith(UNPINNED_HINT) for line in report.lines(unpinned))
    # Fibers resume each other on one thread: no hop crosses CPUs, pinned or not.
    fibers = dataclasses.replace(unpinned, engine="fiber")
    assert not any("unpinned" in line.text for line in report.lines(fibers))
    capped_pp = dataclasses.replace(fixed, stopped="time_cap", stats={})
    (stop,) = [line for line in report.lines(capped_pp) if line.kind == "stopped"]
    assert (
        stop.text
        == capped_pp.stop_line()
        == "perf's fixed loop: 1000 round trips, one sample, no interval"
    )


def test_destinations_each_in_its_own_form() -> None:
    said = [
        Line("hint", "h"),
        Line("warning", "w"),
        Line("hint", "h"),
        Line("wait", "waited 2.0 s"),
    ]
    stream = io.StringIO()
    report.say(said, report.Terminal(stream))
    assert stream.getvalue().splitlines() == [
        "ctxbench: hint: h", "ctxbench: warning: w", "ctxbench: hint: h", "ctxbench: waited 2.0 s"
    ]  # fmt: skip
    kept = report.Lines()
    report.say(said, kept)
    assert kept.text().splitlines() == [
        "ctxbench: hint: h",
        "ctxbench: warning: w",
        "ctxbench: waited 2.0 s",
    ]
    assert kept.html().startswith('<div class="ctxbench-hint">ctxbench: hint: h</div>')
    record: list[str] = []
    to = report.Record(record)
    to.wait(Line("wait", "waiting 1 s"), False)
    report.say([Line("note", "saved"), *said], to)
    assert record == ["h", "w", "h", "waited 2.0 s"], "a record keeps what is off, not notes"
    written: list[str] = []
    both = report.Reports(report.Lines(), report.Terminal(write=written.append))
    both.wait(Line("wait", "waiting 1 s"), False)
    assert written == ["ctxbench: waiting 1 s"] and both.to[0].lines == [
        Line("wait", "waiting 1 s")
    ]
    with pytest.raises(ValueError, match="kind: expected one of stopped"):
        Line("shout", "x")


def test_saying_routes_a_block_and_a_terminal_rewrites_a_wait_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = report.Lines()
    with report.saying(kept):
        report.say([Line("note", "inside")])
    report.say([Line("note", "outside")], report.Lines())
    assert kept.lines == [Line("note", "inside")]

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    terminal = report.Terminal(tty)
    assert terminal.live and not report.Terminal(io.StringIO()).live
    terminal.wait(Line("wait", "waiting 1 s"), False)
    terminal.wait(Line("wait", "waited 1.5 s"), True)
    assert tty.getvalue() == "\rctxbench: waiting 1 s\x1b[K\rctxbench: waited 1.5 s\x1b[K\n"


def test_the_notebook_shows_what_the_command_line_says(ring: ctxbench.RingResult) -> None:
    r = capped(ring)
    said = report.lines(r)
    html = r._repr_html_()
    for line in said:
        assert f'<div class="ctxbench-{line.kind}">' in html
    out = io.StringIO()
    report.show(r, report.Terminal(out))
    assert out.getvalue().splitlines() == [str(line) for line in said]


def test_every_command_says_its_hints_through_the_reporter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `pipe` is unpinned by default as `lat-ctx` is: the same hint, where it applies.
    for argv, unpinned in [
        (["pipe", "-l", "1000"], True),
        (["pipe", "-l", "1000", "--placement", "single"], False),
        (["pipe", "-l", "1000", "--engine", "fiber"], False),
        (
            ["lat-ctx", "-N", "2", "-W", "0", "--min-time", "0.002", "--placement", "default", "2"],
            True,
        ),
        (["ring", "--engine", "fiber", "-N", "2", "-W", "0", "--min-time", "0.002", "2"], False),
    ]:
        capsys.readouterr()
        assert main(argv) == 0
        err = capsys.readouterr().err.splitlines()
        assert any(line.startswith(UNPINNED_HINT) for line in err) == unpinned, argv
        assert all(line.startswith("ctxbench: ") for line in err), err


def test_a_matrix_says_its_warnings_once_as_warnings(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxbench import _matrix

    real = _matrix.MatrixResult.from_core

    def warned(raw: dict, metadata: dict) -> ctxbench.MatrixResult:
        return real({**raw, "warnings": [*raw["warnings"], "a cell's warning"]}, metadata)

    monkeypatch.setattr(_matrix.MatrixResult, "from_core", staticmethod(warned))
    capsys.readouterr()
    assert main(["matrix", "--cpus", "0", "-N", "2", "--min-time", "0.002", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.count("a cell's warning") == 1 and "ctxbench: warning: a cell's warning" in err
    assert "UserWarning" not in err


# --- hints: each only where it applies ---------------------------------------

QUIET: dict[str, object] = {
    "cpu_count": 16,
    "hypervisor": False,
    "governor": "performance",
    "loadavg": [0.1, 0.2, 0.3],
    "cgroup_cpu_quota": None,
    "clocksource": "tsc",
}


def with_(**changes: object) -> dict[str, object]:
    return {**QUIET, **changes}


UNPINNED = (
    "unpinned: the share of hops that cross CPUs (slow) varies run to run; pin: --placement single"
)


def test_hints_quiet_machine() -> None:
    assert hints(QUIET, placement="spread") == []
    assert hints(QUIET, placement="0,1") == []


def test_hints_unpinned_only_for_the_default_placement() -> None:
    for meta in (QUIET, with_(hypervisor=True)):
        assert hints(meta, placement="default") == [UNPINNED]
        for pinned in ("single", "spread", "balanced", "3"):
            assert hints(meta, placement=pinned) == []
    # Fibers switch on one thread: the share of hops crossing CPUs is nil, not varying.
    assert hints(QUIET, placement="default", engine="fiber") == []
    assert hints(QUIET, placement="default", engine="thread") == [UNPINNED]


def test_hints_stable_run_keeps_only_the_unpinned_hint() -> None:
    busy = with_(cpu_count=2, loadavg=[9.0, 1.0, 1.0])
    assert len(hints(busy, placement="single")) == 2
    assert hints(busy, placement="single", stable=True) == []
    assert hints(busy, placement="default", stable=True) == [UNPINNED]


def test_hints_individual() -> None:
    assert hints(with_(cpu_count=2), placement="single")[0].startswith("only 2 CPUs:")
    assert hints(with_(governor="powersave"), placement="single") == [
        "cpufreq governor is powersave: frequency ramps add noise; use performance"
    ]
    assert hints(with_(governor=None), placement="single") == []
    assert hints(with_(loadavg=[9.0, 1.0, 1.0]), placement="single")[0].startswith(
        "machine is busy (load 9.00"
    )
    assert hints(with_(loadavg=[8.0, 1.0, 1.0]), placement="single") == []
    quota_hints = hints(with_(cgroup_cpu_quota=0.5), placement="single")
    assert "0.5 of 16 CPUs" in quota_hints[0]
    assert hints(with_(cgroup_cpu_quota=16.0), placement="single") == []
    clock_hints = hints(with_(clocksource="hpet"), placement="single")
    assert clock_hints[0].startswith("clocksource is hpet")


def test_hints_everything_bad_are_single_short_lines() -> None:
    meta: dict[str, object] = {
        "cpu_count": 1,
        "hypervisor": True,
        "governor": "schedutil\nwith newline" + "x" * 200,
        "loadavg": [3.0, 3.0, 3.0],
        "cgroup_cpu_quota": 0.25,
        "clocksource": "acpi_pm",
    }
    out = hints(meta, placement="default")
    assert len(out) == 6
    for hint in out:
        assert "\n" not in hint and len(hint) < 100, hint


def test_hints_tolerate_missing_and_wrong_types() -> None:
    assert hints({}, placement="spread") == []
    junk: dict[str, object] = {
        "cpu_count": "eight",
        "hypervisor": "yes",
        "governor": 3,
        "loadavg": "high",
        "cgroup_cpu_quota": "max",
        "clocksource": None,
    }
    assert hints(junk, placement="spread") == []
    assert hints({"cpu_count": True}, placement="spread") == []
