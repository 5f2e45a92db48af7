"""The words of a comparison of two runs (``ctxbench.compare``): the verdict of each point and
why one is inconclusive, the table ``ctxbench compare`` prints, and the lines the pytest
plugin says of a test that regressed or could not be decided."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .._core import ASSUMED_RUN_SD, CHANGES, DEFAULT_PRECISION, LOADED_RUNNABLE
from .._format import interval, plain
from .._table_schema import POINT_IDENTITY, identity_text
from ._to import Line

if TYPE_CHECKING:
    import pandas as pd

INCONCLUSIVE = "inconclusive"
# Units a decision would take beyond which the reason says "far more".
FAR_MORE = 1000
# Why a comparison cannot decide yet that more of the same data would decide: a test of the
# pytest plugin measures again for these, within its budget.
WANTING_DATA = ("too wide", "one sample", "under load")


def reason(
    c: dict[str, Any],
    units: int,
    unit: str,
    seconds_per_unit: float | None,
    assumed: bool = False,
) -> str:
    """Why a comparison is inconclusive, and what would decide it ("" once decided).
    ``assumed``: a side is one run whose spread between runs is the assumed one."""
    why = c["why"]
    if why == "one sample":
        return (
            "a side is one sample: nothing in it shows how another would differ; measure in "
            "precision mode, or use `ctxbench ab`"
        )
    if why == "under load":
        return (
            "a side is one run measured while other tasks were runnable "
            f"(≥ {LOADED_RUNNABLE:g} per CPU as it started), with no earlier runs of such "
            "conditions: runs then differ by up to a factor of two; measure on a quiet "
            "machine, several runs a side, or `ctxbench ab`"
        )
    if why == "below resolution":
        return "a figure at or below 0: below the method's resolution"
    if why == "at threshold":
        return "the ratio sits on the threshold: no amount of data decides it soon"
    if why != "too wide":
        return ""
    more = math.ceil(units * c["data_factor"] - units)
    ratio = interval(c["ratio"], c["low"], c["high"])
    took = f", ~{more * seconds_per_unit:.0f} s" if seconds_per_unit else ""
    if more > FAR_MORE:
        said = (
            f"{ratio}: far more data than this would decide it; `ctxbench ab` stops as soon "
            "as it can"
        )
    else:
        said = (
            f"{ratio}: about {more} more {unit}{'s' if more != 1 else ''} per side{took} "
            f"would decide it if the ratio stays at {c['ratio']:.3g}x, or `ctxbench ab`"
        )
    if assumed:
        said += (
            f" (one run a side cannot show how runs differ: ±{ASSUMED_RUN_SD:.0%} "
            "between runs is assumed; more runs, or the run history, measure it)"
        )
    return said


def side(units: int, level: str) -> str:
    """What one side of a comparison rests on: "6 instances", "3 runs", "1 repetition"."""
    return f"{units} {level}{'s' if units != 1 else ''}"


def verdict_counts(verdicts: list[str]) -> str:
    """Every verdict word, each counted: "2 slower, 0 faster, 1 no change, 3 inconclusive"."""
    return ", ".join(f"{verdicts.count(word)} {word}" for word in CHANGES)


def point(row: Any) -> str:
    """A compared point in one phrase: "process/pipe placement=single size=0k P=1 procs=2"."""
    name = f"{row.engine}/{row.transport}"
    if row.benchmark != "ring":
        name += f" ({row.benchmark})"
    # Compared rows come from files: whatever they hold is printed with control characters
    # escaped.
    text = (
        f"{name} placement={row.placement} size={row.size_kb}k P={row.parallel} procs={row.procs}"
    )
    return plain(f"{text} {under(row)}".rstrip())


def under(row: Any) -> str:
    """What a compared point ran under beyond its key, where not the default: "policy=fifo
    interference_hogs=1" ("" for a plain point)."""
    shown = []
    for column, default in POINT_IDENTITY.items():
        value = getattr(row, column, None)
        if value is not None and value != identity_text(default):
            shown.append(f"{column}={value}")
    return " ".join(shown)


# Switches per hop that differ by more than this between the sides make their per-hop
# figures count different things.
SWITCHES_APART = 0.05


def switches_lines(df: pd.DataFrame) -> list[str]:
    """One line per compared point whose sides made different numbers of context switches
    per hop: the figures are per hop (lat_ctx's), so the ratio partly counts switches."""
    out = []
    for r in df.itertuples(index=False):
        a = getattr(r, "switches_per_hop_base", math.nan)
        b = getattr(r, "switches_per_hop_new", math.nan)
        if math.isfinite(a) and math.isfinite(b) and abs(b - a) > SWITCHES_APART * max(a, b):
            per_switch = (r.new_us / b) / (r.base_us / a) if r.base_us > 0 < r.new_us else math.nan
            out.append(
                f"{point(r)}: {a:.2f} switches per hop in base, {b:.2f} in new: the figures "
                f"are per hop, so the ratio counts the extra switches too (per switch: "
                f"{per_switch:.3f}x)"
            )
    return out


def ratio_interval(row: Any) -> str:
    """A compared point's ratio interval in its bounds: "[1.02, 1.09]"."""
    return interval(row.ratio, row.ratio_low, row.ratio_high, lambda v: f"{v:.3g}")


