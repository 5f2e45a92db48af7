"""ctxbench lat-ctx against a minimal C ring of our own, alternated in one run.

    python benches/reference.py                  # procs 2 4 8 16 20 x 0 16 64 KB, 5 pairs
    python benches/reference.py --quick          # a smoke run: 2 4 procs x 0 16 KB, 2 pairs
    python benches/reference.py -s 1024 -p 2 8   # other sizes / procs
    python benches/reference.py --unpinned       # let the scheduler place the participants

`benches/ctxring.c` is the classic lat_ctx algorithm (forked processes, a ring of pipes, a
4-byte token, the same workload as ctxbench's `src/workload.rs`, hot-cache overhead measured
in one process and subtracted). It is compiled here with `cc -O2` into a temporary directory.
For every point the two run alternately, A B A B ..., each a fresh process
(`ctxbench lat-ctx -s KB --placement single PROCS` and `ctxring -1 -s KB PROCS`), so drift of
the machine hits both alike. Printed per point: each side's median per-switch figure over the
pairs, its run-to-run CV (standard deviation of the runs' figures over their mean), its median
overhead per hop ("ovr") and its mean wall time per run, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE = Path(__file__).with_name("ctxring.c")


def build(tmp: Path) -> Path:
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        sys.exit(f"reference.py: no C compiler ({cc}); set CC")
    exe = tmp / "ctxring"
    subprocess.run([cc, "-O2", "-o", str(exe), str(SOURCE)], check=True)
    return exe


def ctxbench_cmd() -> list[str]:
    exe = shutil.which("ctxbench")
    return [exe] if exe else [sys.executable, "-m", "ctxbench"]


def run_ours(size: int, procs: int, pinned: bool, extra: list[str]) -> tuple[float, float, float]:
    """(µs per switch, overhead µs per hop, wall s) of one `ctxbench lat-ctx` run."""
    placement = ["--placement", "single" if pinned else "default"]
    cmd = ctxbench_cmd() + ["lat-ctx", "-s", str(size), *placement, *extra, str(procs)]
    t = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    wall = time.monotonic() - t
    ovr = re.search(r'"size=\d+k ovr=(-?[\d.]+)', out)
    value = re.search(rf"^{procs} (-?[\d.]+)$", out, re.M)
    if not (ovr and value):
        sys.exit(f"reference.py: unexpected ctxbench output:\n{out}")
    return float(value.group(1)), float(ovr.group(1)), wall


def run_ref(exe: Path, size: int, procs: int, pinned: bool) -> tuple[float, float, float]:
    """(µs per switch, overhead µs per hop, wall s) of one C reference run."""
    cmd = [str(exe), "-s", str(size), *(["-1"] if pinned else []), str(procs)]
    t = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    wall = time.monotonic() - t
    kv = dict(item.split("=") for item in out.split())
    return float(kv["per_switch_us"]), float(kv["ovr_us"]), wall


def cv(xs: list[float]) -> str:
    """Run-to-run CV in percent, or "n/a" with one run."""
    m = statistics.fmean(xs)
    return f"{statistics.stdev(xs) / abs(m) * 100:.1f} %" if len(xs) > 1 and m else "n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-s", "--sizes", type=int, nargs="+", help="KiB per participant (0 16 64)")
    ap.add_argument("-p", "--procs", type=int, nargs="+", help="ring sizes (2 4 8 16 20)")
    ap.add_argument("-n", "--pairs", type=int, help="A B runs per point (5)")
    ap.add_argument("--quick", action="store_true", help="2 4 procs x 0 16 KB, 2 pairs")
    ap.add_argument("--unpinned", action="store_true", help="do not pin to one CPU")
    ap.add_argument("--ctxbench-args", default="", help="extra lat-ctx flags, e.g. '-N 5'")
    args = ap.parse_args()
    sizes = args.sizes or ([0, 16] if args.quick else [0, 16, 64])
    procs = args.procs or ([2, 4] if args.quick else [2, 4, 8, 16, 20])
    pairs = args.pairs or (2 if args.quick else 5)
    pinned = not args.unpinned
    extra = args.ctxbench_args.split()

    with tempfile.TemporaryDirectory(prefix="ctxring-") as tmp:
        exe = build(Path(tmp))
        uname = os.uname()
        where = "pinned to one CPU" if pinned else "unpinned"
        print(f"# ctxbench lat-ctx vs benches/ctxring.c (cc -O2), {where}, {pairs} pairs "
              f"per point, {os.cpu_count()} CPUs, {uname.sysname} {uname.release}\n")  # fmt: skip
        print(
            "| KB | procs | ctxbench µs | C ref µs | ratio | CV ctxbench | CV C ref "
            "| ovr ctxbench | ovr C ref | wall ctxbench | wall C ref |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for size in sizes:
            for n in procs:
                ours, ref = [], []
                for _ in range(pairs):
                    ours.append(run_ours(size, n, pinned, extra))
                    ref.append(run_ref(exe, size, n, pinned))
                a = [r[0] for r in ours]
                b = [r[0] for r in ref]
                ma, mb = statistics.median(a), statistics.median(b)
                oa = statistics.median(r[1] for r in ours)
                ob = statistics.median(r[1] for r in ref)
                wa = statistics.fmean(r[2] for r in ours)
                wb = statistics.fmean(r[2] for r in ref)
                ratio = ma / mb if mb else float("nan")
                print(f"| {size} | {n} | {ma:.2f} | {mb:.2f} | {ratio:.2f} | {cv(a)} "
                      f"| {cv(b)} | {oa:.2f} | {ob:.2f} | {wa:.2f} s | {wb:.2f} s |",
                      flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
