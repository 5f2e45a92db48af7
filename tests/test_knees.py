"""``knees``: where a cache sweep's refill cost per KiB steps up, and the cache level each knee
names, tested on synthetic curves whose knees are known (deterministic), and drawn by
``plot.sizes``. A real sweep's knees are ``test_cache.py``'s.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

import ctxbench
from ctxbench import cache
from ctxbench.cli._measure import knee_lines

pd = pytest.importorskip("pandas")

CACHES = {"L1d": 32, "L1i": 32, "L2": 1024, "L3": 32768}


def test_levels_are_named_for_knees() -> None:
    assert cache.named_levels(CACHES) == {"L1d": 32, "L2": 1024, "LLC": 32768}
    assert cache.named_levels({"L1d": 48, "L2": 2048}) == {"L1d": 48, "LLC": 2048}


def synthetic(
    procs: int, knees_kb: list[int], levels: list[float], noise: float, seed: int
) -> pd.DataFrame:
    """A cache sweep's frame whose refill cost per KiB steps from levels[k] to levels[k+1]
    over about an octave around knees_kb[k] (working set), plus Gaussian noise."""
    rng = np.random.default_rng(seed)
    sizes = [0] + [round(4 * 2 ** (k / 2)) for k in range(29)]
    rows = []
    for s in sizes:
        x = math.log2(max(procs * s, 1))
        z = levels[0] + sum(
            (b - a) / (1 + math.exp(-6 * (x - math.log2(kn))))
            for kn, a, b in zip(knees_kb, levels, levels[1:])
        )
        for rep in range(5 * 4):
            value = 2.0 + s * z + rng.normal(0, noise * (1 + 0.05 * s * z))
            key = {"engine": "process", "transport": "pipe", "placement": "single"}
            rows.append({**key, "procs": procs, "size_kb": s, "repetition": rep, "value": value})
    return pd.DataFrame(rows)


def test_two_known_knees_are_found_and_named() -> None:
    df = pd.concat([synthetic(p, [1024, 32768], [0.0, 0.03, 0.1], 0.02, p) for p in (2, 8)])
    found = ctxbench.knees(df, CACHES)
    assert found["procs"].tolist() == [2, 2, 8, 8]
    assert found["cache"].tolist() == ["L2", "LLC", "L2", "LLC"]
    for k in found.itertuples():
        want = 1024 if k.cache == "L2" else 32768
        assert abs(math.log2(k.working_set_kb / want)) < 0.25
        assert k.working_set_low_kb <= k.working_set_kb <= k.working_set_high_kb
        assert k.after_us_per_kib > k.before_us_per_kib
        assert k.size_kb == pytest.approx(k.working_set_kb / k.procs)


def test_a_knee_between_caches_is_found_and_named_by_none() -> None:
    found = ctxbench.knees(synthetic(2, [200], [0.0, 0.05], 0.2, 3), {"L2": 1024, "L3": 32768})
    assert len(found) == 1
    assert abs(math.log2(found["working_set_kb"].iloc[0] / 200)) < 0.5
    assert found["cache"].iloc[0] is None
    assert found["note"].iloc[0] == "no cache level within an octave: below L2 (1,024 KiB)"
    between = ctxbench.knees(synthetic(2, [200], [0.0, 0.05], 0.2, 3), {"L1d": 16, "L2": 4096})
    assert between["note"].iloc[0].endswith("between L1d (16 KiB) and LLC (4,096 KiB)")
    (line,) = knee_lines(found)
    assert "?" not in line and line.endswith(
        "]: no cache level within an octave: below L2 (1,024 KiB)"
    )


def test_a_knee_that_names_no_cache_beside_one_that_does_prints_no_nan() -> None:
    # pandas 3 reads a column of str and None as strings with NaN: "-> nan (nan KiB)".
    found = ctxbench.knees(synthetic(2, [200, 32768], [0.0, 0.05, 0.2], 0.02, 3), CACHES)
    assert found["cache"].tolist() == [None, "LLC"]
    first, second = knee_lines(found)
    assert "nan" not in first + second
    assert first.endswith(
        ": no cache level within an octave: between L1d (32 KiB) and L2 (1,024 KiB)"
    )
    assert second.endswith("-> LLC (32,768 KiB)")


def test_a_flat_curve_has_no_knee_and_says_why() -> None:
    found = ctxbench.knees(synthetic(2, [], [0.02], 0.2, 4), CACHES)
    assert found.empty
    (none,) = found.attrs["no_knee"]
    assert none["procs"] == 2
    need = float(re.search(r"needs a rise of about (\S+) µs/KiB", none["reason"])[1])
    noise = float(re.search(r"against a noise of (\S+) per size", none["reason"])[1])
    assert need > noise > 0
    assert knee_lines(found) == [f"no knee: 2 procs: {none['reason']}"]
    matched = ctxbench.knees(synthetic(8, [1024], [0.0, 0.04], 0.02, 5), CACHES)
    assert matched.attrs["no_knee"] == [] and matched["note"].tolist() == [""]
    assert knee_lines(matched)[0].endswith("-> L2 (1,024 KiB)")


@pytest.mark.parametrize(
    ("data", "kwargs", "error", "match"),
    [
        (None, {}, TypeError, "data: expected a CacheSweep or a frame"),
        ("sweep.json", {}, TypeError, "data: .* got str"),
        ("procs0", {}, ValueError, "procs: expected counts >= 1"),
        ("nan", {}, ValueError, "value: expected finite µs"),
        ("text", {}, ValueError, "value: expected finite µs"),
        ("frame", {"caches": "L2"}, TypeError, "caches: expected a dict"),
        ("frame", {"caches": {"L2": 0}}, ValueError, "caches: 'L2' must be a size in KiB > 0"),
        ("frame", {"caches": {"L2": -5}}, ValueError, "caches: 'L2'"),
        ("frame", {"bootstrap": 0}, ValueError, "bootstrap: must be between 10 and 10,000"),
        ("frame", {"bootstrap": 10**7}, ValueError, "bootstrap: must be between 10 and 10,000"),
        ("frame", {"bootstrap": 1.5}, TypeError, "bootstrap: expected an int"),
        ("frame", {"seed": "x"}, TypeError, "seed: expected an int"),
    ],
)
def test_knees_refuses_bad_input_naming_the_parameter(
    data: Any, kwargs: dict[str, Any], error: type, match: str
) -> None:
    df = synthetic(2, [1024], [0.0, 0.03], 0.02, 6)
    frames = {
        "frame": df,
        "procs0": df.assign(procs=0),
        "nan": df.assign(value=np.where(df["repetition"] == 3, np.nan, df["value"])),
        "text": df.assign(value="a"),
    }
    with pytest.raises(error, match=match):
        ctxbench.knees(frames.get(data, data) if isinstance(data, str) else data, **kwargs)


def test_noise_widens_the_interval_and_the_seed_fixes_it() -> None:
    quiet = ctxbench.knees(synthetic(8, [1024], [0.0, 0.04], 0.02, 5), CACHES)
    noisy = ctxbench.knees(synthetic(8, [1024], [0.0, 0.04], 2.0, 5), CACHES)
    width = lambda k: math.log2(k["working_set_high_kb"].iloc[0] / k["working_set_low_kb"].iloc[0])  # noqa: E731
    assert width(noisy) > width(quiet)
    again = ctxbench.knees(synthetic(8, [1024], [0.0, 0.04], 2.0, 5), CACHES)
    pd.testing.assert_frame_equal(noisy, again)


def test_a_curve_without_size_zero_is_refused() -> None:
    df = synthetic(2, [1024], [0.0, 0.03], 0.02, 6)
    with pytest.raises(ValueError, match="size 0"):
        ctxbench.knees(df[df["size_kb"] > 0], CACHES)


def test_the_plot_marks_the_knees() -> None:
    pytest.importorskip("matplotlib")
    df = synthetic(8, [1024], [0.0, 0.04], 0.02, 7)
    found = ctxbench.knees(df, CACHES)
    fig = ctxbench.plot.sizes(df, cache_kb=CACHES, knees=found)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any(t == "knee 8p: L2" for t in texts), texts
