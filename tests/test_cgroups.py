"""cgroups as an axis: participants placed in groups made for the point, removed after on
every path, a refusal naming the path and the cause where none can be made. Tests that make
groups skip, with the reason, where this process cannot."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import ctxbench
from ctxbench import _core
from tests.conftest import children, needs_cap

QUICK = {"placement": "single", "repetitions": 2, "min_time": 0.005, "warmup": 0}


def _cpu_base() -> Path:
    """This process's group in the hierarchy with the cpu controller, or skip."""
    if os.geteuid() != 0:
        pytest.skip("making cgroups needs root")
    try:
        probe = ctxbench.ring([2], cgroups="same", **QUICK)
    except OSError as e:
        pytest.skip(f"no cgroups here: {e}")
    mount = Path(probe.cgroup_hierarchy.split(":", 1)[1])
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _id, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(",") or (
            probe.cgroup_hierarchy.startswith("v2") and not controllers
        ):
            return mount / path.lstrip("/")
    pytest.skip("this process's cpu group is not listed")


def _ours(base: Path) -> list[Path]:
    return sorted(base.glob(f"ctxbench-{os.getpid()}.*"))


def test_cgroups_are_recorded_and_removed_after() -> None:
    base = _cpu_base()
    for layout, depth in (("same", 1), ("split", 4)):
        r = ctxbench.ring([2, 3], cgroups=layout, cgroup_depth=depth, cgroup_weight=50, **QUICK)
        assert (r.cgroups, r.cgroup_depth, r.cgroup_weight) == (layout, depth, 50)
        assert r.cgroup_hierarchy.split(":")[0] in ("v1", "v2")
        assert np.isfinite(r.latency_us).all() and r.work_verified.all()
        assert _ours(base) == [], "every group made was removed"
    quick = {k: v for k, v in QUICK.items() if k != "warmup"}
    p = ctxbench.pingpong(cgroups="split", cgroup_depth=2, **quick)
    assert (p.cgroups, p.cgroup_depth) == ("split", 2) and _ours(base) == []
    # Without cgroups nothing is made and nothing recorded.
    r = ctxbench.ring([2], **QUICK)
    assert r.cgroups == "none" and r.cgroup_hierarchy is None


def test_the_caller_thread_goes_back_to_its_group() -> None:
    _cpu_base()
    before = Path("/proc/thread-self/cgroup").read_text()
    ctxbench.ring([2], engine="thread", cgroups="split", cgroup_depth=2, **QUICK)
    assert Path("/proc/thread-self/cgroup").read_text() == before


def test_groups_of_a_killed_run_are_removed_by_the_next() -> None:
    base = _cpu_base()
    code = (
        "import ctxbench; ctxbench.ring([2], cgroups='split', cgroup_depth=2,"
        " placement='single', repetitions=10000, min_time=1.0, max_time=None)"
    )
    env = {**os.environ, "CTXBENCH_HISTORY": "off"}
    child = subprocess.Popen([sys.executable, "-c", code], env=env)
    left: list[Path] = []
    try:
        deadline = time.monotonic() + 60
        while not left and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
            left = sorted(base.glob(f"ctxbench-{child.pid}.*"))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert left, "the run made its groups"
    assert all(g.exists() for g in left), "a killed run cannot remove its own"
    ctxbench.ring([2], cgroups="same", **QUICK)
    assert not any(g.exists() for g in left), left


