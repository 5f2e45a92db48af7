"""What is said about one measurement, each only where it applies: how its points stopped
where a cap or the run level ended one, the points below the method's resolution, the hints
that explain why its figure may swing, and its warnings."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._format import interval
from ._counts import figure_lines
from ._to import Line

# How a point stops when it got what was asked: nothing to say.
ASKED = ("precision", "repetitions")
# Engines whose hops never cross CPUs, whatever the placement: fibers resume each other on
# the one thread of their ring, which the kernel schedules as any thread.
ONE_THREAD_ENGINES = ("fiber",)
# Clocksources without a vDSO fast path: every clock read becomes a syscall or an I/O-port
# access, which is comparable to the switch being measured.
SLOW_CLOCKSOURCES = frozenset({"hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit"})
# Values come from files the kernel or a hand-edited JSON controls: a hint stays one line.
HINT_CHARS = 99


def stop_phrase(stats: dict[str, Any], j: int, name: object, stopped: str, asked: Any) -> str:
    """ "NAME: how it stopped, over how many instances, its interval" (``_format.interval``),
    and for a point a cap or the run level ended, why it is wide and what would narrow it."""
    median, low, high = (float(stats[k][j]) for k in ("median", "ci_low", "ci_high"))
    width = interval(median, low, high)
    level = stats.get("level")
    instances = stats.get("instances")
    on = ""
    if level is not None and instances is not None:
        on = f" over {int(instances[j])} instance{'s' if int(instances[j]) != 1 else ''}"
    phrase = f"{name}: {stopped}{on}, {width}"
    runs = stats.get("sd_run")
    if stopped == "run_spread" and runs is not None:
        phrase += (
            f" (runs on this machine differ by ±{float(runs[j]):.1%} beyond their own "
            "errors: measuring longer would not narrow it)"
        )
    if stopped in ("time_cap", "max_repetitions") and asked is not None:
        spread = stats.get("sd_instance")
        between = float(spread[j]) / abs(median) if spread is not None and median else math.nan
        cause = (
            f"instances differ by {between:.1%}"
            if math.isfinite(between)
            else "too few instances for the interval"
        )
        cap = "max_time" if stopped == "time_cap" else "max_repetitions"
        phrase += f" (asked ±{float(asked):.0%}: {cause}; raise {cap} or the precision)"
    return phrase


def stop_line(result: Any) -> str:
    """How a ring's points (or a ping-pong) stopped, on what and at what cost, in one line; a
    point a cap ended says what would narrow it."""
    if result.kind == "pingpong":
        r = result
        if not r.stopped or not r.stats or r.stopped == "repetitions":
            return f"perf's fixed loop: {r.loops} round trips, one sample, no interval"
        seconds = sum(float(v[0]) for v in r.phase_s.values())
        return f"{stop_phrase(r.stats, 0, 'ping-pong', r.stopped, r.precision)}, {seconds:.2f} s"
    if not result.stopped:
        return "how the points stopped was not recorded"
    return "; ".join(
        stop_phrase(result.stats, j, p, result.stopped[j], result.precision)
        + f", {sum(float(v[j]) for v in result.phase_s.values()):.2f} s"
        for j, p in enumerate(result.procs.tolist())
    )


def stop_summary(result: Any) -> str:
    """How measuring stopped in one short phrase, for a run where a cap or the run level
    ended some point: how many points stopped how, the widest interval against the one asked,
    and where the detail is (``stop_line``)."""
    if result.kind == "pingpong":
        stopped, widths = [result.stopped], [_half(result.stats, 0)]
    else:
        stopped = list(result.stopped)
        widths = [_half(result.stats, j) for j in range(len(stopped))]
    ended = [(how, w) for how, w in zip(stopped, widths) if how not in ASKED]
    counts = ", ".join(f"{n} {how}" for how, n in _counted([how for how, _ in ended]))
    points = f"{len(ended)} of {len(stopped)} point{'s' if len(stopped) != 1 else ''}"
    finite = [w for _, w in ended if math.isfinite(w)]
    widest = f", widest ±{max(finite):.1%}" if finite else ", no interval"
    asked = f" (asked ±{float(result.precision):.1%})" if result.precision is not None else ""
    return f"{points} by {counts}{widest}{asked}; each point: -v, or result.stop_line()"


def _half(stats: dict[str, Any], j: int) -> float:
    """The relative half-width of point ``j``'s interval (NaN where there is none)."""
    try:
        median, low, high = (float(stats[k][j]) for k in ("median", "ci_low", "ci_high"))
    except (KeyError, IndexError, TypeError):
        return math.nan
    return (high - low) / 2 / median if median > 0 else math.nan


def _counted(words: list[str]) -> list[tuple[str, int]]:
    return [(w, words.count(w)) for w in dict.fromkeys(words)]


