"""``ctxbench publish DIR``: a static site of the results store, as asv's ``publish`` makes one.
``index.html`` has a section per machine: the latest verdicts (each point's newest run judged
against the comparable runs before it, by the core's judge, as ``compare NEW`` judges: one
Holm family across the page), its points with their change points, and the heatmap of each
matrix stored (``matrix-RUN.svg``, drawn by ``ctxbench.plot.matrix``). Each series (one point
on one machine) has a page with its figure (``series-N.svg``: every run in order, the
segments' medians, each change point marked and labelled with its run, labels and size) and
its latest runs. Plain HTML and SVG, no server: open ``DIR/index.html``.

Written as every ctxbench file is (``files.write_atomically``: never through a link, only
over this user's own files); ``DIR`` itself is refused where it is a symbolic link. Every
text from the store (points, labels, machines) is escaped: a store can hold anything.
"""

from __future__ import annotations

import errno
import html
import io
import os
import stat
import time
from pathlib import Path
from types import SimpleNamespace
from typing import IO, TYPE_CHECKING, Any

from . import _changes, _core
from ._safe_path import UnsafePath
from ._series import New, judge_new
from .files import write_atomically
from .frame import require
from .report._changes import labels_text, ratio_words
from .report._series import series_ratio, series_verdict

if TYPE_CHECKING:
    from ._core import ChangeDict, ScanDict

LATEST = 10
# Each page says whether its figures loaded: what the browser test reads (no console use).
_CHECK = (
    "<script>window.addEventListener('load',function(){var i=document.images,n=0;"
    "for(var k=0;k<i.length;k++){if(i[k].complete&&i[k].naturalWidth>0)n++;}"
    "document.body.setAttribute('data-figures',n+'/'+i.length);});</script>"
)
_STYLE = (
    "<style>body{font-family:sans-serif;max-width:70em;margin:1em auto;padding:0 1em}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;"
    "text-align:left}img{max-width:100%}</style>"
)


def _page(title: str, body: str) -> bytes:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>{_STYLE}{_CHECK}</head>"
        f"<body>\n{body}\n</body></html>\n"
    ).encode()


