from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import ctxbench
from ctxbench import _history

if TYPE_CHECKING:
    from dask_cluster import Cluster

# Runs of one test must not widen another's intervals through the machine's run history
# (ctxbench._history): off unless a test turns it on with a store of its own.
os.environ["CTXBENCH_HISTORY"] = "off"
# Nor may the suite keep its runs in the user's results store (ctxbench.store): each test
# process keeps them in a store of its own (a directory only this user may use), removed
# at the end; `user_store_unchanged` checks that the user's was not touched.
SUITE_STORE = Path(tempfile.mkdtemp(prefix="ctxbench-suite-store-"))
os.environ["CTXBENCH_STORE"] = str(SUITE_STORE / "store.sqlite3")
# And a process of the suite that drops $CTXBENCH_STORE finds its default store there too,
# never in the user's data directory: `user_store_unchanged` fails if one did.
USER_DATA = [Path.home() / ".local" / "share"]
if os.path.isabs(os.environ.get("XDG_DATA_HOME", "")):
    USER_DATA.append(Path(os.environ["XDG_DATA_HOME"]))
os.environ["XDG_DATA_HOME"] = str(SUITE_STORE / "data")
# At exit: the plugin keeps the session's runs after every fixture has ended.
atexit.register(shutil.rmtree, SUITE_STORE, True)
# The suite tests this machine: a described host is named by the tests that want one.
os.environ.pop("CTXBENCH_SYSFS", None)
# Conditions of a machine with nothing else to run (the `kept` fixture's).
QUIET = _history.Conditions(load=0.0)


def pytest_configure(config: pytest.Config) -> None:
    # Registered here, not in pyproject.toml, so that CI's run of the tests outside the
    # checkout (the wheel at the lowest versions) knows it too.
    config.addinivalue_line(
        "markers",
        "slow: real Dask clusters, notebook execution, cgroups, rings of hundreds, long "
        "repetitions; left out of the quick loop `pytest -m 'not slow'`, run by CI",
    )


# Tests check properties, not speed: keep every repetition tiny.
FAST = {"min_time": 0.002, "repetitions": 3, "warmup": 0}
# A fleet sweep's grid in the fleet tests: one ring size on one CPU.
FLEET_GRID = {"procs": [2], "placements": ["single"], "progress": False, **FAST}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A Dask scheduler on 127.0.0.1 for a fleet test to start its workers on
    (``dask_cluster.Cluster``, in ``tmp_path``); it and every worker are killed at the end."""
    from dask_cluster import Cluster

    c = Cluster(tmp_path)
    try:
        c.start_scheduler()
        yield c
    finally:
        c.close()


def checkout_state() -> dict[str, str] | None:
    """Each file git sees as changed or untracked in the checkout holding the tests (ignored
    ones aside: build output, caches) with a digest of its content; None outside a git
    checkout or without git (CI's stage 5 runs a copy of the tests from the installed wheel).
    A rename is its two paths (``--no-renames``): -z writes a renamed entry's old path as an
    entry of its own."""
    here = Path(__file__).resolve().parent
    try:
        p = subprocess.run(["git", "-C", str(here), "status", "--porcelain=v1", "-z",
                            "--untracked-files=all", "--no-renames"],
                           capture_output=True, check=False)  # fmt: skip
    except OSError:  # no git on this machine
        return None
    if p.returncode != 0:
        return None
    top = subprocess.run(["git", "-C", str(here), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    state = {}
    for entry in p.stdout.decode(errors="replace").split("\0"):
        if len(entry) > 3:
            path = Path(top) / entry[3:]
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "-"
            state[entry[3:]] = f"{entry[:2]} {digest}"
    return state


@pytest.fixture(scope="session", autouse=True)
def checkout_unchanged() -> Iterator[None]:
    """Fails the session if the suite changed the checkout: tests write only under
    tmp_path."""
    before = checkout_state()
    yield
    after = checkout_state()
    if before is None or after is None:
        return
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"the suite changed the checkout (write under tmp_path): {changed}"


def user_store_state() -> dict[str, tuple[int, int, int]]:
    """Every file in the user's default results store directories (``~/.local/share/ctxbench``
    and ``$XDG_DATA_HOME/ctxbench`` as the user set it; the store, its ``-wal`` and ``-shm``
    files) and the suite's default one, with its size, modification time and inode."""
    state = {}
    for place in [p / "ctxbench" for p in USER_DATA] + [SUITE_STORE / "data" / "ctxbench"]:
        for path in sorted(place.glob("*")) if place.is_dir() else []:
            st = path.lstat()
            state[str(path)] = (st.st_size, st.st_mtime_ns, st.st_ino)
        state[str(place)] = (int(place.exists()), 0, 0)
    return state


