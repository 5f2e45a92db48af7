from __future__ import annotations

import dataclasses
import subprocess
import sys
import types

import numpy as np
import pandas as pd
import pytest
from conftest import FAST

import ctxbench
from ctxbench.frame import POINT_KEY, concat, to_frame


@pytest.fixture(scope="module")
def result() -> ctxbench.RingResult:
    return ctxbench.lat_ctx([2, 3], size_kb=4, **FAST)


@pytest.fixture(scope="module")
def pingpong() -> ctxbench.PingpongResult:
    return ctxbench.pingpong(loops=1000, threads=True)


def test_one_row_per_repetition_and_point(result: ctxbench.RingResult) -> None:
    df = to_frame(result)
    assert len(df) == result.repetitions * len(result.procs)
    assert not df.duplicated([*POINT_KEY, "repetition"]).any()
    assert sorted(df["repetition"].unique()) == list(range(result.repetitions))
    assert (df["unit"] == "us").all()
    assert set(df["engine"]) == {"process"} and set(df["transport"]) == {"pipe"}
    assert set(df["benchmark"]) == {"ring"}


def test_values_are_the_samples(result: ctxbench.RingResult) -> None:
    df = to_frame(result)
    for j, p in enumerate(result.procs.tolist()):
        point = df[df["procs"] == p].sort_values("repetition")
        np.testing.assert_array_equal(point["value"], result.samples_us[:, j])
        np.testing.assert_array_equal(point["raw_us"], result.raw_samples_us[:, j])
        np.testing.assert_array_equal(point["overhead_us"], result.overhead_samples_us[:, j])
        assert (point["latency_us"] == result.latency_us[j]).all()
        assert (point["min_us"] == result.min_us[j]).all()
        assert (point["cv"] == result.stats["cv"][j]).all()
        assert (point["ci_low"] == result.stats["ci_low"][j]).all()
        assert (point["verdict"] == result.stats["verdict"][j]).all()
        assert (point["below_resolution"] == result.below_resolution[j]).all()


def test_metadata_columns(result: ctxbench.RingResult) -> None:
    df = to_frame(result)
    for key in ("kernel", "cpu_model", "hypervisor", "ctxbench_version", "date"):
        assert (df[key] == result.metadata[key]).all() or result.metadata[key] is None


def test_result_method_delegates(result: ctxbench.RingResult) -> None:
    pd.testing.assert_frame_equal(result.to_frame(), to_frame(result))


def test_optional_point_arrays_become_columns(result: ctxbench.RingResult) -> None:
    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    fields["switches_per_hop"] = np.array([1.0, 1.5])
    fields.pop("migrations", None)
    df = to_frame(types.SimpleNamespace(kind="ring", **fields))
    reps = result.repetitions
    assert df["switches_per_hop"].tolist() == [1.0] * reps + [1.5] * reps
    assert "migrations" not in df.columns


def test_pingpong_is_one_row(pingpong: ctxbench.PingpongResult) -> None:
    df = to_frame(pingpong)
    assert len(df) == 1
    row = df.iloc[0]
    assert (row["benchmark"], row["engine"], row["transport"], row["procs"]) == (
        "pingpong",
        "thread",
        "pipe",
        2,
    )
    assert row["repetition"] == 0 and row["value"] == pingpong.usecs_per_switch
    assert (row["usecs_per_op"], row["ops_per_sec"]) == (
        pingpong.usecs_per_op,
        pingpong.ops_per_sec,
    )


def test_concat_mixes_results_and_frames(
    result: ctxbench.RingResult, pingpong: ctxbench.PingpongResult
) -> None:
    df = concat([result, to_frame(result), pingpong])
    assert len(df) == 2 * len(to_frame(result)) + 1
    assert df.loc[df["raw_us"].notna(), "usecs_per_op"].isna().all()
    assert ctxbench.concat([result]).equals(to_frame(result))


def test_not_a_result() -> None:
    with pytest.raises(TypeError, match="ctxbench result"):
        to_frame(object())


