"""The working set proven (``resident_kb``), ``stride_bytes`` and ``cache_sweep``: its grids
on described hosts, its refusals, and a real sweep tested for what holds on a loaded machine
(the knee finder on known curves: ``test_knees.py``). Whether the L2 knee shows on a quiet one
is ``benches/edges.py``'s and the cache notebook's to show.
"""

from __future__ import annotations

import itertools
import math
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import hosts
import numpy as np
import pytest
from conftest import Described
from stub_keys import typeddict_keys

import ctxbench
from ctxbench import _core

pd = pytest.importorskip("pandas")

QUICK = {"min_time": 0.002, "repetitions": 2, "warmup": 0}


# ---- the working set and the stride ---------------------------------------------------------


@pytest.mark.parametrize("engine", ["process", "thread", "fiber"])
def test_every_array_is_proven_resident_and_private(engine: str) -> None:
    r = ctxbench.ring([2, 3], engine=engine, size_kb=96, **QUICK)
    assert r.resident_kb.tolist() == [96, 96]
    assert not any("resident_kb" in w for w in r.warnings)
    assert r.to_frame()["resident_kb"].eq(96).all()


def test_size_zero_has_nothing_to_prove() -> None:
    assert ctxbench.lat_ctx([2], **QUICK).resident_kb.tolist() == [0]


@pytest.mark.parametrize("stride", [8, 64, 4096])
def test_every_stride_keeps_the_checksum_verified(stride: int) -> None:
    r = ctxbench.ring([2], size_kb=64, stride_bytes=stride, **QUICK)
    assert r.stride_bytes == stride
    assert r.work_verified.all()
    words = np.arange(64 * 1024 // 8, dtype=np.uint64)[:: stride // 8]
    assert _core.workload_checksum(64, stride) == int(words.sum())


@pytest.mark.parametrize("bad", [0, 4, 12, 100, 8192, -8])
def test_a_stride_outside_the_rule_is_a_value_error_naming_it(bad: int) -> None:
    with pytest.raises(ValueError, match=r"stride_bytes: must be a power of two between 8"):
        ctxbench.ring([2], stride_bytes=bad, **QUICK)


def test_a_stride_that_is_not_an_int_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="stride_bytes"):
        ctxbench.ring([2], stride_bytes=True, **QUICK)  # type: ignore[arg-type]


def test_a_record_round_trips_the_working_set(tmp_path: Any) -> None:
    r = ctxbench.ring([2], size_kb=16, stride_bytes=64, **QUICK)
    from ctxbench.result import from_record, read_records

    r.save(tmp_path / "r.json")
    back = from_record(read_records(tmp_path / "r.json")[0])
    assert isinstance(back, ctxbench.RingResult)
    assert back.stride_bytes == 64
    assert back.resident_kb.tolist() == [16]
    assert ctxbench.load(tmp_path / "r.json")["resident_kb"].tolist() == [16, 16]


# ---- grids: the core's defaults on described hosts --------------------------------------------

# The core's limits on a size and on the streaming read, KiB.
SIZE_LIMIT_KB = 1 << 20
# The time budget of a default sweep (src/host/cache.rs), seconds.
TIME_BUDGET_S = 120.0


class Measured(Exception):
    """Raised by a spy in place of the core's sweep: what it was asked is what counts."""


