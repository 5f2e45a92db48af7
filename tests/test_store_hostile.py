"""The results store attacked: planted links (at the store and at the files SQLite keeps
beside it), directories others may write, another user's files, a FIFO, a foreign SQLite
file, a damaged one, one of a newer schema, no home, control characters. Each is refused
naming the path (``ctxbench store`` exits 2 with one line), and a measurement still runs,
with one warning naming it; nothing but our own store is ever written."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import warnings
from pathlib import Path

import pytest
from conftest import QUIET

import ctxbench
from ctxbench import _history, store
from ctxbench.cli import main
from ctxbench.store import _schema

META = {"hostname": "h", "cpu_model": "c", "kernel": "k", "ctxbench_version": "v"}
POINT = _history.point("procs=2")
NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file another's")


@pytest.fixture
def place(place: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's own store (conftest's ``place``), the history on and reading it."""
    monkeypatch.setenv(_history.ENV, "on")
    monkeypatch.setattr(_history, "_warned", set())
    monkeypatch.setattr(store, "_warned", set())
    return place


def _round_trip() -> list[str]:
    """One run remembered and read back through the history; the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _history.remember(META, [POINT], [2.0], [0.02], QUIET)
        _history.earlier(META, [POINT[0]], QUIET)
    return [str(w.message) for w in caught]


def _refused(path: Path, words: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``store.open`` refuses ``path`` with ``words``, and ``ctxbench store list`` says so in
    one line, exit 2."""
    with pytest.raises(store.StoreRefused, match=words) as e:
        store.open(path)
    assert str(path) in str(e.value)
    assert main(["store", "list", "--store", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "ctxbench: error:" in err


def test_a_symlink_planted_at_the_store_is_never_followed(
    place: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path_factory.mktemp("root-only") / "secret"
    secret.write_bytes(b"x" * 10_000)
    place.symlink_to(secret)
    said = _round_trip()
    assert secret.read_bytes() == b"x" * 10_000
    assert len(said) == 1 and str(place) in said[0] and "a symbolic link" in said[0]
    _refused(place, "a symbolic link", capsys)


@pytest.mark.parametrize("companion", ["-wal", "-shm", "-journal"])
def test_a_symlink_planted_beside_the_store_is_never_followed(
    place: Path, companion: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store.open(place).close()  # type: ignore[union-attr]
    for old in place.parent.glob("store.sqlite3-*"):
        old.unlink()
    target = tmp_path / "target"
    Path(f"{place}{companion}").symlink_to(target)
    _refused(place, f"a symbolic link \\(store.sqlite3{companion} beside it\\)", capsys)
    assert not target.exists()


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770])
def test_a_directory_other_users_may_write_holds_no_store(
    place: Path, mode: int, capsys: pytest.CaptureFixture[str]
) -> None:
    place.parent.chmod(mode)
    said = _round_trip()
    assert list(place.parent.iterdir()) == []
    assert len(said) == 1 and "lets other" in said[0]
    _refused(place, "not this user.s own: mode", capsys)


@as_root
def test_a_directory_or_store_of_another_user_is_not_used(
    place: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.chown(place.parent, NOBODY, NOBODY)
    _refused(place, f"owned by uid {NOBODY}", capsys)
    os.chown(place.parent, 0, 0)
    store.open(place).close()  # type: ignore[union-attr]
    os.chown(place, NOBODY, NOBODY)
    _refused(place, f"uid {NOBODY}", capsys)


def test_a_hard_link_at_the_store_is_not_used(
    place: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store.open(place).close()  # type: ignore[union-attr]
    os.link(place, place.parent / "other")
    _refused(place, "2 hard links", capsys)


def test_a_fifo_at_the_store_neither_hangs_a_run_nor_is_used(place: Path) -> None:
    os.mkfifo(place)
    said: list[str] = []
    worker = threading.Thread(target=lambda: said.extend(_round_trip()), daemon=True)
    worker.start()
    worker.join(timeout=60)
    if worker.is_alive():  # let the blocked open go, so that the thread ends
        os.close(os.open(place, os.O_RDWR | os.O_NONBLOCK))
    assert not worker.is_alive(), "the run waited on the FIFO"
    assert said and "not a regular file" in said[0]


def test_a_foreign_sqlite_file_is_refused_and_left_as_it_was(
    place: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(place) as db:
        db.execute("CREATE TABLE mine (x)")
    db.close()
    before = place.read_bytes()
    _refused(place, "not a ctxbench store", capsys)
    assert _round_trip() and place.read_bytes() == before
    # Another application's id, even without tables, is not ours either.
    place.unlink()
    with sqlite3.connect(place) as db:
        db.execute("PRAGMA application_id = 1234")
    db.close()
    _refused(place, "application_id 0x4d2", capsys)


@pytest.mark.parametrize(
    "content",
    [b"not a database at all\n" * 50, b"SQLite format 3\x00" + b"\xff" * 4096],
    ids=["text", "damaged"],
)
def test_a_damaged_store_is_refused_and_a_measurement_still_runs(
    place: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    place.write_bytes(content)
    _refused(place, "not an SQLite database|not usable", capsys)
    with pytest.warns(UserWarning, match=str(place)):
        r = ctxbench.lat_ctx([2], placement="single", min_time=0.002, max_time=0.05)
    assert r.latency_us.size == 1 and place.read_bytes() == content


def test_a_store_of_a_newer_schema_is_refused_never_written(
    place: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store.open(place).close()  # type: ignore[union-attr]
    with sqlite3.connect(place) as db:
        db.execute(f"PRAGMA user_version = {_schema.VERSION + 1}")
    db.close()
    _refused(place, f"schema {_schema.VERSION + 1} is newer", capsys)


def test_the_store_is_ours_alone_whatever_the_umask(place: Path) -> None:
    old = os.umask(0)
    try:
        _history.remember(META, [POINT], [2.0], [0.02], QUIET)
    finally:
        os.umask(old)
    for path in place.parent.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_a_store_named_in_a_missing_directory_is_not_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ssh = tmp_path / "root" / ".ssh"
    monkeypatch.setenv(store.ENV, str(ssh / "store.sqlite3"))
    monkeypatch.setenv(_history.ENV, "on")
    monkeypatch.setattr(_history, "_warned", set())
    said = _round_trip()
    assert not ssh.exists() and not ssh.parent.exists()
    assert len(said) == 1 and "one named is not made" in said[0]


def test_the_default_store_is_under_xdg_data_home_else_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(store.ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert store.default_path() == tmp_path / "xdg" / "ctxbench" / "store.sqlite3"
    with store.open() as s:  # type: ignore[union-attr]
        assert s.path == tmp_path / "xdg" / "ctxbench" / "store.sqlite3"
    assert stat.S_IMODE((tmp_path / "xdg" / "ctxbench").stat().st_mode) == 0o700
    # A relative XDG_DATA_HOME is ignored, as the XDG spec asks.
    monkeypatch.setenv("XDG_DATA_HOME", "relative")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    assert store.default_path() == tmp_path / "home/.local/share/ctxbench/store.sqlite3"
    for off in ("off", "OFF", "0", "none"):
        monkeypatch.setenv(store.ENV, off)
        assert store.default_path() is None and store.open() is None


def test_without_a_home_there_is_no_store_and_nothing_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxbench import _history_file

    for name in (store.ENV, "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(_history.ENV, "on")
    monkeypatch.setattr(_history, "_warned", set())
    monkeypatch.chdir(tmp_path)

    class Pw:
        pw_dir = str(tmp_path / "pw-home")

    monkeypatch.setattr(_history_file.pwd, "getpwuid", lambda uid: Pw)
    for home in ("", "/nonexistent-home", "relative"):
        monkeypatch.setenv("HOME", home)
        said = _round_trip()
        assert len(said) == 1 and "no home directory" in said[0]
        assert list(tmp_path.iterdir()) == []
        _history._warned.clear()


def test_control_characters_in_the_path_are_refused_and_never_echoed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    where = tmp_path / "a\x1b]0;owned\x07\rb"
    where.mkdir(mode=0o700)
    monkeypatch.setenv(store.ENV, str(where / "store.sqlite3"))
    monkeypatch.setenv(_history.ENV, "on")
    monkeypatch.setattr(_history, "_warned", set())
    said = _round_trip()
    assert list(where.iterdir()) == []
    assert len(said) == 1 and "control characters" in said[0] and "\\x1b]0;owned" in said[0]
    assert main(["history"]) == 0
    assert main(["store", "list"]) == 2
    out = capsys.readouterr()
    assert "\\x1b" in out.out + out.err
    assert not any(c in out.out + out.err for c in "\x1b\x07\r")
