"""The `ctxbench` command line: lat_ctx's output format, its flags, LMBENCH_SCHED, the
measuring and the research-workflow subcommands, errors and --help."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FAST
from test_compare import steady

import ctxbench
from ctxbench import _core, files, xgraph
from ctxbench.cli import main

DATA = Path(__file__).parent / "data"
# conftest's FAST as flags.
FAST_FLAGS = ["-N", str(FAST["repetitions"]), "-W", "0", "--min-time", str(FAST["min_time"])]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxbench", *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_lat_ctx_prints_lmbench_format_on_stdout() -> None:
    p = run_cli("lat-ctx", *FAST_FLAGS, "-s", "16", "2", "4", "8")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert re.fullmatch(r'"size=16k ovr=\d+\.\d\d', lines[0])
    assert [line.split()[0] for line in lines[1:]] == ["2", "4", "8"]
    # Two decimals as lat_ctx prints them; more below 0.1 µs (a point below resolution).
    assert all(re.fullmatch(r"\d+ -?\d+\.\d{2,}", line) for line in lines[1:])


@pytest.mark.parametrize(
    ("sched", "placement"),
    [("SINGLE", "single"), ("UNIQUE", "spread"), ("BALANCED", "balanced"), ("DEFAULT", "default")],
)
def test_lmbench_sched_is_honoured_unless_a_flag_says_otherwise(sched: str, placement: str) -> None:
    p = run_cli("lat-ctx", *FAST_FLAGS, "--json", "2", env={"LMBENCH_SCHED": sched})
    assert json.loads(p.stdout)["results"][0]["placement"] == placement
    p = run_cli("lat-ctx", *FAST_FLAGS, "--json", "--placement", "default", "2",
                 env={"LMBENCH_SCHED": sched})  # fmt: skip
    assert json.loads(p.stdout)["results"][0]["placement"] == "default"


def test_lmbench_sched_custom_is_lmbench3s_cpu_list() -> None:
    """lmbench3's ``CUSTOM <cpus>`` places participants on the CPUs named, in turn."""
    p = run_cli("lat-ctx", *FAST_FLAGS, "--json", "2", env={"LMBENCH_SCHED": "CUSTOM 0 0"})
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["results"][0]["placement"] == "[0, 0]"
    p = run_cli("lat-ctx", *FAST_FLAGS, "2", env={"LMBENCH_SCHED": "CUSTOM"})
    assert p.returncode == 2 and "CUSTOM takes CPU numbers" in p.stderr


def test_how_points_stopped_is_one_line_a_run_and_each_point_under_v() -> None:
    """Every point's stop sentence on stderr was most runs' output here: one summary line a
    run, each point's sentence with -v (and in the result: stop_line())."""
    capped = ["--precision", "0.001", "--max-time", "0.02", "--min-time", "0.002", "-W", "0"]
    p = run_cli("ring", *capped, "2", "3")
    assert p.returncode == 0, p.stderr
    (stopped,) = [line for line in p.stderr.splitlines() if "stopped:" in line]
    assert stopped.startswith("ctxbench: stopped: 2 of 2 points by ")
    assert stopped.endswith("(asked ±0.1%); each point: -v, or result.stop_line()")
    assert "raise max_time" not in p.stderr
    p = run_cli("ring", *capped, "-v", "2", "3")
    (stopped,) = [line for line in p.stderr.splitlines() if "stopped:" in line]
    assert stopped.count(" s; ") == 1 and "2: " in stopped and "3: " in stopped


def test_an_unpinned_run_says_why_it_swings_and_a_pinned_one_does_not() -> None:
    unpinned = run_cli("lat-ctx", *FAST_FLAGS, "2")
    pinned = run_cli("lat-ctx", *FAST_FLAGS, "--placement", "single", "2")
    assert unpinned.returncode == 0 and pinned.returncode == 0
    hint = "ctxbench: hint: unpinned: "
    assert [line for line in unpinned.stderr.splitlines() if line.startswith(hint)] == [
        hint + "the share of hops that cross CPUs (slow) varies run to run; pin: --placement single"
    ]
    assert hint not in pinned.stderr
    # Fibers resume each other on one thread: no hop crosses CPUs, pinned or not.
    fibers = run_cli("ring", "--engine", "fiber", *FAST_FLAGS, "2")
    assert fibers.returncode == 0 and hint not in fibers.stderr


