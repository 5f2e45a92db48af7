"""Render the manual's gallery (docs/gallery.md): every ctxbench.plot figure, drawn from two
small runs of the same sweep committed with the tests (tests/data/sweep-a.json and
sweep-b.json: process and thread engines, sizes 0 and 64 KiB, 2, 4 and 8 processes, pinned
to one CPU, 7 repetitions a point, the second run with two CPU-bound processes beside it).

    python docs/_scripts/gallery.py OUTDIR

The matrix figures draw tests/data/matrix-sample.json, measured on that 2-CPU machine
(`ctxbench matrix -N 7 --no-hostname --out ...`), and tests/data/matrix-synthetic.csv, the
made-up matrix of a 2-socket SMT2 server (`python tests/matrices.py ...`).

writes one PNG per figure into OUTDIR (the page shows them from docs/_gallery/).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import matplotlib

matplotlib.use("Agg")

import ctxbench  # noqa: E402
from ctxbench import plot  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
NAMES = ("sweep-a.json", "sweep-b.json")
MATRICES = ("matrix-sample.json", "matrix-synthetic.csv")


def figures(a: Any, b: Any, vm: Any, server: Any) -> dict[str, Callable[[], Any]]:
    """The gallery: file name -> the call that draws it (the page quotes the same calls)."""
    runs = ctxbench.concat([a.assign(run=NAMES[0]), b.assign(run=NAMES[1])])
    hosts = ctxbench.concat([a.assign(host="node-a"), b.assign(host="node-b")])
    fleet = ctxbench.concat([vm.assign(host="vm-2cpu"), server.assign(host="server-synthetic")])
    return {
        "lat_ctx.png": lambda: plot.lat_ctx(a),
        "lat_ctx-log.png": lambda: plot.lat_ctx(a, log=True),
        "lat_ctx-column.png": lambda: plot.lat_ctx(a, size="column"),
        "lat_ctx-two-runs.png": lambda: plot.lat_ctx(runs),
        "sizes.png": lambda: plot.sizes(a),
        "compare.png": lambda: plot.compare(a),
        "compare-log.png": lambda: plot.compare(a, log=True),
        "before-after.png": lambda: plot.compare(a, new=b, labels=NAMES),
        "before-after-column.png": lambda: plot.compare(a, new=b, labels=NAMES, size="column"),
        "distribution.png": lambda: plot.distribution(a),
        "machines.png": lambda: plot.machines(hosts),
        "matrix.png": lambda: plot.matrix(vm),
        "matrix-server.png": lambda: plot.matrix(server),
        "matrix-server-column.png": lambda: plot.matrix(server, size="column"),
        "matrix-fleet.png": lambda: plot.matrix(fleet),
    }


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    a, b = (ctxbench.load(DATA / name) for name in NAMES)
    vm, server = (ctxbench.load(DATA / name) for name in MATRICES)
    for name, draw in figures(a, b, vm, server).items():
        draw().savefig(out / name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTDIR")
    main(Path(sys.argv[1]))