def asked_of_the_core(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every call ``cache_sweep`` makes to ``_core.cache_sweep``, stopped at the first."""
    calls: list[dict[str, Any]] = []

    def spy(procs: Any, sizes_kb: Any, **kwargs: Any) -> Any:
        calls.append({"procs": procs, "sizes_kb": sizes_kb, **kwargs})
        raise Measured

    monkeypatch.setattr(_core, "cache_sweep", spy)
    return calls


def test_the_intel_guests_defaults_are_its_cpus_share_and_within_the_limits(
    described: Described, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 480 MiB of L3 shared by both vCPUs: the default streaming read was 4 x 480 MiB, past
    # the core's limit, and every cache sweep failed naming size_kb.
    monkeypatch.setenv("CTXBENCH_SYSFS", str(described("intel-xeon-guest")))
    calls = asked_of_the_core(monkeypatch)
    with pytest.raises(Measured):
        ctxbench.cache_sweep(progress=False)
    (first,) = calls
    assert first["sizes_kb"][0] == 0 and max(first["sizes_kb"]) <= SIZE_LIMIT_KB
    assert 0 < first["stream_kb"] <= SIZE_LIMIT_KB and first["line_bytes"] == 64
    plan = _core.cache_plan([2, 8])
    # One CPU (placement "single") counts half the L3 it shares with the other.
    assert plan["cpus"] == [0]
    assert plan["caches"] == {"L1d": 48, "L1i": 32, "L2": 2048, "L3": 245760}
    assert plan["stream_kb"] == 4 * 245760 == first["stream_kb"]
    assert dict(zip([2, 8], plan["sizes_kb"]))[first["procs"][0]] == first["sizes_kb"]
    assert plan["estimated_s"] <= TIME_BUDGET_S
    for p, grid in zip([2, 8], plan["sizes_kb"]):
        assert max(grid) <= SIZE_LIMIT_KB
        assert p * max(grid) >= 4 * 245760 or any(
            n.startswith(f"the grid of {p} processes stops") for n in plan["notes"]
        )


@pytest.mark.parametrize("host", sorted(hosts.PROFILES))
@pytest.mark.parametrize("placement", ["single", "default"])
def test_every_described_hosts_defaults_are_within_the_limits_and_budgets(
    host: str, placement: str, described: Described, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXBENCH_SYSFS", str(described(host)))
    plan = _core.cache_plan([2, 8], placement=placement)
    assert plan["sysfs"].endswith(host)
    for grid in plan["sizes_kb"]:
        assert grid[0] == 0 and grid == sorted(set(grid)) and max(grid) <= SIZE_LIMIT_KB
    assert 0 < plan["stream_kb"] <= SIZE_LIMIT_KB and 8 <= plan["line_bytes"] <= 4096
    assert plan["estimated_s"] <= TIME_BUDGET_S
    # Per-CPU shares: never more than the caches of the CPUs used, counted once each.
    whole: dict[str, float] = {}
    t = ctxbench.topology()
    for c in t.caches:
        if c["size_kb"] is not None and set(c["cpus"].tolist()) & set(plan["cpus"]):
            whole[c["name"]] = whole.get(c["name"], 0) + c["size_kb"]
    assert all(kb <= whole[name] + 1 for name, kb in plan["caches"].items())


def test_the_sizes_command_runs_on_the_intel_guest(described: Described) -> None:
    # Named sizes: the default streaming read still failed, blaming size_kb.
    env = {**os.environ, "CTXBENCH_SYSFS": str(described("intel-xeon-guest"))}
    p = subprocess.run([sys.executable, "-m", "ctxbench", *SIZES_0_16], env=env,
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "streaming read:" in p.stdout


SIZES_0_16 = ["sizes", "--procs", "2", "--sizes", "0", "16", "--rounds", "2", "--no-progress"]


@pytest.mark.parametrize("line", ["0", "-1", "1e23", "garbage"])
def test_a_line_size_sysfs_cannot_give_is_64_and_said_never_blamed_on_line_bytes(
    line: str, described: Described
) -> None:
    root = described("intel-xeon-guest")
    (root / "devices/system/cpu/cpu0/cache/index0/coherency_line_size").write_text(line + "\n")
    env = {**os.environ, "CTXBENCH_SYSFS": str(root)}
    p = subprocess.run([sys.executable, "-m", "ctxbench", *SIZES_0_16], env=env,
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr  # it failed naming --line-bytes, never given
    assert "refills count lines of 64 bytes" in p.stderr


LIVE_LINE = Path("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size")


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs root")
@pytest.mark.skipif(not LIVE_LINE.exists(), reason="this machine's sysfs shows no cache line")
@pytest.mark.parametrize("line", ["0", "fifo"])
def test_this_machines_line_size_is_read_guarded(line: str, tmp_path: Path) -> None:
    # This machine's own file, bound over in a mount namespace: Python read it directly, so
    # "0" failed blaming --line-bytes and a FIFO hung the command.
    bad = tmp_path / "line"
    os.mkfifo(bad) if line == "fifo" else bad.write_text(line + "\n")
    command = " ".join([shlex.quote(sys.executable), "-m", "ctxbench", *SIZES_0_16])
    script = f"mount --bind {shlex.quote(str(bad))} {LIVE_LINE} && exec {command}"
    p = subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    if "mount" in p.stderr and p.returncode != 0:
        pytest.skip(f"cannot bind over {LIVE_LINE} here: {p.stderr.strip()}")
    assert p.returncode == 0, p.stderr
    assert "refills count lines of 64 bytes" in p.stderr


ADDRESS_SPACE = """
import resource, sys
from ctxbench import _core
vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize:")).split()[1])
cap = (vm << 10) + (512 << 20)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
plan = _core.cache_plan([2, 8])
print(plan["memory_bytes"] <= 256 << 20, plan["notes"])
"""


def test_the_address_space_limit_bounds_the_defaults(described: Described) -> None:
    # ulimit -v: 512 MiB past what the process holds, of which a default takes half.
    env = {**os.environ, "CTXBENCH_SYSFS": str(described("intel-xeon-guest"))}
    p = subprocess.run([sys.executable, "-c", ADDRESS_SPACE], env=env, capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("True") and "50 % of RLIMIT_AS" in p.stdout, p.stdout


@pytest.mark.parametrize("stream_kb", [0, -5, SIZE_LIMIT_KB + 1])
def test_a_streaming_read_outside_its_limit_is_refused_naming_it(stream_kb: int) -> None:
    with pytest.raises(ValueError, match=r"^stream_kb: must be between 1 and 1048576, got"):
        ctxbench.cache_sweep([2], [0, 4], rounds=2, stream_kb=stream_kb, progress=False)
    from ctxbench.cli import main

    assert main([*SIZES_0_16, f"--stream-kb={stream_kb}"]) == 2


def test_without_cache_information_auto_says_so_and_uses_the_default_grid(
    described: Described, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXBENCH_SYSFS", str(described("vm-no-caches")))
    plan = _core.cache_plan([2])
    assert plan["sizes_kb"] == [[0, *(2**k for k in range(2, 17))]]
    assert plan["caches"] == {}
    # Measured over three of its sizes: the sweep says what the core said.
    real = _core.cache_plan

    def three_sizes(*args: Any, **kwargs: Any) -> Any:
        return {**real(*args, **kwargs), "sizes_kb": [[0, 4, 16]]}

    monkeypatch.setattr(_core, "cache_plan", three_sizes)
    sweep = ctxbench.cache_sweep([2], rounds=2, min_time=0.002, progress=False)
    assert sweep.note is not None and "sysfs has no cache sizes for CPUs [0]" in sweep.note
    assert sweep.caches is None
    assert sorted(sweep.table["size_kb"]) == [0, 4, 16]


def test_a_grid_that_cannot_fit_in_memory_fails_before_forking() -> None:
    from conftest import children

    before = children()
    with pytest.raises(MemoryError, match="50000 participants with 1048576 KiB"):
        ctxbench.cache_sweep([50_000], [0, 1 << 20], rounds=2, progress=False)
    # The ring that cannot fit is refused first, not after the others were measured.
    with pytest.raises(MemoryError, match="50000 participants"):
        ctxbench.cache_sweep([2, 50_000], [0, 1 << 20], rounds=2, progress=False)
    assert children() == before


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"sizes_kb": "big"}, ValueError),
        ({"sizes_kb": [0, -1]}, ValueError),
        ({"rounds": 1}, ValueError),
        ({"procs": []}, ValueError),
        ({"stride_bytes": 24}, ValueError),
        ({"min_time": True}, TypeError),
        ({"rounds": True}, TypeError),
        ({"procs": itertools.count(2)}, ValueError),
        ({"sizes_kb": {0, 4}}, TypeError),
        ({"timeout": "10"}, TypeError),
    ],
)
def test_bad_sweep_arguments_are_refused(kwargs: dict[str, Any], error: type) -> None:
    args = {"procs": [2], "sizes_kb": [0, 4], "rounds": 2, "progress": False, **kwargs}
    with pytest.raises(error):
        ctxbench.cache_sweep(**args)


# ---- a real sweep -----------------------------------------------------------------------------


def test_a_sweep_splits_every_point_into_direct_and_indirect_cost(no_leaks: None) -> None:
    sweep = ctxbench.cache_sweep(
        [2, 3], [0, 16, 64], rounds=2, min_time=0.002, stride_bytes=64, progress=False
    )
    t = sweep.table
    assert len(t) == 6 and set(t["procs"]) == {2, 3}
    assert (t["resident_kb"] == t["size_kb"]).all()
    assert (t["working_set_kb"] == t["procs"] * t["size_kb"]).all()
    for _, g in t.groupby("procs"):
        assert g["direct_us"].nunique() == 1
        zero = g[g["size_kb"] == 0].iloc[0]
        assert zero["indirect_us"] == 0 and zero["direct_us"] == zero["latency_us"]
        rest = g[g["size_kb"] > 0]
        assert np.allclose(rest["indirect_us"], rest["latency_us"] - rest["direct_us"])
        assert (rest["indirect_low_us"] <= rest["indirect_us"]).all()
        assert (rest["indirect_us"] <= rest["indirect_high_us"]).all()
        figures = rest[rest["refill_note"].isin(["", "above streaming read"])]
        rate = figures["size_kb"] / figures["indirect_us"]
        assert np.allclose(figures["refill_kib_per_us"], rate)
    assert (sweep.stream_kib_per_us > 0).all() and len(sweep.stream_kib_per_us) == 4
    _refills_are_figures_only_where_resolved(t)
    for r in sweep.results:
        assert r.repetitions_made.tolist() == [2 * 4]
        assert r.stride_bytes == 64
    frame = sweep.frame()
    assert set(frame["size_kb"]) == {0, 16, 64}


def _refills_are_figures_only_where_resolved(t: pd.DataFrame) -> None:
    """The core's rule, as the table holds it: a rate is a number only where the indirect
    cost's interval lies above 0, and one above the streaming read says so."""
    unresolved = (t["size_kb"] > 0) & ~(t["indirect_low_us"] > 0)
    assert (t.loc[unresolved, "refill_note"] == "below resolution").all()
    assert (t.loc[t["size_kb"] == 0, "refill_note"] == "nothing to refill").all()
    empty = t["refill_note"].isin(["below resolution", "nothing to refill"])
    assert t.loc[empty, ["refill_kib_per_us", "refill_low", "refill_high"]].isna().all().all()
    figures = t[~empty]
    assert (figures["indirect_low_us"] > 0).all()
    # Set against the streaming read (from memory) only past the largest cache share: a
    # refill from a nearer cache outran it on nearly every row, and was marked on each.
    past = figures["working_set_kb"] > largest_share_kb()
    above = past & (figures["refill_kib_per_us"] > figures["stream_kib_per_us"])
    assert (figures["refill_note"] == np.where(above, "above streaming read", "")).all()


def largest_share_kb() -> float:
    """The largest cache share one CPU of this machine competes for (data or unified): a
    cache shared by k CPUs counts a k-th, as the core's plan counts it for one CPU."""
    caches = [c for c in ctxbench.topology().caches if c["type"] != "Instruction"]
    return max((c["size_kb"] / max(1, len(c["cpus"])) for c in caches), default=math.inf)


def test_the_sizes_table_prints_no_rate_that_is_not_one() -> None:
    from ctxbench.cli._measure import sizes_table

    row = {"procs": 2, "working_set_kb": 0, "latency_us": 2.0, "direct_us": 2.0,
           "resident_kb": 0, "stream_kib_per_us": 21.5}  # fmt: skip
    columns = ["size_kb", "indirect_us", "indirect_low_us", "indirect_high_us",
               "refill_kib_per_us", "refill_note"]  # fmt: skip
    rows = [
        dict(row, **dict(zip(columns, values)))
        for values in [
            (0, 0.0, 0.0, 0.0, math.nan, "nothing to refill"),
            # 4,449 KiB/µs from an indirect cost whose interval reaches 0: no figure.
            (64, 0.0144, -0.3, 0.33, math.nan, "below resolution"),
            (128, 1.6, 1.5, 1.7, 80.0, "above streaming read"),
            (4096, 256.0, 250.0, 262.0, 16.0, ""),
        ]
    ]
    lines = sizes_table(pd.DataFrame(rows)).splitlines()
    assert lines[2].split()[-2:] == ["resolution", "0"] and "below resolution" in lines[2]
    # The indirect cost whose interval reaches 0 is not printed as a figure.
    assert "not known: [-0.30, 0.33] reaches 0" in lines[2] and "0.01" not in lines[2]
    assert "80.0 *" in lines[3] and lines[4].split()[-2] == "16.0"
    assert lines[5].startswith("* 21.5 KiB/µs or more: faster than the streaming read")
    assert "past the largest cache share" in lines[5]


def test_the_sweep_dict_matches_the_stub() -> None:
    keys = typeddict_keys()
    raw: dict[str, Any] = dict(_core.cache_sweep([2], [0, 4], rounds=2, min_time=0.002))
    assert set(raw) == keys["CacheSweepDict"]
    assert set(raw["indirect"]) == keys["IndirectDict"]
    assert all(set(r) == keys["RingDict"] for r in raw["results"])


def test_the_sizes_command_prints_the_split_and_the_knees() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ctxbench", "sizes", "--procs", "2", "--sizes", "0", "8", "32",
         "--rounds", "2", "--stride", "64"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "indirect µs [95 %]" in out and "streaming read:" in out
    assert len([line for line in out.splitlines() if line.lstrip().startswith("2 ")]) == 3


def test_the_sizes_command_reports_each_round_where_no_bar_shows() -> None:
    args = [sys.executable, "-m", "ctxbench", "sizes", "--procs", "2", "3", "--sizes", "0", "8",
            "16", "--rounds", "2"]  # fmt: skip
    err = subprocess.run(args, capture_output=True, text=True, check=True).stderr
    rounds = [line for line in err.splitlines() if line.startswith("ctxbench sweep of sizes: ")]
    assert [line.split(": ")[1].split(" (")[0] for line in rounds] == [
        f"round {k} of 4" for k in range(1, 5)
    ]
    assert all("procs, 3 sizes)" in line for line in rounds)
    quiet = subprocess.run([*args, "--no-progress"], capture_output=True, text=True, check=True)
    # Only the progress lines: a wait for the measuring lock names its holder's command line,
    # which another test's "sizes --rounds 2" is.
    assert not [line for line in quiet.stderr.splitlines() if line.startswith("ctxbench sweep")]


def test_the_core_tells_every_round_and_an_error_there_stops_the_sweep() -> None:
    heard: list[tuple[int, int]] = []
    _core.cache_sweep([2], [0, 4], rounds=3, min_time=0.002, progress=lambda *a: heard.append(a))
    assert heard == [(1, 3), (2, 3), (3, 3)]

    class Stop(Exception):
        pass

    def stop(done: int, of: int) -> None:
        raise Stop(done)

    with pytest.raises(Stop):
        _core.cache_sweep([2], [0, 4], rounds=3, min_time=0.002, progress=stop)


@pytest.mark.slow
def test_a_real_sweep_finds_knees_that_name_nearby_caches(
    described: Described, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What holds under load: every knee lies inside its interval, and a cache it names is
    within an octave of it. (That the L2 knee shows is the bench's claim, on a quiet host.)"""
    # Its grid from a described host's small caches (a 1 MiB share of L3): never from this
    # machine's, whatever they are.
    monkeypatch.setenv("CTXBENCH_SYSFS", str(described("arm-clusters")))
    sweep = ctxbench.cache_sweep([2, 8], rounds=3, progress=False)
    found = ctxbench.knees(sweep)
    assert list(found.columns[:5]) == ["engine", "transport", "placement", "stride_bytes", "procs"]
    for k in found.itertuples():
        assert k.working_set_low_kb <= k.working_set_kb <= k.working_set_high_kb
        if isinstance(k.cache, str):
            assert abs(math.log2(k.working_set_kb / k.cache_kb)) <= 1.0


def test_a_sweep_keeps_every_finished_ring_size_in_out(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    real, calls = _core.cache_sweep, []

    def second_fails(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0])
        if len(calls) == 2:
            raise OSError(11, "fork of participant 5: the process limit was reached")
        return real(*args, **kwargs)

    monkeypatch.setattr(_core, "cache_sweep", second_fails)
    out = tmp_path / "sizes.json"
    with pytest.raises(OSError, match="process limit"):
        ctxbench.cache_sweep([2, 3], [0, 4], rounds=2, min_time=0.002, progress=False, out=out)
    kept = ctxbench.load(out)
    assert sorted(kept.groupby(["procs", "size_kb"]).groups) == [(calls[0][0], 0), (calls[0][0], 4)]


@pytest.mark.parametrize(
    ("out", "error", "message"),
    [
        ("missing/sizes.json", FileNotFoundError, "missing/sizes.json"),
        ("sizes.bogus", ValueError, "unknown suffix '.bogus'; name a results file ending in"),
        ("", ValueError, "'': an empty file name; name a results file ending in .json, .csv"),
    ],
)
def test_an_out_a_sweep_cannot_write_is_refused_before_measuring(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, out: str, error: type, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_core, "cache_sweep", lambda *a, **k: pytest.fail("measured"))
    with pytest.raises(error, match=message):
        ctxbench.cache_sweep([2], [0, 4], rounds=2, progress=False, out=out)
