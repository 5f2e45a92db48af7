"""Fleet runs against a real Dask cluster: a `dask scheduler` and named `dask worker`
processes on 127.0.0.1, started and killed here. Machines are faked with $CTXBENCH_MACHINE_ID
(another installation) and $CTXBENCH_BOOT_ID (another kernel) in a worker's environment.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import FLEET_GRID
from dask_cluster import Cluster

import ctxbench
from ctxbench import compare, files, fleet, metadata

pytestmark = pytest.mark.slow

distributed = pytest.importorskip(
    "distributed", reason="fleet runs need distributed: pip install 'ctxbench[fleet]'"
)


def points(df: Any) -> Any:
    """One row per measured point, in the order they were measured."""
    cols = ["worker", "machine", "host", "size_kb", "procs", "started", "finished"]
    return df.groupby(cols, sort=False)["latency_us"].first().reset_index().sort_values("started")


def results(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["results"]


def test_one_kernel_measures_one_point_at_a_time(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Three workers on this one kernel: w1 and w3 share an installation (one machine), w2 is
    # another machine on the same kernel (as two containers of one host are).
    cluster.start_workers(
        {
            "w1": {metadata.MACHINE_ID_ENV: "install-a"},
            "w2": {metadata.MACHINE_ID_ENV: "install-b"},
            "w3": {metadata.MACHINE_ID_ENV: "install-a"},
        }
    )
    # The client's cached scheduler_info() can list no workers (distributed >= 2025 refreshes
    # it without them): a worker missing there is not lost.
    monkeypatch.setattr(distributed.Client, "scheduler_info", lambda self, **kw: {"workers": {}})
    out = tmp_path / "fleet.json"
    df = ctxbench.sweep(sizes_kb=[0, 4], out=out, scheduler=cluster.address, **FLEET_GRID)

    table = points(df)
    assert len(table) == 4
    # One worker per machine measures; w3 stands by on w1's machine.
    assert set(table["worker"]) == {"w1", "w2"}
    assert table.groupby("worker")["machine"].nunique().tolist() == [1, 1]
    assert table["machine"].nunique() == 2
    assert df.attrs["fleet"]["standby"] == {
        "w3": table.loc[table.worker == "w1", "machine"].iloc[0]
    }
    assert set(table["host"]) == {socket.gethostname()}
    # One kernel: no two measurements overlap.
    starts, ends = table["started"].tolist(), table["finished"].tolist()
    assert all(end <= start for end, start in zip(ends, starts[1:])), table

    recs = results(out)
    assert len(recs) == 4
    for rec in recs:
        assert set(metadata.KEYS) | set(metadata.FLEET_FIELDS) <= set(rec["metadata"])
    loaded = ctxbench.load(out)
    assert {"host", "worker", "machine", "started", "finished"} <= set(loaded.columns)
    assert len(loaded) == len(df)

    # Machines side by side: a figure, and one host against another with compare.
    fig = ctxbench.plot.machines(loaded, by="worker")
    labels = _legend_labels(fig)
    assert any("w1" in t for t in labels) and any("w2" in t for t in labels)
    # By host (the default), two machines under one hostname stay two bars.
    fig = ctxbench.plot.machines(loaded)
    assert len([t for t in _legend_labels(fig) if socket.gethostname() in t]) == 2
    table = compare(fleet.select(out, "w1"), fleet.select(out, "w2"))
    assert len(table) == 2
    with pytest.raises(ValueError, match="2 machines"):
        fleet.select(loaded, socket.gethostname())  # one hostname, two machines

    # The same command again measures nothing: every point is there for its machine.
    again = ctxbench.sweep(sizes_kb=[0, 4], out=out, scheduler=cluster.address, **FLEET_GRID)
    assert results(out) == recs
    assert len(again) == len(df)


def test_lost_worker_then_resume(cluster: Cluster, tmp_path: Path) -> None:
    # Two machines (two kernels): they measure in parallel, and w2 dies mid-sweep.
    env = {
        "w1": {metadata.MACHINE_ID_ENV: "host-1", metadata.BOOT_ID_ENV: "boot-1"},
        "w2": {metadata.MACHINE_ID_ENV: "host-2", metadata.BOOT_ID_ENV: "boot-2"},
    }
    cluster.start_workers(env)
    out = tmp_path / "fleet.json"
    sizes = [0, 4, 8, 16, 32, 64]
    # Points long enough that two machines measuring side by side overlap in time.
    grid = {**FLEET_GRID, "min_time": 0.03}
    raised: list[BaseException] = []

    def run(client: Any) -> None:
        try:
            ctxbench.sweep(sizes_kb=sizes, out=out, client=client, **grid)
        except BaseException as e:
            raised.append(e)

    with distributed.Client(cluster.address, set_as_default=False) as client:
        thread = threading.Thread(target=run, args=(client,))
        thread.start()
        try:
            deadline = time.monotonic() + 60
            # w2 dies after its second point.
            while [r["metadata"]["worker"] for r in (results(out) if out.exists() else [])].count(
                "w2"
            ) < 2:
                assert thread.is_alive() and time.monotonic() < deadline, raised
                time.sleep(0.01)
            cluster.kill("w2")
        finally:
            thread.join(60)
    assert not thread.is_alive()

    assert len(raised) == 1 and isinstance(raised[0], fleet.FleetError), raised
    error = raised[0]
    assert list(error.unmeasured) == ["w2"] and not error.failed, error
    missing = error.unmeasured["w2"]
    assert missing, error
    assert "'w2'" in str(error) and all(point in str(error) for point in missing)
    assert all("process/pipe single" in point for point in missing)
    assert len(points(error.frame)) == 2 * len(sizes) - len(missing)
    # The other machine finished; every finished point is on disk.
    recs = results(out)
    by_worker = {w: [r for r in recs if r["metadata"]["worker"] == w] for w in ("w1", "w2")}
    assert len(by_worker["w1"]) == len(sizes), recs
    assert len(by_worker["w2"]) + len(missing) == len(sizes), (recs, error)
    # The machines measured side by side: a point of one overlaps a point of the other.
    spans = {
        w: [(r["metadata"]["started"], r["metadata"]["finished"]) for r in by_worker[w]]
        for w in by_worker
    }
    assert any(s1 < f2 and s2 < f1 for s1, f1 in spans["w1"] for s2, f2 in spans["w2"]), spans

    # Back with the same name and machine: the same command measures only what is missing.
    cluster.start_workers({"w2": env["w2"]})
    df = ctxbench.sweep(sizes_kb=sizes, out=out, scheduler=cluster.address, **grid)
    after = results(out)
    assert after[: len(recs)] == recs
    new = after[len(recs) :]
    assert len(new) == len(missing), (new, missing)
    assert {r["metadata"]["worker"] for r in new} == {"w2"}, new
    assert sorted(f"size={r['size_kb']}k" for r in new) == sorted(p.split()[2] for p in missing)
    assert len(points(df)) == 2 * len(sizes)


def test_other_ctxbench_version_is_refused(cluster: Cluster, tmp_path: Path) -> None:
    preload = tmp_path / "other_version.py"
    preload.write_text("import ctxbench\nctxbench.__version__ = '0.0.0+other'\n")
    cluster.start_workers({"old": {}}, "--preload", str(preload))
    out = tmp_path / "fleet.json"
    with pytest.raises(fleet.FleetError) as info:
        ctxbench.sweep(sizes_kb=[0], out=out, scheduler=cluster.address, **FLEET_GRID)
    message = str(info.value)
    assert "'old'" in message and "0.0.0+other" in message
    assert ctxbench.__version__ in message
    assert not out.exists(), "nothing measured: no empty out file left"


def test_a_fleet_sweep_writes_the_format_out_names_and_checks_the_grid_on_each_machine(
    cluster: Cluster, tmp_path: Path
) -> None:
    from ctxbench.cli import main

    cpus = sorted(os.sched_getaffinity(0))
    taskset = shutil.which("taskset")
    # A worker that may use one CPU only: the client, which may use more, cannot tell.
    cluster.start_workers({"w1": {}}, prefix=(taskset, "-c", str(cpus[0])) if taskset else ())
    out = tmp_path / "r.csv"
    args = ["sweep", "--procs", "2", "--placements", "single", "-N", "3", "-W", "0",
            "--min-time", "0.002", "--no-progress", "--scheduler", cluster.address,
            "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    assert out.read_text().startswith("benchmark,"), "not CSV"
    table = pd.read_csv(out)
    assert len(table) == 3 and set(table["worker"]) == {"w1"}
    assert len(files.load(out)) == 3
    assert main(args) == 0  # resumed: nothing measured again
    assert pd.read_csv(out)["started"].tolist() == table["started"].tolist()
    if taskset is None or len(cpus) < 2:
        return
    with pytest.raises(fleet.FleetError, match="nothing was measured: worker 'w1'.*affinity"):
        ctxbench.sweep(
            out=out, scheduler=cluster.address, **{**FLEET_GRID, "placements": [[cpus[1]]]}
        )
    assert len(pd.read_csv(out)) == 3


def test_a_fleet_sweep_is_refused_an_out_another_sweep_writes(tmp_path: Path) -> None:
    from ctxbench import grid

    out = tmp_path / "f.json"
    with grid.OutFile.open(out), pytest.raises(OSError, match="another sweep"):
        # Refused before it connects: the scheduler address is never tried.
        ctxbench.sweep(out=out, scheduler="tcp://127.0.0.1:9", **FLEET_GRID)


def test_unreachable_scheduler_fails_fast(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    start = time.monotonic()
    with pytest.raises(fleet.FleetError, match=address):
        ctxbench.sweep(scheduler=address, connect_timeout=2, **FLEET_GRID)
    assert time.monotonic() - start < 10


def test_machine_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    real = metadata.machine_identity()
    assert len(real["machine"]) == 17 and real["machine"].endswith(real["kernel"])
    # The raw ids are not published.
    with open("/proc/sys/kernel/random/boot_id") as f:
        assert f.read().strip()[:8] not in real["machine"]
    monkeypatch.setenv(metadata.MACHINE_ID_ENV, "other-install")
    other = metadata.machine_identity()
    assert other["machine"] != real["machine"] and other["kernel"] == real["kernel"]
    monkeypatch.setenv(metadata.BOOT_ID_ENV, "other-boot")
    assert metadata.machine_identity()["kernel"] != real["kernel"]


def test_scheduler_or_client_not_both() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        fleet.sweep([2], scheduler="tcp://127.0.0.1:1", client=object())


def _legend_labels(fig) -> list[str]:  # type: ignore[no-untyped-def]
    """Every legend entry of a figure, wherever its legend sits."""
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
    return [t.get_text() for leg in legends if leg is not None for t in leg.get_texts()]


def test_the_cli_exits_1_naming_an_unreachable_scheduler(tmp_path: Path) -> None:
    # Port 9 (discard) on loopback: nothing listens there in the test environment.
    address = "tcp://127.0.0.1:9"
    cmd = [sys.executable, "-m", "ctxbench", "sweep", "--procs", "2", "--out",
           str(tmp_path / "f.json"), "--no-progress", "--scheduler", address]  # fmt: skip
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "127.0.0.1:9" in p.stderr and "ctxbench: error:" in p.stderr, p.stderr


@pytest.mark.parametrize("bad", [{"connect_timeout": -1}, {"connect_timeout": 0}, {"poll": True}])
def test_a_wait_that_is_no_positive_number_of_seconds_is_named(
    tmp_path: Path, bad: dict[str, Any]
) -> None:
    (name,), out = bad.keys(), tmp_path / "fleet.json"
    with pytest.raises(ValueError, match=rf"^{name}: must be a number of seconds > 0, got"):
        ctxbench.sweep(scheduler="tcp://127.0.0.1:9", out=out, **bad, **FLEET_GRID)
    with pytest.raises(ValueError, match=rf"^{name}: must be"):
        fleet.matrix(None, {}, scheduler="tcp://127.0.0.1:9", **bad)
    assert not out.exists()


def test_a_fleet_matrix_refuses_endless_or_unordered_cpus_before_connecting() -> None:
    with pytest.raises(ValueError, match="^cpus: lists more than"):
        fleet.matrix(itertools.count(), {}, scheduler="tcp://127.0.0.1:9")
    with pytest.raises(TypeError, match="^cpus: expected a sequence of CPU ids"):
        fleet.matrix({0, 1}, {}, scheduler="tcp://127.0.0.1:9")


class _Peer:
    """A TCP server on 127.0.0.1 that is not a Dask scheduler: it answers each connection
    with `reply` once it has read a request, or with nothing at all."""

    def __init__(self, reply: bytes | None) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.reply = reply
        self.open: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.open.append(conn)
            if self.reply is not None:
                conn.recv(4096)
                conn.sendall(self.reply)

    def close(self) -> None:
        for conn in self.open:
            conn.close()
        self.sock.close()


HTTP_OK = b"HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6 Python/3.11\r\n\r\n<html></html>"
# What the scheduler's dashboard (Bokeh on Tornado) answers at /.
DASHBOARD = b"HTTP/1.1 302 Found\r\nServer: TornadoServer/6.4\r\nLocation: status\r\n\r\n"


@pytest.mark.parametrize(
    ("reply", "named"),
    [
        (HTTP_OK, "a web server answered (HTTP/1.0 200 OK, server SimpleHTTP/0.6"),
        (
            DASHBOARD,
            "a web server answered (HTTP/1.1 302 Found, server TornadoServer/6.4); this "
            "looks like the Dask dashboard",
        ),
        (None, "it accepted the connection but said nothing within 2 s"),
        (b"SSH-2.0-OpenSSH_9.6\r\n", "it answered b'SSH-2.0-OpenSSH_9.6"),
    ],
    ids=["web-server", "dashboard", "silent", "other"],
)
def test_something_else_than_a_scheduler_is_named_within_the_timeout(
    tmp_path: Path, reply: bytes | None, named: str
) -> None:
    peer = _Peer(reply)
    out = tmp_path / "fleet.json"
    start = time.monotonic()
    try:
        with pytest.raises(fleet.FleetError) as info:
            ctxbench.sweep(scheduler=peer.address, connect_timeout=2, out=out, **FLEET_GRID)
    finally:
        peer.close()
    assert f"{peer.address} is not a Dask scheduler: {named}" in str(info.value), info.value
    # Within the connect timeout (plus the time to start measuring nothing).
    assert time.monotonic() - start < 2 + 3
    assert not out.exists(), "nothing measured: no empty out file left"


def test_a_scheduler_lost_mid_sweep_is_one_error_saying_what_is_safe(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.start_workers({"w1": {}})
    out = tmp_path / "fleet.json"
    raised: list[BaseException] = []

    def run() -> None:
        try:
            ctxbench.sweep(
                sizes_kb=list(range(0, 200, 4)), out=out, scheduler=cluster.address, **FLEET_GRID
            )
        except BaseException as e:  # noqa: BLE001 - inspected below
            raised.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 60
    while not (out.exists() and len(results(out)) >= 2):
        assert thread.is_alive() and time.monotonic() < deadline, raised
        time.sleep(0.01)
    cluster.kill("scheduler")
    thread.join(60)
    assert not thread.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], fleet.FleetError), raised
    message = str(raised[0])
    saved = len(results(out))
    assert message.startswith(f"lost the Dask scheduler at {cluster.address} mid-sweep ("), message
    assert f"the {saved} points measured before are in {out}" in message, message
    assert "\n" not in message


def test_hostname_false_withholds_every_name_of_the_host(cluster: Cluster, tmp_path: Path) -> None:
    cluster.start_workers({"w1": {}})
    out = tmp_path / "fleet.json"
    df = ctxbench.sweep(
        sizes_kb=[0], out=out, scheduler=cluster.address, hostname=False, **FLEET_GRID
    )
    withheld = metadata.HOSTNAME_WITHHELD
    for column in ("host", "worker"):
        assert set(df[column]) == {withheld}, column
    for rec in results(out):
        for key in ("host", "worker", "worker_address", "hostname"):
            assert rec["metadata"][key] == withheld, key
        assert rec["metadata"]["machine"]  # a hash: kept, so that resuming works
    values = {v for rec in results(out) for v in rec["metadata"].values() if isinstance(v, str)}
    assert socket.gethostname() not in values
    # Resumed: nothing measured again.
    again = ctxbench.sweep(
        sizes_kb=[0], out=out, scheduler=cluster.address, hostname=False, **FLEET_GRID
    )
    assert len(again) == len(df)


def test_a_fleet_sweep_measures_under_the_policy_asked(cluster: Cluster, tmp_path: Path) -> None:
    cluster.start_workers({"w1": {}})
    out = tmp_path / "fleet.json"
    df = ctxbench.sweep(
        sizes_kb=[0], out=out, scheduler=cluster.address, policy="batch", nice=2, **FLEET_GRID
    )
    assert df[["policy", "nice"]].drop_duplicates().to_dict("records") == [
        {"policy": "batch", "nice": 2}
    ]
    assert {(r["policy"], r["nice"]) for r in results(out)} == {("batch", 2)}


@pytest.mark.slow  # a cluster, two matrices and a CLI run: about 25 s on 2 CPUs
def test_a_matrix_per_machine_one_table_back(
    cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two installations on this one kernel: each measures its own matrix, one at a time.
    cluster.start_workers(
        {"m1": {metadata.MACHINE_ID_ENV: "a"}, "m2": {metadata.MACHINE_ID_ENV: "b"}}
    )
    quick = {"repetitions": 1, "min_time": 0.001, "warmup": 0, "progress": False}
    # Two CPUs at most, whatever the host's size.
    cpus = sorted(os.sched_getaffinity(0))[:2]
    out = tmp_path / "matrix.json"
    df = ctxbench.matrix(cpus, scheduler=cluster.address, out=out, **quick)
    n = len(cpus)
    assert df.groupby("worker")["cpu_from"].size().to_dict() == {"m1": n * n, "m2": n * n}
    assert df["machine"].nunique() == 2 and (df["benchmark"] == "matrix").all()
    assert [rec["kind"] for rec in results(out)] == ["matrix", "matrix"]
    assert len(ctxbench.load(out)) == len(df)
    fig = ctxbench.plot.matrix(df)
    assert len(fig.axes) == 2 + 1 + 1, "two machines side by side, one summary, one colour bar"
    with pytest.raises(ValueError, match="hostname"):
        ctxbench.matrix(cpus, scheduler=cluster.address, hostname=False, **quick)

    from ctxbench.cli import main

    png = tmp_path / "m.png"
    args = ["matrix", "--cpus", ",".join(map(str, cpus)), "--scheduler", cluster.address,
            "--no-progress", "-N", "1"]  # fmt: skip
    assert main([*args, "--min-time", "0.001", "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert text.count("\n# ") + text.startswith("# ") == 2 and "same-cpu" in text
    assert png.stat().st_size > 0
    # --json prints what a .json out holds: every machine's record, read by load and compare.
    assert main([*args, "--min-time", "0.001", "--json"]) == 0
    printed = tmp_path / "printed.json"
    printed.write_text(capsys.readouterr().out)
    assert [rec["kind"] for rec in results(printed)] == ["matrix", "matrix"]
    assert ctxbench.load(printed)["machine"].nunique() == 2
    assert len(ctxbench.compare(printed, out)) == n * n


# A worker that sends back a bad record for the 4 KiB point: NaN latency, a record of another
# point, or no record at all.
HOSTILE = """
import ctxbench.fleet as fleet
# Dask imports a preload twice: wrap the real one only.
real = fleet.__dict__.setdefault("_real_measure", fleet._measure)
def _measure(task, where, version, kind="ring", deadline=None):
    rec = real(task, where, version, kind, deadline)
    if task.get("size_kb") != 4:
        return rec
    return {BAD}
