"""Result files by suffix: JSON as the tidy frame, CSV, Parquet, and lmbench's xgraph text."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ctxbench
from ctxbench import files, result, xgraph


def same_frames(a: pd.DataFrame, b: pd.DataFrame) -> None:
    # CSV and Parquet keep values, not every dtype (an all-None column comes back as NaN).
    pd.testing.assert_frame_equal(a, b, check_dtype=False)


def test_load_json_is_to_frame(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    files.save(results, tmp_path / "r.json")
    pd.testing.assert_frame_equal(files.load(tmp_path / "r.json"), ctxbench.concat(results))


def test_csv(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    files.save(results, tmp_path / "r.csv")
    same_frames(files.load(tmp_path / "r.csv"), ctxbench.concat(results))


def test_a_csv_gives_back_every_float_to_the_last_digit(
    table: pd.DataFrame, tmp_path: Path
) -> None:
    """Read back with pandas' fast parser (the default before pandas 3), about a third of such
    values lost their last digit, and a resumed sweep no longer found its points."""
    rng = np.random.default_rng(1)
    floats = [c for c in table.select_dtypes("float") if (table[c] % 1 > 0).any()]
    table = table.assign(**{c: rng.random(len(table)) for c in floats})
    # Every figure is now above 0: a point the real run measured below resolution (under load
    # a pinned ring can) would be refused as inconsistent, which is not what this test reads.
    flagged = table["below_resolution"].eq(True)
    table["below_resolution"] = table["below_resolution"].mask(flagged, False)
    files.save(table, tmp_path / "r.csv")
    back = files.load(tmp_path / "r.csv")
    for c in floats:
        assert back[c].tolist() == table[c].tolist(), c


def test_parquet(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    files.save(results, tmp_path / "r.parquet")
    same_frames(files.load(tmp_path / "r.parquet"), ctxbench.concat(results))


def test_parquet_without_pyarrow_names_it(
    results: list[ctxbench.RingResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match="pip install pyarrow"):
        files.save(results, tmp_path / "r.parquet")


def test_unknown_suffix(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="suffix"):
        files.save(results, tmp_path / "r.xlsx")


def test_xgraph_round_trip(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    path = tmp_path / "lat_ctx.xgraph"
    files.save(results, path)
    df = files.load(path)
    assert len(df) == sum(len(r.procs) for r in results)
    for r in results:
        rows = df[df["size_kb"] == r.size_kb]
        assert rows["procs"].tolist() == r.procs.tolist()
        np.testing.assert_allclose(rows["value"], r.latency_us, atol=0.005)
        np.testing.assert_allclose(rows["overhead_us"], r.overhead_us, atol=0.005)
    assert set(df["placement"]) == {"unknown"} and set(df["source"]) == {"xgraph"}
    assert xgraph.write(results[0]) == results[0].to_xgraph()


LMBENCH = """
"size=0 ovr=12
2 34
4 5.25

