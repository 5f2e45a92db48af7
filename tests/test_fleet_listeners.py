"""Nothing of a Dask cluster listens where it should not: the fleet guide's own commands, the
tests' cluster and the guide's LocalCluster keep every listener (the scheduler's and workers'
TCP ports and their HTTP servers, ``/health`` and ``/metrics``) on the address asked for, as
``ss -ltnp`` lists them."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
from dask_cluster import Cluster, listening

pytestmark = pytest.mark.slow

distributed = pytest.importorskip(
    "distributed", reason="fleet runs need distributed: pip install 'ctxbench[fleet]'"
)

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "fleet.md"


def _on_loopback_only(found: list[str]) -> None:
    # A scheduler, a worker (and its nanny where it has one): TCP and HTTP each.
    assert len(found) >= 4, found
    assert all(address.startswith("127.0.0.1:") for address in found), found


def _guide_commands() -> tuple[list[str], list[str]]:
    """The guide's one-machine scheduler and worker command lines, as words."""
    if not GUIDE.is_file():
        pytest.skip("not a checkout: no docs/")
    lines = [
        shlex.split(line)
        for line in GUIDE.read_text().splitlines()
        if line.startswith(("dask scheduler --host 127.0.0.1", "dask worker tcp://127.0.0.1"))
    ]
    assert len(lines) == 2, lines
    scheduler, worker = sorted(lines, key=lambda words: words[1] != "scheduler")
    return scheduler[1:], worker[1:]


def test_the_guides_commands_listen_on_the_loopback_address_only(tmp_path: Path) -> None:
    scheduler, worker = _guide_commands()
    # Its ports taken as they come (a test may not count on 8786 and 8787 being free).
    ports = {"8786": "0", "127.0.0.1:8787": "127.0.0.1:0"}
    c = Cluster(tmp_path)
    try:
        c.start_scheduler_with([ports.get(word, word) for word in scheduler])
        address = "tcp://127.0.0.1:8786"
        c.start_worker_with("$(hostname)", [c.address if w == address else w for w in worker])
        _on_loopback_only(listening({p.pid for p in c.procs.values()}))
    finally:
        c.close()


def test_the_tests_cluster_listens_on_the_loopback_address_only(tmp_path: Path) -> None:
    c = Cluster(tmp_path)
    try:
        c.start_scheduler()
        c.start_workers({"w1": {}})
        _on_loopback_only(listening({p.pid for p in c.procs.values()}))
    finally:
        c.close()


def test_the_guides_local_cluster_listens_on_the_loopback_address_only() -> None:
    from distributed import Client, LocalCluster

    before = listening({os.getpid()})
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        with Client(cluster):
            found = [a for a in listening({os.getpid()}) if a not in before]
    _on_loopback_only(found)