def _directory(path: Path) -> None:
    """``path`` made where missing; refused where it is a link or not a directory."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        os.makedirs(path, exist_ok=True)
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(
            path, "a symbolic link: the site is written into the directory itself, never "
            "through a link; name the directory"
        )  # fmt: skip
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))


def _write(path: Path, data: bytes) -> None:
    def write(f: IO[bytes]) -> None:
        f.write(data)

    write_atomically(path, write)


def _figure(point: str, machine: str, runs: list[Any], changes: list[ChangeDict]) -> bytes:
    """The series as an SVG: each run's figure in order, the medians of the segments between
    change points, and each change point marked with its run, labels and size."""
    require("matplotlib", "ctxbench publish")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6))
    ax = fig.subplots()
    ax.plot(range(len(runs)), [r.value_us for r in runs], "o", ms=3, color="#1f77b4")
    bounds = [0, *(c["index"] for c in changes), len(runs)]
    for a, b in zip(bounds, bounds[1:]):
        values = sorted(r.value_us for r in runs[a:b])
        ax.hlines(values[len(values) // 2], a - 0.4, b - 0.6, color="#555", lw=1)
    top = max(r.value_us for r in runs)
    for c in changes:
        run = runs[c["index"]]
        ax.axvline(c["index"] - 0.5, color="#d62728", ls="--", lw=1)
        ax.annotate(
            f"run {run.run_id}: {labels_text(run.labels)}\n×{c['ratio']:.3g}",
            (c["index"] - 0.5, top),
            fontsize=7,
            color="#d62728",
            ha="left",
            va="top",
        )
    ax.set_xlabel("run (oldest first)")
    ax.set_ylabel("µs per switch")
    ax.set_title(f"{point} on {machine}"[:120], fontsize=9)
    fig.tight_layout()
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue().encode()


def _series_page(n: int, point: str, machine: str, runs: list[Any], scan: ScanDict) -> bytes:
    e = html.escape
    rows = "".join(
        f"<tr><td>run {runs[c['index']].run_id}</td><td>{c['index'] + 1}</td>"
        f"<td>{e(labels_text(runs[c['index']].labels))}</td>"
        f"<td>{e(ratio_words(c['ratio'], c['ratio_lo'], c['ratio_hi'], c['confidence']))}</td>"
        f"<td>{c['p']:.2g} (level {c['level']:.2g})</td></tr>"
        for c in scan["changes"]
    )
    changes = (
        f"<table><tr><th>changed at</th><th>nth run</th><th>labels</th><th>size</th>"
        f"<th>p</th></tr>{rows}</table>"
        if rows
        else "<p>No change point found at this scan's level.</p>"
        if scan["status"] == "scanned"
        else f"<p>Too short to scan ({len(runs)} runs, fewer than "
        f"{2 * scan['min_runs']}): no change could be seen, which is not no change.</p>"
    )
    latest = "".join(
        f"<tr><td>{r.run_id}</td><td>{r.value_us:.4g}</td><td>{e(labels_text(r.labels))}"
        f"</td><td>{'' if r.load is None else f'{r.load:.2f}'}</td></tr>"
        for r in reversed(runs[-LATEST:])
    )
    body = (
        f"<p><a href='index.html'>all series</a></p><h1>{e(point)}</h1>"
        f"<p>machine {e(machine)}, {len(runs)} runs</p>"
        f"<figure><img src='series-{n}.svg' alt='the series of {e(point)}'>"
        f"<figcaption>Each run's figure in order; grey: the median of each segment between "
        f"change points; red: a change point, before the run it names.</figcaption></figure>"
        f"<h2>Change points</h2>{changes}"
        f"<h2>Latest runs</h2><table><tr><th>run</th><th>µs per switch</th><th>labels</th>"
        f"<th>load</th></tr>{latest}</table>"
    )
    return _page(f"{point} on {machine}", body)


def _verdicts(
    s: Any, series: list[tuple[str, str, list[Any]]], labels: dict[str, str] | None
) -> list[dict[str, Any]]:
    """Each series' newest run judged against the comparable runs before it (carrying
    ``labels``; ``_series``: the baseline ``compare NEW`` reads, the core's judge), all of
    them one Holm family; in the order of ``series`` (empty where a series has no run)."""
    news = [New(p, m, [r.value_us], r.load, r.time, (r.run_id,), (r.rel_se,) if r.rel_se else ())
            for p, m, runs in series if runs for r in runs[-1:]]  # fmt: skip
    alpha, threshold = _core.FAMILY_ALPHA, _core.DEFAULT_PRECISION
    judged = iter(judge_new(news, s, labels, threshold, alpha, True))
    return [next(judged) if runs else {} for _, _, runs in series]


def _verdict_rows(n: int, point: str, runs: list[Any], j: dict[str, Any]) -> str:
    e = html.escape
    row = SimpleNamespace(**j)
    newest = runs[-1]
    return (
        f"<tr><td><a href='series-{n}.html'>{e(point)}</a></td>"
        f"<td>run {newest.run_id} {e(labels_text(newest.labels))}</td>"
        f"<td>{j['runs']} runs</td><td>{j['base_us']:.4g}</td><td>{j['new_us']:.4g}</td>"
        f"<td>{e(series_ratio(row))}</td><td>{e(series_verdict(row))}</td></tr>"
    )


def _verdict_table(rows: list[str]) -> str:
    if not rows:
        return ""
    return (
        "<h3>Latest verdicts</h3><table><tr><th>point</th><th>newest run</th><th>judged "
        "against</th><th>base µs</th><th>new µs</th><th>ratio [interval]</th><th>verdict</th>"
        f"</tr>{''.join(rows)}</table>"
    )


def _verdicts_said(family: int) -> str:
    """What the verdicts are, once for the page."""
    if not family:
        return ""
    return (
        "<p>Latest verdicts: each point's newest run judged against the comparable runs "
        f"before it (the newest {_core.SERIES_WINDOW}, their modes and the spread within "
        "them) by a prediction interval, as <code>ctxbench compare NEW</code> judges; Holm "
        f"across the {family} points of this page, so the chance of any false call on it is "
        f"at most {_core.FAMILY_ALPHA:.0%}.</p>"
    )


def _matrix_figure(record: dict[str, Any]) -> bytes:
    """A stored matrix's heatmap and per-class summary (``ctxbench.plot.matrix``), as SVG."""
    from .plot import matrix as draw
    from .result import from_record

    fig = draw(from_record(record))
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue().encode()


