from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "clear the outputs"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel inherits the environment: small parameters, and a scratch working directory.
    monkeypatch.setenv("CTXBENCH_NOTEBOOK_QUICK", "1")
    # Executed as a person would run it: CI (which turns the sweep's progress bar off) is
    # not set in the kernel, so the check below sees what a reader sees.
    monkeypatch.delenv("CI", raising=False)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    images = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "image/png" in o.get("data", {})
    ]
    assert len(images) >= 3, "the plots did not display"
    # The sweep's progress: a tqdm widget where ipywidgets is installed, else its text bar.
    progress = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        or (o.get("name") == "stderr" and "ctxbench sweep" in o.get("text", ""))
    ]
    assert progress, "the sweep showed no progress"
    # A result's HTML view: one machine line, the metadata folded.
    htmls = [
        o["data"]["text/html"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "text/html" in o.get("data", {}) and "<details>" in o["data"]["text/html"]
    ]
    assert htmls, "the result did not render as HTML"


def test_the_cache_notebook_says_what_the_core_flags() -> None:
    """The refill figure draws what the core calls a figure (``refill_note``), and the text
    no longer says a refill "cannot exceed" the streaming read where the notebook can show
    one doing so (below the last-level cache)."""
    nb = nbformat.read(Path(__file__).parent.parent / "notebooks" / "cache.ipynb", as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert 'refill_note"] == "above streaming read"' in code
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for sentence in " ".join(cell.source.split()).split(". "):
                if "cannot exceed" in sentence:
                    assert "last-level cache" in sentence or "memory" in sentence, sentence


def test_the_sweep_notebook_says_how_verdicts_are_made() -> None:
    """The notebook's words follow the verdict rules: a point's verdict from its interval
    (not from a CV below 2 %), a comparison's four words with "no change" shown, its runs
    measured in precision mode, and one A/B run that measures until decided."""
    nb = nbformat.read(Path(__file__).parent.parent / "notebooks" / "lat_ctx_sweep.ipynb", 4)
    text = " ".join(" ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "below 2% CV" not in text and "below 2% is stable" not in text
    for word in ("slower", "faster", "no change", "inconclusive", "shown, not assumed"):
        assert word in text, word
    assert "ctxbench.ab(" in code and "budget=BUDGET" in code
    compared = code[code.index("first, again") : code.index("ctxbench.compare(first, again)")]
    assert "max_time=MAX_TIME" in compared and "repetitions" not in compared
