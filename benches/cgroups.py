"""Does a cgroup boundary move the number? A ring of 2 on one CPU with its participants in no
group of their own, in one group (same) or one group each (split), 1 and 4 deep, against
`perf bench sched pipe` on the same CPU with its two processes in none, one or two groups.

    python benches/cgroups.py              # 5 rounds
    python benches/cgroups.py -r 9 -l 100000

Needs root and a cgroup hierarchy with the cpu controller. Arms, each once per round in a
fresh random order (so that drift of the host hits all alike):
  ctxbench none|same/D|split/D   `ctxbench.ring([2], placement="single", cgroups=..,
                                 cgroup_depth=D, preset="fast")`: raw and net µs per switch,
                                 CPU µs and run-queue wait µs per hop
  perf none|same|split           `taskset -c CPU perf bench sched pipe -l LOOPS`, started in
                                 a group made for it; for split its forked child is moved into
                                 a second one as soon as it exists (`perf bench sched pipe -G`
                                 does this itself, where perf is 6.8 or later): µs per op / 2
Prints each arm's median over the rounds, min and max, and the machine's load beside.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import time
from pathlib import Path

os.environ["CTXBENCH_HISTORY"] = "off"

import ctxbench  # noqa: E402

CTX_ARMS = [(None, 1), ("same", 1), ("split", 1), ("same", 4), ("split", 4)]
PERF_ARMS = [None, "same", "split"]


def cpu_mount() -> Path:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields = right.split()
        if fields[0] == "cgroup" and "cpu" in fields[2].split(","):
            return Path(left.split()[4])
    raise SystemExit("no cgroup v1 cpu hierarchy mounted: this bench drives perf on v1 only")


def ctx_arm(layout: str | None, depth: int, cpu: int) -> dict[str, float]:
    extra = {"cgroups": layout, "cgroup_depth": depth} if layout else {}
    r = ctxbench.ring([2], placement="single", cpu=cpu, preset="fast", **extra)
    return {
        "raw_us": float(r.raw_us[0]),
        "net_us": float(r.latency_us[0]),
        "cpu_us_per_hop": float(r.cpu_us_per_hop[0]),
        "user_us": float(r.cpu_user_us_per_hop[0]),
        "sys_us": float(r.cpu_sys_us_per_hop[0]),
        "runq_wait_us_per_hop": float(r.runq_wait_us_per_hop[0]),
    }


def perf_arm(layout: str | None, loops: int, cpu: int, mount: Path) -> dict[str, float]:
    parent = mount / f"perfbench-{os.getpid()}"
    groups = [parent / "a", parent / "b"]
    for g in [parent, *groups]:
        g.mkdir(exist_ok=True)
    enter = f"echo $$ > {groups[0]}/tasks; " if layout else ""
    cmd = f"{enter}exec taskset -c {cpu} perf bench sched pipe -l {loops}"
    p = subprocess.Popen(["sh", "-c", cmd], stdout=subprocess.PIPE, text=True)
    if layout == "split":
        children = Path(f"/proc/{p.pid}/task/{p.pid}/children")
        while p.poll() is None:
            kids = children.read_text().split() if children.exists() else []
            if kids:
                (groups[1] / "tasks").write_text(kids[0])
                break
            time.sleep(0.0005)
    out, _ = p.communicate()
    for g in [*groups, parent]:
        for _ in range(100):
            try:
                g.rmdir()
                break
            except OSError:
                time.sleep(0.01)
    m = re.search(r"([\d.]+) usecs/op", out)
    if not m:
        raise SystemExit(f"perf printed no usecs/op:\n{out}")
    return {"raw_us": float(m.group(1)) / 2}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-r", "--rounds", type=int, default=5)
    ap.add_argument("-l", "--loops", type=int, default=200_000, help="perf's round trips")
    ap.add_argument("--cpu", type=int, default=0)
    args = ap.parse_args()
    mount = cpu_mount()
    arms = [("ctxbench", a) for a in CTX_ARMS] + [("perf", (a, 1)) for a in PERF_ARMS]
    seen: dict[str, list[dict[str, float]]] = {}
    print(f"load before: {os.getloadavg()}")
    for k in range(args.rounds):
        random.shuffle(arms)
        for tool, (layout, depth) in arms:
            name = f"{tool} {layout or 'none'}" + (f"/{depth}" if layout else "")
            if tool == "ctxbench":
                got = ctx_arm(layout, depth, args.cpu)
            else:
                got = perf_arm(layout, args.loops, args.cpu, mount)
            seen.setdefault(name, []).append(got)
        print(f"round {k + 1}/{args.rounds} done, load {os.getloadavg()[0]:.2f}", flush=True)
    print(f"load after: {os.getloadavg()}")
    keys = ["raw_us", "net_us", "cpu_us_per_hop", "user_us", "sys_us", "runq_wait_us_per_hop"]
    print("| arm | " + " | ".join(keys) + " | raw min-max |")
    print("|---" * (len(keys) + 2) + "|")
    for name in sorted(seen):
        runs = seen[name]
        med = [statistics.median(r[k] for r in runs) if k in runs[0] else None for k in keys]
        raw = [r["raw_us"] for r in runs]
        cells = ["" if v is None else f"{v:.2f}" for v in med]
        print(f"| {name} | " + " | ".join(cells) + f" | {min(raw):.2f}-{max(raw):.2f} |")


if __name__ == "__main__":
    main()
