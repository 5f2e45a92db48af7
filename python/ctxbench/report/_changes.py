"""What ``ctxbench changes`` says: one line per change point (the series, the run where it
happened with its time and labels, the size with its interval, the significance), and what
the scan covered, so that a series too short to be scanned is not read as "no change"."""

from __future__ import annotations

from typing import Any

from .._format import plain, us


def ratio_words(ratio: float, lo: float, hi: float, confidence: float) -> str:
    """ "1.25x [1.21, 1.30] slower" with its bounds, so that which side of 1 they lie reads."""
    way = "slower" if lo > 1 else "faster" if hi < 1 else "either way"
    return f"{ratio:.3g}x [{lo:.3g}, {hi:.3g}] {way} ({confidence:.0%} interval)"


def labels_text(labels: dict[str, Any]) -> str:
    return " ".join(f"{plain(k)}={plain(v)}" for k, v in sorted(labels.items())) or "no labels"


def change_line(r: dict[str, Any]) -> str:
    when = r["time"].strftime("%Y-%m-%d %H:%M:%SZ")
    return (
        f"{plain(r['point'])} on {plain(r['machine'])}: changed at run {r['run_id']} "
        f"({r['index'] + 1}th of its series, {when}, {labels_text(r['labels'])}): "
        f"{us(r['before_us'])} -> {us(r['after_us'])} µs, "
        f"{ratio_words(r['ratio'], r['ratio_lo'], r['ratio_hi'], r['confidence'])}, "
        f"p = {r['p']:.2g} (passed at {r['level']:.2g})"
    )


def change_lines(frame: Any) -> list[str]:
    """The lines ``ctxbench changes`` prints for a frame of ``ctxbench.changes()``."""
    lines = [change_line(r) for r in frame.to_dict("records")]
    a = frame.attrs
    level = a.get("level")
    scanned, short = a.get("series_scanned", 0), a.get("series_too_short", 0)
    lines.append(
        f"{len(frame)} change point(s) in {scanned} series scanned"
        + (f" (chance of any false one held at {level:.0%}, Holm)" if level else "")
        + (
            f"; {short} series too short to scan (fewer than {2 * a['min_runs']} runs): "
            "no change could be seen there, which is not no change"
            if short
            else ""
        )
    )
    return lines


def change_point_words(runs: list[Any], scan: Any) -> str:
    """The gate's answer to "is this run (the newest of ``runs``) a change point of its
    series?" from the core's ``scan`` of the series: a change needs ``min_runs`` runs after
    it, so this run is not seeable yet; a change at the newest run that is ("confirmed
    now"), else the series' newest change, else none."""
    k, n = scan["min_runs"], len(runs)
    if scan["status"] != "scanned":
        return f"series too short to scan ({n} runs, {2 * k} needed)"
    wait = f"this run seeable after {k - 1} more"
    if not scan["changes"]:
        return f"none ({wait})"
    last = max(scan["changes"], key=lambda c: c["index"])
    back = n - 1 - last["index"]
    size = ratio_words(last["ratio"], last["ratio_lo"], last["ratio_hi"], last["confidence"])
    at = f"at run {runs[last['index']].run_id} ({labels_text(runs[last['index']].labels)})"
    if last["index"] == n - k:
        return f"confirmed now {at}, {back} runs back: {size}"
    return f"none new; the last {at}, {back} runs back: {size} ({wait})"
