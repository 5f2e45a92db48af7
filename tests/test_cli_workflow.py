from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import FAST
from test_compare import steady

import ctxbench
from ctxbench import files
from ctxbench.cli import main

SWEEP = ["-N", str(FAST["repetitions"]), "-W", "0", "--min-time", str(FAST["min_time"])]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "base.json"
    assert main(["sweep", "--procs", "2", "3", "--sizes", "0", "4", "--out", str(out), *SWEEP]) == 0
    return out


def test_sweep_writes_and_prints(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert len(json.loads(results.read_text())["results"]) == 4
    # Resumed: nothing measured again, the same four points printed.
    assert (
        main(
            [
                "sweep",
                "--procs",
                "2",
                "3",
                "--sizes",
                "0",
                "4",
                "--out",
                str(results),
                "--no-progress",
                *SWEEP,
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and out[0].startswith("process/pipe default size=0k P=1 2 ")
    assert len(json.loads(results.read_text())["results"]) == 4


def test_sweep_needs_out() -> None:
    with pytest.raises(SystemExit):
        main(["sweep", "--procs", "2"])


@pytest.mark.parametrize("kind", ["lat_ctx", "compare", "distribution"])
def test_plot(results: Path, tmp_path: Path, kind: str) -> None:
    fig = tmp_path / f"{kind}.png"
    assert main(["plot", str(results), "-o", str(fig), "--kind", kind]) == 0
    assert fig.read_bytes().startswith(b"\x89PNG")


def test_compare_with_itself(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(results), str(results)]) == 0
    out = capsys.readouterr().out
    assert out.count("no change") == 4 + 1  # four rows and the summary


def test_compare_regression_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "base.csv"
    new = tmp_path / "new.csv"
    frame = steady(ctxbench.lat_ctx([2], **{**FAST, "repetitions": 8}).to_frame())
    files.save(frame, base)
    files.save(frame.assign(value=frame["value"] * 1.5), new)
    assert main(["compare", str(base), str(new), "--threshold", "0.05"]) == 1
    assert "slower (regressed)" in capsys.readouterr().out
    assert main(["compare", str(base), str(new), "--threshold", "0.6"]) == 0


def test_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.xgraph"
    bad.write_text('"size=0k ovr=1\n2 oops\n')
    assert main(["plot", str(bad), "-o", str(tmp_path / "x.png")]) == 2
    assert "line 2" in capsys.readouterr().err


def test_missing_matplotlib_exit_2(
    results: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["plot", str(results), "-o", str(tmp_path / "x.png")]) == 2
    assert "pip install 'ctxbench[analysis]'" in capsys.readouterr().err
