"""The command line refuses bad input at once, before measuring and without eating memory:
CPU lists, output paths, scheduler addresses."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from ctxbench import _core
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
