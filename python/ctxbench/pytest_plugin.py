"""pytest plugin: a ``ctxbench`` fixture that measures like the module and records results.

    def test_ring(ctxbench):
        r = ctxbench.ring([2, 16], size_kb=64)
        assert r.work_verified.all()

``pytest --ctxbench-save results.json`` writes every recorded result at the end of the
session, each with the test's node id in ``metadata["test"]``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import ctxbench

SAVE_SUFFIXES = (".json", ".csv", ".parquet")
RESULTS = pytest.StashKey[list[tuple[str, Any]]]()


class Recorder:
    """The ``ctxbench`` fixture: the module's measuring functions, recording each result."""

    def __init__(self, nodeid: str, sink: list[tuple[str, Any]]) -> None:
        self.nodeid = nodeid
        self._sink = sink
        self.results: list[Any] = []

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # Looked up per call, so a function added to (or patched into) ctxbench is what runs.
        function = getattr(ctxbench, name, None)
        if function is None:
            raise AttributeError(f"this version of ctxbench has no {name}()")
        result = function(*args, **kwargs)
        self.results.append(result)
        self._sink.append((self.nodeid, result))
        return result

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


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--ctxbench-save")
    # Checked now: a bad path found at the end of the session would lose every result.
    if path and Path(path).suffix.lower() not in SAVE_SUFFIXES:
        raise pytest.UsageError(f"--ctxbench-save {path}: use a .json, .csv or .parquet file name")
    config.stash[RESULTS] = []


# Named through the decorator so the function does not shadow the ctxbench module here.
@pytest.fixture(name="ctxbench")
def ctxbench_fixture(request: pytest.FixtureRequest) -> Recorder:
    """Measure with ``ctxbench.lat_ctx``/``ring``/``pingpong`` and record the results."""
    return Recorder(request.node.nodeid, request.config.stash[RESULTS])


def _tagged(nodeid: str, result: Any) -> Any:
    # A copy: the test's result object keeps the metadata it was returned with.
    return dataclasses.replace(result, metadata={**result.metadata, "test": nodeid})


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--ctxbench-save")
    if path:
        from .files import save

        recorded = session.config.stash.get(RESULTS, [])
        save([_tagged(nodeid, r) for nodeid, r in recorded], path)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    path = config.getoption("--ctxbench-save")
    if path:
        recorded = config.stash.get(RESULTS, [])
        terminalreporter.write_line(f"ctxbench: saved {len(recorded)} results to {path}")