"size=16k ovr=1.50
2 3.00
"""


def test_lmbench_xgraph_sniffed(tmp_path: Path) -> None:
    path = tmp_path / "lat_ctx.out"
    path.write_text(LMBENCH)
    df = files.load(path)
    assert df[["size_kb", "procs", "value", "overhead_us"]].values.tolist() == [
        [0, 2, 34.0, 12.0],
        [0, 4, 5.25, 12.0],
        [16, 2, 3.0, 1.5],
    ]
    assert (df["repetition"] == 0).all() and (df["engine"] == "process").all()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('"size=0k ovr=1.0\n2 3.0\n4 x\n', 3),
        ('"size=0k ovr=1.0\n2 3.0\n\n4 5 6\n', 4),
        ("2 3.0\n", 1),
        ('"size=0k ovr=?\n2 3.0\n', 1),
    ],
)
def test_malformed_xgraph_names_the_line(text: str, line: int, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=rf"line {line}: "):
        xgraph.read(text)
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"bad.txt: line {line}: "):
        files.load(path)


def test_xgraph_error_message() -> None:
    with pytest.raises(ValueError, match=r"line 4: expected '<procs> <µs>'"):
        xgraph.read('"size=0k ovr=1.0\n2 3.0\n\n4 5 6\n')


def test_empty_xgraph() -> None:
    with pytest.raises(ValueError, match="no data points"):
        xgraph.read("\n\n")


# Foreign and damaged files: each loader checks what it reads against ctxbench.schema and
# names the file, where in it (line, row, result) and the field.


@pytest.fixture(scope="module")
def table(results: list[ctxbench.RingResult]) -> pd.DataFrame:
    return ctxbench.concat([*results, ctxbench.pingpong(loops=1000)])


def edited(df: pd.DataFrame, column: str, row: int, value: object) -> pd.DataFrame:
    df = df.copy()
    df[column] = df[column].astype(object)
    df.loc[row, column] = value
    return df


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda df: pd.DataFrame({"a": [1], "b": [2]}), r"not a ctxbench table: no column "),
        (lambda df: df.drop(columns=["value"]), r"no column value$"),
        (lambda df: df.drop(columns=["cv"]), r"no column cv \(ring rows need it\)"),
        (lambda df: edited(df, "value", 2, float("-inf")), r"line 4: value: -inf is not a fin"),
        (lambda df: edited(df, "value", 2, float("inf")), r"line 4: value: inf is not a finite"),
        (lambda df: edited(df, "value", 3, float("nan")), r"line 5: value: empty or NaN \(a ring"),
        (lambda df: edited(df, "raw_us", 1, -1.0), r"line 3: raw_us: -1.0 is below the min"),
        (lambda df: edited(df, "overhead_us", 0, -0.5), r"line 2: overhead_us: -0.5 is below"),
        (lambda df: edited(df, "procs", 1, "abc"), r"line 3: procs: expected an integer, got 'a"),
        (lambda df: edited(df, "procs", 1, 1), r"line 3: procs: 1 is below the minimum 2"),
        (lambda df: edited(df, "procs", 1, 2.5), r"line 3: procs: expected an integer, got 2.5"),
        (lambda df: edited(df, "benchmark", 0, "fio"), r"line 2: benchmark: 'fio' is not one of"),
        (lambda df: edited(df, "involuntary_switches", 0, -3), r"line 2: involuntary_switches: "),
        (lambda df: edited(df, "ops_per_sec", len(df) - 1, None), r"ops_per_sec: empty or NaN"),
        # The flag turned over: a figure measured under load may be at or below 0 already.
        (
            lambda df: edited(df, "below_resolution", 0, not df.loc[0, "below_resolution"]),
            r"line 2: below_resolution: is (True|False) but latency_us",
        ),
    ],
)
def test_foreign_or_damaged_csv_names_file_line_and_field(
    table: pd.DataFrame, edit: object, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.csv"
    edit(table).to_csv(path, index=False)  # type: ignore[operator]
    with pytest.raises(ValueError, match=rf"bad\.csv: (.*: )?{message}"):
        files.load(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda df: df.drop(columns=["unit"]), r"not a ctxbench table: no column unit"),
        (lambda df: edited(df, "value", 2, float("nan")), r"row 2: value: empty"),
        (lambda df: df.assign(latency_us="fast"), r"row 0: latency_us: expected a number"),
        (lambda df: df.assign(procs=[[2, 3]] * len(df)), r"row 0: procs: expected an integer"),
        (lambda df: df.assign(size_kb=-1), r"row 0: size_kb: -1 is below the minimum 0"),
    ],
)
def test_damaged_parquet_names_file_row_and_field(
    table: pd.DataFrame, edit: object, message: str, tmp_path: Path
) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "bad.parquet"
    edit(table).to_parquet(path, index=False)  # type: ignore[operator]
    with pytest.raises(ValueError, match=rf"bad\.parquet: {message}"):
        files.load(path)


def test_not_parquet_at_all(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "r.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(ValueError, match=r"r\.parquet: not a ctxbench table: "):
        files.load(path)


def test_csv_lines_count_blank_lines_and_quoted_newlines(
    table: pd.DataFrame, tmp_path: Path
) -> None:
    path = tmp_path / "r.csv"
    df = edited(table, "verdict", 0, "two\nlines")
    df = edited(df, "value", 1, float("inf"))
    text = df.to_csv(index=False)
    head, rest = text.split("\n", 1)
    path.write_text(f"{head}\n\n{rest}")
    # header 1, blank 2, row 0 on lines 3-4, row 1 on line 5
    with pytest.raises(ValueError, match=r"r\.csv: line 5: value: inf is not a finite number"):
        files.load(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not a ctxbench table: the file is empty"),
        ("\n\n", "not a ctxbench table: the file is empty"),
        (b"\xff\xfe\x00bad", "not a ctxbench table: not UTF-8 text"),
        ("a,b\n1,2\n", "not a ctxbench table: no column benchmark, engine"),
        ('a,b\n1,"2\n', "not a ctxbench table: "),
    ],
)
def test_csv_not_ours(text: str | bytes, message: str, tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError, match=rf"x\.csv: {message}"):
        files.load(path)


def test_tables_with_no_rows_extra_columns_and_duplicates_load(
    table: pd.DataFrame, tmp_path: Path
) -> None:
    # An empty result list saves as a header of the key columns and loads back empty.
    files.save([], tmp_path / "empty.csv")
    assert len(files.load(tmp_path / "empty.csv")) == 0
    header_only = tmp_path / "header.csv"
    header_only.write_text(",".join(table.columns) + "\n")
    assert list(files.load(header_only).columns) == list(table.columns)
    # Columns ctxbench does not know are the user's: kept, unchecked.
    extra = table.assign(machine="lab-3", note=float("nan"))
    extra.to_csv(tmp_path / "extra.csv", index=False)
    assert files.load(tmp_path / "extra.csv")["machine"].eq("lab-3").all()
    # A table may hold the same point twice (two runs, two files concatenated): kept as is.
    pd.concat([table, table]).to_csv(tmp_path / "twice.csv", index=False)
    assert len(files.load(tmp_path / "twice.csv")) == 2 * len(table)


def test_text_columns_stay_text(table: pd.DataFrame, tmp_path: Path) -> None:
    edited(table, "kernel", 0, "6").assign(placement="0").to_csv(tmp_path / "t.csv", index=False)
    df = files.load(tmp_path / "t.csv")
    assert df["kernel"].iloc[0] == "6" and df["placement"].iloc[0] == "0"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('"size=0k ovr=1.0\n2 nan\n', r"line 2: µs: NaN is not a valid value"),
        ('"size=0k ovr=1.0\n2 -inf\n', r"line 2: µs: -inf is not a finite number"),
        ('"size=0k ovr=1.0\n2 1e999\n', r"line 2: µs: inf is not a finite number"),
        ('"size=0k ovr=nan\n2 1.0\n', r"line 1: ovr: NaN is not a valid value"),
        ('"size=0k ovr=-1.0\n2 1.0\n', r"line 1: ovr: -1.0 is below the minimum 0"),
        ('"size=0k ovr=1.0\n2 1.0\n1 1.0\n', r"line 3: procs: 1 is below the minimum 2"),
        ('"size=0k ovr=1.0\n99999999999999999999 1.0\n', r"line 2: procs: .* 64 bits"),
    ],
)
def test_xgraph_values_are_checked(text: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.xgraph"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"bad\.xgraph: {message}"):
        files.load(path)


def test_xgraph_negative_net_time_is_below_resolution(tmp_path: Path) -> None:
    path = tmp_path / "low.xgraph"
    path.write_text('"size=0k ovr=1.0\n2 -0.05\n4 0.50\n')
    assert files.load(path)["below_resolution"].tolist() == [True, False]


def test_xgraph_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b'"size=0k ovr=1.0\n2 \xff\n')
    with pytest.raises(ValueError, match=r"bad\.txt: not lat_ctx output: not UTF-8"):
        files.load(path)


# Writing: the user's path in every error, the umask's mode in every format.

SUFFIXES = (".json", ".csv", ".parquet", ".xgraph")


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_save_into_a_missing_directory_names_the_path(
    results: list[ctxbench.RingResult], suffix: str, tmp_path: Path
) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    path = tmp_path / "missing" / f"r{suffix}"
    with pytest.raises(FileNotFoundError) as e:
        results[0].save(path)
    assert e.value.filename == str(path) and ".tmp" not in str(e.value)
    assert str(path) in str(e.value)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_save_where_nobody_can_write_names_the_path(
    results: list[ctxbench.RingResult], suffix: str, tmp_path: Path
) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    # Under a regular file: fails for root too.
    (tmp_path / "file").write_text("")
    path = tmp_path / "file" / f"r{suffix}"
    with pytest.raises(NotADirectoryError, match=re.escape(str(path))):
        files.save(results, path)
    # Onto a directory: the rename fails, still about the user's path; nothing left behind.
    (tmp_path / f"dir{suffix}").mkdir()
    with pytest.raises(IsADirectoryError, match=re.escape(str(tmp_path / f"dir{suffix}"))):
        files.save(results, tmp_path / f"dir{suffix}")
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_save_into_a_read_only_directory_names_the_path(
    results: list[ctxbench.RingResult], tmp_path: Path
) -> None:
    (tmp_path / "ro").mkdir(mode=0o500)
    with pytest.raises(PermissionError, match=re.escape(str(tmp_path / "ro" / "r.csv"))):
        files.save(results, tmp_path / "ro" / "r.csv")


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002, 0o077])
def test_a_new_file_gets_the_umask_mode_and_a_rewrite_keeps_its_own(
    results: list[ctxbench.RingResult], umask: int, tmp_path: Path
) -> None:
    if importlib.util.find_spec("pyarrow") is None:
        pytest.skip("pyarrow is not installed")
    old = os.umask(umask)
    try:
        for suffix in SUFFIXES:
            path = tmp_path / f"r{suffix}"
            files.save(results, path)
            assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, suffix
            for mode in (0o600, 0o640, 0o664):
                path.chmod(mode)
                files.save(results, path)  # replaced by a new file, with the old one's mode
                assert stat.S_IMODE(path.stat().st_mode) == mode, (suffix, oct(mode))
    finally:
        os.umask(old)


def test_save_can_withhold_the_hostname(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    from ctxbench.metadata import HOSTNAME_WITHHELD

    results[0].save(tmp_path / "mine.json")
    results[0].save(tmp_path / "shared.json", hostname=False)
    files.save(results, tmp_path / "all.json", hostname=False)
    mine, shared, every = (
        json.loads((tmp_path / f"{n}.json").read_text())["results"]
        for n in ("mine", "shared", "all")
    )
    assert mine[0]["metadata"]["hostname"] == results[0].metadata["hostname"]
    assert shared[0]["metadata"]["hostname"] == HOSTNAME_WITHHELD
    assert {r["metadata"]["hostname"] for r in every} == {HOSTNAME_WITHHELD}
    assert results[0].metadata["hostname"] != HOSTNAME_WITHHELD  # the result is untouched
    # Apart from the hostname, the same file.
    mine[0]["metadata"]["hostname"] = HOSTNAME_WITHHELD
    assert mine == shared
    # A table with a hostname column (the user's, or a later ctxbench's) withholds it too.
    table = ctxbench.concat(results).assign(hostname="lab-3")
    files.save(table, tmp_path / "t.csv", hostname=False)
    assert set(files.load(tmp_path / "t.csv")["hostname"]) == {HOSTNAME_WITHHELD}


def test_save_through_a_symlink_is_refused_and_its_target_kept(
    results: list[ctxbench.RingResult], tmp_path: Path
) -> None:
    # It wrote the target: in a directory others share, a planted link aimed it anywhere.
    (tmp_path / "data").mkdir()
    for suffix in (".json", ".csv"):
        target = tmp_path / "data" / f"r{suffix}"
        target.write_text("old")
        link = tmp_path / f"link{suffix}"
        link.symlink_to(target)
        with pytest.raises(PermissionError, match="a symbolic link") as e:
            files.save(results, link)
        assert e.value.filename == str(link)
        assert link.is_symlink() and target.read_text() == "old"
    assert not list(tmp_path.rglob(".*.tmp"))


def test_a_table_of_every_source_round_trips(
    table: pd.DataFrame, tmp_path: Path, results: list[ctxbench.RingResult]
) -> None:
    files.save(results[0], tmp_path / "r.xgraph")
    mixed = ctxbench.concat([table, files.load(tmp_path / "r.xgraph")])
    for suffix in (".csv", ".parquet") if importlib.util.find_spec("pyarrow") else (".csv",):
        files.save(mixed, tmp_path / f"mixed{suffix}")
        back = files.load(tmp_path / f"mixed{suffix}")
        # Parquet gives an empty cell of a column of flags back as None, CSV as NaN.
        same_frames(
            back.astype(object).where(back.notna(), None),
            mixed.astype(object).where(mixed.notna(), None),
        )


def test_xgraph_holds_rings_only(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="xgraph format holds ring results, not PingpongResult"):
        files.save(ctxbench.pingpong(loops=1000), tmp_path / "p.xgraph")
    assert not list(tmp_path.iterdir())


def test_json_holds_results_only(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="expected a ctxbench result, got dict"):
        files.save([{"kind": "ring"}], tmp_path / "r.json")
    assert not list(tmp_path.iterdir())


def test_precision_results_in_every_format(tmp_path: Path) -> None:
    r = ctxbench.lat_ctx([2, 3], precision=0.5, max_time=0.2, min_time=0.002)
    rows = int(r.repetitions_made.sum())
    suffixes = [".json", ".csv"] + ([".parquet"] if importlib.util.find_spec("pyarrow") else [])
    for suffix in suffixes:
        files.save(r, tmp_path / f"p{suffix}")
        df = files.load(tmp_path / f"p{suffix}")
        assert len(df) == rows and set(df["stopped"]) <= {"precision", "time_cap"}


def test_load_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)  # nobody writes to it: reading it would wait forever
    zeros = tmp_path / "z.csv"
    zeros.symlink_to("/dev/zero")  # never ends
    cases = [
        (lambda: files.load(fifo), "r.json: not a regular file (a FIFO)"),
        (lambda: result.load_results(fifo), "r.json: not a regular file (a FIFO)"),
        (lambda: files.load(zeros), "z.csv: not a regular file (a character device)"),
        (lambda: files.load("/dev/zero"), "/dev/zero: not a regular file (a character device)"),
    ]
    messages: list[str] = []

    def load_each() -> None:
        for load, _ in cases:
            with pytest.raises(ValueError) as e:
                load()
            messages.append(str(e.value))

    t = threading.Thread(target=load_each, daemon=True)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "load() hung"
    assert len(messages) == len(cases)
    for message, (_, expected) in zip(messages, cases):
        assert expected in message


def test_save_never_replaces_a_device(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    for suffix in SUFFIXES:
        link = tmp_path / f"null{suffix}"
        link.symlink_to("/dev/null")
        with pytest.raises(PermissionError, match="a symbolic link"):
            files.save(results, link)
        fifo = tmp_path / f"fifo{suffix}"
        os.mkfifo(fifo)
        with pytest.raises(ValueError, match="not a regular file \\(a FIFO\\)"):
            files.save(results, fifo)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    names = [f"{n}{s}" for s in SUFFIXES for n in ("null", "fifo")]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)


def test_formats_are_one_registry(results: list[ctxbench.RingResult], tmp_path: Path) -> None:
    if importlib.util.find_spec("pyarrow") is None:
        pytest.skip("pyarrow is not installed")
    for suffix, fmt in files.FORMATS.items():
        path = tmp_path / f"r{suffix}"
        files.save(results, path)
        assert files.format_of(path) is fmt
        assert len(files.load(path)) > 0
    with pytest.raises(
        ValueError,
        match=r"unknown suffix '\.dat'; name a results file ending in \.json, \.csv, \.parquet",
    ):
        files.save(results, tmp_path / "r.dat")


def test_every_file_save_writes_is_read_by_load_compare_and_plot(
    results: list[ctxbench.RingResult], tmp_path: Path
) -> None:
    pytest.importorskip("pyarrow")
    pytest.importorskip("matplotlib")
    import ctxbench.plot

    for suffix in files.FORMATS:
        path = tmp_path / f"r{suffix}"
        files.save(results, path)
        points = files.load(path).groupby(list(ctxbench.frame.POINT_KEY)).ngroups
        assert len(ctxbench.compare(path, path)) == points == 3, suffix
        assert ctxbench.plot.lat_ctx(path).axes, suffix
