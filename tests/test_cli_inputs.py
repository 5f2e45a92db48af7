"""The command line refuses bad input at once, before measuring and without eating memory:
CPU lists, output paths (checked first, saved before anything is analysed, named when a
write fails), scheduler addresses."""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ctxbench
from ctxbench import _core, _matrix
from ctxbench.cli import main


def _cli(*args: str, memory: int | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "ctxbench", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
    )


def test_a_huge_cpu_range_is_refused_while_parsing_not_expanded() -> None:
    # Expanded first, 0-999999999 took 5 GB in 15 s; within 2 GiB of address space it must be
    # refused at once.
    p = _cli("matrix", "--cpus", "0-999999999", memory=2 << 30)
    assert p.returncode == 2, p.stderr
    assert f"CPU ids are 0 to {_core.MAX_CPUS - 1}" in p.stderr and "Traceback" not in p.stderr
    assert "'0-999999999'" in p.stderr


@pytest.mark.parametrize(
    ("cpus", "message"),
    [
        (f"0-{_core.MAX_CPUS - 1},0", f"lists more than {_core.MAX_CPUS} CPU ids"),
        (f"{_core.MAX_CPUS}", f"CPU ids are 0 to {_core.MAX_CPUS - 1}"),
        ("3-1", "expected CPUs like 0-3,8; got '3-1'"),
        ("a-b", "expected CPUs like 0-3,8; got 'a-b'"),
    ],
)
def test_a_bad_cpu_list_is_named(
    cpus: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        main(["matrix", "--cpus", cpus])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


# --- output paths: checked before measuring, and what failed is named ------------------------

SIZES = ["sizes", "--procs", "2", "--sizes", "0", "4", "--rounds", "2"]


def _never(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("measured before the output path was checked")


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("missing/sizes.json", "No such file or directory: 'missing/sizes.json'"),
        ("sizes.bogus", "unknown suffix '.bogus'; name a results file ending in .json, .csv"),
        ("", "'': an empty file name; name a results file ending in .json"),
    ],
)
def test_sizes_checks_out_before_measuring(
    out: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_core, "cache_sweep", _never)
    assert main([*SIZES, "--out", out]) == 2
    assert message in capsys.readouterr().err


def test_sizes_on_a_read_only_filesystem_fails_before_measuring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_open = os.open

    def read_only(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(_core, "cache_sweep", _never)
    monkeypatch.setattr(os, "open", read_only)
    assert main([*SIZES, "--out", str(tmp_path / "sizes.json")]) == 2
    assert "Read-only file system" in capsys.readouterr().err


def test_sizes_saves_what_it_measured_before_looking_for_knees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two sizes are too few for a knee: the search fails, the measurement stands, saved.
    out = tmp_path / "sizes.json"
    assert main([*SIZES, "--out", str(out)]) == 0
    assert "ctxbench: no knees:" in capsys.readouterr().err
    assert sorted(ctxbench.load(out)["size_kb"].unique()) == [0, 4]


@pytest.mark.parametrize(
    ("plot", "message"),
    [
        ("missing/m.png", "No such file or directory: 'missing/m.png'"),
        ("m", "'m': no suffix; name a figure ending in .png, .svg, .pdf, .eps, .ps"),
        ("m.json", "unknown suffix '.json'; name a figure ending in .png"),
        ("/dev/full", "'/dev/full': no suffix; name a figure ending in .png"),
    ],
)
def test_matrix_checks_plot_before_measuring(
    plot: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_matrix, "measure", _never)
    assert main(["matrix", "--cpus", "0", "--no-progress", "--plot", plot]) == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_output_to_a_full_stdout_says_it_was_stdout() -> None:
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-m", "ctxbench", "matrix", "--cpus", "0", "--no-progress",
             "--max-time", "0.01"],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "error: [Errno 28] writing the output to stdout: No space left on device" in p.stderr
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr


