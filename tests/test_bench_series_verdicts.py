"""``benches/series_verdicts.py``: the A/A runs it keeps are judged again the same way from the
file (``--replay``), a run far off its series exits as ``compare`` would, and the tails it
prints count the runs beyond 3, 4 and 5 of their series' spreads beside t."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).parent.parent / "benches" / "series_verdicts.py"
sys.path.insert(0, str(BENCH.parent))
import series_verdicts  # noqa: E402


def _kept(tmp_path: Path, jump_at: int | None) -> Path:
    """60 A/A runs of the sweep's 4 points, 1 % apart, one run 20 % slower at ``jump_at``."""
    rng = np.random.default_rng(7)
    values = (np.array([0.7, 1.3, 1.6, 1.6]) * np.exp(rng.normal(0, 0.01, (60, 4)))).tolist()
    if jump_at is not None:
        values[jump_at] = [v * 1.2 for v in values[jump_at]]
    kept = {"when": "planted", "values": values, "errors": [[0.005] * 4] * 60, "loads": [0.5] * 60}
    path = tmp_path / "aa.json"
    path.write_text(json.dumps(kept))
    return path


@pytest.mark.parametrize("jump_at", [None, 45])
def test_a_replayed_run_off_its_series_is_an_exit_and_a_tail(
    tmp_path: Path, jump_at: int | None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert series_verdicts.main(["--replay", str(_kept(tmp_path, jump_at))]) == 0
    out = capsys.readouterr().out
    exits = 1 if jump_at else 0
    assert f"compare would exit 1 in {exits} (" in out
    # 30 runs of 4 points are scanned from the 31st; the planted run is 4 of 120 beyond 5.
    beyond_5 = out.split("tails: |z| of 120 runs")[1].split(">5: ")[1].split("%")[0]
    assert float(beyond_5) == pytest.approx(100 * 4 / 120 if jump_at else 0.0, abs=0.1)
    assert "t4: >3: 3.99%, >4: 1.61%, >5: 0.75%" in out


def test_t_beyond_is_students() -> None:
    # P(|T| > x): t₁ is Cauchy's (2/π · atan(1/x)), and a large df is the normal's.
    assert series_verdicts.t_beyond(1.0, 1.0) == pytest.approx(0.5, abs=1e-6)
    assert series_verdicts.t_beyond(1.96, 1e6) == pytest.approx(0.05, abs=1e-4)