def test_a_caller_that_may_not_make_groups_is_refused_naming_the_path() -> None:
    _cpu_base()
    code = (
        "import os, ctxbench, ctxbench.api, ctxbench.result, hashlib\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "try:\n"
        "    ctxbench.ring([2], cgroups='same', placement='single', repetitions=1)\n"
        "except OSError as e:\n"
        "    print('refused:', e)\n"
    )
    env = {**os.environ, "CTXBENCH_HISTORY": "off"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert "refused: " in out.stdout, out.stdout + out.stderr
    assert "not permitted" in out.stdout and "/ctxbench-" in out.stdout, out.stdout


def test_bad_cgroup_arguments_name_the_parameter() -> None:
    with pytest.raises(ValueError, match="cgroups"):
        ctxbench.ring([2], cgroups="both", **QUICK)
    with pytest.raises(ValueError, match=r"cgroup_depth: must be between 1 and 16"):
        ctxbench.ring([2], cgroups="same", cgroup_depth=0, **QUICK)
    with pytest.raises(ValueError, match=r"cgroup_weight: must be between 1 and 10000"):
        ctxbench.ring([2], cgroups="same", cgroup_weight=10_001, **QUICK)
    with pytest.raises(ValueError, match="fibers are one task"):
        ctxbench.ring([2], engine="fiber", cgroups="split", **QUICK)
    with pytest.raises(ValueError, match="parallel must be 1"):
        ctxbench.ring([2], parallel=2, cgroups="same", **QUICK)
    assert "cgroups" in {p["name"] for p in _core.PARAMETERS}


def test_the_command_line_places_in_cgroups(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from ctxbench.cli import main

    _cpu_base()
    argv = ["ring", "--cgroups", "split", "--cgroup-depth", "2", "--cgroup-weight", "300"]
    assert main([*argv, "--placement", "single", "-N", "2", "--json", "2"]) == 0
    record = json.loads(capsys.readouterr().out)["results"][0]
    assert (record["cgroups"], record["cgroup_depth"], record["cgroup_weight"]) == ("split", 2, 300)
    with pytest.raises(SystemExit):
        main(["pipe", "--cgroups", "both"])
    assert "--cgroups" in capsys.readouterr().err


def test_a_sweep_carries_cgroups_to_every_point_and_its_rows() -> None:
    base = _cpu_base()
    frame = ctxbench.sweep(
        procs=[2, 3],
        engines=["process"],
        placements=["single"],
        sizes_kb=[0],
        cgroups="split",
        cgroup_depth=2,
        progress=False,
        **{k: v for k, v in QUICK.items() if k != "placement"},
    )
    assert set(frame["cgroups"]) == {"split"} and set(frame["cgroup_depth"]) == {2}
    assert (frame["cpu_us_per_hop"] > 0).all()
    assert _ours(base) == []


@needs_cap
@pytest.mark.parametrize(("policy", "layout"), [("fifo", "same"), ("rr", "split")])
def test_a_real_time_policy_runs_in_groups_or_is_refused_naming_the_runtime(
    policy: str, layout: str, no_leaks: None
) -> None:
    """With real-time group scheduling (cgroup v1's cpu.rt_runtime_us) a group ctxbench makes
    has no real-time runtime, and the kernel refuses a real-time task in it: refused before
    any group or task is made, naming the file. Without it the policy runs in the groups."""
    base = _cpu_base()
    if (base / "cpu.rt_runtime_us").exists():
        with pytest.raises(OSError) as e:
            ctxbench.ring([2], policy=policy, cgroups=layout, **QUICK)
        assert "cpu.rt_runtime_us" in str(e.value) and "real-time" in str(e.value), e.value
        assert _ours(base) == []
    else:
        r = ctxbench.ring([2], policy=policy, cgroups=layout, **QUICK)
        assert r.policy == policy and r.cgroups == layout


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_command_removes_its_groups_and_reaps_its_children(sig: int) -> None:
    """SIGTERM and SIGHUP were not handled: 8 processes split at depth 4 left 33 groups in
    12 of 16 kills. They end a command as Ctrl-C does, with exit status 128 + the signal."""
    base = _cpu_base()
    argv = ["ring", "--cgroups", "split", "--cgroup-depth", "4", "--placement", "single"]
    argv += ["-N", "10000", "--min-time", "1", "-W", "0", "8"]
    env = {**os.environ, "CTXBENCH_HISTORY": "off"}
    # As a terminal starts it: a runner under nohup passes SIGHUP on ignored, and a command
    # that inherits it ignored rightly keeps ignoring it (the series under nohup failed here).
    child = subprocess.Popen(
        [sys.executable, "-m", "ctxbench", *argv], env=env,
        preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL),
    )  # fmt: skip
    made: list[Path] = []
    kids: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        # Participant 0 is a thread of the command's process: 7 children.
        while len(kids) < 7 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
            made = sorted(base.glob(f"ctxbench-{child.pid}.*"))
            kids = children(child.pid) if made else set()
        assert made and len(kids) >= 7, "the ring started in its groups"
        child.send_signal(sig)
        assert child.wait(timeout=60) == 128 + sig
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert not any(g.exists() for g in made), made
    assert not [c for c in kids if Path(f"/proc/{c}").exists()], "children left"
