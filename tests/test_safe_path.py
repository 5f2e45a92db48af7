"""Every writer against a shared results directory: a link planted at the output's name
(aimed at a file in a directory only root may enter, or dangling there), a file of another
user's at that name, a link on the way, a directory every user may write, a directory swapped
while the file is written. Nothing but the caller's own file at the path itself is written,
and each refusal names the path and why."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import FAST

import ctxbench
from ctxbench import _core, _matrix, _safe_path, files
from ctxbench.cli import main

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file another's")
SECRET = "root's own\n"


def _never(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("measured, though the output was refused")


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file in a directory only its owner may enter."""
    private = tmp_path / "root-only"
    private.mkdir(mode=0o700)
    path = private / "secret"
    path.write_text(SECRET)
    return path


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A results directory every user may write (sticky, as /tmp is)."""
    path = tmp_path / "shared"
    path.mkdir()
    path.chmod(0o1777)
    return path


def _plant(link: Path, target: Path) -> Path:
    """``link`` -> ``target``, another user's link where this user may make it so."""
    link.symlink_to(target)
    if os.geteuid() == 0:
        os.lchown(link, NOBODY, NOBODY)
    return link


@pytest.fixture(scope="module")
def matrix_result() -> ctxbench.MatrixResult:
    cpus = sorted(os.sched_getaffinity(0))[:2]
    return ctxbench.matrix(cpus, repetitions=2, min_time=0.001, warmup=0, progress=False)


@pytest.fixture
def made(
    results: list[ctxbench.RingResult], matrix_result: ctxbench.MatrixResult, tmp_path: Path
) -> dict[str, Any]:
    """What the writers write: ring results, a matrix, and a results file to plot."""
    base = tmp_path / "base.json"
    files.save(results, base)
    return {"results": results, "matrix": matrix_result, "base": base}


def _sweep_cli(p: Path) -> int:
    return main(["sweep", "--procs", "2", "--no-progress", "--max-time", "0.02", "--out", str(p)])


# Every way ctxbench writes a file: name -> (suffix, write(made, path)).
WRITERS: dict[str, tuple[str, Callable[[dict[str, Any], Path], Any]]] = {
    **{
        f"files.save{suffix}": (suffix, lambda m, p: files.save(m["results"], p))
        for suffix in (".json", ".csv", ".parquet", ".xgraph")
    },
    "RingResult.save": (".json", lambda m, p: m["results"][0].save(p)),
    "MatrixResult.save.json": (".json", lambda m, p: m["matrix"].save(p)),
    "MatrixResult.save.csv": (".csv", lambda m, p: m["matrix"].save(p)),
    "plot.save": (".png", lambda m, p: ctxbench.plot.save(ctxbench.plot.lat_ctx(m["base"]), p)),
    "Figure.savefig": (".svg", lambda m, p: ctxbench.plot.lat_ctx(m["base"]).savefig(p)),
    "sweep(out=)": (
        ".json",
        lambda m, p: ctxbench.sweep(procs=[2], out=p, progress=False, measure=_never, **FAST),
    ),
    "ctxbench plot -o": (".png", lambda m, p: main(["plot", str(m["base"]), "-o", str(p)])),
    "ctxbench sweep --out": (".json", lambda m, p: _sweep_cli(p)),
    "ctxbench sizes --out": (
        ".json",
        lambda m, p: main(
            ["sizes", "--procs", "2", "--sizes", "0", "--rounds", "2", "--out", str(p)]
        ),
    ),
    "ctxbench matrix --out": (
        ".json",
        lambda m, p: main(["matrix", "--cpus", "0", "--no-progress", "--out", str(p)]),
    ),
    "ctxbench matrix --plot": (
        ".png",
        lambda m, p: main(["matrix", "--cpus", "0", "--no-progress", "--plot", str(p)]),
    ),
}


def _refused(writer: str, made: dict[str, Any], path: Path, capsys: Any, *words: str) -> None:
    """The writer fails to write ``path`` (an exception, or a command's exit status 2),
    naming ``path`` and saying each of ``words``."""
    if writer.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    try:
        status = WRITERS[writer][1](made, path)
    except (OSError, ValueError) as e:
        said = str(e)
    else:
        assert status == 2, f"{path}: written (status {status})"
        said = capsys.readouterr().err
    assert str(path) in said, said
    for w in words:
        assert w in said, said