def _ratio_text(r: Any) -> str:
    if math.isnan(r.ratio):
        return "n/a"
    if math.isinf(r.ratio_high) or math.isnan(r.ratio_low):
        return f"{r.ratio:.3f}x"
    return f"{r.ratio:.3f}x {interval(r.ratio, r.ratio_low, r.ratio_high, lambda v: f'{v:.3g}')}"


def change(row: Any) -> str:
    """A compared point's change against the baseline in one cell: "+3.1% slower"."""
    text = "n/a" if math.isnan(row.ratio) else f"{100 * (row.ratio - 1):+.1f}%"
    return f"{text} {row.verdict}" + (" REGRESSED" if row.regressed else "")


def undecided(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of a comparison that could not decide."""
    return table[table["verdict"] == INCONCLUSIVE]


def inconclusive_lines(table: pd.DataFrame, where: str = "") -> list[Line]:
    """One line per inconclusive point: which (in the test ``where``), and why."""
    at = f"{where} " if where else ""
    return [
        Line("verdict", f"{INCONCLUSIVE}: {at}{point(row)}: {row.reason}")
        for row in undecided(table).itertuples(index=False)
    ]


def context_line(notes: list[str], against: str = "the two runs differ") -> Line:
    """What differs between the two runs' machines or versions, and what that means."""
    return Line(
        "verdict",
        f"{against} in {'; '.join(plain(n) for n in notes)}: a difference may be the "
        "machine's, not the code's",
    )


def regressed(test: str, table: pd.DataFrame, fail: float) -> str:
    """Why a test fails the gate: each point slower than the baseline by more than ``fail``,
    both figures, the interval and what each side rests on."""
    lines = [f"ctxbench: {test} is slower than the baseline by more than {100 * fail:g}%:"]
    for row in table[table["regressed"]].itertuples(index=False):
        moved = "n/a" if math.isnan(row.ratio) else f"{100 * (row.ratio - 1):+.1f}%"
        lines.append(
            f"  {point(row)}: {row.new_us:.3f} µs, baseline {row.base_us:.3f} µs "
            f"({moved}, 95% interval of the ratio {ratio_interval(row)}; "
            f"baseline on {side(row.units_base, row.level_base)}, "
            f"this run on {side(row.units_new, row.level_new)})"
        )
    for note in table.attrs.get("context") or []:
        lines.append(f"  note: the baseline differs in {plain(note)}")
    return "\n".join(lines)


def inconclusive(test: str, table: pd.DataFrame) -> str:
    """Why a test's comparison with the baseline could not decide, point by point."""
    lines = [f"ctxbench: {test}: the comparison with the baseline is inconclusive:"]
    lines += [f"  {point(row)}: {row.reason}" for row in undecided(table).itertuples(index=False)]
    return "\n".join(lines)


def compared(baseline: object, tables: list[pd.DataFrame], fail: float | None) -> Line:
    """What a session's comparison with a saved run found, counted."""
    verdicts = [v for t in tables for v in t["verdict"]]
    text = f"compared with {baseline}: {verdict_counts(verdicts)}"
    if fail is not None:
        slower = sum(int(t["regressed"].sum()) for t in tables)
        text += f"; {slower} slower by more than {100 * fail:g}%"
    return Line("verdict", text)


def format_comparison(df: pd.DataFrame) -> str:
    """The comparison as an aligned text table: every point's figures, its ratio with the
    95 % interval, what each side rests on, the verdict; then what was compared with what."""
    threshold = df.attrs.get("threshold", DEFAULT_PRECISION)
    tests = "test" in df.columns
    header = (*(("test",) if tests else ()), "engine/transport", "placement", "size", "P",
              "procs", "base µs", "new µs", "ratio [95 % interval]", "base on", "new on",
              "verdict")  # fmt: skip
    lines = [header]
    for r in df.itertuples(index=False):
        # Names come from the files compared: printed with their control characters escaped.
        name = plain(f"{r.engine}/{r.transport}" + (f" [{under(r)}]" if under(r) else ""))
        lines.append((
            *((plain(r.test),) if tests else ()),
            name if r.benchmark == "ring" else f"{name} ({plain(r.benchmark)})",
            plain(r.placement), f"{r.size_kb}k", str(r.parallel), str(r.procs),
            f"{r.base_us:.4g}", f"{r.new_us:.4g}", _ratio_text(r),
            side(r.units_base, r.level_base), side(r.units_new, r.level_new),
            r.verdict + (" (regressed)" if r.regressed else ""),
        ))  # fmt: skip
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    # Text columns left-aligned, numbers right-aligned, the verdict last and ragged.
    first_number = 4 if tests else 3
    text = [
        "  ".join(
            c.rjust(w) if first_number <= i < len(header) - 3 else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths))
        ).rstrip()
        for row in lines
    ]
    text.append(verdict_counts(df["verdict"].tolist()))
    text += [line.text for line in inconclusive_lines(df, "")]
    text += switches_lines(df)
    text.append(
        "compared: each side's median with the uncertainty of its ring instances (the spread "
        "between runs where a side holds several), ratio by Welch's t on the log scale; "
        f"slower/faster: the 95 % interval beyond 1 and the ratio beyond ±{threshold:.0%}; "
        f"no change: the 90 % interval within ±{threshold:.0%} (shown, not assumed)"
    )
    for which in ("only_base", "only_new"):
        missing = df.attrs.get(which) or []
        if missing:
            text.append(f"{len(missing)} points only in the {which[5:]} run, not compared")
    context = df.attrs.get("context") or []
    if context:
        text.append(context_line(context).text)
    return "\n".join(text)