def test_bad_input_exits_2_naming_the_problem() -> None:
    p = run_cli("lat-ctx", *FAST_FLAGS, "1")
    assert p.returncode == 2 and "procs" in p.stderr
    p = run_cli("lat-ctx", *FAST_FLAGS, "2", env={"LMBENCH_SCHED": "SOMETIMES"})
    assert p.returncode == 2 and "LMBENCH_SCHED" in p.stderr


def test_help_shows_every_default_and_no_escaped_percent() -> None:
    from ctxbench.cli import parser

    (commands,) = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    for name, sub in commands.choices.items():
        assert "%%" not in sub.format_help(), name
        for action in sub._actions:
            flag = isinstance(action, (argparse._StoreTrueAction, argparse._StoreConstAction))
            if not action.option_strings or flag or action.help is None:
                continue
            if action.default in (None, False, argparse.SUPPRESS):
                continue
            shown = sub._get_formatter()._expand_help(action)
            assert "default" in shown, (name, action.option_strings, shown)


@pytest.mark.parametrize("command", ["lat-ctx", "ring", "pipe", "info", "sweep", "plot", "compare"])
def test_help_explains_every_flag(command: str) -> None:
    p = run_cli(command, "--help")
    assert p.returncode == 0
    options = p.stdout.split("options:", 1)[1]
    # Every option line carries its own explanation (argparse puts it on the same line, or
    # the next line when the flag is long).
    entries = re.findall(r"^  (-\S.*?)(?=^  -|\Z)", options, re.S | re.M)
    assert entries
    for entry in entries:
        assert len(entry.split()) > 2 or entry.startswith("-h"), entry


# The measuring subcommands


def test_engine_and_transport_choices_are_the_cores() -> None:
    from ctxbench.cli import parser

    with pytest.raises(SystemExit):
        parser().parse_args(["ring", "--engine", "greenlet", "2"])
    for engine, transports in _core.TRANSPORTS.items():
        for transport in transports:
            args = parser().parse_args(["ring", "--engine", engine, "--transport", transport, "2"])
            assert (args.engine, args.transport) == (engine, transport)


def test_cli_pipe_prints_perfs_fields() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ctxbench", "pipe", "-l", "5000", "-T"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "between two threads" in out
    assert {"usecs/op", "ops/sec", "usecs/switch"} <= {
        " ".join(line.split()[1:]) for line in out.splitlines() if line.strip()[:1].isdigit()
    }


def test_cli_ring_names_engine_and_transport() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ctxbench", "ring", "--engine", "thread", "--transport", "futex",
         "--json", "-N", "2", "--min-time", "0.002", "2"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    (d,) = json.loads(out)["results"]
    assert (d["engine"], d["transport"]) == ("thread", "futex")


def test_info_command_prints_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxbench.cli import main

    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "kernel" in out and "clocksource" in out and "ctxbench_version" in out


# The research-workflow subcommands


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "base.json"
    assert (
        main(["sweep", "--procs", "2", "3", "--sizes", "0", "4", "--out", str(out), *FAST_FLAGS])
        == 0
    )
    return out