fleet._measure = _measure
"""


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ('{**rec, "latency_us": [float("nan")]}', r"latency_us\[0\]: NaN"),
        ('{**rec, "procs": [3]}', r"procs: \(3,\), but the point asked was \(2,\)"),
        ('"a string"', r"expected a ring record \(a JSON object\), got str"),
    ],
    ids=["nan", "other-point", "not-a-dict"],
)
def test_a_bad_record_from_a_worker_is_its_points_failure_never_in_out(
    cluster: Cluster, tmp_path: Path, bad: str, field: str
) -> None:
    from ctxbench.cli import main

    preload = tmp_path / "hostile.py"
    preload.write_text(HOSTILE.replace("{BAD}", bad))
    cluster.start_workers({"w1": {}}, "--preload", str(preload))
    out = tmp_path / "fleet.json"
    with pytest.raises(fleet.FleetError) as info:
        ctxbench.sweep(sizes_kb=[0, 4], out=out, scheduler=cluster.address, **FLEET_GRID)
    (what,) = info.value.failed
    assert what.startswith("w1: process/pipe single size=4k"), what
    assert re.search(field, info.value.failed[what]), info.value.failed
    # Out holds the good point only, loads and resumes: the bad one is asked again.
    assert [r["size_kb"] for r in results(out)] == [0]
    assert set(ctxbench.load(out)["size_kb"]) == {0}
    args = ["sweep", "--procs", "2", "--sizes", "0", "4", "--placements", "single", "-N", "3",
            "-W", "0", "--min-time", "0.002", "--no-progress", "--scheduler", cluster.address,
            "--out", str(out)]  # fmt: skip
    assert main(args) == 1
    assert [r["size_kb"] for r in results(out)] == [0]


# A worker whose task never returns for 4 KiB, and says control characters for 12 KiB.
NEVER = """
import time
import ctxbench.fleet as fleet
real = fleet.__dict__.setdefault("_real_measure", fleet._measure)
def _measure(task, where, version, kind="ring", deadline=None):
    if task.get("size_kb") == 4:
        time.sleep(3600)
    if task.get("size_kb") == 12:
        raise RuntimeError("boom\\x1b]0;owned\\x07\\rgone\\x1b[2J")
    return real(task, where, version, kind, deadline)
