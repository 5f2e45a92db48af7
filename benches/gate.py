"""Does the pytest gate catch a real change in a user's test and pass an unchanged one? On real
sessions, against a real store (issue 32's gate criteria).

    python benches/gate.py                    # 10 + 20 + 3 + 5 sessions, ~3 min quiet
    python benches/gate.py --fill 10 --aa 20 --changed 5

A user's project of one test, ``ctxbench.ring([2, 4], placement="single")`` measured through the
plugin's ``ctxbench`` fixture, run as ``pytest --ctxbench-store PATH`` (one subprocess per
session, the default gate: threshold 2 %, Holm at the session's 5 %, inconclusive warns):

- ``--fill`` sessions with nothing changed make the series (the first 5 are "short series");
- ``--aa`` more sessions with nothing changed: each one failing is a false alarm. Printed: how
  many failed, with the binomial 95 % upper bound of the rate;
- the test's engine changed to threads, ``--changed`` sessions on a copy of that store: each
  must fail naming the test (its stored points are no longer measured);
- the test's tasks moved into split cgroups at depth 4 (the change issue 32 measured at
  +31-50 %), ``--changed`` sessions on another copy: each failing is a caught regression.
  Printed: how many failed, and each session's table row (ratio, verdict).

Everything lives under a temporary directory (store, project, XDG data home): the user's store
and history are left alone. The load averages are printed beside every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from series_verdicts import load, upper95

TEST = """\
import json
import os


def test_ring(ctxbench):
    change = json.loads(os.environ.get("GATE_CHANGE") or "{}")
    ctxbench.ring([2, 4], placement="single", **change)
"""
NODE = "test_user.py::test_ring"
CGROUPS = {"cgroups": "split", "cgroup_depth": 4}


def session(project: Path, store: Path, change: dict[str, object]) -> tuple[int, list[str]]:
    """One pytest session of the user's project: its exit code and the gate table's rows."""
    env = {
        **os.environ,
        "GATE_CHANGE": json.dumps(change),
        "XDG_DATA_HOME": str(project / "xdg"),
        "CTXBENCH_HISTORY": "off",
    }
    env.pop("CTXBENCH_STORE", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         f"--ctxbench-store={store}", "test_user.py"],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    lines = done.stdout.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("test ")]
    rows = [line for line in lines[heads[0] + 1 :] if line.startswith(NODE)] if heads else []
    # The failure as pytest's summary names it ("FAILED <node id> - <why>").
    rows += [line[:160] for line in lines if line.startswith("FAILED")]
    return done.returncode, rows


def copy(store: Path, to: Path) -> Path:
    """A copy of the store as SQLite's backup makes it (the WAL included)."""
    with sqlite3.connect(store) as src, sqlite3.connect(to) as dst:
        src.backup(dst)
    return to


def sessions(project: Path, store: Path, n: int, change: dict[str, object], what: str) -> int:
    print(f"{what}: {n} sessions; {load()}")
    failed = 0
    for i in range(n):
        code, rows = session(project, store, change)
        failed += code != 0
        print(f"  {i + 1:>2}: exit {code}  " + " | ".join(" ".join(r.split()) for r in rows))
    print(f"  failed {failed} of {n} ({failed / n:.0%}, 95 % upper bound "
          f"{upper95(failed, n):.0%}); after: {load()}")  # fmt: skip
    return failed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fill", type=int, default=10, help="sessions making the series")
    p.add_argument("--aa", type=int, default=20, help="unchanged sessions judged")
    p.add_argument("--changed", type=int, default=5, help="sessions of each real change")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "test_user.py").write_text(TEST)
        (project / "data").mkdir(mode=0o700)
        store = project / "data" / "store.sqlite3"
        sessions(project, store, args.fill, {}, "filling the series (nothing changed)")
        aa = sessions(project, store, args.aa, {}, "A/A (nothing changed): each failure false")
        engine = copy(store, project / "data" / "engine.sqlite3")
        caught = sessions(project, engine, args.changed, {"engine": "thread"}, "engine -> thread")
        cg = copy(store, project / "data" / "cgroups.sqlite3")
        split = sessions(project, cg, args.changed, CGROUPS, "split cgroups at depth 4")
    print(f"summary: unchanged failed {aa} of {args.aa}; engine change failed {caught} of "
          f"{args.changed}; split cgroups failed {split} of {args.changed}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
