"""The run history attacked: planted links, others' directories and files, lines that are
not ours, a FIFO, an endless line, values out of range, no home. Each leaves the run
measuring, nothing but our own file touched, and one warning naming the path and why."""

from __future__ import annotations

import json
import math
import os
import stat
import threading
import time
import warnings
from pathlib import Path

import pytest
from conftest import QUIET

import ctxbench
from ctxbench import _history, _history_file

META = {"hostname": "h", "cpu_model": "c", "kernel": "k", "ctxbench_version": "v"}
POINT = _history.point("procs=2")
NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file another's")


def _file(kept: Path) -> Path:
    path = _history.file_path(META)
    assert path is not None and path.parent == kept
    return path


def _round_trip() -> list[str]:
    """One run remembered and read back; the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _history.remember(META, [POINT], [2.0], [0.02], QUIET)
        _history.earlier(META, [POINT[0]], QUIET)
    return [str(w.message) for w in caught]


def test_a_symlink_planted_at_the_history_file_is_never_followed(
    kept: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Longer than the old trim's threshold, which then cut the target to its last lines.
    secret = tmp_path_factory.mktemp("root-only") / "secret"
    secret.write_bytes((b"x" * 99 + b"\n") * 30_000)
    before = secret.read_bytes()
    _file(kept).symlink_to(secret)
    said = _round_trip()
    assert secret.read_bytes() == before
    assert len(said) == 1 and str(_file(kept)) in said[0] and "a symlink" in said[0]


def test_a_directory_others_can_write_to_holds_no_history(
    kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = kept / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(_history.ENV, str(shared))
    said = _round_trip()
    assert list(shared.iterdir()) == []
    assert len(said) == 1 and f"{shared}:" in said[0] and "lets others in" in said[0]
    # Sticky, as /tmp and /dev/shm are: others may not replace our file, but they may fill
    # the directory and take the history's names first. A history has no reason to be there.
    shared.chmod(0o1777)
    _history._warned.clear()
    said = _round_trip()
    assert list(shared.iterdir()) == []
    assert len(said) == 1 and "lets others write in it (sticky or not)" in said[0]


def test_a_symlinked_directory_holds_no_history(
    kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = kept / "real"
    real.mkdir()
    (kept / "link").symlink_to(real)
    monkeypatch.setenv(_history.ENV, str(kept / "link"))
    said = _round_trip()
    assert list(real.iterdir()) == [] and len(said) == 1 and "a symlink" in said[0]


@as_root
def test_a_directory_or_file_of_another_user_is_not_used(
    kept: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    theirs = tmp_path_factory.mktemp("other") / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, NOBODY, NOBODY)
    monkeypatch.setenv(_history.ENV, str(theirs))
    said = _round_trip()
    assert list(theirs.iterdir()) == [] and f"owned by uid {NOBODY}" in said[0]
    monkeypatch.setenv(_history.ENV, str(kept))
    _history._warned.clear()
    _file(kept).write_text("")
    os.chown(_file(kept), NOBODY, NOBODY)
    said = _round_trip()
    assert _file(kept).read_text() == "" and f"owned by uid {NOBODY}" in said[0]


def test_a_hard_link_at_the_history_file_is_not_written(
    kept: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("other") / "elsewhere"
    elsewhere.write_text("mine\n")
    os.link(elsewhere, _file(kept))
    said = _round_trip()
    assert elsewhere.read_text() == "mine\n" and "2 hard links" in said[0]


BAD_LINES = [
    b"\xff",
    b"[" * 100_000,
    b'{"t": %d, "p": "%s", "y": %s, "s": 0.01}' % (time.time(), POINT[0].encode(), b"9" * 401),
    b'{"t": %d, "p": "%s", "y": NaN, "s": 0.01}' % (time.time(), POINT[0].encode()),
    b'{"t": true, "p": "%s", "y": 0.1, "s": 0.01}' % POINT[0].encode(),
    b'{"t": 1, "p": "%s", "y": 0.1, "s": 0.01, "zz": 1}' % POINT[0].encode(),
    b'"just a string"',
    b" " * 600,
]


def test_lines_not_ours_are_skipped_with_one_warning_naming_file_and_line(kept: Path) -> None:
    _history.remember(META, [POINT], [2.0], [0.02], QUIET)
    path = _file(kept)
    with open(path, "ab") as f:
        f.write(b"\n".join(BAD_LINES) + b"\n")
    with pytest.warns(UserWarning) as said:
        got = _history.earlier(META, [POINT[0]], QUIET)[0]
    assert got is not None and got[0] == [math.log(2.0)]
    assert len(said) == 1
    assert f"{path}: line 2: not UTF-8; {len(BAD_LINES)} line(s)" in str(said[0].message)
    # The next write leaves them out; nothing more to say after it.
    _history.remember(META, [POINT], [2.0], [0.02], QUIET)
    assert len(path.read_bytes().splitlines()) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _history._warned.clear()
        assert len(_history.earlier(META, [POINT[0]], QUIET)[0][0]) == 2  # type: ignore[index]


def test_a_measurement_runs_whatever_the_history_holds(kept: Path) -> None:
    path = _history.file_path(ctxbench.api.result_metadata())
    assert path is not None
    path.write_bytes(b"\n".join(BAD_LINES) + b"\n")
    with pytest.warns(UserWarning, match="not UTF-8"):
        r = ctxbench.lat_ctx([2], placement="single", min_time=0.002, max_time=0.05)
    assert r.latency_us[0] > 0


def test_the_history_file_is_ours_alone_whatever_the_umask(kept: Path) -> None:
    old = os.umask(0)
    try:
        _history.remember(META, [POINT], [2.0], [0.02], QUIET)
    finally:
        os.umask(old)
    assert stat.S_IMODE(_file(kept).stat().st_mode) == 0o600
    _file(kept).chmod(0o666)
    _history.remember(META, [POINT], [2.0], [0.02], QUIET)
    assert stat.S_IMODE(_file(kept).stat().st_mode) == 0o600


def test_a_fifo_at_the_history_path_neither_hangs_a_run_nor_is_used(kept: Path) -> None:
    os.mkfifo(_file(kept))
    said: list[str] = []
    worker = threading.Thread(target=lambda: said.extend(_round_trip()), daemon=True)
    worker.start()
    worker.join(timeout=60)
    if worker.is_alive():  # let the blocked open go, so that the thread ends
        os.close(os.open(_file(kept), os.O_RDWR | os.O_NONBLOCK))
    assert not worker.is_alive(), "the run waited on the FIFO"
    assert said and "not a regular file" in said[0]


def test_an_endless_line_is_cut_back_and_never_read_whole(
    kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(kept)
    path.write_bytes(b"1" * (2 * _history_file.MAX_BYTES))
    read = []
    pread = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: read.append(n) or pread(fd, n, at))
    with pytest.warns(UserWarning, match="longer than 512 bytes"):
        _history.earlier(META, [POINT[0]], QUIET)
        _history.remember(META, [POINT], [2.0], [0.02], QUIET)
    assert max(read) <= _history_file.MAX_BYTES
    assert path.stat().st_size < 1000, "cut back at the first write"
    assert _history.earlier(META, [POINT[0]], QUIET)[0] is not None


def _line(**fields: object) -> str:
    return json.dumps({"t": time.time(), "p": POINT[0], "y": 0.7, "s": 0.01, "l": 0.0, **fields})


@pytest.mark.parametrize(
    "fields",
    [
        {"t": time.time() + 10 * 24 * 3600},  # never ages out
        {"s": 1e-300},  # a weight that drowns every other run
        {"s": 0.0},
        {"s": 5.0},
        {"y": 1e308},
        {"y": -1e308},
        {"y": 31.0},
        {"l": -1.0},
        {"st": 2.0},
        {"p": "x" * 16},
        {"w": "\x1b[2J"},
    ],
)
def test_values_out_of_range_or_type_are_not_ours(kept: Path, fields: dict) -> None:
    _file(kept).write_text("\n".join([_line(), _line(), _line(), _line(**fields)]) + "\n")
    with pytest.warns(UserWarning, match=f"line 4: field '{next(iter(fields))}'"):
        got = _history.earlier(META, [POINT[0]], QUIET)[0]
    assert got is not None and len(got[0]) == 3


def test_poisoned_runs_cannot_blow_up_the_interval(kept: Path) -> None:
    # Five good runs 2 % apart, two poisoned but in range: far off and sure of themselves.
    good = [_line(y=0.7 + d, l=0.0) for d in (0.0, 0.02, -0.02, 0.01, -0.01)]
    bad = [_line(y=y, s=1e-6, l=0.0) for y in (-25.0, 25.0)]
    _file(kept).write_text("\n".join(good + bad) + "\n")
    history = _history.earlier(META, [POINT[0]], QUIET)[0]
    assert history is not None and len(history[0]) == 7
    level = ctxbench._core.run_level(*history)
    assert level is not None and level["sd"] < 0.03


def test_without_a_home_there_is_no_history_and_nothing_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (_history.ENV, "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_history, "_warned", set())
    monkeypatch.chdir(tmp_path)
    entry = tmp_path / "pw-home"

    class Pw:
        pw_dir = str(entry)

    monkeypatch.setattr(_history_file.pwd, "getpwuid", lambda uid: Pw)
    for home in ("", "/nonexistent-home", "relative"):
        monkeypatch.setenv("HOME", home)
        with pytest.warns(UserWarning, match="no home directory"):
            _history.remember(META, [POINT], [2.0], [0.02], QUIET)
        assert list(tmp_path.iterdir()) == []
        _history._warned.clear()
    # The password entry's home where $HOME names none; XDG_CACHE_HOME only when absolute.
    entry.mkdir()
    _history.remember(META, [POINT], [2.0], [0.02], QUIET)
    assert len(list((entry / ".cache" / "ctxbench").iterdir())) == 1
    monkeypatch.setenv("XDG_CACHE_HOME", "cache")
    _history.remember(META, [POINT], [2.0], [0.02], QUIET)
    assert not (tmp_path / "cache").exists()


def test_a_full_file_is_cut_back_to_its_newest_runs_of_the_day(kept: Path) -> None:
    day_old = _line(t=time.time() - 2 * _history.MAX_AGE_S)
    fresh = [_line(y=0.7 + k * 1e-6) for k in range(_history_file.MAX_BYTES // len(day_old))]
    _file(kept).write_text("\n".join([day_old, *fresh]) + "\n")
    _history.remember(META, [POINT], [2.0], [0.02], QUIET)
    lines = _file(kept).read_text().splitlines()
    assert _file(kept).stat().st_size <= _history_file.KEEP_BYTES + len(lines[-1]) + 1
    assert day_old not in lines and lines[-2] == fresh[-1]
    assert json.loads(lines[-1])["y"] == math.log(2.0)


# --- where $CTXBENCH_HISTORY may point -------------------------------------------------------


def _said_of(where: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Why the history at ``where`` is not used, as ``ctxbench history`` reads it (reading
    only: nothing is created, wherever it points)."""
    monkeypatch.setenv(_history.ENV, where)
    s = _history.summary(META, QUIET)
    assert s.path is None, f"{where}: used, as {s.path}"
    return str(s.why)


