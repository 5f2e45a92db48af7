"""Hybrid hosts: each CPU's kind of core (Intel's P- and E-cores from the core PMUs, Arm's
``cpu_capacity``) read as a topology fact, part of a matrix cell's class, in the matrix's
frame and summary and in every result's metadata."""

from __future__ import annotations

from typing import Any

import matrices
import pytest
from conftest import FAST, Described

import ctxbench
from ctxbench import _topology, metadata
from ctxbench._matrix_table import class_summary, summary_text


def test_the_kinds_of_core_are_read_from_the_core_pmus_and_from_cpu_capacity(
    described: Described,
) -> None:
    laptop = ctxbench.topology(described("intel-hybrid-laptop"))
    assert laptop.core_types() == {"P-core": list(range(8)), "E-core": list(range(8, 16))}
    board = ctxbench.topology(described("rk3399-big-little"))
    assert board.core_types() == {"capacity 381": [0, 1, 2, 3], "capacity 1024": [4, 5]}
    assert laptop.one_of_each_kind() == [0, 8] and board.one_of_each_kind() == [0, 4]
    for host in ("intel-xeon-guest", "xeon6-2s-snc3", "ampere-altra"):
        t = ctxbench.topology(described(host))
        assert t.core_types() == {} and set(t.core_type) == {""}
        with pytest.raises(ValueError, match="placement: .* one kind of core"):
            t.one_of_each_kind()


def test_one_capacity_everywhere_is_no_hybrid(described: Described) -> None:
    root = described("arm-clusters")
    for cpu in range(8):
        (root / f"devices/system/cpu/cpu{cpu}/cpu_capacity").write_text("1024\n")
    assert ctxbench.topology(root).core_types() == {}


def test_a_hybrid_hosts_matrix_plan_has_a_class_per_pair_of_kinds(
    described: Described, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXBENCH_SYSFS", str(described("rk3399-big-little")))
    plan = ctxbench.matrix_plan()
    names = {c["name"]: c["pairs"] for c in plan["classes"]}
    assert names == {
        "same-cpu, capacity 381 to capacity 381": 4,
        "same-cpu, capacity 1024 to capacity 1024": 2,
        "shared-l2, capacity 381 to capacity 381": 12,
        "shared-l2, capacity 1024 to capacity 1024": 2,
        "same-package, capacity 381 to capacity 1024": 8,
        "same-package, capacity 1024 to capacity 381": 8,
    }
    assert plan["per_class"] is None and plan["cells"] == 36


def hybrid_result() -> tuple[Any, dict[int, str]]:
    """A real matrix of this machine's first two CPUs, its topology rewritten as a hybrid
    host's: the first a P-core, the second an E-core."""
    cpus = ctxbench.topology().order.tolist()[:2]
    result = ctxbench.matrix(cpus, progress=False, **FAST)
    kind = dict(zip(cpus, ["P-core", "E-core"]))
    result.topology["core_type"] = [kind.get(int(c), "") for c in result.topology["cpus"]]
    return result, kind


def test_the_frame_and_the_summary_carry_the_kinds_of_core() -> None:
    result, kind = hybrid_result()
    df = result.to_frame()
    assert (df["core_type_from"] == df["cpu_from"].map(kind)).all()
    assert (df["core_type_to"] == df["cpu_to"].map(kind)).all()
    summary = class_summary(df)
    assert {"core_type_from", "core_type_to"} <= set(summary.columns)
    same = summary[summary["relation"] == "same-cpu"]
    assert sorted(same["core_type_from"]) == sorted(kind.values())
    assert "cores" in summary_text(df).splitlines()[0]
    # A host of one kind: no such columns, the summary as it was.
    plain = matrices.frame(packages=1, llcs=1, cores=2, smt=1)
    assert "core_type_from" not in class_summary(plain).columns


def test_every_result_records_the_kinds_of_core_in_its_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert "core_types" in metadata.KEYS
    here = ctxbench.topology("/sys").core_types()
    meta = ctxbench.ring(2, **FAST).metadata
    assert meta["core_types"] == ({k: _topology._cpulist(v) for k, v in here.items()} or None)

    monkeypatch.setattr(_topology, "core_types_here", lambda: {"P-core": "0-7", "E-core": "8-15"})
    meta = ctxbench.ring(2, **FAST).metadata
    assert meta["core_types"] == {"P-core": "0-7", "E-core": "8-15"}
    text = metadata.format_metadata(meta)
    assert "core_types.E-core:" in text and "8-15" in text
    assert _topology._cpulist([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
