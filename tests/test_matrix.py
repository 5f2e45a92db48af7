"""ctxbench.matrix: real matrices on this machine's CPUs (short cells: properties, not speed),
bad input, the result's frame and files, the text and the figure. Cell choice and order on
big machines are tested in src/matrix/plan.rs against described hosts (tests/hosts.py); the
figure and the table of a big machine are drawn here from synthetic results on those hosts."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Described

import ctxbench
from ctxbench import _core, _topology
from ctxbench._matrix_table import class_summary, format_matrix, grid
from ctxbench.frame import POINT_KEY
from ctxbench.result import load_results

# Cells of a few ms: these tests check what a matrix holds, not how precise it is.
QUICK: dict[str, Any] = {"repetitions": 2, "min_time": 0.001, "warmup": 0, "progress": False}
ALLOWED = sorted(os.sched_getaffinity(0))
# The CPUs a measured matrix here covers: two at most, whatever the host's size (a matrix of
# every CPU is n² cells: hours on a large machine).
CPUS = ALLOWED[:2]


@pytest.fixture(scope="module")
def full() -> ctxbench.MatrixResult:
    """Every pair of two of this machine's CPUs (a matrix of every CPU is the host's size),
    with hops, memory on node 0 and two passes."""
    return ctxbench.matrix(CPUS, record_hops=True, memory_node=0, passes=2, **QUICK)


def test_every_ordered_pair_twice_in_measuring_order(full: ctxbench.MatrixResult) -> None:
    n = len(CPUS)
    assert full.cpus.tolist() == CPUS
    assert len(full.cpu_from) == 2 * n * n
    pairs = list(zip(full.cpu_from.tolist(), full.cpu_to.tolist()))
    first = pairs[: n * n]
    assert sorted(first) == [(a, b) for a in CPUS for b in CPUS]
    assert pairs[n * n :] == first[::-1], "the second pass runs backwards"
    assert full.pass_index.tolist() == [0] * n * n + [1] * n * n
    assert np.all(np.diff(full.started_s) > 0)
    assert np.all(full.elapsed_s > 0)
    # Each participant ran where the cell pinned it.
    assert full.cpus_seen.tolist() == [list(p) for p in pairs]
    t = ctxbench.topology()
    assert full.relation == [t.relation(a, b) for a, b in pairs]
    assert all(r == "same-cpu" for (a, b), r in zip(pairs, full.relation) if a == b)
    assert all(full.work_verified)
    assert full.repetitions_made.tolist() == [2] * len(pairs)


def test_hops_memory_and_clock_evidence(full: ctxbench.MatrixResult) -> None:
    assert full.wake_us is not None
    p50, p99 = full.wake_us["p50"], full.wake_us["p99"]
    assert np.all(p50 > 0) and np.all(p99 >= p50)
    # memory_node=0 on this one-node machine: bound and verified in every cell.
    assert full.memory_node_asked.tolist() == [0] * len(p50)
    assert full.memory_node_seen.tolist() == [0] * len(p50)
    diagonal = full.cpu_from == full.cpu_to
    assert np.all(full.clock_offset_bound_ns[diagonal] == 0)
    assert not full.clock_untrusted[diagonal].any()
    bound = full.clock_offset_bound_ns[~diagonal]
    assert np.all(bound >= 0), "checked before every cross-CPU cell (inf: no bound)"
    # Flagged exactly where the bound is wider than the histogram bucket holding the
    # median: 32 buckets per power of two, so a bucket is 2**floor(log2(ns)) / 32 wide
    # (between 1/64 and 1/32 of the value).
    ns = p50[~diagonal] * 1000
    octave = np.floor(np.log2(ns))
    width = 2.0**octave / 32
    clear = np.abs(np.log2(ns) - np.round(np.log2(ns))) > 1e-3  # not on an octave's edge
    flagged = full.clock_untrusted[~diagonal]
    assert np.all(flagged[clear & (bound <= width * 0.9)] == False)  # noqa: E712
    assert np.all(flagged[clear & (bound > width * 1.1)])


# One CPU keeps these short; its hint is tested below.
ONE_CPU = pytest.mark.filterwarnings("ignore:ctxbench. only CPU")


@ONE_CPU
def test_without_hops_there_is_no_wake_or_clock_check() -> None:
    r = ctxbench.matrix(ALLOWED[:1], **QUICK)
    assert r.wake_us is None
    assert np.isnan(r.clock_offset_bound_ns).all()
    assert r.memory_node_asked.tolist() == [-1], "one node: not placed unless asked"


@pytest.mark.skipif(len(ALLOWED) < 2, reason="needs two CPUs")
def test_class_mode_is_deterministic_and_covers_every_class() -> None:
    t = ctxbench.topology()
    present = {t.relation(a, b) for a in ALLOWED for b in ALLOWED}
    runs = [ctxbench.matrix(classes=1, **QUICK) for _ in range(2)]
    for r in runs:
        assert sorted(r.relation) == sorted(present)
        assert r.per_class == 1
    cells = [list(zip(r.cpu_from.tolist(), r.cpu_to.tolist())) for r in runs]
    assert cells[0] == cells[1]
    with pytest.raises(TypeError, match="classes"):
        ctxbench.matrix(classes="all", **QUICK)  # type: ignore[arg-type]


@ONE_CPU
def test_precision_mode_cells_stop_as_ring_points_do() -> None:
    r = ctxbench.matrix(ALLOWED[:1], max_time=0.05, progress=False)
    assert r.repetitions is None and r.precision == _core.DEFAULT_PRECISION
    assert r.min_time == _core.PRECISION_MIN_TIME
    assert r.stopped[0] in ("precision", "time_cap", "max_repetitions")
    assert r.repetitions_made[0] >= 4
    assert r.ci_low[0] <= r.latency_us[0] <= r.ci_high[0]


@pytest.fixture
def only_first_cpu() -> Iterator[int]:
    """This thread restricted to its first CPU, as taskset would."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {ALLOWED[0]})
    try:
        yield ALLOWED[0]
    finally:
        os.sched_setaffinity(0, before)


