from __future__ import annotations

import io
import json
import statistics
from pathlib import Path

import pytest

from ctxbench import PingpongResult, files, result

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True, scope="module")
def _pandas_loaded_before_pytester() -> None:
    """pytester's in-process runs unload every module first imported inside them, and
    pandas' and pyarrow's extension modules cannot be imported twice (pandas 3.1 then fails
    "the dtype str is not supported for parsing"): load them, and the CSV reader's lazily
    imported parts, out here, so this file passes alone as well as after others."""
    pd = pytest.importorskip("pandas")
    pd.read_csv(io.StringIO("a\nx\n"), dtype={"a": str})


INNER = """
import pytest

TINY = {"min_time": 0.002, "repetitions": 3, "warmup": 0}


@pytest.mark.parametrize("procs", [2, 3])
def test_ring(ctxbench, procs):
    r = ctxbench.ring([procs], size_kb=4, **TINY)
    assert r.procs.tolist() == [procs] and r.size_kb == 4
    assert "test" not in r.metadata


def test_lat_ctx_and_pingpong(ctxbench):
    r = ctxbench.lat_ctx(2, **TINY)
    p = ctxbench.pingpong(loops=1000)
    assert ctxbench.results == [r, p]


def test_without_fixture():
    pass
"""


def test_plugin_is_registered(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.has_plugin("ctxbench")


def test_the_summary_says_what_the_command_line_says_each_once(pytester: pytest.Pytester) -> None:
    # The unpinned rings and ping-pong share one hint; a point the time cap ended says how,
    # named by its test, in the words `ctxbench lat-ctx` prints (ctxbench.report).
    pytester.makepyfile(
        test_said="""
def test_capped(ctxbench):
    ctxbench.ring([2], precision=0.001, max_time=0.02, min_time=0.002, warmup=0)


def test_twice(ctxbench):
    ctxbench.ring([2], min_time=0.002, repetitions=3, warmup=0)
    ctxbench.pingpong(loops=1000)
"""
    )
    run = pytester.runpytest("test_said.py")
    run.assert_outcomes(passed=2)
    lines = run.stdout.lines
    hint = "ctxbench: hint: unpinned: the share of hops that cross CPUs (slow) varies run to run"
    assert sum(line.startswith(hint) for line in lines) == 1
    (stopped,) = [line for line in lines if line.startswith("ctxbench: stopped: ")]
    assert stopped.startswith("ctxbench: stopped: test_said.py::test_capped: 2: ")
    assert "or the precision)" in stopped or "run_spread" in stopped


def test_records_and_saves(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    path = pytester.path / "results.json"
    run = pytester.runpytest("--ctxbench-save", str(path))
    run.assert_outcomes(passed=4)
    run.stdout.fnmatch_lines(["ctxbench: saved 4 results to *results.json"])
    results = result.load_results(path)
    assert [r.metadata["test"] for r in results] == [
        "test_inner.py::test_ring[2]",
        "test_inner.py::test_ring[3]",
        "test_inner.py::test_lat_ctx_and_pingpong",
        "test_inner.py::test_lat_ctx_and_pingpong",
    ]
    assert [r.procs.tolist() for r in results[:3]] == [[2], [3], [2]]
    assert isinstance(results[3], PingpongResult)
    df = files.load(path)
    assert df.groupby("test").size().to_dict() == {
        "test_inner.py::test_lat_ctx_and_pingpong": 3 + 1,
        "test_inner.py::test_ring[2]": 3,
        "test_inner.py::test_ring[3]": 3,
    }


def test_csv_save(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    path = pytester.path / "results.csv"
    pytester.runpytest("--ctxbench-save", str(path)).assert_outcomes(passed=4)
    assert len(files.load(path)) == 3 * 3 + 1


def test_nothing_saved_without_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    pytester.runpytest().assert_outcomes(passed=4)
    assert not list(pytester.path.glob("*.json"))


def test_bad_save_path_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    run = pytester.runpytest("--ctxbench-save", "results.xlsx")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines(["*--ctxbench-save results.xlsx: use a .json, .csv, .parquet file*"])


@pytest.mark.parametrize("option", ["--ctxbench-save", "--ctxbench-autosave"])
def test_an_unwritable_save_place_is_a_usage_error_before_measuring(
    pytester: pytest.Pytester, option: str
) -> None:
    pytester.makepyfile(test_inner=INNER)
    if option == "--ctxbench-save":
        args = [option, str(pytester.path / "missing" / "results.json")]
        expected = "*--ctxbench-save: *No such file or directory*missing/results.json*"
    else:
        (pytester.path / ".ctxbench").write_text("a file where the folder goes")
        args = [option]
        expected = "*--ctxbench-autosave: cannot make *.ctxbench*not a directory*"
    run = pytester.runpytest(*args)
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines([expected])
    assert "passed" not in run.stdout.str()  # nothing ran, nothing was measured


def test_results_of_xdist_workers_reach_one_file(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_inner=INNER)
    path = pytester.path / "results.json"
    run = pytester.runpytest_subprocess(
        "-n", "2", "-p", "no:cacheprovider", "--ctxbench-save", str(path), "--ctxbench-autosave"
    )
    run.assert_outcomes(passed=4)
    run.stdout.fnmatch_lines(["ctxbench: saved 4 results to *results.json"])
    tests = sorted(r.metadata["test"] for r in result.load_results(path))
    assert tests == sorted(
        ["test_inner.py::test_ring[2]", "test_inner.py::test_ring[3]"]
        + 2 * ["test_inner.py::test_lat_ctx_and_pingpong"]
    )
    # One run, one file, with the same four results.
    (autosaved,) = (pytester.path / ".ctxbench").iterdir()
    assert len(result.load_results(autosaved)) == 4
    # The table at the end lists every worker's points.
    run.stdout.fnmatch_lines(["*test_inner.py::test_ring?3?*process*pipe*"])


def test_pingpong_is_looked_up_when_called(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_inner="""
import ctxbench as module


def test_pingpong(ctxbench, monkeypatch):
    monkeypatch.setattr(module, "pingpong", lambda **kw: kw, raising=False)
    assert ctxbench.pingpong(loops=10) == {"loops": 10}
    assert ctxbench.results == [{"loops": 10}]
"""
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_saved_json_is_a_ctxbench_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner="def test_nothing(ctxbench):\n    pass\n")
    path = pytester.path / "empty.json"
    pytester.runpytest("--ctxbench-save", str(path)).assert_outcomes(passed=1)
    assert json.loads(Path(path).read_text())["results"] == []


# --- comparing with a saved run ------------------------------------------------------------

# Seven repetitions: against twelve baseline samples a regression stays significant even
# when one repetition is disturbed.
PINNED = """
TINY = {"min_time": 0.002, "repetitions": 7, "warmup": 0, "placement": "single"}


def test_pinned(ctxbench):
    ctxbench.ring([2], size_kb=4, **TINY)
"""

# A test whose "measurement" is a result read from the file $CTXBENCH_FIXED: exact samples,
# so the verdict of the comparison is known in advance.
FIXED = """
import os

import ctxbench as module
from ctxbench.result import load_results


def test_fixed(ctxbench, monkeypatch):
    fixed = load_results(os.environ["CTXBENCH_FIXED"])[0]
    monkeypatch.setattr(module, "ring", lambda *args, **kwargs: fixed)
    ctxbench.ring([2])
"""


def fabricate(src: Path, dst: Path, samples: list[float], one_instance: bool = False) -> Path:
    """``src`` (a file saved by the plugin) with every ring point's samples replaced: as if
    each came from a ring instance of its own, or all from one."""
    doc = json.loads(src.read_text())
    for rec in doc["results"]:
        # As if measured on a quiet machine, whatever the load of this one.
        rec["metadata"]["runnable_per_cpu"] = 0.0
        n = len(rec["procs"])
        rec["samples_us"] = rec["raw_samples_us"] = [[v] * n for v in samples]
        rec["latency_us"] = [statistics.median(samples)] * n  # the median of its samples
        # Flagged as its median says, not as the real run was (below resolution under load).
        rec["below_resolution"] = [statistics.median(samples) <= 0] * n
        rec["overhead_samples_us"] = [[0.0] * n for _ in samples]
        rec["repetitions"] = len(samples)
        rec["block"] = [1] * n
        instances = [len(samples)] if one_instance else [1] * len(samples)
        rec["instance_blocks"] = [instances] * n
    dst.write_text(json.dumps(doc))
    return dst


@pytest.fixture
def measured(pytester: pytest.Pytester) -> Path:
    """A real run of the pinned test, saved."""
    pytester.makepyfile(test_inner=PINNED)
    path = pytester.path / "measured.json"
    pytester.runpytest("--ctxbench-save", str(path)).assert_outcomes(passed=1)
    return path


def exact(
    pytester: pytest.Pytester,
    measured: Path,
    monkeypatch: pytest.MonkeyPatch,
    base: list[float],
    new: list[float],
    *options: str,
) -> pytest.RunResult:
    """A run of test_fixed whose "measurement" has exactly the samples `new`, compared with a
    baseline that has exactly `base`: the verdict is known in advance, whatever the load."""
    fabricate(measured, pytester.path / "a.json", base)
    doc = json.loads((pytester.path / "a.json").read_text())
    for rec in doc["results"]:
        rec["metadata"]["test"] = "test_fixed.py::test_fixed"
    (pytester.path / "base.json").write_text(json.dumps(doc))
    monkeypatch.setenv("CTXBENCH_FIXED", str(fabricate(measured, pytester.path / "new.json", new)))
    pytester.makepyfile(test_fixed=FIXED)
    return pytester.runpytest("test_fixed.py", "--ctxbench-compare", "base.json", *options)


SAMPLES = [5.0 + 0.01 * i for i in range(8)]


def test_faster_baseline_fails_naming_test_point_and_figures(
    pytester: pytest.Pytester, measured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = [0.001 * (1 + i) for i in range(8)]
    run = exact(pytester, measured, monkeypatch, tiny, SAMPLES, "--ctxbench-compare-fail", "10%")
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(
        [
            "*ctxbench: test_fixed.py::test_fixed is slower than the baseline by more than 10%:",
            "*process/pipe placement=single size=4k P=1 procs=2: 5.035 µs, baseline 0.005 µs*"
            "95% interval of the ratio*baseline on 1 run, this run on 1 run)",
            "*test_fixed.py::test_fixed * slower REGRESSED",
            "*compared with base.json: 1 slower, 0 faster, 0 no change, 0 inconclusive; "
            "1 slower by more*",
            "FAILED test_fixed.py::test_fixed*",
        ]
    )


def test_slower_baseline_passes(
    pytester: pytest.Pytester, measured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = [1e5 + i for i in range(8)]
    run = exact(pytester, measured, monkeypatch, huge, SAMPLES, "--ctxbench-compare-fail", "10")
    run.assert_outcomes(passed=1)
    run.stdout.fnmatch_lines(["*test_fixed.py::test_fixed*faster*"])


def test_without_fail_a_regression_is_reported_not_failed(
    pytester: pytest.Pytester, measured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = [0.001 * (1 + i) for i in range(8)]
    run = exact(pytester, measured, monkeypatch, tiny, SAMPLES)
    run.assert_outcomes(passed=1)
    run.stdout.fnmatch_lines(["*test_fixed.py::test_fixed*slower*"])


ONE_SAMPLE_REASON = "*procs=2: a side is one sample*`ctxbench ab`"


def test_a_baseline_of_one_sample_is_inconclusive_and_warns(
    pytester: pytest.Pytester, measured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = exact(pytester, measured, monkeypatch, [0.001], SAMPLES, "--ctxbench-compare-fail", "1")
    run.assert_outcomes(passed=1, warnings=1)
    run.stdout.fnmatch_lines(
        [
            "*CtxbenchInconclusive: ctxbench: test_fixed.py::test_fixed: the comparison with "
            "the baseline is inconclusive:",
            ONE_SAMPLE_REASON,
            "*0 slower, 0 faster, 0 no change, 1 inconclusive*",
            "ctxbench: inconclusive: test_fixed.py::test_fixed " + ONE_SAMPLE_REASON,
        ]
    )


def test_inconclusive_fails_or_passes_as_asked(
    pytester: pytest.Pytester, measured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = exact(
        pytester, measured, monkeypatch, [0.001], SAMPLES, "--ctxbench-inconclusive", "fail"
    )
    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines([ONE_SAMPLE_REASON, "FAILED test_fixed.py::test_fixed*"])
    run = exact(
        pytester, measured, monkeypatch, [0.001], SAMPLES, "--ctxbench-inconclusive", "pass"
    )
    run.assert_outcomes(passed=1)
    # Passed, never in silence: the summary still names it.
    run.stdout.fnmatch_lines(["ctxbench: inconclusive: test_fixed.py::test_fixed*"])


# A test whose every call is one more run of one ring instance: a side that only several
# runs can decide. Each call writes a line to $CTXBENCH_CALLS.
RUNS = """
import dataclasses
import os

import ctxbench as module
from ctxbench.result import load_results


def test_runs(ctxbench, monkeypatch):
    fixed = load_results(os.environ["CTXBENCH_FIXED"])[0]
    calls = os.environ["CTXBENCH_CALLS"]

    def measure(*args, **kwargs):
        with open(calls, "a") as f:
            f.write("call ")
        n = len(open(calls).read().split())
        return dataclasses.replace(
            fixed,
            samples_us=fixed.samples_us * (1 + 0.002 * (n % 3)),
            metadata={**fixed.metadata, "run_id": f"run{n}"},
        )

    monkeypatch.setattr(module, "ring", measure)
    ctxbench.ring([2])
"""


def test_a_budget_measures_an_inconclusive_side_again_until_it_decides(
    pytester: pytest.Pytester, measured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A baseline of three runs: its spread between runs is measured, not assumed.
    fabricate(measured, pytester.path / "a.json", SAMPLES)
    doc = json.loads((pytester.path / "a.json").read_text())
    runs = []
    for k in range(3):
        for rec in json.loads(json.dumps(doc["results"])):
            rec["metadata"]["test"] = "test_runs.py::test_runs"
            rec["metadata"]["run_id"] = f"base{k}"
            scale = 1 + 0.002 * k
            rec["samples_us"] = [[v * scale for v in row] for row in rec["samples_us"]]
            rec["latency_us"] = [v * scale for v in rec["latency_us"]]
            runs.append(rec)
    doc["results"] = runs
    (pytester.path / "base.json").write_text(json.dumps(doc))
    one = fabricate(measured, pytester.path / "new.json", SAMPLES, one_instance=True)
    monkeypatch.setenv("CTXBENCH_FIXED", str(one))
    pytester.makepyfile(test_runs=RUNS)
    calls = pytester.path / "calls"
    monkeypatch.setenv("CTXBENCH_CALLS", str(calls))
    run = pytester.runpytest("test_runs.py", "--ctxbench-compare", "base.json")
    run.stdout.fnmatch_lines(["*0 no change, 1 inconclusive*"])
    assert len(calls.read_text().split()) == 1
    calls.unlink()
    run = pytester.runpytest(
        "test_runs.py", "--ctxbench-compare", "base.json", "--ctxbench-budget", "60"
    )
    run.assert_outcomes(passed=1)
    run.stdout.fnmatch_lines(["*0 slower, 0 faster, 1 no change, 0 inconclusive*"])
    assert len(calls.read_text().split()) > 1


@pytest.mark.parametrize(
    ("factor", "passes"),
    [(1.0, True), (1.05, True), (1.5, False)],
    ids=["equal", "slower-within-threshold", "slower-past-threshold"],
)
def test_threshold_on_exact_samples(
    pytester: pytest.Pytester,
    measured: Path,
    monkeypatch: pytest.MonkeyPatch,
    factor: float,
    passes: bool,
) -> None:
    new = [v * factor for v in SAMPLES]
    run = exact(pytester, measured, monkeypatch, SAMPLES, new, "--ctxbench-compare-fail", "10%")
    if passes:
        run.assert_outcomes(passed=1)
    else:
        run.assert_outcomes(failed=1)
        run.stdout.fnmatch_lines(
            ["*procs=2: 7.553 µs, baseline 5.035 µs (+50.0%, 95% interval of the ratio [1.*"]
        )


def test_autosave_numbers_runs_and_compare_picks_them(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=PINNED)
    for _ in range(2):
        pytester.runpytest("--ctxbench-autosave").assert_outcomes(passed=1)
    runs = sorted(p.name for p in (pytester.path / ".ctxbench").iterdir())
    assert [name[:5] for name in runs] == ["0001_", "0002_"]
    assert all(name.endswith("Z.json") for name in runs)
    assert len(result.load_results(pytester.path / ".ctxbench" / runs[1])) == 1
    # No RUN: the latest; a number: that run. Autosaving the third run does not make the
    # comparison pick it.
    latest = pytester.runpytest("--ctxbench-compare", "--ctxbench-autosave")
    latest.stdout.fnmatch_lines(["*saved 1 results to *0003_*", f"*compared with *{runs[1]}: *"])
    first = pytester.runpytest("--ctxbench-compare", "1")
    first.stdout.fnmatch_lines([f"*compared with *{runs[0]}: *"])


def test_compare_usage_errors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=PINNED)
    for args, message in [
        (["--ctxbench-compare"], "*no saved run in *.ctxbench*--ctxbench-autosave*"),
        (["--ctxbench-compare", "7"], "*--ctxbench-compare 7: no such run*"),
        (["--ctxbench-compare", "nope.json"], "*--ctxbench-compare nope.json: no such file*"),
        (["--ctxbench-compare-fail", "10%"], "*--ctxbench-compare-fail needs --ctxbench-compare*"),
        # 0 % fails every difference; 1e9 s of budget is 31 years: typos, not plans.
        (
            ["--ctxbench-compare", "nope.json", "--ctxbench-compare-fail", "0%"],
            "*--ctxbench-compare-fail 0%: expected a percentage above 0 and at most 1000%*",
        ),
        (
            ["--ctxbench-compare", "nope.json", "--ctxbench-budget", "1e9"],
            "*--ctxbench-budget 1e+09: expected seconds from 0 to 3600*",
        ),
    ]:
        run = pytester.runpytest(*args)
        assert run.ret == pytest.ExitCode.USAGE_ERROR
        run.stderr.fnmatch_lines([message])


def test_summary_table_of_every_point(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    run = pytester.runpytest()
    run.assert_outcomes(passed=4)
    lines = run.stdout.lines
    start = next(i for i, line in enumerate(lines) if "ctxbench" in line and "---" in line)
    header = lines[start + 1].split()
    assert header[:6] == ["test", "engine", "transport", "placement", "procs", "size"]
    assert header[-4:] == ["median", "µs", "CV", "verdict"]
    rows = lines[start + 2 : start + 6]
    assert [row.split()[:6] for row in rows[:3]] == [
        ["test_inner.py::test_ring[2]", "process", "pipe", "default", "2", "4k"],
        ["test_inner.py::test_ring[3]", "process", "pipe", "default", "3", "4k"],
        ["test_inner.py::test_lat_ctx_and_pingpong", "process", "pipe", "default", "2", "0k"],
    ]
    assert rows[3].split()[:5] == [
        "test_inner.py::test_lat_ctx_and_pingpong",
        "process",
        "(pingpong)",
        "pipe",
        "default",
    ]
    assert all(row.split()[7].endswith("%") for row in rows[:3])  # CV


def test_summary_says_new_for_points_without_baseline(
    pytester: pytest.Pytester, measured: Path
) -> None:
    pytester.makepyfile(
        test_other="def test_other(ctxbench):\n    ctxbench.lat_ctx(2, "
        "min_time=0.002, repetitions=3, warmup=0)\n"
    )
    run = pytester.runpytest("--ctxbench-compare", str(measured))
    run.assert_outcomes(passed=2)
    run.stdout.fnmatch_lines(["*change", "*test_other.py::test_other*new"])
