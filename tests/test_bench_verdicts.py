"""``benches/verdicts.py``: its resampling judges rounds as ``ab`` would, an A/A pool is
centred to A/A exactly, and its quick mode prints the table for every procedure and ratio."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).parent.parent / "benches" / "verdicts.py"
sys.path.insert(0, str(BENCH.parent))
import verdicts  # noqa: E402


def _pool(rng: np.random.Generator, n: int = 400) -> tuple[np.ndarray, ...]:
    """Rounds of a side that scatters by 5 %, 0.1 s each, B a fresh draw of A's kind."""
    a = 10 * np.exp(rng.normal(0, 0.05, n))
    b = 10 * np.exp(rng.normal(0, 0.05, n))
    return a, b, np.full(n, 0.1)


def test_a_doubled_side_is_slower_and_a_halved_one_faster() -> None:
    rng = np.random.default_rng(1)
    pool = _pool(rng)
    for ratio, word in ((2.0, "slower"), (0.5, "faster")):
        outs = verdicts.ab(pool, ratio, 20, 0.02, 10.0, rng)
        assert {o["verdict"] for o in outs} == {word}
        assert all(o["elapsed_s"] <= 10.0 for o in outs)


def test_resampled_a_a_rarely_alarms() -> None:
    rng = np.random.default_rng(2)
    a, b, took = _pool(rng)
    # A pool whose own mean ratio is off by 3 % would alarm on every draw; centred it is A/A.
    b = b * 1.03
    both = (a > 0) & (b > 0)
    b = b / np.exp(np.mean(np.log(b[both] / a[both])))
    outs = verdicts.ab((a, b, took), 1.0, 400, 0.02, 10.0, rng)
    alarms = sum(o["verdict"] in ("slower", "faster") for o in outs)
    # At most alpha (5 %) in the long run; 400 seeded draws, three standard errors above.
    assert alarms <= 0.08 * 400, alarms


def test_the_undecided_are_counted_by_reason() -> None:
    words = ["slower", "inconclusive", "inconclusive", "inconclusive"]
    whys = ["decided", "budget", "budget", "one sample"]
    assert verdicts.undecided(words, whys) == "budget 67 %, one sample 33 %"
    assert verdicts.undecided(["slower"], ["decided"]) == "-"


@pytest.mark.slow
def test_the_quick_mode_prints_a_row_per_procedure_and_ratio() -> None:
    p = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--budget", "5"], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    rows = [
        line
        for line in p.stdout.splitlines()
        if line.startswith("| compare") or line.startswith("| ab")
    ]
    assert len(rows) == 2 * len(verdicts.RATIOS), p.stdout
    assert "load average" in p.stdout
