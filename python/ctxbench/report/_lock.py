"""The words of waiting for the machine's measuring lock (``ctxbench._exclusive`` decides when
they are said): who holds it, how long a measurement waited, why it gave up; and a long call's
step where no progress bar shows it (``ctxbench._progress``)."""

from __future__ import annotations

import time

from .._format import plain

# A holder's command line is cut to this many characters: enough to tell which run it is.
COMMAND_CHARS = 80


def holder(pid: int | None, command: str = "", state: str = "", since: float | None = None) -> str:
    """Who holds the lock: "pid 4242 (python -m pytest -q, state S) since 10:02:03", as much
    of it as is known; "another process" when nothing is."""
    if pid is None:
        return "another process"
    # One line whatever the command holds (a `python -c` script has newlines), any other
    # control character escaped.
    command = plain(" ".join(command.split()))
    if len(command) > COMMAND_CHARS:
        command = command[: COMMAND_CHARS - 1] + "…"
    inside = ", ".join(part for part in (command, f"state {state}" if state else "") if part)
    who = f"pid {pid}" + (f" ({inside})" if inside else "")
    if since is not None:
        who += f" since {time.strftime('%H:%M:%S', time.localtime(since))}"
    return who


def waiting(who: str, seconds: float) -> str:
    """What a waiting measurement says, and updates, while it waits (a ``wait`` line)."""
    return (
        f"waiting {seconds:.0f} s for this machine's measuring lock, held by {who} "
        "(two measurements at once both read high; --no-wait fails at once instead)"
    )


def waited(who: str, seconds: float) -> str:
    """What a measurement that had to wait says once it has the lock (a fleet record keeps
    it among its warnings)."""
    return f"waited {seconds:.1f} s for this machine's measuring lock, held by {who}"


def busy(who: str, path: object, patience: float) -> str:
    """Why a measurement gave up on the lock: after ``patience`` seconds, or at once."""
    held = (
        f"still holds {path} after {patience:g} s"
        if patience > 0
        else f"holds {path}, and this run does not wait (--no-wait, or patience 0)"
    )
    return (
        f"another ctxbench measurement on this machine ({who}) {held}: measurements wait "
        "for each other, since two at once both read high; stop it or wait for it"
    )


def step(desc: str, done: int, total: int, unit: str, what: str, seconds: float) -> str:
    """One line of a long call's progress where no bar shows it: "ctxbench sweep of sizes:
    round 3 of 10 (2 procs, 29 sizes), 12 s"."""
    return f"{desc}: {unit} {done} of {total} ({what}), {seconds:.0f} s"
