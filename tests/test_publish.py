"""``ctxbench publish``: the site from stored series (a stand-in of the store's API, and a
store under tmp_path), with the latest verdicts and the stored matrices' heatmaps, written
safely, and opened from ``file://`` by headless Chromium with no console errors and every
figure loaded (skipped only where Chromium is missing)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from store_standin import StandinStore
from test_changes import POINT, filled

from ctxbench import _changes, store
from ctxbench._publish import publish
from ctxbench._safe_path import UnsafePath
from ctxbench.cli import main
from ctxbench.record import encode
from ctxbench.result import load_results
from ctxbench.store import _rows

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SAMPLE = Path(__file__).parent / "data" / "matrix-sample.json"


def with_matrix(s: StandinStore, machine: str = "m1", run_id: int = 900) -> StandinStore:
    """``s`` holding the sample matrix, as the store keeps one, on ``machine``."""
    (m,) = load_results(SAMPLE)
    row = {"run_id": run_id, "time": 1_796_100_000.0, "machine": machine, "kernel": None,
           "source": "saved", "cpus": len(m.cpus), "cells": len(m.latency_us),
           "engine": m.engine, "transport": m.transport, "median_us": 1.0,
           "labels": {"commit": "b"}}  # fmt: skip
    s.kept_matrices.append((row, encode(m)))
    return s


def real_store(path: Path, s: StandinStore) -> Path:
    """A store at ``path`` holding the stand-in's runs (one row set each) and the sample
    matrix, kept as ``ctxbench.save`` keeps one."""
    sets = [
        _rows.RowSet(
            {
                "run_key": f"run-{r.run_id}",
                "time": r.time,
                "machine": r.machine,
                "kind": "ring",
                "runnable_per_cpu": r.load,
                "source": "imported",
            },
            [
                {
                    "point_id": r.point_id,
                    "point_key": _rows.point(r.point_id)[0],
                    "value_us": r.value_us,
                    "ln_value": r.ln_value,
                    "rel_se": r.rel_se,
                }
            ],
            dict(r.labels),
        )  # fmt: skip
        for r in s.runs
    ]
    with store.open(path) as kept:  # type: ignore[union-attr]
        kept.add(sets)
        kept.keep(load_results(SAMPLE), {"commit": "b"})
    return path


def test_the_site_has_a_page_and_a_figure_per_series(tmp_path: Path) -> None:
    index = publish(tmp_path / "site", store=filled())
    text = index.read_text()
    assert text.count("<li>") == 4 and "change points: 1" in text and "too short" in text
    pages = sorted(index.parent.glob("series-*.html"))
    figures = sorted(index.parent.glob("series-*.svg"))
    assert len(pages) == len(figures) == 4
    shifted = next(p for p in pages if "changed at" in p.read_text())
    assert "commit=b" in shifted.read_text() and "slower" in shifted.read_text()
    svg = (tmp_path / "site" / shifted.name.replace(".html", ".svg")).read_text()
    assert svg.startswith("<?xml") and "commit=b" in svg
    # The latest verdicts: each series' newest run judged against the runs before it, one
    # Holm family across the page.
    verdicts = re.findall(r"<tr><td><a href='series-\d+\.html'>", text)
    assert len(verdicts) == 4 and "Holm across the 4 points" in text
    # 'short' is judged against the 5 runs before its newest, never the newest itself (their
    # figures are all equal: a run is told apart from its series by its id).
    assert re.search(r">short</a></td><td>run \d+ no labels</td><td>5 runs</td>", text)
    assert "Matrices" not in text and not list(index.parent.glob("matrix-*"))


def test_the_verdicts_are_the_judges_of_compare_new(tmp_path: Path) -> None:
    s = filled()
    s.add("quiet", "m1", 6.0, {"commit": "c"})  # twice the series' level: slower
    text = publish(tmp_path, store=s).read_text()
    row = next(line for line in text.split("<tr>") if ">quiet</a>" in line)
    assert "slower" in row and "2.0" in row, row


def test_each_stored_matrix_is_drawn_on_its_machines_section(tmp_path: Path) -> None:
    s = with_matrix(with_matrix(filled()), machine="m3", run_id=901)
    index = publish(tmp_path / "site", store=s)
    text = index.read_text()
    for machine, run in (("m1", 900), ("m3", 901)):
        section = text.split(f"<h2>machine {machine}</h2>")[1].split("<h2>")[0]
        assert f"<img src='matrix-{run}.svg'" in section and "commit=b" in section
        svg = (index.parent / f"matrix-{run}.svg").read_text()
        assert svg.startswith("<?xml")
    assert "<h2>machine m3</h2>" in text  # a machine with a matrix and no series
    assert "matrix-900" not in publish(tmp_path / "one", store=s, point=POINT).read_text()


def test_a_matrix_without_its_record_is_said_not_drawn(tmp_path: Path) -> None:
    s = with_matrix(StandinStore())
    s.kept_matrices[0] = (s.kept_matrices[0][0], None)
    text = publish(tmp_path, store=s).read_text()
    assert "not drawn (kept without its record)" in text and "<img" not in text


def test_store_text_is_escaped(tmp_path: Path) -> None:
    s = StandinStore()
    for i in range(3):
        s.add("<script>alert(1)</script>", "m&1", 1.0 + i, {"c": "<b>x</b>"})
    with_matrix(s, machine="<i>m</i>")
    s.kept_matrices[0][0]["labels"] = {"c": "<b>x</b>"}
    index = publish(tmp_path, store=s)
    for page in [index, *tmp_path.glob("series-*.html")]:
        assert "<script>alert" not in page.read_text()
        assert "<b>x" not in page.read_text() and "<i>m" not in page.read_text()


def test_a_planted_link_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").symlink_to(victim)
    with pytest.raises(UnsafePath, match="index.html"):
        publish(site, store=filled())
    assert victim.read_text() == "keep"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "linked").symlink_to(elsewhere)
    with pytest.raises(UnsafePath, match="linked"):
        publish(tmp_path / "linked", store=filled())
    assert not list(elsewhere.iterdir())


def test_the_command_writes_the_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    s = filled()
    monkeypatch.setattr(_changes, "opened", lambda store: s)
    assert main(["publish", str(tmp_path / "out"), "--machine", "m2"]) == 0
    assert "index.html" in capsys.readouterr().out
    assert (tmp_path / "out" / "series-0.svg").exists()
    assert POINT in (tmp_path / "out" / "series-0.html").read_text()


def _open(url: str, tmp_path: Path) -> tuple[str, str]:
    """Chromium's DOM of ``url`` after load, and what it logged (console messages)."""
    done = subprocess.run(
        [
            CHROMIUM or "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_chromium_opens_every_page_with_every_figure_and_no_console_error(
    tmp_path: Path,
) -> None:
    kept = real_store(tmp_path / "store.sqlite3", filled())
    index = publish(tmp_path / "site", store=kept)
    assert "Latest verdicts" in index.read_text()
    for page in [index, *sorted(index.parent.glob("series-*.html"))]:
        dom, log = _open(page.as_uri(), tmp_path)
        console = [line for line in log.splitlines() if "CONSOLE" in line]
        assert console == [], console
        figures = re.search(r'data-figures="(\d+)/(\d+)"', dom)
        assert figures, dom[:500]
        loaded, total = map(int, figures.groups())
        assert loaded == total
        assert total == 1  # the index: the stored matrix's heatmap


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_chromium_sees_a_missing_figure(tmp_path: Path) -> None:
    # The check itself can fail: a page whose figure is gone is seen as such.
    index = publish(tmp_path / "site", store=filled())
    (index.parent / "series-0.svg").unlink()
    dom, log = _open((index.parent / "series-0.html").as_uri(), tmp_path)
    assert 'data-figures="0/1"' in dom


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_chromium_console_errors_are_seen(tmp_path: Path) -> None:
    # The console check itself can fail: a page with a script error is seen as such.
    page = tmp_path / "bad.html"
    page.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    _, log = _open(page.as_uri(), tmp_path)
    assert any("CONSOLE" in line and "undefinedFunction" in line for line in log.splitlines())