def hints(
    metadata: dict[str, object],
    *,
    placement: str,
    one_cpu: bool = False,
    stable: bool = False,
    engine: str | None = None,
) -> list[str]:
    """Short human hints (one line each) explaining why a result may be noisy, each only
    where it applies.

    An unpinned run gets its hint whatever its verdicts: its figure moves between runs even
    when each run looks steady; not where no hop crosses CPUs anyway: it ran on one CPU
    (``one_cpu``: a ring result's, decided by the core over the CPUs the placement resolved
    to) or its ``engine`` switches on one thread (``ONE_THREAD_ENGINES``). The machine's
    hints are left out when every point was ``stable``.
    """
    out: list[str] = []
    cpu_count = _as_int(metadata.get("cpu_count"))
    if placement == "default" and not one_cpu and engine not in ONE_THREAD_ENGINES:
        out.append(
            "unpinned: the share of hops that cross CPUs (slow) varies run to run; "
            "pin: --placement single"
        )
    if stable:
        return out
    if cpu_count is not None and cpu_count <= 2:
        out.append(f"only {cpu_count} CPUs: benchmark threads compete with the OS for cores")
    governor = metadata.get("governor")
    if isinstance(governor, str) and governor != "performance":
        out.append(f"cpufreq governor is {governor}: frequency ramps add noise; use performance")
    loadavg = metadata.get("loadavg")
    load = _as_float(loadavg[0]) if isinstance(loadavg, (list, tuple)) and loadavg else None
    if load is not None and cpu_count and load > 0.5 * cpu_count:
        out.append(f"machine is busy (load {load:.2f} on {cpu_count} CPUs): other tasks preempt")
    quota = _as_float(metadata.get("cgroup_cpu_quota"))
    if quota is not None and cpu_count and quota < cpu_count:
        out.append(
            f"cgroup CPU quota is {quota:g} of {cpu_count} CPUs: throttling adds long stalls"
        )
    clocksource = metadata.get("clocksource")
    if isinstance(clocksource, str) and clocksource in SLOW_CLOCKSOURCES:
        out.append(f"clocksource is {clocksource}: slow clock reads inflate the timings")
    return [_one_line(h) for h in out]


def _as_int(value: object) -> int | None:
    # bool is an int subclass; True CPUs is never meaningful.
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _as_float(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat[: HINT_CHARS - 3] + "..." if len(flat) > HINT_CHARS else flat


@contextmanager
def heard() -> Iterator[list[Line]]:
    """The Python warnings of the block, as warning lines in the list this yields once the
    block is over, instead of Python's own print: a front door says them with the rest of
    what it says about the measurement (``lines(..., heard=)``), each once."""
    said: list[Line] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield said
    said.extend(Line("warning", str(w.message).removeprefix("ctxbench: ")) for w in caught)


def lines(
    measured: Any,
    *,
    where: str = "",
    heard: list[Line] | None = None,
    warnings: bool = True,
    brief: bool = False,
) -> list[Line]:
    """Everything a front door says about ``measured`` (a ring, ping-pong or matrix result,
    or a cache sweep), each thing only where it applies. ``where`` names the measurement in
    lines about its points (a test id); ``heard``: warnings caught while it ran (``heard()``),
    said before its own; ``warnings=False`` leaves the warnings to a front door that shows
    Python's (pytest); ``brief``: how the points stopped in one short line
    (``stop_summary``), not each point's sentence (the command line without ``-v``)."""
    kind = getattr(measured, "kind", None)
    at = f"{where}: " if where else ""
    stops = stop_summary if brief else stop_line
    out: list[Line] = []
    if kind == "ring":
        if any(how not in ASKED for how in measured.stopped):
            out.append(Line("stopped", at + stops(measured)))
        for p, low in zip(measured.procs.tolist(), measured.below_resolution.tolist()):
            if low:
                below = "below the resolution of the method (lat_ctx would have omitted this line)"
                out.append(Line("below_resolution", f"{at}{p} procs: net time <= 0, {below}"))
    elif kind == "pingpong" and measured.stopped not in (None, *ASKED):
        out.append(Line("stopped", at + stops(measured)))
    elif kind is None and hasattr(measured, "results"):  # a cache sweep
        if measured.note:
            out.append(Line("note", measured.note))
    out += figure_lines(measured, at)
    said = [line.text for line in heard or []]
    out += [Line("warning", text) for text in dict.fromkeys([*said, *_warnings(measured)])]
    if not warnings:
        out = [line for line in out if line.kind != "warning"]
    return out + [Line("hint", h) for h in _hints(measured)]


def _warnings(measured: Any) -> list[str]:
    """A result's own warnings (a cache sweep's: each of its results'); a matrix's cells
    whose clocks cannot be trusted among them."""
    if getattr(measured, "kind", None) is None and hasattr(measured, "results"):
        return [w for r in measured.results for w in _warnings(r)]
    out = list(getattr(measured, "warnings", None) or [])
    if getattr(measured, "kind", None) == "matrix":
        bad = [f"{a}->{b}" for a, b, flag in zip(measured.cpu_from, measured.cpu_to,
               measured.clock_untrusted) if flag]  # fmt: skip
        if bad:
            out.append(
                f"clock offset exceeds the hop histogram's resolution in {len(bad)} cells "
                f"({', '.join(bad[:8])}{', ...' if len(bad) > 8 else ''}): their wake_us may "
                "be off"
            )
    return out


def _hints(measured: Any) -> list[str]:
    """The hints that apply to a ring or a ping-pong (a matrix's cells are pinned)."""
    kind = getattr(measured, "kind", None)
    if kind == "ring":
        verdicts = measured.stats["verdict"]
        one_cpu = bool(measured.one_cpu.size) and bool(measured.one_cpu.all())
    elif kind == "pingpong":
        found = (measured.stats or {}).get("verdict")
        verdicts = list(found) if found is not None and len(found) else [""]
        one_cpu = False  # the core records no such decision for a ping-pong
    else:
        return []
    stable = all(v == "stable" for v in verdicts)
    return hints(measured.metadata, placement=str(measured.placement), one_cpu=one_cpu,
                 stable=stable, engine=measured.engine)  # fmt: skip
