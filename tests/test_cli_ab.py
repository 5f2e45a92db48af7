"""``ctxbench ab`` and the ``--procs`` flag of ``ring`` and ``lat-ctx``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import FAST_FLAGS, run_cli

import ctxbench
from ctxbench.result import AbResult, load_results

A = "ring --procs 2 --placement single"


def test_ab_prints_the_verdict_why_and_how_it_stopped() -> None:
    p = run_cli("ab", A, "ring --procs 8 --placement single", "--budget", "2", "--seed", "1")
    assert p.returncode in (0, 1), p.stderr
    out = p.stdout.splitlines()
    assert out[0].startswith("A: ring 2 procs") and out[1].startswith("B: ring 8 procs")
    verdict = out[2].split(":", 1)[0]
    assert verdict in ctxbench._core.CHANGES, out
    # Exit 1 exactly when B is slower, as `ctxbench compare` exits when a point regressed.
    assert p.returncode == (1 if verdict == "slower" else 0)
    assert out[3].startswith("stopped: ") and "(seed 1)" in out[3]


def test_ab_json_is_a_results_document_load_reads(tmp_path: Path) -> None:
    p = run_cli("ab", A, A, "--budget", "1", "--threshold", "5%", "--json", "--no-hostname")
    assert p.returncode in (0, 1), p.stderr
    doc = json.loads(p.stdout)
    assert doc["results"][0]["kind"] == "ab" and doc["results"][0]["threshold"] == 0.05
    path = tmp_path / "ab.json"
    path.write_text(p.stdout)
    r = load_results(path)[0]
    assert isinstance(r, AbResult) and len(ctxbench.load(path)) == 2 * r.rounds
    assert r.metadata["hostname"] != doc["results"][0]["metadata"].get("node")
    # The words go to stderr, so stdout stays the document.
    assert "ctxbench: " in p.stderr and r.verdict in p.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["not a command", A], "a: 'not a command': a side is a ring, lat-ctx or pipe"),
        ([A, "ring --procs 2 --nope"], "b: 'ring --procs 2 --nope': unrecognized arguments"),
        ([A, A, "--threshold", "5"], "expected a fraction like 5% or 0.05"),
        ([A, A, "--budget", "0"], "budget"),
    ],
)
def test_ab_refuses_bad_sides_and_flags_in_words(args: list[str], words: str) -> None:
    p = run_cli("ab", *args)
    assert p.returncode == 2 and words in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("command", ["ring", "lat-ctx"])
def test_procs_is_a_flag_as_well_as_positional(command: str) -> None:
    flag = run_cli(command, *FAST_FLAGS, "--json", "--procs", "2", "3")
    positional = run_cli(command, *FAST_FLAGS, "--json", "2", "3")
    assert flag.returncode == 0 and positional.returncode == 0, flag.stderr
    procs = [json.loads(p.stdout)["results"][0]["procs"] for p in (flag, positional)]
    assert procs == [[2, 3], [2, 3]]
    both = run_cli(command, *FAST_FLAGS, "2", "--procs", "3")
    assert both.returncode == 2 and "give the participant counts once" in both.stderr
    none = run_cli(command, *FAST_FLAGS)
    assert none.returncode == 2 and "give participant counts" in none.stderr
