"""What the manual tells a user to type is safe to type as it stands."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _pages() -> list[Path]:
    if not DOCS.is_dir():
        pytest.skip("not a checkout: no docs/")
    return sorted(DOCS.rglob("*.md"))


def test_every_dask_address_in_the_manual_is_local() -> None:
    # A scheduler reachable from anywhere runs pickled code from anyone: no example may
    # point at one, or start one, on a public or wildcard address.
    found = []
    for page in _pages():
        for host in re.findall(r"tcp://([\w.\-]+):\d+", page.read_text()):
            found.append(host)
            assert ipaddress.ip_address(host).is_private, f"{page.name}: tcp://{host}"
    assert found, "no Dask address in the manual: the test looks at nothing"


def test_every_dask_command_in_the_manual_listens_on_a_chosen_address() -> None:
    commands = [
        (page.name, line)
        for page in _pages()
        for line in page.read_text().splitlines()
        if re.search(r"\bdask (scheduler|worker)\b", line) and not line.lstrip().startswith("#")
        and "`" not in line  # prose naming the commands, not a command line
    ]  # fmt: skip
    assert commands, "no dask command in the manual: the test looks at nothing"
    word = r'("[^"]*"|\S+)'
    for name, line in commands:
        host = re.search(rf"--host {word}", line)
        http = re.search(rf"--dashboard-address {word}", line)
        # The HTTP server (/health, /metrics) listens on every address unless told where.
        assert host and http, f"{name}: {line.strip()}"
        assert http[1].strip('"').rpartition(":")[0] == host[1].strip('"'), f"{name}: {line}"


def test_no_dask_ssh_in_the_manual() -> None:
    # `dask ssh` starts its scheduler without --host: on every address.
    for page in _pages():
        for line in page.read_text().splitlines():
            assert not re.match(r"\s*dask ssh\b", line), f"{page.name}: {line.strip()}"


def test_the_fleet_guide_says_what_an_open_scheduler_risks() -> None:
    text = " ".join((DOCS / "guide" / "fleet.md").read_text().split())
    for words in ("without authentication", "pickled Python", "--host 127.0.0.1", "TLS"):
        assert words in text, words


def test_the_ab_page_says_which_procedure_and_why_it_holds() -> None:
    """The A/B page names the sequential procedure, why its error holds under optional
    stopping, its references and the Duet note; every side it shows is a command line the
    parser takes, and the accuracy index lists the page of measured error rates."""
    import shlex

    from ctxbench.cli._sides import side_request

    page = (DOCS / "guide" / "ab.md").read_text()
    text = " ".join(page.split())
    for words in ("confidence sequence", "optional stopping", "Ville's inequality", "Lai",
                  "Pérez-Ortiz", "Wang", "Ramdas", "Abedi", "Brecht", "Duet"):  # fmt: skip
        assert words in text, words
    sides = [
        side
        for line in page.splitlines()
        if line.startswith("ctxbench ab ")
        for side in shlex.split(line)[2:4]
    ]
    assert len(sides) >= 4
    for side in sides:
        side_request(side)
    index = (DOCS / "accuracy" / "index.md").read_text()
    assert (
        "2026-12-03-verdicts.md" in index
        and (DOCS / "accuracy" / "2026-12-03-verdicts.md").exists()
    )