@pytest.fixture
def no_measuring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_core, "cache_sweep", _never)
    monkeypatch.setattr(_matrix, "measure", _never)


@pytest.mark.parametrize("writer", WRITERS)
def test_a_planted_link_at_the_output_is_never_written_through(
    writer: str,
    made: dict[str, Any],
    secret: Path,
    shared: Path,
    no_measuring: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    link = _plant(shared / f"out{WRITERS[writer][0]}", secret)
    _refused(writer, made, link, capsys, "symbolic link")
    assert secret.read_text() == SECRET
    assert link.is_symlink()
    assert sorted(p.name for p in secret.parent.iterdir()) == ["secret"]


@pytest.mark.parametrize("writer", WRITERS)
def test_a_dangling_link_at_the_output_creates_nothing(
    writer: str,
    made: dict[str, Any],
    secret: Path,
    shared: Path,
    no_measuring: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    suffix = WRITERS[writer][0]
    link = _plant(shared / f"out{suffix}", secret.parent / f"new{suffix}")
    _refused(writer, made, link, capsys, "symbolic link")
    assert sorted(p.name for p in secret.parent.iterdir()) == ["secret"]


@as_root
@pytest.mark.parametrize("writer", WRITERS)
def test_a_file_of_another_users_is_not_replaced(
    writer: str,
    made: dict[str, Any],
    shared: Path,
    no_measuring: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    theirs = shared / f"out{WRITERS[writer][0]}"
    theirs.write_text("theirs\n")
    os.chown(theirs, NOBODY, NOBODY)
    _refused(writer, made, theirs, capsys, f"uid {NOBODY}'s")
    assert theirs.read_text() == "theirs\n" and theirs.stat().st_uid == NOBODY


def test_a_directory_every_user_may_write_without_the_sticky_bit_is_refused(
    results: list[ctxbench.RingResult], tmp_path: Path
) -> None:
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    for path in (open_dir / "r.json", open_dir / "sub" / "r.json"):
        with pytest.raises(_safe_path.UnsafePath, match="not sticky") as e:
            files.save(results, path)
        assert e.value.filename == str(path) and str(open_dir) in str(e.value)
    assert list(open_dir.iterdir()) == []
    open_dir.chmod(0o1777)  # sticky: others cannot replace what is ours
    files.save(results, open_dir / "r.json")
    assert len(files.load(open_dir / "r.json")) > 0


@as_root
def test_a_link_on_the_way_of_another_users_is_not_followed(
    results: list[ctxbench.RingResult], tmp_path: Path, secret: Path, shared: Path
) -> None:
    via = _plant(shared / "results", secret.parent)
    with pytest.raises(_safe_path.UnsafePath, match=f"symbolic link of uid {NOBODY}'s"):
        files.save(results, via / "secret.json")
    assert sorted(p.name for p in secret.parent.iterdir()) == ["secret"]


def test_a_link_on_the_way_of_this_users_is_followed(
    results: list[ctxbench.RingResult], tmp_path: Path
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "mine").symlink_to("real")
    files.save(results, tmp_path / "mine" / "r.json")
    assert len(files.load(tmp_path / "real" / "r.json")) > 0


def test_a_directory_swapped_for_a_link_while_writing_does_not_redirect_it(
    tmp_path: Path, secret: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    out = work / "r.json"

    def write_and_swap(f: Any) -> None:
        f.write(b"ours\n")
        work.rename(tmp_path / "moved")
        work.symlink_to(secret.parent)

    files.write_atomically(out, write_and_swap)
    assert (tmp_path / "moved" / "r.json").read_text() == "ours\n"
    assert sorted(p.name for p in secret.parent.iterdir()) == ["secret"]


def test_why_unsafe_to_write_says_why_or_none(tmp_path: Path, secret: Path) -> None:
    why = _safe_path.why_unsafe_to_write
    assert why(tmp_path / "new.json") is None
    (tmp_path / "mine.json").write_text("")
    assert why(tmp_path / "mine.json") is None
    (tmp_path / "link").symlink_to(tmp_path / "mine.json")
    assert "symbolic link" in (why(tmp_path / "link") or "")
    os.mkfifo(tmp_path / "fifo")
    assert why(tmp_path / "fifo") == "not a regular file (a FIFO)"
    with pytest.raises(FileNotFoundError):
        why(tmp_path / "missing" / "r.json")
    assert stat.S_ISREG((tmp_path / "mine.json").lstat().st_mode)
