from __future__ import annotations

import errno
import itertools
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import FAST

import ctxbench
from ctxbench import files, metadata

TINY = {"min_time": FAST["min_time"], "warmup": FAST["warmup"]}


class CountingRing:
    """A ``measure`` for sweep: a real tiny ring measurement, counted, optionally interrupted."""

    def __init__(self, interrupt_on: int | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.interrupt_on = interrupt_on
        self.real = ctxbench.ring

    def __call__(self, procs: list[int], **kwargs: Any) -> ctxbench.RingResult:
        self.calls.append({"procs": procs, **kwargs})
        if len(self.calls) == self.interrupt_on:
            raise KeyboardInterrupt
        return self.real(procs, **kwargs)


def records(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["results"]


def test_real_sweep_frame(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    df = ctxbench.sweep(
        procs=[2, 3], sizes_kb=[0, 4], repetitions=3, out=out, progress=False, **TINY
    )
    assert len(df) == 2 * 2 * 3
    assert sorted(df.groupby(["size_kb", "procs"]).size().index.tolist()) == [
        (0, 2),
        (0, 3),
        (4, 2),
        (4, 3),
    ]
    assert len(records(out)) == 4
    assert len(files.load(out)) == len(df)


def test_each_point_is_written_as_it_finishes(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    seen: list[int] = []
    ring = CountingRing()

    def spy(procs: list[int], **kwargs: Any) -> ctxbench.RingResult:
        # The file holds every earlier point before the next one starts.
        seen.append(len(records(out)))
        return ring(procs, **kwargs)

    ctxbench.sweep(procs=[2, 3, 4], repetitions=3, out=out, progress=False, measure=spy, **TINY)
    assert seen == [0, 1, 2]
    assert [r["procs"] for r in records(out)] == [[2], [3], [4]]


def test_resume_skips_finished_points(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    ring = CountingRing()
    opts: dict[str, Any] = {"out": out, "progress": False, "measure": ring, **TINY}
    first = ctxbench.sweep(procs=[2, 3], repetitions=3, **opts)
    assert len(ring.calls) == 2
    again = ctxbench.sweep(procs=[2, 3], repetitions=3, **opts)
    assert len(ring.calls) == 2
    assert again.equals(first)
    # A new procs value, size or repetition count is a new point.
    ctxbench.sweep(procs=[2, 3, 4], repetitions=3, **opts)
    assert [c["procs"] for c in ring.calls[2:]] == [[4]]
    ctxbench.sweep(procs=[2], repetitions=4, **opts)
    assert len(ring.calls) == 4
    assert len(records(out)) == 4


def test_interrupt_keeps_finished_points(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    opts: dict[str, Any] = {"repetitions": 3, "out": out, "progress": False, **TINY}
    with pytest.raises(KeyboardInterrupt):
        ctxbench.sweep(procs=[2, 3, 4, 5], measure=CountingRing(interrupt_on=3), **opts)
    assert [r["procs"] for r in records(out)] == [[2], [3]]
    assert not list(tmp_path.glob(".*.tmp")), "temporary file left behind"
    resumed = CountingRing()
    df = ctxbench.sweep(procs=[2, 3, 4, 5], measure=resumed, **opts)
    assert [c["procs"] for c in resumed.calls] == [[4], [5]]
    assert sorted(df["procs"].unique()) == [2, 3, 4, 5]


def test_grid_arguments_reach_ring(tmp_path: Path) -> None:
    ring = CountingRing()
    ctxbench.sweep(
        procs=[2],
        sizes_kb=[0, 4],
        placements=["default", "single"],
        repetitions=3,
        progress=False,
        measure=ring,
        **TINY,
    )
    assert [(c["placement"], c["size_kb"]) for c in ring.calls] == [
        ("default", 0),
        ("default", 4),
        ("single", 0),
        ("single", 4),
    ]
    assert all(c["engine"] == "process" and c["transport"] == "pipe" for c in ring.calls)
    assert all(c["min_time"] == TINY["min_time"] for c in ring.calls)


def test_the_policy_and_cgroup_axes_pass_through_and_are_part_of_the_point(
    tmp_path: Path,
) -> None:
    # The same grid under another policy or in other groups is other points: resuming under
    # one never takes the points measured under another for finished.
    out = tmp_path / "axes.json"
    grid = {"procs": [2], "sizes_kb": [0], "placements": ["single"], "progress": False, **FAST}
    batch = ctxbench.sweep(out=out, policy="batch", nice=3, **grid)
    assert batch[["policy", "nice"]].drop_duplicates().to_dict("records") == [
        {"policy": "batch", "nice": 3}
    ]
    other = ctxbench.sweep(out=out, **grid)
    assert set(other["policy"]) == {"other"}
    split = ctxbench.sweep(out=out, cgroups="split", cgroup_depth=1, **grid)
    assert split[["cgroups", "cgroup_depth"]].drop_duplicates().to_dict("records") == [
        {"cgroups": "split", "cgroup_depth": 1}
    ]
    records = json.loads(out.read_text())["results"]
    assert len(records) == 3
    assert len(ctxbench.sweep(out=out, policy="batch", nice=3, **grid)) == len(batch)
    assert len(json.loads(out.read_text())["results"]) == 3


def test_rejected_combination_propagates() -> None:
    def reject(procs: list[int], **kwargs: Any) -> ctxbench.RingResult:
        raise ValueError("engine 'fiber' cannot use transport 'pipe'")

    with pytest.raises(ValueError, match="fiber"):
        ctxbench.sweep(procs=[2], engines=["fiber"], progress=False, measure=reject)


def test_out_must_be_a_ctxbench_file(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    out.write_text("{}")
    with pytest.raises(ValueError, match="not a ctxbench results file"):
        ctxbench.sweep(procs=[2], out=out, progress=False)
    assert out.read_text() == "{}"


def test_an_out_that_cannot_be_written_fails_before_the_first_point(tmp_path: Path) -> None:
    ring = CountingRing()
    opts: dict[str, Any] = {"progress": False, "measure": ring, **TINY}
    missing = tmp_path / "missing" / "s.json"
    with pytest.raises(FileNotFoundError) as e:
        ctxbench.sweep(procs=[2], out=missing, **opts)
    assert e.value.filename == str(missing) and ".tmp" not in str(e.value)
    (tmp_path / "file").write_text("")
    under_a_file = tmp_path / "file" / "s.json"
    with pytest.raises(NotADirectoryError) as e:
        ctxbench.sweep(procs=[2], out=under_a_file, **opts)
    assert e.value.filename == str(under_a_file)
    assert ring.calls == []


def test_an_existing_out_is_checked_for_writing_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "s.json"
    files.save([], out)
    real_open = os.open

    def read_only_fs(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only_fs)
    ring = CountingRing()
    with pytest.raises(OSError) as e:
        ctxbench.sweep(procs=[2], out=out, progress=False, measure=ring, **TINY)
    assert e.value.errno == errno.EROFS and e.value.filename == str(out)
    assert ring.calls == []


@pytest.mark.parametrize("suffix", [".xgraph", ".txt", ".dat", ""])
def test_out_is_a_format_a_sweep_can_resume_from(suffix: str, tmp_path: Path) -> None:
    ring = CountingRing()
    out = tmp_path / f"s{suffix}"
    message = "keeps too little" if suffix in (".xgraph", ".txt") else "unknown suffix|no suffix"
    with pytest.raises(ValueError, match=message):
        ctxbench.sweep(procs=[2], out=out, progress=False, measure=ring, **TINY)
    assert ring.calls == [] and not out.exists()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_table_out_is_written_and_resumed(suffix: str, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow") if suffix == ".parquet" else None
    out = tmp_path / f"s{suffix}"
    ring = CountingRing()
    opts: dict[str, Any] = {"out": out, "progress": False, "measure": ring, "repetitions": 2}
    first = ctxbench.sweep(procs=[2, 3], sizes_kb=[0, 4], **opts, **TINY)
    assert len(ring.calls) == 4
    table = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert len(table) == len(first) == 4 * 2 and {"machine", "min_time"} <= set(table.columns)
    again = ctxbench.sweep(procs=[2, 3], sizes_kb=[0, 4], **opts, **TINY)
    assert len(ring.calls) == 4 and len(again) == len(first)
    ctxbench.sweep(procs=[2, 3, 4], sizes_kb=[0, 4], **opts, **TINY)
    assert [c["procs"] for c in ring.calls[4:]] == [[4], [4]]
    assert sorted(files.load(out).groupby(["size_kb", "procs"]).size().index.tolist()) == [
        (s, p) for s in (0, 4) for p in (2, 3, 4)
    ]


# What changes a point's number makes it another point: resuming measures it again.
CHANGES: list[dict[str, Any]] = [
    {"min_time": 0.003},
    {"warmup": 1},
    {"repetitions": 3},
    {"record_hops": True},
    {"timeout": 20.0},
    {"placements": ["single"]},
    {"parallel": 2},
    {"repetitions": None, "precision": 0.5, "max_time": 0.02},
    {"repetitions": None, "precision": 0.5, "max_time": 0.03},
    {"repetitions": None, "precision": 0.4, "max_time": 0.02},
    {"repetitions": None, "precision": 0.5, "max_time": 0.02, "max_repetitions": 20},
]


def test_a_point_measured_differently_is_measured_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "s.json"
    ring = CountingRing()
    base: dict[str, Any] = {"repetitions": 2, "min_time": 0.002, "warmup": 0}
    opts: dict[str, Any] = {"procs": [2], "out": out, "progress": False, "measure": ring}
    ctxbench.sweep(**opts, **base)
    for change in CHANGES:
        calls = len(ring.calls)
        ctxbench.sweep(**opts, **{**base, **change})
        assert len(ring.calls) == calls + 1, change
        ctxbench.sweep(**opts, **{**base, **change})  # the same again: done
        assert len(ring.calls) == calls + 1, change
    cpu = min(os.sched_getaffinity(0))
    for placement in ({"placements": [[cpu]]}, {"placements": ["single"], "cpu": cpu}):
        ctxbench.sweep(**opts, **{**base, **placement})
    assert len(ring.calls) == len(CHANGES) + 3
    # The same point on another machine (another installation, or this one after a reboot).
    monkeypatch.setenv(metadata.BOOT_ID_ENV, "after-a-reboot")
    ctxbench.sweep(**opts, **base)
    assert len(ring.calls) == len(CHANGES) + 4
    assert len(records(out)) == len(ring.calls)


def test_a_rewrite_keeps_the_mode_of_the_out_file(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    opts: dict[str, Any] = {"out": out, "progress": False, "repetitions": 2, **TINY}
    ctxbench.sweep(procs=[2], **opts)
    out.chmod(0o600)
    ctxbench.sweep(procs=[2, 3], **opts)
    assert len(records(out)) == 2 and stat.S_IMODE(out.stat().st_mode) == 0o600


def _hold(out: Path) -> subprocess.Popen[str]:
    """Another process running a sweep into ``out`` (holding it as a sweep does)."""
    code = "import sys; from ctxbench import grid; grid.OutFile.open(sys.argv[1]); print('held', flush=True); sys.stdin.read()"  # noqa: E501
    proc = subprocess.Popen([sys.executable, "-c", code, str(out)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_second_sweep_on_the_same_out_is_refused_until_the_first_ends(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    ring = CountingRing()
    opts: dict[str, Any] = {"out": out, "progress": False, "measure": ring, "repetitions": 2}
    holder = _hold(out)
    try:
        with pytest.raises(OSError, match=rf"another sweep \(pid {holder.pid}\)") as e:
            ctxbench.sweep(procs=[2], **opts, **TINY)
        assert e.value.errno == errno.EBUSY and e.value.filename == str(out)
        assert ring.calls == []
    finally:
        holder.kill()  # as a crash would: the kernel lets go of the lock
        holder.wait()
    ctxbench.sweep(procs=[2], **opts, **TINY)
    assert len(ring.calls) == 1 and len(records(out)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"], "lock file left behind"


def test_an_out_that_is_not_a_regular_file_fails_before_measuring(tmp_path: Path) -> None:
    from ctxbench.cli import main

    ring = CountingRing()
    opts: dict[str, Any] = {"progress": False, "measure": ring, **TINY}
    device = tmp_path / "full.json"
    device.symlink_to("/dev/full")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(PermissionError, match="a symbolic link"):
        ctxbench.sweep(procs=[2], out=device, **opts)
    with pytest.raises(ValueError, match=rf"{fifo.name}: not a regular file \(a FIFO\)"):
        ctxbench.sweep(procs=[2], out=fifo, **opts)
    assert ring.calls == [] and stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert main(["sweep", "--procs", "2", "--no-progress", "--out", "/dev/full"]) == 2


def test_the_whole_grid_is_checked_before_anything_is_measured(tmp_path: Path) -> None:
    ring = CountingRing()
    opts: dict[str, Any] = {"out": tmp_path / "s.json", "progress": False, "measure": ring}
    bad: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"engines": ["process", "fiber"], "transports": ["pipe"]}, ValueError,
         r"engine 'fiber', transport 'pipe'.*does not work with engine"),
        ({"engines": ["process", "procss"]}, ValueError, "unknown engine"),
        ({"engines": "process"}, TypeError, "engines: expected a sequence"),
        ({"placements": ["default", "nowhere"]}, ValueError, "unknown placement"),
        ({"sizes_kb": [0, -4]}, ValueError, "size_kb: must be between"),
        ({"min_tme": 0.01}, TypeError, "min_tme"),
        ({"engine": "thread"}, TypeError, "engine: a sweep sets it"),
    ]  # fmt: skip
    if len(os.sched_getaffinity(0)) > 1:  # yield needs every participant on one CPU
        bad.append(({"transports": ["pipe", "yield"]}, ValueError, "needs every participant"))
    for grid, error, message in bad:
        with pytest.raises(error, match=message):
            ctxbench.sweep(procs=[2, 3], **{**opts, **grid})
    assert ring.calls == []
    assert not opts["out"].exists(), "a refused grid leaves no empty out file"


def test_sweep_can_withhold_the_hostname(tmp_path: Path) -> None:
    from ctxbench.metadata import HOSTNAME_WITHHELD

    out = tmp_path / "s.json"
    opts: dict[str, Any] = {"out": out, "progress": False, "repetitions": 2, **TINY}
    ctxbench.sweep(procs=[2], **opts)
    assert records(out)[0]["metadata"]["hostname"] not in (None, HOSTNAME_WITHHELD)
    # Resuming with hostname=False withholds it in the records already there as well.
    ctxbench.sweep(procs=[2, 3], hostname=False, **opts)
    assert [r["metadata"]["hostname"] for r in records(out)] == [HOSTNAME_WITHHELD] * 2
    # Even when there is nothing left to measure.
    ctxbench.sweep(procs=[2], out=tmp_path / "t.json", progress=False, repetitions=2, **TINY)
    ctxbench.sweep(procs=[2], out=tmp_path / "t.json", progress=False, repetitions=2,
                   measure=CountingRing(interrupt_on=1), hostname=False, **TINY)  # fmt: skip
    assert records(tmp_path / "t.json")[0]["metadata"]["hostname"] == HOSTNAME_WITHHELD


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_hostname_false_withholds_what_a_fleet_adds_in_every_format(
    tmp_path: Path, suffix: str
) -> None:
    from ctxbench import grid
    from ctxbench.record import encode

    rec = encode(ctxbench.ring([2], repetitions=2, **TINY))
    where = {"host": "node7", "worker": "w-node7", "worker_address": "tcp://10.9.9.7:4000"}
    rec["metadata"].update(where, machine="m-1")
    out = tmp_path / f"fleet{suffix}"
    with grid.OutFile.open(out, hostname=False) as book:
        book.add(("key",), rec)
        frame = book.frame(("key",))
    text = out.read_text()
    for name in ("node7", "10.9.9.7"):
        assert name not in text and not frame.astype(str).isin([name]).any().any(), name
    if suffix == ".json":
        assert records(out)[0]["metadata"]["hostname"] == metadata.HOSTNAME_WITHHELD
    named = [c for c in metadata.HOST_FIELDS if c in frame.columns]
    assert {"host", "worker"} <= set(named)
    assert (frame[named] == metadata.HOSTNAME_WITHHELD).all().all()
    assert "m-1" in text, "machine is a hash: kept, so that resuming works"


def test_cli_no_hostname(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ctxbench.cli import main
    from ctxbench.metadata import HOSTNAME_WITHHELD

    out = tmp_path / "s.json"
    args = ["--procs", "2", "-N", "2", "-W", "0", "--min-time", "0.002", "--no-progress"]
    assert main(["sweep", *args, "--out", str(out), "--no-hostname"]) == 0
    assert records(out)[0]["metadata"]["hostname"] == HOSTNAME_WITHHELD
    flags = ["-N", "2", "-W", "0", "--min-time", "0.002", "--json", "--no-hostname"]
    capsys.readouterr()
    assert main(["ring", *flags, "2"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)["results"]
    assert rec["metadata"]["hostname"] == HOSTNAME_WITHHELD
    assert main(["pipe", "-l", "1000", "--json", "--no-hostname"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)["results"]
    assert rec["metadata"]["hostname"] == HOSTNAME_WITHHELD


def test_forced_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    ctxbench.sweep(procs=[2], repetitions=3, progress="force", **TINY)
    assert "1/1" in capsys.readouterr().err
    with pytest.raises(ValueError, match="progress"):
        ctxbench.sweep(procs=[2], progress="yes")


def test_default_transport_follows_each_engine(tmp_path: Path) -> None:
    df = ctxbench.sweep(
        procs=[2], engines=["process", "fiber"], out=tmp_path / "s.json", progress=False,
        placements=["single"], repetitions=2, min_time=0.002, warmup=0,
    )  # fmt: skip
    assert sorted(set(zip(df.engine, df.transport))) == [("fiber", "resume"), ("process", "pipe")]


def test_a_cpu_list_resumes_under_the_name_the_core_records(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    cpu = min(os.sched_getaffinity(0))
    ring = CountingRing()
    opts: dict[str, Any] = {"out": out, "progress": False, "measure": ring, **TINY}
    ctxbench.sweep(procs=[2], placements=[[cpu, cpu]], repetitions=2, **opts)
    ctxbench.sweep(procs=[2], placements=[[cpu, cpu]], repetitions=2, **opts)
    assert len(ring.calls) == 1
    assert records(out)[0]["placement"] == f"[{cpu}, {cpu}]"


class _Shell:
    """Stands in for IPython's shell in a Jupyter kernel."""

    config = {"IPKernelApp": {}}


@pytest.mark.parametrize(
    ("ci", "tty", "kernel", "shown"),
    [
        (None, True, False, True),  # a terminal
        (None, False, True, True),  # a notebook
        (None, False, False, False),  # piped to a file
        ("true", True, False, False),  # CI, even on a terminal
        ("true", False, True, False),  # CI executing a notebook
        ("false", False, True, True),
    ],
)
def test_progress_when_someone_is_watching(
    monkeypatch: pytest.MonkeyPatch, ci: str | None, tty: bool, kernel: bool, shown: bool
) -> None:
    import importlib
    import io
    import types

    progress = importlib.import_module("ctxbench._progress")

    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    stderr = io.StringIO()
    monkeypatch.setattr(stderr, "isatty", lambda: tty)
    monkeypatch.setattr("sys.stderr", stderr)
    fake = types.SimpleNamespace(get_ipython=lambda: _Shell() if kernel else None)
    monkeypatch.setitem(sys.modules, "IPython", fake)
    bar = progress.progress_bar(True, 3, "test")
    assert (bar is not None) == shown
    if bar is not None:
        bar.close()
    assert progress.progress_bar(False, 3, "test") is None
    forced = progress.progress_bar("force", 3, "test")
    assert forced is not None
    forced.close()


@pytest.mark.parametrize(
    ("axis", "value"),
    [("engines", "process"), ("placements", "single"), ("procs", 8), ("engines", {"thread"})],
)
def test_a_name_where_a_list_goes_is_a_type_error_naming_it(axis: str, value: object) -> None:
    args: dict[str, Any] = {"procs": [2], axis: value}
    expected = rf"^{axis}: expected a sequence of .*, got .* \(write {axis}=(\[|sorted\()"
    with pytest.raises(TypeError, match=expected):
        ctxbench.sweep(**args)


def test_an_endless_axis_is_refused_not_read_forever() -> None:
    with pytest.raises(ValueError, match=r"^procs: lists more than 10000 process counts"):
        ctxbench.sweep(itertools.count(2), progress=False)


def test_without_tqdm_progress_is_one_note_never_a_failure(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    code = (
        "import sys\n"
        "sys.modules['tqdm'] = sys.modules['tqdm.auto'] = None\n"
        "import ctxbench\n"
        f"for _ in range(2): ctxbench.sweep([2, 3], out={str(out)!r}, progress='force', "
        "min_time=0.002, repetitions=2, warmup=0)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("no progress bar without tqdm") == 1, p.stderr
    assert len(json.loads(out.read_text())["results"]) == 2


def test_a_full_disk_stops_the_sweep_and_keeps_every_point_written(small_disk: Path) -> None:
    out = small_disk / "s.json"
    ring = CountingRing()
    opts: dict[str, Any] = {"out": out, "progress": False, "measure": ring, "repetitions": 2}
    with pytest.raises(OSError) as e:
        ctxbench.sweep(procs=list(range(2, 60)), **opts, **TINY)
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(out)
    kept = records(out)  # whole, as the last write that fitted left it
    assert 0 < len(kept) == len(ring.calls) - 1
    assert sorted(p.name for p in small_disk.iterdir()) == ["s.json"], "temporary or lock left"


SWEEPS = {"sweep": ctxbench.sweep, "cache_sweep": ctxbench.cache_sweep}


@pytest.mark.parametrize("name", SWEEPS)
@pytest.mark.parametrize("procs", [bytearray(b"\x02"), b"\x02", memoryview(b"\x02\x03")])
def test_bytes_are_no_process_counts(name: str, procs: Any) -> None:
    with pytest.raises(TypeError, match=r"procs: expected a sequence of process counts, got "):
        SWEEPS[name](procs, progress=False)


@pytest.mark.parametrize("name", SWEEPS)
def test_a_process_count_listed_twice_is_refused_naming_it(name: str) -> None:
    # cache_sweep([2] * 100) measured 100 identical curves; sweep measured the point once
    # and returned it twice.
    message = r"procs: 2 is listed twice \(items 0 and 2\); name each of the process counts once"
    with pytest.raises(ValueError, match=message):
        SWEEPS[name]([2, 3, 2], progress=False)
    with pytest.raises(ValueError, match=r"sizes_kb: 4 is listed twice \(items 1 and 2\)"):
        SWEEPS[name]([2], [0, 4, 4], progress=False)


def test_every_axis_of_a_grid_names_each_value_once() -> None:
    for axis, values in [("engines", ["thread", "thread"]), ("placements", [[0, 1], (0, 1)]),
                         ("transports", [None, None])]:  # fmt: skip
        with pytest.raises(ValueError, match=rf"{axis}: .* is listed twice"):
            ctxbench.sweep([2], progress=False, **{axis: values})