def test_one_allowed_cpu_is_the_diagonal_with_a_hint(only_first_cpu: int) -> None:
    with pytest.warns(UserWarning, match="diagonal"):
        r = ctxbench.matrix(**QUICK)
    assert list(zip(r.cpu_from, r.cpu_to)) == [(only_first_cpu, only_first_cpu)]
    # yield has no cross-CPU wake-up, but on one CPU it is a matrix of one cell.
    with pytest.warns(UserWarning, match="diagonal"):
        y = ctxbench.matrix(transport="yield", **QUICK)
    assert y.relation == ["same-cpu"]


@pytest.mark.skipif(len(ALLOWED) < 2, reason="needs two CPUs")
def test_a_cpu_outside_the_affinity_mask_is_named(only_first_cpu: int) -> None:
    other = ALLOWED[1]
    with pytest.raises(ValueError, match=f"cpus: CPU {other} is outside this process"):
        ctxbench.matrix([only_first_cpu, other], **QUICK)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"cpus": [_core.MAX_CPUS]}, ValueError, "cpus: CPU ids must be between 0 and"),
        ({"cpus": [_core.MAX_CPUS - 1]}, ValueError, "cpus: CPU .* (does not exist|is outside)"),
        ({"cpus": [ALLOWED[0], ALLOWED[0]]}, ValueError, "named twice"),
        ({"cpus": []}, ValueError, "cpus: name at least one CPU"),
        ({"cpus": [-1]}, ValueError, "cpus: CPU ids must be between 0 and"),
        ({"cpus": [1 << 70]}, ValueError, "cpus: CPU ids must be between 0 and"),
        ({"cpus": "0,1"}, TypeError, "cpus: expected a sequence"),
        ({"cpus": itertools.count()}, ValueError, "cpus: lists more than 1024 CPU ids"),
        ({"cpus": {0, 1}}, TypeError, "cpus: expected a sequence"),
        ({"engine": "fiber"}, ValueError, "engine: fibers"),
        ({"engine": "coroutine"}, ValueError, "engine"),
        ({"transport": "carrier-pigeon"}, ValueError, "transport"),
        ({"memory_node": 7}, ValueError, r"memory_node: node 7 does not exist here; nodes: \["),
        ({"memory_node": "far"}, ValueError, 'memory_node: unknown placement "far"'),
        ({"memory_node": 1.5}, TypeError, "memory_node"),
        ({"memory_node": True}, TypeError, "memory_node: expected"),
        ({"memory_node": 1 << 70}, ValueError, "memory_node: 1180591620717411303424 is out of"),
        ({"passes": 0}, ValueError, "passes: must be between 1"),
        ({"classes": 0}, ValueError, "per_class: must be between 1"),
        ({"min_time": 0.0}, ValueError, "min_time"),
        # bool is no number of seconds or fraction.
        ({"min_time": True}, TypeError, "min_time: expected a number, got bool"),
        ({"timeout": False}, TypeError, "timeout: expected a number, got bool"),
        ({"precision": True}, TypeError, "precision: expected a number, got bool"),
        ({"progress": "sometimes"}, ValueError, "progress"),
        ({"out": "m.xgraph"}, ValueError, "out: m.xgraph: a matrix is written as"),
    ],
)
def test_bad_input_is_refused_before_measuring(kwargs: Any, error: type, match: str) -> None:
    args = {**QUICK, **kwargs}
    with pytest.raises(error, match=match):
        ctxbench.matrix(**args)