def test_html_table(result: ctxbench.RingResult) -> None:
    html = result._repr_html_()
    assert html.startswith("<div><table>") and html.count("<tr>") == 1 + len(result.procs)
    for head in ("procs", "latency µs", "min µs", "raw µs", "CV %", "verdict", "flagged"):
        assert f"<th>{head}</th>" in html


def test_html_metadata_is_one_line_and_the_rest_folded(result: ctxbench.RingResult) -> None:
    import html as html_module

    text = result._repr_html_()
    # The table, then one line naming the machine, then the metadata folded.
    table_end, line, details = text.index("</table>"), text.index("<p>"), text.index("<details>")
    assert table_end < line < details
    summary = html_module.unescape(text[line + 3 : text.index("</p>")])
    meta = result.metadata
    assert summary.count(" · ") == 4 and "\n" not in summary
    assert str(meta["cpu_model"]) in summary and f"Linux {meta['kernel']}" in summary
    assert f"placement {result.placement}" in summary
    assert summary.endswith("VM" if meta["hypervisor"] else "bare metal") or "VM (" in summary
    folded = text[details:]
    assert folded.count("\n") >= 20 and "vulnerabilities" in folded
    assert f"all metadata ({len(meta)} entries)" in folded


def test_html_without_metadata(result: ctxbench.RingResult) -> None:
    import dataclasses

    text = dataclasses.replace(result, metadata={})._repr_html_()
    assert "<details>" not in text and "CPU unknown" in text


def test_missing_pandas_names_the_extra(
    result: ctxbench.RingResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"needs pandas: pip install 'ctxbench\[analysis\]'"):
        result.to_frame()


def test_missing_matplotlib_names_the_extra(
    result: ctxbench.RingResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(
        ImportError, match=r"ctxbench.plot needs matplotlib: pip install 'ctxbench\[analysis\]'"
    ):
        ctxbench.plot.lat_ctx(result)


def test_import_needs_neither_pandas_nor_matplotlib() -> None:
    code = (
        "import sys\n"
        "for m in ('pandas', 'matplotlib', 'tqdm'): sys.modules[m] = None\n"
        "import ctxbench, ctxbench.plot, ctxbench._compare, ctxbench.files\n"
        "r = ctxbench.lat_ctx([2], min_time=0.002, repetitions=3, warmup=0)\n"
        "assert '<table>' in r._repr_html_()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_matrix_cell_is_named_as_the_core_names_a_placement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pathlib import Path

    from ctxbench import _core, result

    (m,) = result.load_results(Path(__file__).parent / "data" / "matrix-sample.json")
    monkeypatch.setattr(_core, "placement_name", lambda cpus, cpu=None: f"cpus {cpus}")
    pairs = zip(m.cpu_from.tolist(), m.cpu_to.tolist())
    assert set(to_frame(m)["placement"]) == {f"cpus {[a, b]}" for a, b in pairs}


def test_a_cell_column_an_older_file_lacks_is_no_column(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from ctxbench import frame, result

    (m,) = result.load_results(Path(__file__).parent / "data" / "matrix-sample.json")
    # As a matrix column added after the file was written: the class's empty default.
    monkeypatch.setattr(frame, "MATRIX_CELL_ARRAYS", (*frame.MATRIX_CELL_ARRAYS, "elapsed_s"))
    assert "elapsed_s" not in to_frame(dataclasses.replace(m, elapsed_s=np.zeros(0)))
    assert "elapsed_s" in to_frame(m)


def test_every_field_a_fleet_adds_is_a_column(result: ctxbench.RingResult) -> None:
    from ctxbench import metadata

    fleet = {k: f"the {k}" for k in metadata.FLEET_FIELDS}
    df = to_frame(dataclasses.replace(result, metadata={**result.metadata, **fleet}))
    assert {k: set(df[k]) for k in fleet} == {k: {v} for k, v in fleet.items()}
