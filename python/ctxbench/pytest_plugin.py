"""pytest plugin: a ``ctxbench`` fixture that measures like the module and records results.

    def test_ring(ctxbench):
        r = ctxbench.ring([2, 16], size_kb=64)
        assert r.work_verified.all()

Options (``pytest --help``, group "ctxbench"):

``--ctxbench-save PATH``
    write every recorded result (.json, .csv, .parquet) at the end of the session, each with
    the test's node id in ``metadata["test"]``. The path is checked before any test runs.
``--ctxbench-autosave``
    also keep the run as ``.ctxbench/NNNN_<UTC date and time>.json`` under the rootdir,
    numbered 0001, 0002, ... (pytest-benchmark's storage, without the machine folder).
``--ctxbench-compare [RUN]``
    compare each test's points with the same test's points in a saved run: RUN is a JSON
    file written by ``--ctxbench-save``, a run number in ``.ctxbench/`` (``3`` or ``0003``),
    or, when omitted, the latest run there. The verdict is ``ctxbench compare``'s
    (``ctxbench.compare``: the ratio of the two figures with its 95 % interval, each
    side's uncertainty from its ring instances, or from its runs where it holds several).
``--ctxbench-compare-fail PCT``
    with ``--ctxbench-compare``: a test fails when one of its points is slower than the
    baseline, the interval of the ratio above 1 and the ratio more than PCT (``10%``, or
    ``10``), naming the test, the point, both figures and the interval. PCT is also the
    threshold within which the interval must lie for "no change". Without it the threshold
    is ``ctxbench.compare``'s default.
``--ctxbench-inconclusive fail|warn|pass``
    what a point whose comparison is inconclusive (the data show neither a change nor its
    absence) does to its test: fail it, warn (the default: a ``CtxbenchInconclusive``
    warning per test, naming the point and the reason), or pass. Never "no change" in
    silence: every inconclusive point is listed at the end of the session either way.
``--ctxbench-store [PATH]``
    judge each test's points against the store's series of the same test's same points on
    this machine (``ctxbench._gate``; PATH: the default store when omitted), and keep the
    test's runs there, labelled ``test=<node id>``, for the next session. A point is slower
    when the prediction interval around its series' level lies above 1 and the ratio is
    beyond the threshold (``--ctxbench-compare-fail``); Holm within each test at its share
    of the session's 5 %, so that the chance of any false call in the session is at most
    5 %. Fewer than 5 stored runs: inconclusive ("short series").
``--ctxbench-unmatched fail|warn``
    with ``--ctxbench-store``: what a stored point the test no longer measures does to it
    (a changed engine changes every point's key): fail (the default) or warn; named either
    way.
``--ctxbench-runs K``
    every measuring call of a test made K times, each a run of its own, so that its points
    rest on K independent runs: the gate judges them as K runs against the series, and
    ``--ctxbench-save`` writes all K (where no store is kept). Default 1.
``--ctxbench-budget S``
    with ``--ctxbench-compare`` or ``--ctxbench-store``: a test whose comparison is
    inconclusive measures again (its
    same calls, each a further run of the current side) for up to S seconds, until every
    point is decided; the runs then compare as runs.

At the end of the session one table lists every recorded point: test id, engine, transport,
placement, procs, size, median µs, CV, verdict, and the change against the baseline when
comparing (with ``--ctxbench-store``, also each point's change point: is this run one of its
test's series, or which run is, ``_gate``); then, each once, what ``ctxbench lat-ctx`` would
say of each measurement (a point a cap ended, one below resolution, the hints that apply:
``ctxbench.report``) and of the comparison.

With pytest-xdist (``-n N``) each worker hands what it recorded to the controller when it
finishes, and the controller alone writes: one file holds the whole run. Measurements of
the workers wait for each other (``ctxbench._exclusive``), so parallel workers do not make
each other's numbers high.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import re
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import ctxbench
from ctxbench import _gate, report, store
from ctxbench.record import encode
from ctxbench.result import KINDS, from_record

if TYPE_CHECKING:
    import pandas as pd

STORAGE = ".ctxbench"
_RUN = re.compile(r"^(\d{4,})_.*\.json$")


@dataclasses.dataclass
class _State:
    """What the plugin keeps for the session."""

    recorded: list[tuple[str, Any]] = dataclasses.field(default_factory=list)
    baseline_path: Path | None = None
    baseline: pd.DataFrame | None = None
    fail: float | None = None
    inconclusive: str = "warn"
    budget: float = 0.0
    runs: int = 1
    # nodeid -> the comparison table of that test's points (``ctxbench.compare``).
    comparisons: dict[str, pd.DataFrame] = dataclasses.field(default_factory=dict)
    autosaved: Path | None = None
    # --ctxbench-store: the gate, and per test the stored points it did not measure.
    gate: _gate.Gate | None = None
    missing: dict[str, list[str]] = dataclasses.field(default_factory=dict)


STATE = pytest.StashKey[_State]()
RECORDER = pytest.StashKey["Recorder"]()
INCONCLUSIVE_POLICIES = ("fail", "warn", "pass")


class CtxbenchInconclusive(UserWarning):
    """A test's comparison with the baseline could not decide: the data show neither a
    change nor its absence."""


class CtxbenchUnmatched(UserWarning):
    """A test no longer measures points it has a stored series of (--ctxbench-unmatched
    warn)."""


class Recorder:
    """The ``ctxbench`` fixture: the module's measuring functions, recording each result."""

    def __init__(self, nodeid: str, sink: list[tuple[str, Any]], say: report.Report | None) -> None:
        self.nodeid = nodeid
        self._sink = sink
        self._say = say
        self.results: list[Any] = []
        # Every measuring call, to measure again within the gate's budget.
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # Looked up per call, so a function added to (or patched into) ctxbench is what runs.
        function = getattr(ctxbench, name, None)
        if function is None:
            raise AttributeError(f"this version of ctxbench has no {name}()")
        with report.saying(self._say):
            result = function(*args, **kwargs)
        self.results.append(result)
        self._sink.append((self.nodeid, result))
        self.calls.append((name, args, kwargs))
        return result

    def again(self) -> None:
        """Every call of the test once more: one more run of the current side."""
        for name, args, kwargs in list(self.calls):
            self._call(name, args, kwargs)
            self.calls.pop()

    def lat_ctx(self, *args: Any, **kwargs: Any) -> Any:
        """``ctxbench.lat_ctx``, recorded."""
        return self._call("lat_ctx", args, kwargs)

    def ring(self, *args: Any, **kwargs: Any) -> Any:
        """``ctxbench.ring``, recorded."""
        return self._call("ring", args, kwargs)

    def pingpong(self, *args: Any, **kwargs: Any) -> Any:
        """``ctxbench.pingpong``, recorded."""
        return self._call("pingpong", args, kwargs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxbench")
    group.addoption(
        "--ctxbench-save",
        metavar="PATH",
        default=None,
        help="write the results recorded by the ctxbench fixture to PATH "
        "(.json, .csv, .parquet) at the end of the session",
    )
    group.addoption(
        "--ctxbench-autosave",
        action="store_true",
        help=f"also save the run as {STORAGE}/NNNN_<date>.json under the rootdir (numbered)",
    )
    group.addoption(
        "--ctxbench-compare",
        metavar="RUN",
        nargs="?",
        const="latest",
        default=None,
        help="compare with a saved run: a JSON file from --ctxbench-save, a run number in "
        f"{STORAGE}/, or (no RUN) the latest run there",
    )
    group.addoption(
        "--ctxbench-compare-fail",
        metavar="PCT",
        default=None,
        help="with --ctxbench-compare: fail a test whose figure is slower than the baseline's "
        "(95%% interval of the ratio above 1) by more than PCT, e.g. 10%%",
    )
    group.addoption(
        "--ctxbench-inconclusive",
        choices=INCONCLUSIVE_POLICIES,
        default="warn",
        help="with --ctxbench-compare: what a comparison that cannot decide does to its test "
        "(default: warn, naming the reason)",
    )
    group.addoption(
        "--ctxbench-store",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="judge each test's points against the store's series of them and keep its runs "
        "there (PATH: the default store when omitted)",
    )
    group.addoption(
        "--ctxbench-unmatched",
        choices=_gate.UNMATCHED,
        default="fail",
        help="with --ctxbench-store: what a stored point a test no longer measures does to "
        "it (default fail)",
    )
    group.addoption(
        "--ctxbench-runs",
        metavar="K",
        type=int,
        default=1,
        help="measure each test's points K times, each a run of its own (every measuring "
        f"call of the test made K times; 1 to {MAX_RUNS}); the gate judges them as K runs "
        "against the series, --ctxbench-save writes all K (default 1)",
    )
    group.addoption(
        "--ctxbench-budget",
        metavar="S",
        type=float,
        default=0.0,
        help="with --ctxbench-compare: seconds a test may measure again to decide an "
        "inconclusive comparison (default 0)",
    )


# The most a test may measure again to decide a comparison: a budget past it is a typo
# (1e9 s is 31 years), not a plan.
MAX_BUDGET_S = 3600.0
# The most runs --ctxbench-runs takes: beyond, a typo, not a plan.
MAX_RUNS = 1000
# The largest slowdown --ctxbench-compare-fail takes, percent: B/A beyond 11x.
MAX_FAIL_PCT = 1000.0


def _percent(text: str) -> float:
    """A slowdown above 0 (0 %: every difference, however small, would fail a test, which
    is the verdict's threshold's job) up to ``MAX_FAIL_PCT``."""
    try:
        pct = float(text.strip().rstrip("%"))
    except ValueError:
        pct = math.nan
    if not 0 < pct <= MAX_FAIL_PCT:
        raise pytest.UsageError(
            f"--ctxbench-compare-fail {text}: expected a percentage above 0 and at most "
            f"{MAX_FAIL_PCT:g}%, like 10%"
        )
    return pct / 100


def _runs(storage: Path) -> dict[int, Path]:
    """The numbered runs in ``storage``, by number."""
    if not storage.is_dir():
        return {}
    found = {int(m[1]): path for path in storage.iterdir() if (m := _RUN.match(path.name))}
    return dict(sorted(found.items()))


def _baseline_path(run: str, storage: Path) -> Path:
    runs = _runs(storage)
    if run == "latest":
        if not runs:
            raise pytest.UsageError(
                f"--ctxbench-compare: no saved run in {storage}; "
                "save one first with --ctxbench-autosave"
            )
        return runs[max(runs)]
    if run.isdigit():
        if int(run) not in runs:
            have = ", ".join(f"{n:04d}" for n in runs) or "none"
            raise pytest.UsageError(f"--ctxbench-compare {run}: no such run in {storage} ({have})")
        return runs[int(run)]
    path = Path(run)
    if not path.is_file():
        raise pytest.UsageError(f"--ctxbench-compare {run}: no such file")
    return path


def _load_baseline(path: Path) -> pd.DataFrame:
    from .files import load

    try:
        df = load(path)
    except (ValueError, OSError, ImportError) as e:
        raise pytest.UsageError(f"--ctxbench-compare: {e}") from None
    if "test" not in df.columns:
        raise pytest.UsageError(
            f"--ctxbench-compare {path}: its results name no test; "
            "use a file written by --ctxbench-save or --ctxbench-autosave"
        )
    return df


def _worker(config: pytest.Config) -> bool:
    """Whether this is a pytest-xdist worker (which hands its results to the controller)."""
    return hasattr(config, "workerinput")


def _check_writable(path: Path, option: str) -> None:
    """A UsageError unless ``path`` can be written (``files.check_writable``): found now, not
    after the whole session has measured."""
    from .files import check_writable

    try:
        check_writable(path)
    except (OSError, ValueError) as e:
        raise pytest.UsageError(f"{option}: {e}") from None


def pytest_configure(config: pytest.Config) -> None:
    from .files import suffixes

    path = config.getoption("--ctxbench-save")
    # Checked now: a bad path found at the end of the session would lose every result. A
    # results file holds records or a table: lmbench's text keeps too little of them.
    usable = suffixes("records", "table")
    if path and Path(path).suffix.lower() not in usable:
        raise pytest.UsageError(f"--ctxbench-save {path}: use a {', '.join(usable)} file name")
    if not _worker(config):
        if path:
            _check_writable(Path(path), "--ctxbench-save")
        if config.getoption("--ctxbench-autosave"):
            storage = config.rootpath / STORAGE
            try:
                storage.mkdir(exist_ok=True)
            except FileExistsError:
                raise pytest.UsageError(
                    f"--ctxbench-autosave: cannot make {storage}: a file of that name is there, "
                    "not a directory"
                ) from None
            except OSError as e:
                raise pytest.UsageError(f"--ctxbench-autosave: cannot make {storage}: {e}") from e
            _check_writable(storage / "0001.json", "--ctxbench-autosave")
    state = _State()
    config.stash[STATE] = state
    fail = config.getoption("--ctxbench-compare-fail")
    run = config.getoption("--ctxbench-compare")
    if fail is not None:
        if run is None and config.getoption("--ctxbench-store") is None:
            raise pytest.UsageError(
                "--ctxbench-compare-fail needs --ctxbench-compare or --ctxbench-store"
            )
        state.fail = _percent(fail)
    state.inconclusive = config.getoption("--ctxbench-inconclusive")
    budget = config.getoption("--ctxbench-budget")
    if not (0 <= budget <= MAX_BUDGET_S):
        raise pytest.UsageError(
            f"--ctxbench-budget {budget:g}: expected seconds from 0 to {MAX_BUDGET_S:g}"
        )
    state.budget = budget
    runs = config.getoption("--ctxbench-runs")
    if not 1 <= runs <= MAX_RUNS:
        raise pytest.UsageError(f"--ctxbench-runs {runs}: expected runs from 1 to {MAX_RUNS}")
    state.runs = runs
    where = config.getoption("--ctxbench-store")
    if where is not None:
        if run is not None:
            raise pytest.UsageError("--ctxbench-store and --ctxbench-compare: choose one")
        try:
            kept = _gate.open_store(where)
        except (OSError, ValueError) as e:
            raise pytest.UsageError(f"--ctxbench-store: {e}") from None
        if kept is None:
            raise pytest.UsageError("--ctxbench-store: the store is off ($CTXBENCH_STORE)")
        threshold = state.fail if state.fail is not None else _core_threshold()
        state.gate = _gate.Gate(kept, _gate.machine_now(), config.getoption(
            "--ctxbench-unmatched"), threshold)  # fmt: skip
    if run is not None:
        # Resolved before this session autosaves, so "latest" is the previous run.
        state.baseline_path = _baseline_path(run, config.rootpath / STORAGE)
        state.baseline = _load_baseline(state.baseline_path)


def _core_threshold() -> float:
    from ._compare import DEFAULT_THRESHOLD

    return DEFAULT_THRESHOLD


def pytest_collection_finish(session: pytest.Session) -> None:
    """The gate's family: the stored points of every collected test."""
    state = session.config.stash.get(STATE, None)
    if state is not None and state.gate is not None:
        state.gate.count([item.nodeid for item in session.items])


# Named through the decorator so the function does not shadow the ctxbench module here.
@pytest.fixture(name="ctxbench")
def ctxbench_fixture(request: pytest.FixtureRequest) -> Recorder:
    """Measure with ``ctxbench.lat_ctx``/``ring``/``pingpong`` and record the results."""
    config = request.config
    recorder = Recorder(request.node.nodeid, config.stash[STATE].recorded, _say_through(config))
    request.node.stash[RECORDER] = recorder
    return recorder


def _say_through(config: pytest.Config) -> report.Report | None:
    """Where a fixture measurement waiting for the machine says so: on pytest's terminal,
    past its capture (a worker of pytest-xdist, whose workers wait for each other by
    design, keeps them in its own stderr)."""
    capture = config.pluginmanager.getplugin("capturemanager")
    terminal = config.pluginmanager.getplugin("terminalreporter")
    if _worker(config) or capture is None or terminal is None:
        return None

    def write(line: str) -> None:
        with capture.global_and_fixture_disabled():
            terminal.write_line(line)

    return report.Terminal(write=write)


def _is_result(value: Any) -> bool:
    return getattr(value, "kind", None) in KINDS


def _tagged(nodeid: str, result: Any) -> Any:
    # A copy: the test's result object keeps the metadata it was returned with.
    return dataclasses.replace(result, metadata={**result.metadata, "test": nodeid})


def _compare_test(state: _State, nodeid: str, results: list[Any]) -> pd.DataFrame | None:
    """The comparison table of one test's points with the baseline's, or None."""
    from ._compare import compare
    from .frame import concat

    if state.gate is not None:
        table, state.missing[nodeid] = state.gate.judge(nodeid, results)
        return table
    assert state.baseline is not None
    base = state.baseline[state.baseline["test"] == nodeid]
    if base.empty or not results:
        return None
    try:
        new = concat(_tagged(nodeid, r) for r in results)
        if state.fail is None:
            return compare(base, new)
        return compare(base, new, state.fail)
    except ValueError:  # no point in common: the test measures something else now
        return None


def _decide(state: _State, item: pytest.Item, recorder: Recorder) -> pd.DataFrame | None:
    """The test's comparison, measured again within the budget while it is inconclusive
    for want of data (``report.WANTING_DATA``)."""
    deadline = time.monotonic() + state.budget
    while True:
        results = [r for r in recorder.results if _is_result(r)]
        table = _compare_test(state, item.nodeid, results)
        if table is None or time.monotonic() >= deadline:
            return table
        if not report.undecided(table)["why"].isin(report.WANTING_DATA).any():
            return table
        recorder.again()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    outcome = yield
    state = item.config.stash[STATE]
    recorder = item.stash.get(RECORDER, None)
    if recorder is not None:
        # --ctxbench-runs: the test's points K runs each, before anything judges them.
        for _ in range(state.runs - 1):
            recorder.again()
    if (state.baseline is None and state.gate is None) or recorder is None:
        return outcome
    table = _decide(state, item, recorder)
    if state.gate is not None:
        state.gate.keep(item.nodeid, [r for r in recorder.results if _is_result(r)])
        if table is not None and not table.empty:
            table = state.gate.change_points(item.nodeid, table)
        missing = state.missing.get(item.nodeid)
        if missing:
            said = _gate.unmatched_message(item.nodeid, missing)
            if state.gate.unmatched == "fail":
                pytest.fail(said, pytrace=False)
            warnings.warn(said, CtxbenchUnmatched, stacklevel=1)
    if table is None:
        return outcome
    state.comparisons[item.nodeid] = table
    if state.gate is not None and table["regressed"].any():
        pytest.fail(report.series_regressed(item.nodeid, table), pytrace=False)
    if state.fail is not None and table["regressed"].any():
        pytest.fail(report.regressed(item.nodeid, table, state.fail), pytrace=False)
    if not report.undecided(table).empty:
        said = report.inconclusive(item.nodeid, table)
        if state.inconclusive == "fail":
            pytest.fail(said, pytrace=False)
        if state.inconclusive == "warn":
            warnings.warn(said, CtxbenchInconclusive, stacklevel=1)
    return outcome


def _autosave_path(storage: Path) -> Path:
    runs = _runs(storage)
    number = max(runs, default=0) + 1
    return storage / f"{number:04d}_{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"


# What an xdist worker hands the controller: its records and its tests' comparison tables.
WORKER_OUTPUT = "ctxbench"


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash.get(STATE, None)
    if state is None:
        return
    tagged = [_tagged(nodeid, r) for nodeid, r in state.recorded if _is_result(r)]
    if _worker(config):
        # The controller writes, once, with every worker's results.
        config.workeroutput[WORKER_OUTPUT] = json.dumps(  # type: ignore[attr-defined]
            {
                "records": [encode(r) for r in tagged],
                "comparisons": {
                    nodeid: table.to_json(orient="split")
                    for nodeid, table in state.comparisons.items()
                },
            }
        )
        return
    # Each run kept in the results store (measuring kept it already) with its test's id.
    store.keep_quietly(tagged, source="pytest")
    path = config.getoption("--ctxbench-save")
    if path or config.getoption("--ctxbench-autosave"):
        from .files import save

        if path:
            save(tagged, path)
        if config.getoption("--ctxbench-autosave"):
            storage = config.rootpath / STORAGE
            storage.mkdir(exist_ok=True)
            state.autosaved = _autosave_path(storage)
            save(tagged, state.autosaved)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, on the controller: a worker finished; take what it recorded."""
    state = node.config.stash.get(STATE, None)
    handed = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
    if state is None or handed is None:
        return
    import pandas as pd

    got = json.loads(handed)
    for rec in got["records"]:
        state.recorded.append((rec["metadata"]["test"], from_record(rec)))
    for nodeid, table in got["comparisons"].items():
        state.comparisons[nodeid] = pd.read_json(io.StringIO(table), orient="split")


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    recorded = [(nodeid, r) for nodeid, r in state.recorded if _is_result(r)]
    comparing = state.comparisons if state.baseline is not None or state.gate else None
    table = report.summary_table(recorded, comparing)
    if table:
        terminalreporter.write_sep("-", "ctxbench")
        for line in table:
            terminalreporter.write_line(line)
    # What the command line says of each measurement, each line once; pytest shows the
    # warnings itself.
    said = report.Lines()
    for nodeid, r in recorded:
        report.say(report.lines(r, where=nodeid, warnings=False), said)
    for path in (config.getoption("--ctxbench-save"), state.autosaved):
        if path:
            said.say(report.saved(len(recorded), path))
    against = state.baseline_path
    if state.gate is not None:
        against = f"the store's series ({getattr(state.gate.store, 'path', 'store')})"
    if against is not None:
        tables = list(state.comparisons.values())
        said.say(report.compared(against, tables, state.fail))
        for nodeid, t in sorted(state.comparisons.items()):
            report.say(report.inconclusive_lines(t, nodeid), said)
        context = sorted({note for t in tables for note in t.attrs.get("context") or []})
        if context:
            said.say(report.context_line(context, "the baseline differs"))
    report.say(said.lines, report.Terminal(write=terminalreporter.write_line))
