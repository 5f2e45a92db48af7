"""Error messages that add up: the figures a limit's message gives are the figures checked."""

from __future__ import annotations

import re
import subprocess
import sys

NOFILE = """
import resource, ctxbench
resource.setrlimit(resource.RLIMIT_NOFILE, ({limit}, {limit}))
try:
    ctxbench.ring([2], min_time=0.002, repetitions=1, warmup=0)
    print("OK")
except OSError as e:
    print(e)
"""


def test_the_descriptor_limit_message_adds_up() -> None:
    # It said "needs 8 file descriptors but the hard limit is 28": 8 < 28, yet refused, since
    # those already open and a spare were counted too without a word.
    p = subprocess.run([sys.executable, "-c", NOFILE.format(limit=28)], capture_output=True,
                       text=True, timeout=60)  # fmt: skip
    found = re.search(
        r"needs (\d+) file descriptors beside the (\d+) open and (\d+) kept spare, (\d+) in "
        r"all, but the hard limit \(ulimit -Hn\) is (\d+)",
        p.stdout,
    )
    assert found, p.stdout + p.stderr
    needed, open_, spare, total, hard = map(int, found.groups())
    assert needed + open_ + spare == total > hard == 28