@pytest.mark.skipif(len(ALLOWED) < 2, reason="needs two CPUs")
def test_transports_without_a_cross_cpu_wake_up_list_what_works() -> None:
    with pytest.raises(ValueError, match='transport: "yield"') as e:
        ctxbench.matrix(transport="yield", **QUICK)
    for works in ("pipe", "eventfd", "futex", "socket", "signal", "condvar"):
        assert f'"{works}"' in str(e.value)


def test_process_engine_and_pipe(no_leaks: None) -> None:
    r = ctxbench.matrix(CPUS, engine="process", transport="pipe", **QUICK)
    assert r.engine == "process" and r.transport == "pipe"
    assert all(r.work_verified)


def test_an_exception_from_progress_stops_the_matrix_at_once(no_leaks: None) -> None:
    heard = []

    def stop(done: int, total: int) -> None:
        heard.append((done, total))
        raise KeyboardInterrupt

    quick = {k: v for k, v in QUICK.items() if k != "progress"}
    with pytest.raises(KeyboardInterrupt):
        _core.matrix(CPUS, engine="process", transport="pipe", progress=stop, **quick)
    assert heard == [(1, len(CPUS) ** 2)]


def test_frame_one_row_per_cell_and_repetition(full: ctxbench.MatrixResult) -> None:
    df = full.to_frame()
    assert len(df) == int(full.repetitions_made.sum())
    assert set(POINT_KEY) <= set(df.columns)
    assert (df["benchmark"] == "matrix").all() and (df["procs"] == 2).all()
    first = df.iloc[0]
    assert first["placement"] == f"[{first['cpu_from']}, {first['cpu_to']}]"
    for col in ("relation", "latency_us", "ci_low", "ci_high", "wake_p50_us", "rank_from"):
        assert col in df.columns
    t = ctxbench.topology()
    assert sorted(set(df["rank_from"])) == list(range(len(t.order)))
    summary = full.summary()
    assert set(summary["relation"]) == set(full.relation)
    assert summary["cells"].sum() == len(full.cpu_from)
    assert (summary["min_us"] <= summary["median_us"]).all()


