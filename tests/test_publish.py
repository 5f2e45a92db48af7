"""``ctxbench publish``: the site from stored series (a stand-in of the store's API), written
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

from ctxbench import _changes
from ctxbench._publish import publish
from ctxbench._safe_path import UnsafePath
from ctxbench.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


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


def test_store_text_is_escaped(tmp_path: Path) -> None:
    s = StandinStore()
    for i in range(3):
        s.add("<script>alert(1)</script>", "m&1", 1.0 + i, {"c": "<b>x</b>"})
    index = publish(tmp_path, store=s)
    for page in [index, *tmp_path.glob("series-*.html")]:
        assert "<script>alert" not in page.read_text()
        assert "<b>x" not in page.read_text()


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
    index = publish(tmp_path / "site", store=filled())
    for page in [index, *sorted(index.parent.glob("series-*.html"))]:
        dom, log = _open(page.as_uri(), tmp_path)
        console = [line for line in log.splitlines() if "CONSOLE" in line]
        assert console == [], console
        figures = re.search(r'data-figures="(\d+)/(\d+)"', dom)
        assert figures, dom[:500]
        loaded, total = map(int, figures.groups())
        assert loaded == total
        assert total == (0 if page == index else 1)


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