fleet._measure = _measure
"""


def test_a_point_past_its_deadline_fails_naming_worker_and_point(
    cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxbench import _fleet_client

    preload = tmp_path / "never.py"
    preload.write_text(NEVER)
    cluster.start_workers({"w1": {}}, "--preload", str(preload))
    # The margin (the lock's patience and a start-up) made small on the client, which keeps
    # the deadline. The hung point goes first: no measured point has to beat a deadline so
    # shrunk on a loaded machine (a point waiting for the lock does not).
    monkeypatch.setattr(_fleet_client, "DEADLINE_MARGIN_S", 15.0)
    out = tmp_path / "fleet.json"
    before = set(threading.enumerate())
    raised: list[BaseException] = []

    def run() -> None:
        try:
            ctxbench.sweep(sizes_kb=[4, 8], out=out, scheduler=cluster.address, **FLEET_GRID)
        except BaseException as e:  # noqa: BLE001 - inspected below
            raised.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(300)  # far past the deadline (about 55 s): the old client waited forever
    assert not thread.is_alive(), "the sweep still waits for a task that never returns"
    assert len(raised) == 1 and isinstance(raised[0], fleet.FleetError), raised
    error = raised[0]
    (what,) = error.failed
    assert what.startswith("w1: process/pipe single size=4k"), what
    assert "'w1'" in error.failed[what] and "deadline" in error.failed[what], error.failed
    assert "size=4k" in error.failed[what], error.failed
    (rest,) = error.unmeasured["w1"]
    assert rest.startswith("process/pipe single size=8k"), error.unmeasured
    assert "ran a point past its deadline" in str(error)
    assert not out.exists() or results(out) == []
    # Nothing of the sweep is left running on the client side (Dask's own pool for futures'
    # callbacks, one idle thread per process from the first sweep on, is not the sweep's).
    left = [
        t
        for t in set(threading.enumerate()) - before
        if t.is_alive() and t is not thread and not t.name.startswith("Dask-Callback-Thread")
    ]
    assert not left, left


def test_worker_strings_are_escaped_in_a_fleet_error(cluster: Cluster, tmp_path: Path) -> None:
    preload = tmp_path / "never.py"
    preload.write_text(NEVER)
    cluster.start_workers({"w1": {}}, "--preload", str(preload))
    with pytest.raises(fleet.FleetError) as info:
        ctxbench.sweep(sizes_kb=[12], scheduler=cluster.address, **FLEET_GRID)
    (what,) = info.value.failed
    said = info.value.failed[what]
    for text in (str(info.value), what, said):
        assert not any(c in text for c in "\x1b\x07\r\n"), repr(text)
    assert "boom\\x1b]0;owned\\x07\\rgone" in said, said
    from ctxbench._fleet_client import SAID_CHARS
    from ctxbench._fleet_client import said as escape

    assert escape("\x1b" * 1000).endswith("(3800 more characters)")
    assert len(escape("a" * 10_000)) < SAID_CHARS + 40