def test_sweep_writes_and_prints(
    swept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(json.loads(swept.read_text())["results"]) == 4
    # Resumed: nothing measured again, the same four points printed.
    assert (
        main(
            [
                "sweep",
                "--procs",
                "2",
                "3",
                "--sizes",
                "0",
                "4",
                "--out",
                str(swept),
                "--no-progress",
                *FAST_FLAGS,
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    # Said: every point was there, and how to measure again.
    assert "every point was already in" in captured.err and "to measure again" in captured.err
    out = captured.out.splitlines()
    # A table: a header, then one row per point in the grid's order.
    assert out[0].split() == [
        "engine", "transport", "placement", "size", "P", "procs", "median", "µs", "CV", "%",
        "verdict",
    ]  # fmt: skip
    assert len(out) == 1 + 4
    assert [row.split()[:6] for row in out[1:]] == [
        ["process", "pipe", "default", size, "1", procs]
        for size in ("0k", "4k")
        for procs in ("2", "3")
    ]
    for row in out[1:]:
        float(row.split()[6])
        float(row.split()[7])
    assert len(json.loads(swept.read_text())["results"]) == 4
    # A grid larger than the file: what was kept is counted (in a copy: others read swept).
    grown = tmp_path / "grown.json"
    grown.write_bytes(swept.read_bytes())
    argv = ["sweep", "--procs", "2", "3", "4", "--sizes", "0", "--out", str(grown)]
    assert main([*argv, "--no-progress", *FAST_FLAGS]) == 0
    assert "2 of 3 points were already in" in capsys.readouterr().err


def test_sweep_xgraph_one_block_per_series(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sweep", "--procs", "2", "3", "--sizes", "0", "4", "--out", str(swept)]
    assert main([*argv, "--no-progress", "--xgraph", *FAST_FLAGS]) == 0
    out = capsys.readouterr().out
    blocks = out.split("\n\n")
    assert len(blocks) == 2
    assert blocks[0].splitlines()[0].startswith('"size=0k ovr=')
    assert blocks[1].splitlines()[0].startswith('"size=4k ovr=')
    assert [line.split()[0] for line in blocks[0].splitlines()[1:]] == ["2", "3"]
    # lat_ctx's own format: ctxbench (and lmbench's tools) read it back.
    df = xgraph.read(out)
    assert sorted(set(zip(df["size_kb"], df["procs"]))) == [(0, 2), (0, 3), (4, 2), (4, 3)]


def test_info_help_describes_the_command() -> None:
    text = run_cli("info", "--help").stdout
    assert "Print this machine's metadata" in text and "cache sizes" in text


def test_sweep_needs_out() -> None:
    with pytest.raises(SystemExit):
        main(["sweep", "--procs", "2"])


@pytest.mark.parametrize("kind", ["lat_ctx", "compare", "sizes", "distribution"])
def test_plot(swept: Path, tmp_path: Path, kind: str) -> None:
    fig = tmp_path / f"{kind}.png"
    assert main(["plot", str(swept), "-o", str(fig), "--kind", kind]) == 0
    assert fig.read_bytes().startswith(b"\x89PNG")


def _drawn(monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    """The figure `ctxbench plot` would save (and the path), instead of saving it."""
    from ctxbench.plot._style import StyledFigure

    saved: list[tuple[Any, str]] = []
    monkeypatch.setattr(StyledFigure, "savefig", lambda fig, path, **kw: saved.append((fig, path)))
    assert main(["plot", *args]) == 0
    (only,) = saved
    return only[0]


def test_plot_two_files_one_series_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = str(DATA / "sweep-a.json"), str(DATA / "sweep-b.json")
    fig = _drawn(monkeypatch, a, b, "-o", str(tmp_path / "f.png"))
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {"sweep-a.json", "sweep-b.json"} <= set(labels)
    # Before/after: a column per size, medians above the ratio of each point.
    pdf = str(tmp_path / "f.pdf")
    fig = _drawn(monkeypatch, a, b, "--kind", "compare", "--size", "column", "-o", pdf)
    assert len(fig.axes) == 4 and fig.get_size_inches()[0] == 3.5
    assert "sweep-a.json → sweep-b.json" in " ".join(fig._suptitle.get_text().split())
    # Files of one name in two folders go by their paths.
    (tmp_path / "x").mkdir()
    copy = tmp_path / "x" / "sweep-a.json"
    copy.write_bytes(Path(a).read_bytes())
    fig = _drawn(monkeypatch, a, str(copy), "--log", "-o", str(tmp_path / "f.png"))
    labels = [t.get_text().replace("\n", "") for t in fig.legends[0].get_texts()]
    assert {a, str(copy)} <= set(labels)
    assert fig.axes[0].get_yscale() == "log"


def test_plot_a_matrix_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sample = str(DATA / "matrix-sample.json")
    pdf = str(tmp_path / "m.pdf")
    fig = _drawn(monkeypatch, sample, "--kind", "matrix", "--size", "column", "-o", pdf)
    assert fig.get_size_inches()[0] == 3.5
    assert len([ax for ax in fig.axes if ax.images]) == 1
    # Two files: two matrices side by side, named by their files.
    big = str(DATA / "matrix-synthetic.csv")
    fig = _drawn(monkeypatch, sample, big, "--kind", "matrix", "-o", str(tmp_path / "m.png"))
    titles = [ax.get_title() for ax in fig.axes if ax.images]
    assert titles == ["matrix-sample.json", "matrix-synthetic.csv"]


def test_compare_with_itself(swept: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(swept), str(swept)]) == 0
    out = capsys.readouterr().out
    # One run a side: how runs differ is assumed, not seen, so never "no change" within 2 %,
    # even against itself.
    assert "0 slower, 0 faster, 0 no change, 4 inconclusive" in out
    # Each point says why. The reason is the machine's: on a busy one a run speaks for no other
    # at all; earlier runs of the point in the suite's store may give the run level instead of
    # the assumed one, and at load 14 on 2 CPUs a net figure fell to 0 (all seen).
    why = [line.split(": ", 2) for line in out.splitlines() if line.startswith("inconclusive: ")]
    assert len(why) == 4 and all(len(w) == 3 and w[2].strip() for w in why), out


def test_compare_regression_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "base.csv"
    new = tmp_path / "new.csv"
    frame = steady(ctxbench.lat_ctx([2], **{**FAST, "repetitions": 8}).to_frame())
    files.save(frame, base)
    files.save(frame.assign(value=frame["value"] * 1.5), new)
    assert main(["compare", str(base), str(new), "--threshold", "0.05"]) == 1
    assert "slower (regressed)" in capsys.readouterr().out
    assert main(["compare", str(base), str(new), "--threshold", "0.6"]) == 0


def test_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.xgraph"
    bad.write_text('"size=0k ovr=1\n2 oops\n')
    assert main(["plot", str(bad), "-o", str(tmp_path / "x.png")]) == 2
    assert "line 2" in capsys.readouterr().err


def test_missing_matplotlib_exit_2(
    swept: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["plot", str(swept), "-o", str(tmp_path / "x.png")]) == 2
    assert "pip install 'ctxbench[analysis]'" in capsys.readouterr().err


def test_version() -> None:
    p = run_cli("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"ctxbench {ctxbench.__version__}", p


def test_a_reader_that_goes_away_is_no_error() -> None:
    # `ctxbench info | head`: the reader closes before ctxbench has written everything.
    p = subprocess.Popen(
        [sys.executable, "-m", "ctxbench", "info"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()
    assert p.wait(timeout=60) == 141
    assert p.stderr.read() == b""


@pytest.mark.parametrize(
    ("args", "said", "not_said"),
    [
        (["ring", "--engine", "thread", "--transport", "yield", "2"], "use --placement single",
         "placement='single'"),
        (["ring", "--cpu", "0", "2"], "--cpu: only meaningful with --placement single",
         "error: cpu:"),
        (["lat-ctx", "-s", "-1", "2"], "-s: must be between 0", "size_kb"),
    ],
)  # fmt: skip
def test_errors_speak_in_flags_not_python(args: list[str], said: str, not_said: str) -> None:
    p = run_cli(*args, *FAST_FLAGS)
    assert p.returncode == 2, p.stderr
    assert said in p.stderr and not_said not in p.stderr, p.stderr


def test_fiber_latencies_keep_their_digits() -> None:
    p = run_cli("ring", "--engine", "fiber", *FAST_FLAGS, "2", "8")
    assert p.returncode == 0, p.stderr
    for line in p.stdout.splitlines()[1:]:
        # Net values of a few ns (below the resolution under load: negative) keep digits:
        # at least two significant ones, trailing zeros included ("0.0100" has three).
        value = line.split()[1].lstrip("-")
        significant = value.replace(".", "").lstrip("0")
        assert float(value) != 0 and len(significant) >= 2, line


# Every output is an input: what a subcommand's --json prints, load, compare and plot read.
JSON_RUNS = {
    "lat-ctx": (["lat-ctx", *FAST_FLAGS, "--json", "2", "3"], "lat_ctx"),
    "ring": (["ring", "--engine", "thread", *FAST_FLAGS, "--json", "2"], "lat_ctx"),
    "pipe": (["pipe", "--placement", "single", "--max-time", "0.05", "--json"], "compare"),
    "pipe -l": (["pipe", "-l", "1000", "--json"], "compare"),
    "matrix": (["matrix", "--cpus", "0", *FAST_FLAGS[:2], "--min-time", "0.002",
                "--no-progress", "--json"], "matrix"),
}  # fmt: skip


@pytest.mark.parametrize("command", JSON_RUNS)
def test_every_json_output_is_an_input(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, kind = JSON_RUNS[command]
    capsys.readouterr()
    assert main(argv) == 0
    printed = tmp_path / "printed.json"
    printed.write_text(capsys.readouterr().out)
    # The document `save` writes for the same result, byte for byte.
    (r,) = ctxbench.result.load_results(printed)
    saved = tmp_path / "saved.json"
    r.save(saved)
    assert saved.read_text() == printed.read_text()
    df = ctxbench.load(printed)
    points = df.groupby(list(ctxbench.frame.POINT_KEY)).ngroups
    assert points >= 1
    assert len(ctxbench.compare(printed, printed)) == points
    assert main(["compare", str(printed), str(saved)]) == 0
    figure = tmp_path / "f.png"
    assert main(["plot", str(printed), "-o", str(figure), "--kind", kind]) == 0
    assert figure.read_bytes().startswith(b"\x89PNG")


def test_the_scheduling_policy_flags_reach_ring_pipe_and_matrix() -> None:
    p = run_cli("ring", *FAST_FLAGS, "--json", "--policy", "batch", "--nice", "4", "2")
    assert p.returncode == 0, p.stderr
    record = json.loads(p.stdout)["results"][0]
    assert (record["policy"], record["priority"], record["nice"]) == ("batch", 0, 4)
    p = run_cli("pipe", "-l", "1000", "--json", "--policy", "idle")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["results"][0]["policy"] == "idle"
    # The matrix takes no deadline parameters; a refusal is the core's message.
    p = run_cli("matrix", "--policy", "rr", "--nice", "2", "--cpus", "0", "--no-progress")
    assert p.returncode != 0 and 'nice: policy "rr" has no nice' in p.stderr
    assert "--dl-runtime" not in run_cli("matrix", "--help").stdout


@pytest.mark.parametrize(
    "args",
    [
        ["ring", "-s", "1048576", "100000"],
        ["ab", "ring -s 1048576 --procs 100000", "ring --procs 2"],
        ["plan", "--pilot", "2", "-s", "1048576", "100000"],
    ],
)
def test_a_ring_too_big_for_the_memory_is_one_line_and_exit_2(args: list[str]) -> None:
    """100,000 participants of 1 GiB each fit no machine: the pre-check's MemoryError is
    said in one line, with the exit status of every other refusal."""
    p = run_cli(*args)
    assert p.returncode == 2, p.stderr
    # The last line (another measurement may hold the machine's lock: a line on waiting).
    last = p.stderr.splitlines()[-1]
    assert last.startswith("ctxbench: error: ") and "Traceback" not in p.stderr, p.stderr
    assert "MiB is available" in last, p.stderr


def test_the_figure_says_what_it_counts() -> None:
    """A ring of 4 or more makes about 1.39 switches a hop here (wake-up preemption): the
    figure is per hop, as lat_ctx's, and nothing said so; --per-switch prints per switch."""
    from dataclasses import replace

    import numpy as np

    from ctxbench import report

    r = ctxbench.ring([2, 4], **{**FAST, "placement": "single"})
    counted = replace(r, switches_per_hop=np.array([1.0, 1.4]), switch_source=["kernel"] * 2)
    notes = [line.text for line in report.lines(counted) if line.kind == "note"]
    assert [n.split(":")[0] for n in notes] == ["4 procs"]
    assert notes[0].startswith("4 procs: 1.40 context switches per hop: the figure is µs per hop")
    per_switch = xgraph.read(counted.to_xgraph(per_switch=True))["value"].tolist()
    # xgraph prints two decimals.
    assert per_switch == pytest.approx([r.latency_us[0], r.latency_us[1] / 1.4], abs=0.006)
    p = run_cli("ring", *FAST_FLAGS, "--placement", "single", "--per-switch", "2")
    assert p.returncode == 0, p.stderr
    # No switch counted is not known, not a count of 0 to divide by (ZeroDivisionError in CI).
    uncounted = replace(r, switches_per_hop=np.array([0.0, 0.0]))
    assert [line for line in report.lines(uncounted) if line.kind == "note"] == []
    assert np.isnan(report.per_switch(uncounted)).all()


@pytest.mark.parametrize("command", ["ring", "lat-ctx"])
def test_recorded_hops_print_their_percentiles(command: str) -> None:
    """`ring --record-hops` printed no percentiles (only --json held them)."""
    p = run_cli(command, *FAST_FLAGS, "--placement", "single", "--record-hops", "2")
    assert p.returncode == 0, p.stderr
    (hops,) = [line for line in p.stderr.splitlines() if "hops (wake to run)" in line]
    assert re.fullmatch(
        r"ctxbench: 2 procs: hops \(wake to run\) p50 \S+, p99 \S+, p99\.9 \S+, max \S+ µs", hops
    )


def test_recorded_hops_print_their_percentiles_on_sweep_and_matrix(tmp_path: Path) -> None:
    """`sweep` and `matrix` took --record-hops and printed no percentiles."""
    out = tmp_path / "s.json"
    argv = ["sweep", *FAST_FLAGS, "--procs", "2", "--sizes", "0", "4", "--record-hops"]
    p = run_cli(*argv, "--placements", "single", "--no-progress", "--out", str(out))
    assert p.returncode == 0, p.stderr
    hops = [line for line in p.stderr.splitlines() if "hops (wake to run)" in line]
    assert [re.sub(r": hops.*", "", line) for line in hops] == [
        f"ctxbench: process/pipe single size={k}k P=1 2 procs" for k in (0, 4)
    ], p.stderr
    assert all(re.search(r"p50 \S+, p99 \S+, p99\.9 \S+, max \S+ µs$", h) for h in hops), hops
    # The percentiles are columns of the table, and load back from a table file.
    df = ctxbench.load(out)
    assert {"hop_p50_us", "hop_p999_us", "hop_max_us"} <= set(df.columns)
    csv = tmp_path / "s.csv"
    files.save(df, csv)
    assert ctxbench.load(csv)["hop_max_us"].tolist() == pytest.approx(df["hop_max_us"].tolist())
    cpu = str(sorted(os.sched_getaffinity(0))[0])
    p = run_cli("matrix", "--cpus", cpu, "-N", "1", "--min-time", "0.001", "--record-hops",
                "--no-progress")  # fmt: skip
    assert p.returncode == 0, p.stderr
    (hops,) = [line for line in p.stderr.splitlines() if "hops (wake to run)" in line]
    assert re.fullmatch(
        rf"ctxbench: {cpu}->{cpu}: hops \(wake to run\) p50 \S+, p99 \S+, p99\.9 \S+ µs", hops
    )


def test_pipe_records_hops_and_runs_beside_neighbours(tmp_path: Path) -> None:
    """`ctxbench pipe` refused --record-hops and --interference: the peer of `chrt -f 10 perf
    bench sched pipe` under a hog had no shell path."""
    argv = ["pipe", "-l", "2000", "--placement", "single", "--record-hops"]
    p = run_cli(*argv, "--interference", "hogs=1")
    assert p.returncode == 0, p.stderr
    assert "usecs/op mean beside neighbours (perf's: total time / loops)" in p.stdout
    (hops,) = [line for line in p.stderr.splitlines() if "hops (wake to run)" in line]
    assert hops.startswith("ctxbench: ping-pong: hops (wake to run) p50 ")
    assert "ctxbench: ping-pong: beside neighbours: median " in p.stderr
    p = run_cli(*argv, "--json")
    (rec,) = json.loads(p.stdout)["results"]
    assert set(rec["hop_percentiles_us"]) == {"p50", "p90", "p99", "p99.9", "max"}
    assert rec.get("interference") is None
    path = tmp_path / "p.json"
    path.write_text(p.stdout)
    (back,) = ctxbench.result.load_results(path)
    assert back.hop_percentiles_us["p99"][0] == rec["hop_percentiles_us"]["p99"][0]
