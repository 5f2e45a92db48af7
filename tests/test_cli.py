"""The `ctxbench` command line: lat_ctx's output format, its flags, LMBENCH_SCHED."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

FAST = ["-N", "2", "-W", "0", "--min-time", "0.002"]


def ctxbench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxbench", *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_lat_ctx_prints_lmbench_format_on_stdout() -> None:
    p = ctxbench("lat-ctx", *FAST, "-s", "16", "2", "4", "8")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert re.fullmatch(r'"size=16k ovr=\d+\.\d\d', lines[0])
    assert [line.split()[0] for line in lines[1:]] == ["2", "4", "8"]
    assert all(re.fullmatch(r"\d+ -?\d+\.\d\d", line) for line in lines[1:])


@pytest.mark.parametrize(
    ("sched", "placement"),
    [("SINGLE", "single"), ("UNIQUE", "spread"), ("BALANCED", "balanced"), ("DEFAULT", "default")],
)
def test_lmbench_sched_is_honoured_unless_a_flag_says_otherwise(sched: str, placement: str) -> None:
    p = ctxbench("lat-ctx", *FAST, "--json", "2", env={"LMBENCH_SCHED": sched})
    assert json.loads(p.stdout)["placement"] == placement
    p = ctxbench("lat-ctx", *FAST, "--json", "--placement", "default", "2",
                 env={"LMBENCH_SCHED": sched})  # fmt: skip
    assert json.loads(p.stdout)["placement"] == "default"


def test_bad_input_exits_2_naming_the_problem() -> None:
    p = ctxbench("lat-ctx", *FAST, "1")
    assert p.returncode == 2 and "procs" in p.stderr
    p = ctxbench("lat-ctx", *FAST, "2", env={"LMBENCH_SCHED": "SOMETIMES"})
    assert p.returncode == 2 and "LMBENCH_SCHED" in p.stderr


@pytest.mark.parametrize("command", ["lat-ctx", "ring", "pipe", "sweep", "plot", "compare"])
def test_help_explains_every_flag(command: str) -> None:
    p = ctxbench(command, "--help")
    assert p.returncode == 0
    options = p.stdout.split("options:", 1)[1]
    # Every option line carries its own explanation (argparse puts it on the same line, or
    # the next line when the flag is long).
    entries = re.findall(r"^  (-\S.*?)(?=^  -|\Z)", options, re.S | re.M)
    assert entries
    for entry in entries:
        assert len(entry.split()) > 2 or entry.startswith("-h"), entry