@pytest.fixture
def full_filesystem(tmp_path: Path) -> Iterator[Path]:
    """A directory on a tmpfs of 64 KiB, filled up: creating a file there works, writing it
    fails with ENOSPC."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "full"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)]).returncode:
        pytest.skip("this machine would not mount a tmpfs")
    try:
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"\0" * 4096)
        os.close(fd)
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)])


@pytest.mark.parametrize(
    ("core", "command"),
    [
        ("ab", ["ab", "ring --procs 2", "ring --procs 4", "--budget", "1", "--json"]),
        ("ring", ["ring", "--json", "--placement", "single", "2"]),
    ],
)
def test_stdout_on_a_full_filesystem_fails_before_measuring(
    full_filesystem: Path, core: str, command: list[str], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """`ab --json > full/ab.json` measured for its whole budget, then lost the result; now
    nothing is measured and the error says stdout's file system is full."""
    monkeypatch.setattr(_core, core, _never)
    with open(full_filesystem / "out.json", "w") as out:
        monkeypatch.setattr(sys, "stdout", out)
        assert main(command) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxbench: error: [Errno 28] writing the output to stdout: No "), err
    assert "its file system has 0 bytes free); nothing was measured" in err
    assert (full_filesystem / "out.json").stat().st_size == 0


@pytest.mark.parametrize(("flag", "name"), [("--out", "m.json"), ("--plot", "m.png")])
def test_matrix_output_on_a_full_filesystem_fails_naming_it(
    full_filesystem: Path, flag: str, name: str
) -> None:
    """It exited 2 with nothing said (and left a 0-byte figure); now the error names the file
    and the cause, and neither the file nor a temporary one is left."""
    out = full_filesystem / name
    p = subprocess.run(
        [sys.executable, "-m", "ctxbench", "matrix", "--cpus", "0", "--no-progress",
         "--max-time", "0.01", flag, str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "No space left on device" in p.stderr and str(out) in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    assert sorted(x.name for x in full_filesystem.iterdir()) == ["filler"]


@pytest.mark.parametrize("name", ["fig", "", "/dev/full"])
def test_plot_refuses_a_figure_name_it_would_change(
    name: str,
    results: list[ctxbench.RingResult],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # "fig" became fig.png, "" a hidden ".png", and /dev/full a new /dev/full.png.
    monkeypatch.chdir(tmp_path)
    ctxbench.files.save(results, "r.json")
    there = os.path.exists("/dev/full.png")
    assert main(["plot", "r.json", "-o", name]) == 2
    err = capsys.readouterr().err
    assert "ending in .png, .svg, .pdf, .eps, .ps" in err or "not a regular file" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    assert os.path.exists("/dev/full.png") == there


def test_a_figure_that_does_not_fit_the_disk_is_named_and_not_left_half_written(
    small_disk: Path, results: list[ctxbench.RingResult], capsys: pytest.CaptureFixture[str]
) -> None:
    saved = small_disk.parent / "r.json"
    ctxbench.files.save(results, saved)
    with open(small_disk / "fill", "wb") as f:  # the disk full to the last byte
        with contextlib.suppress(OSError):
            f.write(b"x" * (1 << 20))
    fig = small_disk / "fig.png"
    assert main(["plot", str(saved), "-o", str(fig)]) == 2
    assert f"No space left on device: '{fig}'" in capsys.readouterr().err
    assert sorted(p.name for p in small_disk.iterdir()) == ["fill"]


# --- scheduler addresses ----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["sweep", "matrix"])
@pytest.mark.parametrize("address", ["", "  ", "tcp://127.0.0.1:8786 "])
def test_an_empty_scheduler_address_is_refused_at_once(
    command: str, address: str, tmp_path: Path
) -> None:
    # Dask took "" as no address, started a cluster of its own and failed 11 s later with a
    # traceback.
    out = tmp_path / "f.json"
    args = ["--procs", "2"] if command == "sweep" else ["--cpus", "0"]
    p = _cli(command, *args, "--out", str(out), "--no-progress", "--scheduler", address)
    assert p.returncode == 2, p.stderr
    assert f"--scheduler: expected an address such as tcp://127.0.0.1:8786, got {address!r}" in (
        p.stderr
    )
    assert "Traceback" not in p.stderr and not out.exists()


def test_a_scheduler_that_is_no_string_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="scheduler: expected an address .*, got int 8786"):
        ctxbench.sweep([2], scheduler=8786, progress=False)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scheduler: expected an address .*, got ''"):
        ctxbench.matrix([0], scheduler="", progress=False)
