"""A Dask cluster for tests: a `dask scheduler` and named `dask worker` processes on
127.0.0.1, each in a process group of its own, started and killed here, every listener on
127.0.0.1 (``--host`` and ``--dashboard-address``: the worker's and the scheduler's HTTP
servers listen on every address without the second); and what a set of processes listens
on, as ``ss`` lists it."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import children

START_TIMEOUT = 60.0
# Where every listener of a test cluster is: the scheduler's and workers' TCP and HTTP.
LOCAL = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]


class Cluster:
    """A scheduler and workers as separate processes, each in its own process group so that
    killing one kills what it started too."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.file = tmp / "scheduler.json"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.address = ""

    def _spawn(
        self, name: str, args: list[str], env: dict[str, str] | None = None, prefix: tuple = ()
    ) -> None:
        with open(self.tmp / f"{name}.log", "wb") as log:
            self.procs[name] = subprocess.Popen(
                [*prefix, sys.executable, "-m", "dask", *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
                start_new_session=True,
                cwd=self.tmp,
            )

    def _wait(self, ready: Any, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready():
            dead = {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}
            assert not dead, f"exited while waiting for {what}: {dead}"
            assert time.monotonic() < deadline, f"{what} not up in {START_TIMEOUT} s"
            time.sleep(0.05)

    def start_scheduler(self) -> None:
        self.start_scheduler_with(["scheduler", *LOCAL, "--port", "0", "--no-dashboard"])

    def start_scheduler_with(self, args: list[str]) -> None:
        """``dask <args>`` (a scheduler's), its address read from its scheduler file."""
        self._spawn("scheduler", [*args, "--scheduler-file", str(self.file)])
        self._wait(self.file.exists, "the scheduler file")
        time.sleep(0.05)  # written in one go, but let the writer finish
        self.address = json.loads(self.file.read_text())["address"]

    def start_workers(
        self, workers: dict[str, dict[str, str]], *extra: str, prefix: tuple = ()
    ) -> None:
        """Start workers (name -> extra environment) and wait until all are registered;
        ``prefix`` runs them under a command (``taskset -c 0``)."""
        for name, env in workers.items():
            args = ["worker", "--scheduler-file", str(self.file), "--nthreads", "1", *LOCAL]
            args += ["--name", name, "--no-dashboard", "--no-nanny", *extra]
            self._spawn(name, args, env, prefix)
        self.wait_for(set(workers))

    def start_worker_with(self, name: str, args: list[str]) -> None:
        """``dask <args>`` (a worker's, named ``name``), waited for until registered."""
        self._spawn(name, args)
        self.wait_for({name})

    def wait_for(self, names: set[str]) -> None:
        """Until the workers ``names`` are registered with the scheduler."""
        import distributed

        with distributed.Client(self.address, set_as_default=False) as client:
            self._wait(lambda: names <= self.names(client), f"workers {sorted(names)}")

    @staticmethod
    def names(client: Any) -> set[str]:
        return {str(w["name"]) for w in client.scheduler_info()["workers"].values()}

    def kill(self, name: str) -> None:
        proc = self.procs.pop(name)
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()

    def close(self) -> None:
        for name in [n for n in self.procs if n != "scheduler"] + ["scheduler"]:
            if name in self.procs:
                self.kill(name)


def process_tree(pids: set[int]) -> set[int]:
    """``pids`` and every process descended from them."""
    seen: set[int] = set()
    todo = set(pids)
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo |= children(pid)
    return seen


def listening(pids: set[int]) -> list[str]:
    """The local addresses (``127.0.0.1:43891``, ``0.0.0.0:8787``, ``[::]:8787``, ``*:8787``)
    on which the processes ``pids`` and their descendants listen for TCP, as ``ss -ltnp``
    lists them."""
    if shutil.which("ss") is None:
        pytest.skip("ss (iproute2) is not installed")
    tree = process_tree(pids)
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    return [
        line.split()[3]
        for line in out.splitlines()
        if {int(p) for p in re.findall(r"pid=(\d+)", line)} & tree
    ]