@pytest.mark.parametrize("suffix", [".json", ".csv", ".parquet"])
def test_files_round_trip(full: ctxbench.MatrixResult, tmp_path: Path, suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    path = tmp_path / f"m{suffix}"
    full.save(path)
    back = ctxbench.load(path)
    want = full.to_frame()
    assert list(back["cpu_from"]) == list(want["cpu_from"])
    assert np.allclose(back["value"], want["value"])
    assert list(back["relation"]) == list(want["relation"])
    assert list(back["clock_untrusted"]) == list(want["clock_untrusted"])
    if suffix == ".json":
        (r,) = load_results(path)
        assert isinstance(r, ctxbench.MatrixResult)
        assert r.relation == full.relation
        assert np.array_equal(r.samples_us, full.samples_us, equal_nan=True)
        assert r.topology["order"].tolist() == full.topology["order"].tolist()
        assert r.topology["smt_siblings"][0].tolist() == full.topology["smt_siblings"][0].tolist()
    with pytest.raises(TypeError, match="xgraph"):
        full.save(tmp_path / "m.xgraph")


def test_a_broken_matrix_file_is_refused_naming_the_field(
    full: ctxbench.MatrixResult, tmp_path: Path
) -> None:
    path = tmp_path / "m.json"
    full.save(path)
    doc = json.loads(path.read_text())
    doc["results"][0]["relation"][1] = "next-door"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"m.json: result 0 \(matrix\): relation\[1\]"):
        ctxbench.load(path)


@ONE_CPU
def test_out_writes_the_file(tmp_path: Path) -> None:
    out = tmp_path / "m.csv"
    r = ctxbench.matrix(ALLOWED[:1], out=out, **QUICK)
    assert len(ctxbench.load(out)) == int(r.repetitions_made.sum())
    with pytest.raises(OSError):
        ctxbench.matrix(ALLOWED[:1], out=tmp_path / "missing" / "m.json", **QUICK)