def _matrices(out: Path, s: Any, machine: str, labels: dict[str, str] | None) -> str:
    """The machine's stored matrices, newest first: each one's heatmap written beside the
    page, and its figure with what it was (or why it could not be drawn)."""
    e = html.escape
    found = s.matrices(machine=machine, labels=labels)
    parts = []
    for m, record in zip(reversed(found), s.records([m["run_id"] for m in reversed(found)])):
        run = int(m["run_id"])
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(m["time"]))
        what = (
            f"run {run}, {when}: {e(str(m['engine']))}/{e(str(m['transport']))}, {m['cpus']} "
            f"CPUs, {m['cells']} cells; {e(labels_text(m['labels']))}"
        )
        try:
            if record is None:
                raise ValueError("kept without its record")
            _write(out / f"matrix-{run}.svg", _matrix_figure(record))
        except (ValueError, TypeError, KeyError) as err:
            parts.append(f"<p>Matrix {what}: not drawn ({e(str(err)[:200])}).</p>")
            continue
        parts.append(
            f"<figure><img src='matrix-{run}.svg' alt='the matrix of run {run}'>"
            f"<figcaption>Matrix {what}. µs per switch of each ordered pair of CPUs (rows: "
            "the waker), in the topology's order; beside it each class of pair.</figcaption>"
            "</figure>"
        )
    return f"<h3>Matrices</h3>{''.join(parts)}" if parts else ""


def publish(
    directory: str | os.PathLike[str],
    *,
    store: Any = None,
    machine: str | None = None,
    point: str | None = None,
    labels: dict[str, str] | None = None,
    level: float | None = None,
    min_runs: int | None = None,
    seed: int | None = None,
) -> Path:
    """Write the site into ``directory`` (see the module); the path of its ``index.html``.
    ``point`` leaves the matrices out (the site of that point's series alone)."""
    out = Path(directory)
    s = _changes.opened(store)
    try:
        series, scans = _changes.scan(
            s, machine=machine, labels=labels, point=point, level=level, min_runs=min_runs,
            seed=seed,
        )  # fmt: skip
        _directory(out)
        body = _index(out, s, series, scans, machine, labels, point is None, level)
    finally:
        if s is not store:
            s.close()
    _write(out / "index.html", _page("ctxbench: stored series", body))
    return out / "index.html"


def _index(
    out: Path,
    s: Any,
    series: list[tuple[str, str, list[Any]]],
    scans: list[ScanDict],
    machine: str | None,
    labels: dict[str, str] | None,
    matrices: bool,
    level: float | None,
) -> str:
    """Every series' page and figure written; the index's body."""
    e = html.escape
    verdicts = _verdicts(s, series, labels)
    items: dict[str, list[str]] = {}
    judged: dict[str, list[str]] = {}
    for n, ((p, m, runs), scan, j) in enumerate(zip(series, scans, verdicts)):
        if runs:
            _write(out / f"series-{n}.svg", _figure(p, m, runs, scan["changes"]))
            judged.setdefault(m, []).append(_verdict_rows(n, p, runs, j))
        _write(out / f"series-{n}.html", _series_page(n, p, m, runs, scan))
        found = len(scan["changes"]) if scan["status"] == "scanned" else "too short"
        items.setdefault(m, []).append(
            f"<li><a href='series-{n}.html'>{e(p)}</a>: {len(runs)} runs, "
            f"change points: {found}</li>"
        )
    held = {m["machine"] for m in s.matrices(machine=machine, labels=labels)} if matrices else set()
    machines = sorted(set(items) | held)
    family = sum(len(rows) for rows in judged.values())
    sections = "".join(
        f"<h2>machine {e(m)}</h2>{_verdict_table(judged.get(m, []))}"
        + (f"<h3>Series</h3><ul>{''.join(items[m])}</ul>" if m in items else "")
        + (_matrices(out, s, m, labels) if matrices else "")
        for m in machines
    )
    level_used = scans[0]["level"] if scans else level
    return (
        "<h1>ctxbench: stored series</h1>"
        + (
            f"<p>Change points by E-Divisive; the chance of any false one in this scan is "
            f"held at {level_used:.0%} (Holm).</p>"
            if scans
            else "<p>The store holds no series.</p>"
        )
        + _verdicts_said(family)
        + sections
    )