@pytest.fixture(scope="session", autouse=True)
def user_store_unchanged() -> Iterator[None]:
    """Fails the session if the suite touched the user's results store, or a process of it
    fell back to a default store (tests keep runs in ``SUITE_STORE`` or a store under their
    ``tmp_path``). Another program writing the user's store meanwhile fails it too: on a
    shared machine, run the suite where nothing else uses the store."""
    before = user_store_state()
    yield
    after = user_store_state()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, (
        f"the suite wrote the user's results store or fell back to a default one: {changed}"
    )


def children(pid: int | None = None) -> set[int]:
    """Pids whose parent is ``pid`` (this process where None), zombies included."""
    me = str(os.getpid() if pid is None else pid)
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            found.add(int(entry))
    return found


STORE_FILES = (".sqlite3", ".sqlite3-wal", ".sqlite3-shm")


def _target(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "(closed)"


def open_fds() -> set[int]:
    """This process's descriptors, but a results store's (its file, log and index): a
    process keeps its store open across runs on purpose (``store.kept_open``)."""
    fds = set()
    for fd in os.listdir("/proc/self/fd"):
        target = _target(int(fd))  # "(closed)": listdir's own, closed since
        if target != "(closed)" and not target.endswith(STORE_FILES):
            fds.add(int(fd))
    return fds


@pytest.fixture
def no_leaks() -> Iterator[None]:
    """Fails the test if it leaves a child process or a file descriptor behind."""
    fds, kids = open_fds(), children()
    yield
    assert children() - kids == set(), "child processes left behind"
    leaked = open_fds() - fds
    assert not leaked, f"file descriptors leaked: {[_target(fd) for fd in sorted(leaked)]}"


@pytest.fixture(scope="session")
def results() -> list[ctxbench.RingResult]:
    """Two small ring results of different sizes and placements, for the file tests."""
    return [
        ctxbench.lat_ctx([2, 3], size_kb=0, **FAST),
        ctxbench.ring([2], size_kb=4, placement="single", **FAST),
    ]


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run history of the test's own (a results store in a directory of its own in
    ``tmp_path``), every run in the same conditions (``QUIET``): what a run
    reads back then depends on nothing else on the machine."""
    where = tmp_path / "history"
    where.mkdir(mode=0o700)
    monkeypatch.setenv(_history.ENV, "on")
    monkeypatch.setenv("CTXBENCH_STORE", str(where / "store.sqlite3"))
    monkeypatch.setattr(_history, "conditions", lambda: QUIET)
    monkeypatch.setattr(_history, "_warned", set())
    return where


# A described host's sysfs root, by profile name (tests/hosts.py).
Described = Callable[[str], Path]


@pytest.fixture
def described(tmp_path: Path) -> Described:
    """Writes the described host ``name`` of tests/hosts.py under ``tmp_path`` and gives its
    sysfs root: ``described("intel-xeon-guest")``."""
    import hosts  # here: a child that imports tests.conftest has no tests/ on its path

    return lambda name: hosts.write(name, tmp_path / "hosts")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A directory on a 64 KiB tmpfs (root only), unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                             capture_output=True, check=False)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def _cap_sys_nice() -> bool:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> 23 & 1)
    return False


needs_cap = pytest.mark.skipif(not _cap_sys_nice(), reason="real-time policies need CAP_SYS_NICE")