@ONE_CPU
def test_the_cli_draws_the_figure_in_the_plot_style(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    from ctxbench.cli import main

    png = tmp_path / "m.png"
    args = ["matrix", "--cpus", str(ALLOWED[0]), "-N", "1", "--min-time", "0.001"]
    assert main([*args, "--no-progress", "--plot", str(png)]) == 0
    assert imread(png).shape[1] == round(7.16 * 300), "a page wide at 300 dpi"


def test_progress_reports_every_cell(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    ctxbench.matrix(CPUS, **{**QUICK, "progress": "force"})
    err = capsys.readouterr().err
    n = len(CPUS) ** 2
    assert f"{n}/{n}" in err and "cell" in err


# --- big machines, from described hosts ----------------------------------------------------

LEVEL = {
    "same-cpu": 2.0,
    "smt-sibling": 3.0,
    "shared-l2": 5.0,
    "shared-llc": 8.0,
    "same-package": 12.0,
    "cross-package": 20.0,
}


def synthetic(root: Path, host: str | None = None, every: int = 1) -> ctxbench.MatrixResult:
    """A matrix of the described machine at ``root`` with made-up numbers (a level per
    relation), as ctxbench.matrix would return it; ``every``: keep one cell in that many
    (class mode's gaps)."""
    t = _topology.table(root)
    codes = t.pop("relations")
    cpus = t["cpus"][t["allowed"]]
    at = {int(c): i for i, c in enumerate(t["cpus"])}
    pairs = [(int(a), int(b)) for a in cpus for b in cpus][::every]
    rel = [_core.RELATIONS[codes[at[a], at[b]]] for a, b in pairs]
    lat = np.array([LEVEL[r] for r in rel])
    n = len(pairs)
    samples = np.vstack([lat * 0.99, lat * 1.01])
    ints = lambda v: np.full(n, v, dtype=np.int64)  # noqa: E731
    r = ctxbench.MatrixResult(
        **{"engine": "thread", "transport": "futex", "size_kb": 0, "repetitions": 2},
        **{"precision": None, "max_time": None, "warmup": 0, "min_time": 0.001},
        **{"record_hops": False, "per_class": None, "passes": 1, "memory_node": "auto"},
        cpus=cpus,
        started_unix_s=1.8e9,
        topology=t,
        cpu_from=np.array([a for a, _ in pairs]),
        cpu_to=np.array([b for _, b in pairs]),
        relation=rel,
        numa_distance=ints(-1),
        pass_index=ints(0),
        started_s=np.arange(n) * 0.05,
        elapsed_s=np.full(n, 0.05),
        latency_us=lat,
        min_us=lat * 0.99,
        ci_low=lat * 0.99,
        ci_high=lat * 1.01,
        cv=np.full(n, 0.01),
        verdict=["stable"] * n,
        stopped=["repetitions"] * n,
        repetitions_made=ints(2),
        samples_us=samples,
        raw_samples_us=samples + 1,
        overhead_samples_us=np.ones_like(samples),
        below_resolution=np.zeros(n, dtype=bool),
        switches_per_hop=np.ones(n),
        migrations=ints(0),
        work_verified=np.ones(n, dtype=bool),
        cpus_seen=np.array(pairs),
        memory_node_asked=ints(-1),
        memory_node_seen=ints(-1),
        clock_offset_bound_ns=np.full(n, np.nan),
        clock_untrusted=np.zeros(n, dtype=bool),
        wake_us=None,
        warnings=[],
        metadata={"hostname": host} if host else {},
    )
    return r


def test_a_big_machine_reads_in_topology_order(tmp_path: Path, described: Described) -> None:
    r = synthetic(described("intel-2s-smt2"))
    # Through a file, as a user would plot it later.
    r.save(tmp_path / "m.json")
    df = ctxbench.load(tmp_path / "m.json")
    cpus, m = grid(df)
    assert cpus[:4] == [0, 8, 1, 9]
    assert m[0, 1] == LEVEL["smt-sibling"] and m[0, 2] == LEVEL["shared-llc"]
    assert m[0, 8] == LEVEL["cross-package"]
    s = class_summary(df)
    assert list(s["relation"]) == ["same-cpu", "smt-sibling", "shared-llc", "cross-package"]
    text = format_matrix(df)
    assert text.splitlines()[0].split()[:4] == ["from\\to", "0", "8", "1"]
    assert "cross-package" in text


def test_the_figure_draws_the_topology_and_the_classes(described: Described) -> None:
    pytest.importorskip("matplotlib")
    fig = ctxbench.plot.matrix(synthetic(described("intel-2s-smt2")))
    heatmap, classes, colorbar = fig.axes
    assert heatmap.get_xlabel() == "wakee CPU (to)"
    # 16 CPUs in 8 cores: 7 boundaries (one of them the package's), each a row and a column.
    assert len(heatmap.lines) == 2 * 7
    widths = sorted({round(line.get_linewidth(), 1) for line in heatmap.lines})
    assert widths == [0.4, 1.6], "cores light, the package heavy (its LLC is the package's)"
    assert len(classes.get_yticklabels()) == 4
    assert "µs per switch" in colorbar.get_ylabel()
    amd = ctxbench.plot.matrix(synthetic(described("amd-1s-2ccx"), every=3)).axes[0]
    # The CCX boundary at the LLC's width; cells not measured are left blank.
    assert 0.9 in {round(line.get_linewidth(), 1) for line in amd.lines}
    assert np.ma.is_masked(amd.images[0].get_array())


def test_fleet_frames_draw_machines_side_by_side(described: Described) -> None:
    pytest.importorskip("matplotlib")
    frames = []
    for name, host in (("intel-2s-smt2", "big"), ("vm-no-caches", "small")):
        df = synthetic(described(name)).to_frame()
        frames.append(df.assign(host=host, machine=f"id-{host}", worker=f"w-{host}"))
    df = ctxbench.concat(frames)
    fig = ctxbench.plot.matrix(df)
    assert len(fig.axes) == 2 + 1 + 1, "two heatmaps, one summary, one colour bar"
    assert fig.axes[0].get_title().startswith("big")
    assert set(class_summary(df)["machine"]) == {"id-big", "id-small"}
    text = format_matrix(df)
    assert "# id-big" in text and "# id-small" in text
