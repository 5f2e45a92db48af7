"""The run level comes from runs of comparable conditions of the same point, with an
estimator a few loaded runs cannot blow up, and the history shows itself."""

from __future__ import annotations

import math
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import QUIET

import ctxbench
from ctxbench import _core, _history
from ctxbench.cli import main
from ctxbench.store._rows import RowSet

META = {"hostname": "h", "cpu_model": "c", "kernel": "k", "ctxbench_version": "v"}
POINT = _history.point("engine=process procs=2")
LOADED = _history.Conditions(load=1.0)


def test_each_run_keeps_the_conditions_it_ran_in(
    kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = _history.Conditions(load=0.4, cpu_times=(100, 10_000))
    monkeypatch.setattr(_history, "_cpu_times", lambda: (130, 11_000))
    _history.remember(META, [POINT], [2.0], [0.02], start)
    with sqlite3.connect(kept / "store.sqlite3") as db:
        rows = db.execute(
            "SELECT r.runnable_per_cpu, r.steal, p.point_id FROM runs r JOIN points p "
            "ON p.run = r.id"
        ).fetchall()
    db.close()
    ((load, steal, words),) = rows
    assert load == 0.4 and steal == pytest.approx(0.03)
    assert words == "engine=process procs=2"


def test_the_conditions_a_run_starts_in_are_read_from_the_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = _history.conditions()
    assert now.load is not None and 0 <= now.load < 1e4
    assert now.cpu_times is not None and now.cpu_times[1] > 0
    # The steal before a run: over the window since this process last looked, if any.
    monkeypatch.setattr(_history, "_last_look", (time.monotonic() - 1.0, (0, 0)))
    assert _history.conditions().steal is not None


def test_only_runs_of_comparable_load_and_steal_count(kept: Path) -> None:
    for k in range(5):
        _history.remember(META, [POINT], [2.0 + k / 100], [0.02], QUIET)
        _history.remember(META, [POINT], [4.0 + k / 10], [0.4], LOADED)
    quiet = _history.earlier(META, [POINT[0]], _history.Conditions(load=0.1))[0]
    assert quiet is not None and np.allclose(np.exp(quiet[0]), [2.0, 2.01, 2.02, 2.03, 2.04])
    loaded = _history.earlier(META, [POINT[0]], _history.Conditions(load=0.9))[0]
    assert loaded is not None and min(np.exp(loaded[0])) >= 4.0
    # Between the two, nothing is like now; a run that cannot read its load neither.
    assert _history.earlier(META, [POINT[0]], _history.Conditions(load=0.5)) == [None]
    assert _history.earlier(META, [POINT[0]], _history.Conditions()) == [None]
    # Steal: runs the hypervisor took 30 % of are not like a run it takes none of.
    stolen = _history.Conditions(load=0.0, cpu_times=(0, 1000))
    run = _history.Run(t=time.time(), p=POINT[0], y=0.7, s=0.01, l=0.0, st=0.3)
    assert not _history.comparable(run, _history.Conditions(load=0.0, steal=0.0))
    assert _history.comparable(run, _history.Conditions(load=0.0, steal=0.28))
    assert _history.comparable(run, stolen), "steal unknown now: load decides"


def _seeded(kept: Path) -> None:
    """Five runs made under two CPU-bound hogs, as a user's history held them: +67 %,
    -19 %, -35 %, +106 % and +100 % of the quiet 2.3 µs, each run's own error 3-20 %; six
    quiet runs that agree within their own errors; and one more loaded run whose load was
    misread as quiet (the hogs started just after its start was read)."""
    t = time.time()
    loaded = [(1.67, 0.2), (0.81, 0.05), (0.65, 0.03), (2.06, 0.15), (2.0, 0.1)]
    lines = [
        {"t": t - 600 + 10 * k, "p": POINT[0], "y": math.log(2.3 * f), "s": s, "l": 1.05}
        for k, (f, s) in enumerate(loaded)
    ] + [
        {"t": t - 300 + 10 * k, "p": POINT[0], "y": math.log(2.3 * f), "s": 0.01, "l": 0.02}
        for k, f in enumerate([1.0, 1.005, 0.995, 1.002, 0.998, 1.004, 1.8])
    ]  # fmt: skip
    machine = ctxbench.store.machine_of({"metadata": META})
    sets = [
        RowSet(
            {"run_key": f"seeded-{k}", "time": rec["t"], "machine": machine, "kernel": "k",
             "version": "v", "kind": "history", "runnable_per_cpu": rec["l"],
             "source": "history"},
            [{"point_id": POINT[1], "point_key": POINT[0], "value_us": math.exp(rec["y"]),
              "ln_value": rec["y"], "rel_se": rec["s"]}],
        )
        for k, rec in enumerate(lines)
    ]  # fmt: skip
    with ctxbench.store.open() as s:  # type: ignore[union-attr]
        s.add(sets)


def _quiet_run() -> tuple[list[float], list[int]]:
    """A quiet run's samples (µs): six instances of two blocks of four repetitions, its
    instances 1 % apart and its repetitions 2 %."""
    rng = np.random.default_rng(7)
    samples = []
    for _ in range(6):
        level = 2.3 * (1 + 0.01 * rng.standard_normal())
        samples += list(level * (1 + 0.02 * rng.standard_normal(8)))
    return samples, [2] * 6


def _t975(df: float) -> float:
    """Student's t quantile at 0.975: bisection on the CDF, the density integrated by
    Simpson's rule (ample for a ratio of interval widths)."""
    c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def cdf(x: float, n: int = 2000) -> float:
        f = [math.exp(c - (df + 1) / 2 * math.log1p((x * k / n) ** 2 / df)) for k in range(n + 1)]
        return 0.5 + x / n / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    low, high = 0.0, 100.0
    for _ in range(50):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < 0.975 else (low, mid)
    return low


def _half_width(samples: list[float], blocks: list[int], level: dict | None) -> float:
    """Half the width of the interval the core gives the next run (center ± t·se·√2)."""
    e = _core.estimate(
        samples, 4, blocks, *((level["sd"], level["runs_seen"]) if level else (None, None))
    )
    return math.sqrt(2) * e["se"] * _t975(e["df"])


def test_a_history_seeded_with_loaded_runs_widens_a_quiet_run_at_most_1_5_times(
    kept: Path,
) -> None:
    _seeded(kept)
    samples, blocks = _quiet_run()
    alone = _half_width(samples, blocks, None)
    # What the quiet run reads back, starting on a quiet machine.
    history = _history.earlier(META, [POINT[0]], QUIET)[0]
    level = _core.run_level(*history) if history else None
    widened = _half_width(samples, blocks, level)
    assert history is not None and len(history[0]) == 7 and level is not None
    assert widened <= 1.5 * alone, (widened / alone, level)
    print(f"quiet run's half-width: {alone:.3f} µs alone, {widened:.3f} µs with history")
    # The same history read as one (the load unknown to each run): the loaded runs are
    # most of it, and they widen the interval many times.
    everything = _history.earlier(META, [POINT[0]], LOADED)[0]
    assert everything is not None and len(everything[0]) == 5
    loaded = _core.run_level(*everything)
    assert loaded is not None and _half_width(samples, blocks, loaded) > 3 * alone


def test_pingpong_points_are_told_apart_by_engine_and_transport(
    kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []
    earlier = _history.earlier
    monkeypatch.setattr(
        _history, "earlier", lambda meta, ids, *now: asked.append(ids) or earlier(meta, ids, *now)
    )
    quick = {"max_time": 0.02, "min_time": 0.002}
    ctxbench.pingpong(**quick)
    ctxbench.pingpong(engine="thread", **quick)
    ctxbench.pingpong(threads=True, **quick)
    ctxbench.pingpong(engine="thread", transport="futex", **quick)
    ctxbench.pingpong(engine="fiber", **quick)
    process, thread, threads, futex, fiber = (ids[0] for ids in asked)
    assert thread == threads and len({process, thread, futex, fiber}) == 4


def test_history_shows_each_point_its_path_and_how_to_turn_it_off(
    kept: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history"]) == 0
    assert "0 runs of 0 points" in capsys.readouterr().out
    # The history keeps a run whose own error is within its figure (under load a 20 ms run
    # may not be): the count is of those.
    kept = 0
    for _ in range(3):
        r = ctxbench.lat_ctx([2], placement="single", min_time=0.002, max_time=0.02)
        x, e = float(r.latency_us[0]), float(r.stats["se_within"][0])
        kept += bool(0 < e <= x)
    assert main(["history"]) == 0
    out = capsys.readouterr().out
    path = ctxbench.store.default_path()
    points = 1 if kept else 0
    said = f"run history: {path}: {kept} runs of {points} points"
    assert said in out and "CTXBENCH_HISTORY=off" in out
    if kept:
        header, row = out.splitlines()[-2:]
        assert header.split() == ["runs", "alike", "spread", "newest", "oldest", "point"]
        runs, alike, spread = row.split()[:3]
        # Alike: those started in conditions like now's; a spread needs three of them.
        assert int(runs) == kept and 0 <= int(alike) <= kept
        assert (spread == "<3") == (int(alike) < 3)
        assert "placement=single procs=2" in row
    assert main(["info"]) == 0
    info = capsys.readouterr().out.splitlines()[-1]
    assert info.startswith("run_history:") and f"{path}: {kept} runs" in info
    assert main(["history", "--clear"]) == 0
    # Every run of the three, whether a run level could use it or not.
    assert capsys.readouterr().out == f"removed 3 runs of the last 24 h from {path}\n"
    assert main(["history"]) == 0
    assert "0 runs of 0 points" in capsys.readouterr().out


def test_info_says_when_the_history_is_off(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == [
        "run_history:", "off", "($CTXBENCH_HISTORY=off)"
    ]  # fmt: skip