@pytest.mark.parametrize(
    ("where", "words"),
    [
        ("/", "holds"),
        ("/sys/fs/cgroup", "holds"),
        ("/dev/shm", "lets others write in it (sticky or not)"),
        ("/proc", "holds"),
    ],
)
def test_a_system_directory_holds_no_history(
    where: str, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.path.isdir(where):
        pytest.skip(f"no {where} here")
    said = _said_of(where, monkeypatch)
    assert said.startswith(f"{where}: not a directory of the history's own") and words in said


def test_a_directory_holding_other_files_holds_no_history(
    kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (kept / "id_ed25519").write_text("key\n")
    said = _round_trip()
    assert len(said) == 1 and "1 entry that are no history files ('id_ed25519')" in said[0]
    assert sorted(p.name for p in kept.iterdir()) == ["id_ed25519"]


def test_a_directory_named_by_the_variable_is_never_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ssh = tmp_path / "root" / ".ssh"
    ssh.parent.mkdir()
    monkeypatch.setenv(_history.ENV, str(ssh))
    said = _round_trip()
    assert not ssh.exists()
    assert len(said) == 1 and f"{ssh}: no such directory" in said[0] and "mkdir" in said[0]


def test_a_tilde_is_the_home_directory_and_a_relative_path_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    (home / "hist").mkdir(parents=True, mode=0o700)
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(_history, "_warned", set())
    monkeypatch.setenv(_history.ENV, "~/hist")
    assert _round_trip() == []
    assert len(list((home / "hist").iterdir())) == 1
    for relative in ("hist", "./hist", "~nosuchuser-ctxbench/hist"):
        monkeypatch.setenv(_history.ENV, relative)
        _history._warned.clear()
        said = _round_trip()
        assert len(said) == 1 and "not an absolute path" in said[0], relative
    assert list(cwd.iterdir()) == []


def test_control_characters_in_the_path_are_refused_and_never_echoed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxbench.cli import main

    monkeypatch.setattr(_history, "_warned", set())
    where = tmp_path / "a\x1b]0;owned\x07\rb"
    where.mkdir(mode=0o700)
    monkeypatch.setenv(_history.ENV, str(where))
    said = _round_trip()
    assert list(where.iterdir()) == []
    assert len(said) == 1 and "control characters" in said[0] and "\\x1b]0;owned" in said[0]
    assert main(["history"]) == 0
    out = capsys.readouterr()
    assert "\\x1b" in out.out
    assert not any(c in out.out + out.err for c in "\x1b\x07\r")


def test_clear_removes_whatever_is_at_a_history_files_name(
    kept: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxbench.cli import main

    fifo = _file(kept)
    os.mkfifo(fifo)
    assert _round_trip()  # a FIFO: no history for a run
    link = kept / _history_file.name("elsewhere")
    link.symlink_to(kept.parent)
    assert main(["history", "--clear"]) == 0
    assert list(kept.iterdir()) == [] and kept.parent.is_dir()
    assert capsys.readouterr().out == "".join(f"removed {p}\n" for p in sorted([fifo, link]))


@as_root
def test_clear_leaves_another_users_file_and_says_so(
    kept: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxbench.cli import main

    theirs = _file(kept)
    theirs.write_text("")
    os.chown(theirs, NOBODY, NOBODY)
    assert main(["history", "--clear"]) == 1
    assert capsys.readouterr().out == f"left {theirs}: uid {NOBODY}'s, not this user's\n"
    assert theirs.exists()
