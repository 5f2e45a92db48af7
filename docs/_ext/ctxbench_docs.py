"""Two directives of the ctxbench manual.

``{module-table} DIR``: one row per source module under DIR (relative to the repository), with
the first sentence of the module's own documentation (a Rust file's ``//!`` lines, a Python
file's docstring). The architecture page is built from it, so it follows the code as modules
are added, split or renamed; a module without a doc line is a build error.

``{figure-output}``: shows its Python code, runs it at build time in a fresh temporary
directory, and shows every matplotlib ``Figure`` the code leaves in a variable (or a list of
them). ``ctxbench.plot`` returns figures that pyplot does not manage, which matplotlib's own
plot directive cannot see. A failing example is a build error.
"""

from __future__ import annotations

import ast
import os
import re
import tempfile
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str) -> str:
    """The first sentence of a doc text's first paragraph, on one line."""
    paragraph = " ".join(text.strip().split("\n\n")[0].split())
    return _SENTENCE_END.split(paragraph, maxsplit=1)[0]


def module_doc(path: Path) -> str:
    """A source file's own documentation: ``//!`` lines of Rust, the docstring of Python."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".rs":
        lines = []
        for line in text.splitlines():
            if not line.startswith("//!"):
                break
            lines.append(line[3:].strip())
        return "\n".join(lines)
    return ast.get_docstring(ast.parse(text)) or ""


class ModuleTable(SphinxDirective):
    required_arguments = 1
    option_spec = {"suffix": str}

    def run(self) -> list[nodes.Node]:
        top = ROOT / self.arguments[0]
        suffix = self.options.get("suffix", ".py")
        files = sorted(p for p in top.rglob(f"*{suffix}") if not p.name.startswith("__main__"))
        if not files:
            raise self.error(f"module-table: no {suffix} files under {top}")
        table = nodes.table()
        group = nodes.tgroup(cols=2)
        table += group
        group += nodes.colspec(colwidth=1)
        group += nodes.colspec(colwidth=4)
        body = nodes.tbody()
        group += self._row("module", "what it is", header=True)
        group += body
        for path in files:
            doc = first_sentence(module_doc(path))
            if not doc:
                self.state.document.reporter.warning(
                    f"module-table: {path.relative_to(ROOT)} has no doc line", line=self.lineno
                )
            self.env.note_dependency(str(path))
            body += self._row(str(path.relative_to(top)), doc)
        return [table]

    def _row(self, name: str, doc: str, header: bool = False) -> nodes.Node:
        row = nodes.row()
        if header:
            row += nodes.entry("", nodes.paragraph(text=name))
            row += nodes.entry("", nodes.paragraph(text=doc))
            head = nodes.thead()
            head += row
            return head
        row += nodes.entry("", nodes.paragraph("", "", nodes.literal(text=name)))
        inline, messages = self.state.inline_text(doc, self.lineno)
        row += nodes.entry("", nodes.paragraph("", "", *inline), *messages)
        return row


class FigureOutput(SphinxDirective):
    has_content = True

    def run(self) -> list[nodes.Node]:
        from matplotlib.figure import Figure

        code = "\n".join(self.content)
        namespace: dict[str, object] = {"__name__": "__docs__"}
        here = os.getcwd()
        with tempfile.TemporaryDirectory(prefix="ctxbench-docs-") as work:
            os.chdir(work)
            try:
                exec(compile(code, f"{self.env.docname}.md:{self.lineno}", "exec"), namespace)
            except Exception as error:
                raise self.error(f"figure-output: the example failed: {error!r}") from error
            finally:
                os.chdir(here)
        figures = []
        for value in namespace.values():
            for item in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(item, Figure):
                    figures.append(item)
        if not figures:
            raise self.error("figure-output: the example left no matplotlib Figure in a variable")
        out = [nodes.literal_block(code, code, language="python")]
        folder = Path(self.env.srcdir) / "_scratch" / "figures"
        folder.mkdir(parents=True, exist_ok=True)
        for i, figure in enumerate(figures):
            name = f"{self.env.docname.replace('/', '-')}-{self.lineno}-{i}.png"
            figure.savefig(folder / name, dpi=100, bbox_inches="tight")
            out.append(nodes.image(uri=f"/_scratch/figures/{name}", alt=f"figure {i + 1}"))
        return out


def setup(app):  # noqa: ANN001, ANN201 (Sphinx's extension entry point)
    app.add_directive("module-table", ModuleTable)
    app.add_directive("figure-output", FigureOutput)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
