"""ctxbench at the edges, against the C ring in benches/ctxring.c, alternated in one run.

    python benches/edges.py                 # every section (about 5 minutes on 2 quiet CPUs)
    python benches/edges.py --quick         # a smoke run of every section
    python benches/edges.py --only 256 1mb  # some sections: 256 1mb zero knee

Sections (all pinned to one CPU, as lmbench's LMBENCH_SCHED=SINGLE):
  256   256 processes, 0 KB: ctxbench lat-ctx vs `ctxring -1 -T 0.005` (lmbench's 5 ms per
        point), alternated; median ratio and each round's. Target: <= 1.05x.
  1mb   1 MB per process at 2 and 8 processes: ratio of medians (target: within 10 %) and
        each side's run-to-run CV (target: <= 5 %).
  zero  the zero-page artefact: the C ring with its arrays made three ways (-Z pattern:
        written, as ctxbench's; -Z memset: lmbench3's malloc + bzero kept as stores; -Z calloc:
        what gcc -O2 makes of lmbench3's malloc + bzero) beside ctxbench and its resident_kb.
  knee  ctxbench.cache_sweep([2, 8]) and ctxbench.knees: the knees found, with the caches
        they match (the L2 knee is the one this machine kind must show).

The load average is printed first: on a loaded machine every figure here moves (a pinned
CPU-bound overhead loop loses the CPU to other work more than the ring, which sleeps every
hop), so re-run on a quiet one before reading the targets.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from reference import build, ctxbench_cmd, cv

SECTIONS = ("256", "1mb", "zero", "knee")


def ours(size: int, procs: int, extra: list[str] | None = None) -> dict[str, object]:
    """One pinned `ctxbench lat-ctx --json` run: its record."""
    cmd = ctxbench_cmd() + ["lat-ctx", "--json", "--placement", "single", "-s", str(size)]
    out = subprocess.run(cmd + (extra or []) + [str(procs)], capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"edges.py: ctxbench failed:\n{out.stderr}")
    return json.loads(out.stdout)["results"][0]


def ref(exe: Path, size: int, procs: int, *flags: str) -> dict[str, float]:
    """One pinned C ring run: its key=value line."""
    cmd = [str(exe), "-1", "-s", str(size), *flags, str(procs)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in (item.split("=") for item in out.split())}


def alternate(exe: Path, size: int, procs: int, rounds: int, *flags: str):
    """Per round, A B A B ...: (ctxbench, C ring) µs per switch, and the two parts of each,
    raw µs per hop and overhead µs per hop, as {"net": (a, b), "raw": .., "ovr": ..}."""
    got: dict[str, tuple[list[float], list[float]]] = {
        k: ([], []) for k in ("net", "raw", "ovr", "sw")
    }
    for _ in range(rounds):
        rec = ours(size, procs)
        c = ref(exe, size, procs, *flags)
        for k, a, b in (
            ("net", rec["latency_us"], c["per_switch_us"]),
            ("raw", rec["raw_us"], c["trip_us"] / procs),
            ("ovr", rec["overhead_point_us"], c["ovr_us"]),
            ("sw", rec["switches_per_hop"], c["switches_per_hop"]),
        ):
            got[k][0].append(float(a[0]) if isinstance(a, list) else float(a))
            got[k][1].append(float(b))
    return got


def row(label: str, a: list[float], b: list[float], target: str) -> None:
    ratios = [x / y if y else float("nan") for x, y in zip(a, b)]
    ma, mb = statistics.median(a), statistics.median(b)
    print(
        f"| {label} | {ma:.2f} | {mb:.2f} | **{ma / mb:.3f}** | "
        f"{', '.join(f'{r:.2f}' for r in ratios)} | {cv(a)} | {cv(b)} | {target} |",
        flush=True,
    )


def section_256(exe: Path, rounds: int) -> None:
    got = alternate(exe, 0, 256, rounds, "-T", "0.005")
    row("256 procs, 0 KB", *got["net"], "ratio <= 1.05")
    # Where a gap lies: in the ring's hop (raw) or in what is subtracted (overhead).
    row("256 procs: raw µs per hop", *got["raw"], "(the switch and pipe hop)")
    row("256 procs: overhead µs per hop", *got["ovr"], "(subtracted)")
    # More switches per hop (a woken participant preempting its waker, which later runs
    # only to block) cost time per hop; ctxbench counts them with perf over its counted
    # repetition, the C ring from its participants' rusage over their lives.
    row("256 procs: switches per hop", *got["sw"], "(kernel's count)")


def section_1mb(exe: Path, rounds: int) -> None:
    for procs in (2, 8):
        got = alternate(exe, 1024, procs, rounds, "-T", "0.005")
        row(f"{procs} procs, 1 MB", *got["net"], "ratio 0.90-1.10, CV <= 5 %")
        row(f"{procs} procs, 1 MB: overhead µs per hop", *got["ovr"], "(subtracted)")


def section_zero(exe: Path, rounds: int) -> None:
    print("\n| point | C -Z calloc | C -Z memset | C -Z pattern | ctxbench | resident_kb |")
    print("|---|---:|---:|---:|---:|---:|")
    for size, procs in ((1024, 8), (1024, 2), (256, 20), (120, 20)):
        fig: dict[str, list[float]] = {"calloc": [], "memset": [], "pattern": [], "ours": []}
        resident = []
        for _ in range(rounds):
            for mode in ("calloc", "memset", "pattern"):
                fig[mode].append(ref(exe, size, procs, "-Z", mode)["per_switch_us"])
            rec = ours(size, procs)
            fig["ours"].append(float(rec["latency_us"][0]))  # type: ignore[index]
            resident.append(int(rec["resident_kb"][0]))  # type: ignore[index]
        med = {k: statistics.median(v) for k, v in fig.items()}
        print(
            f"| {size} KB, {procs} procs | {med['calloc']:.2f} | {med['memset']:.2f} | "
            f"{med['pattern']:.2f} | {med['ours']:.2f} | {min(resident)} |",
            flush=True,
        )


def section_knee(quick: bool) -> None:
    import ctxbench

    sizes = [0, 64, 128, 256, 512, 1024, 2048] if quick else "auto"
    sweep = ctxbench.cache_sweep([2, 8], sizes, rounds=2 if quick else 5, progress=False)
    found = ctxbench.knees(sweep)
    caches = sweep.caches.kb if sweep.caches else "unknown"
    print(f"\ncaches: {caches}; streaming read "
          f"{statistics.median(sweep.stream_kib_per_us.tolist()):.1f} KiB/µs")  # fmt: skip
    print("\n| procs | knee (working set KiB) | 95 % interval | cache |\n|---:|---:|---|---|")
    for k in found.itertuples():
        print(f"| {k.procs} | {k.working_set_kb:,.0f} | {k.working_set_low_kb:,.0f}–"
              f"{k.working_set_high_kb:,.0f} | {k.cache} |")  # fmt: skip
    l2 = bool((found["cache"] == "L2").any())
    print(f"\nL2 knee found: {'yes' if l2 else 'NO'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run of every section")
    ap.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    ap.add_argument("-r", "--rounds", type=int, help="alternated rounds (8; quick 2)")
    args = ap.parse_args()
    rounds = args.rounds or (2 if args.quick else 8)
    load = os.getloadavg()
    uname = os.uname()
    print(f"# ctxbench at the edges vs benches/ctxring.c, pinned, {rounds} rounds; "
          f"{os.cpu_count()} CPUs, {uname.sysname} {uname.release}; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="ctxring-") as tmp:
        exe = build(Path(tmp))
        if {"256", "1mb"} & set(args.only):
            print("| point | ctxbench µs | C ring µs | ratio | per round | CV ctxbench "
                  "| CV C ring | target |\n|---|---:|---:|---:|---|---:|---:|---|")  # fmt: skip
        if "256" in args.only:
            section_256(exe, rounds)
        if "1mb" in args.only:
            section_1mb(exe, max(rounds // 2, 2) if args.quick else rounds)
        if "zero" in args.only:
            section_zero(exe, max(rounds // 2, 1))
        if "knee" in args.only:
            section_knee(args.quick)


if __name__ == "__main__":
    main()
