"""Sphinx configuration of the ctxbench manual.

Built by CI with warnings as errors (``sphinx-build -W``): a broken cross-reference, a link to a
page or heading that does not exist, a docstring autodoc cannot parse, a command example that
fails and a ``{doctest}``/``{testcode}`` example that fails all stop the build.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import ctxbench

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "ctxbench"
author = "the ctxbench authors"
release = version = ctxbench.__version__

extensions = [
    "myst_parser",  # pages in Markdown (MyST)
    "sphinx.ext.autodoc",  # the API reference, from the docstrings
    "sphinx.ext.doctest",  # runs every {doctest} and {testcode} block (sphinx-build -b doctest)
    "sphinx.ext.viewcode",
    "sphinxcontrib.programoutput",  # runs every {command-output} at build time, shows its output
    "ctxbench_docs",  # {module-table} from the modules' doc lines; {figure-output} runs plots
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_scratch", "_ext"]

# Every reference must resolve: a link to a missing page, heading or object is an error under -W.
nitpicky = True
nitpick_ignore_regex = [
    # Types named in signatures that have no page of their own here.
    (r"py:class", r"(numpy|np|pandas|pd|matplotlib|distributed|pytest|_pytest|argparse)\..*"),
    (r"py:class", r"(NDArray|Figure|Axes|DataFrame|Client|Placement|PathLike|StrPath|Size)"),
    (r"py:class", r"ctxbench\.plot\._style\..*"),
    (r"py:class", r"(ctxbench\._core\.)?(RingDict|PingpongDict|AbDict)"),
    # from_core's return: the result class it is called on (a TypeVar bound to their base).
    (r"py:class", r"ctxbench\.result\._R"),
    (r"py:class", r"(collections\.abc|typing|os|pathlib|sqlite3)\..*"),
]

myst_enable_extensions = ["colon_fence", "deflist"]
# Links to headings ([text](page.md#a-heading)) are checked down to this level.
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_default_options = {"members": True, "undoc-members": False}

# Examples that write files do so in a fresh temporary directory, never in the checkout; and
# they run as the scripts a reader copies them into (`if __name__ == "__main__":` holds, as
# tests/test_docs_examples.py runs them).
doctest_global_setup = """
__name__ = "__main__"
import os as _os, tempfile as _tempfile
_docs_home = _os.getcwd()
_docs_tmp = _tempfile.TemporaryDirectory(prefix="ctxbench-docs-")
_os.chdir(_docs_tmp.name)
"""
doctest_global_cleanup = "_os.chdir(_docs_home); _docs_tmp.cleanup()"

# Command examples that write files (`:cwd: /_scratch`) write them into docs/_scratch
# (git-ignored), emptied here so that a sweep example never resumes a previous build's file;
# {figure-output} keeps its images in _scratch/figures.
(DOCS / "_scratch").mkdir(exist_ok=True)
for _stale in (DOCS / "_scratch").iterdir():
    if _stale.is_file():
        _stale.unlink()
programoutput_prompt_template = "$ {command}\n{output}"

html_theme = "furo"
html_title = f"ctxbench {release}"
html_static_path: list[str] = []

# Progress bars are for people at a terminal, not for a docs build; and the examples' short
# runs stay out of the machine's run history (`ctxbench._history`), which they would teach
# that runs of a point differ as much as 0.05-second runs do.
os.environ.setdefault("CI", "true")
os.environ.setdefault("CTXBENCH_HISTORY", "off")
# Nor do the commands the pages run keep their runs in the user's results store.
os.environ.setdefault("CTXBENCH_STORE", "off")


def _draw_gallery(app: object) -> None:
    """The gallery's figures (docs/gallery.md), drawn afresh from the committed sample runs
    into docs/_gallery before the HTML is written."""
    import runpy

    if getattr(getattr(app, "builder", None), "format", None) != "html":
        return
    gallery = runpy.run_path(str(DOCS / "_scripts" / "gallery.py"))
    gallery["main"](DOCS / "_gallery")


def setup(app: object) -> None:
    app.connect("builder-inited", _draw_gallery)  # type: ignore[attr-defined]
