"""The manual's examples run as scripts, as a reader who copies them runs them, not only in
Sphinx's doctest build (whose namespace is no script's: a ``LocalCluster`` example that
starts worker processes works there and fails as a file).

Each page's ``{testsetup}``, ``{testcode}`` and ``{doctest}`` blocks, in order, make one
script (a doctest's statements whose expected output is an exception are left out: they
show an error on purpose); each ``{figure-output}`` block is a script of its own, as the
HTML build runs it. Every script runs in a fresh directory with ``python script.py``.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCK = re.compile(
    r"^```\{(testsetup|testcode|doctest|figure-output)\}[^\n]*\n(.*?)^```$", re.M | re.S
)


def _code(kind: str, body: str) -> str:
    # MyST directive options (":hide:") come first in a block.
    body = "\n".join(line for line in body.splitlines() if not re.match(r":\w[\w-]*:", line))
    if kind != "doctest":
        return body
    examples = doctest.DocTestParser().get_examples(body)
    return "".join(e.source for e in examples if e.exc_msg is None)


def scripts() -> list[pytest.param]:
    """(name, script) for every page with examples, and every figure-output block."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        if any(part.startswith(("_", ".")) for part in page.relative_to(DOCS).parts):
            continue
        blocks = BLOCK.findall(page.read_text(encoding="utf-8"))
        name = str(page.relative_to(DOCS))
        together = [_code(kind, body) for kind, body in blocks if kind != "figure-output"]
        if together:
            found.append(pytest.param("\n".join(together), id=name))
        figures = [body for kind, body in blocks if kind == "figure-output"]
        found += [pytest.param(body, id=f"{name} figure {i + 1}") for i, body in enumerate(figures)]
    return found


def test_the_manual_has_examples() -> None:
    assert len(scripts()) >= 5


@pytest.mark.slow
@pytest.mark.parametrize("script", scripts())
def test_every_example_runs_as_a_script(script: str, tmp_path: Path) -> None:
    path = tmp_path / "example.py"
    path.write_text(script, encoding="utf-8")
    # As the docs build runs them: no progress bars, no run history of this machine.
    env = {**os.environ, "CI": "true", "CTXBENCH_HISTORY": "off", "MPLBACKEND": "Agg"}
    run = subprocess.run(
        [sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
