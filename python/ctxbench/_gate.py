"""The pytest plugin's gate against the results store (``--ctxbench-store``): each test's
points judged against the series the store keeps of the same test's same points on this
machine (``_series.judge``, the core's ``judge_series``), and the test's runs kept there,
labelled with its node id, for the sessions after it.

Points are matched by test id as well as by configuration: a stored point the test no longer
measures (its engine changed, say: every point's key changes with it) is reported, and fails
the test unless ``--ctxbench-unmatched warn``; it is never a silent "new".

Change points. After a test's runs are kept, each of its points' series is scanned by the
core's E-Divisive (``_core.change_points``, what ``change_at`` and ``ctxbench changes``
ask): "is this run a change point of its series?" A change needs ``min_runs`` runs after it
to be seen, so the newest run cannot be one yet; the run that many back is the newest that
can, and a change found there is one this session confirms. The answer is a column of the
gate's table (``change_point``), words, not a failure.

Error control across the session. A test fails as it finishes, before the others have run,
so Holm's procedure across the whole session cannot be waited for. Instead each test's
points are one Holm family at the test's share of the session's ``FAMILY_ALPHA``:
α · k / m, its k baseline points of the m that the session's collected tests have stored.
By the union bound the chance of any false call in the session is at most α, and within a
test Holm's step-down keeps its power over Bonferroni's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from . import _core

if TYPE_CHECKING:
    import pandas as pd

UNMATCHED = ("fail", "warn")
# The label a test's runs carry in the store.
TEST_LABEL = "test"


def open_store(path: str) -> Any:
    """The store the gate reads and keeps runs in: ``path``, or the default one for "".
    (Tests replace this with a stand-in.)"""
    from . import store

    return store.open(path or None)


def machine_now() -> str:
    """This machine's fingerprint, as the store names the machine of a run measured now."""
    from . import store
    from .api import result_metadata

    return str(store.machine_of({"metadata": result_metadata()}))


@dataclass
class Gate:
    """A session's gate: the store, this machine, what an unmatched point does, the
    threshold and the session's α, and how many stored points the session's tests have."""

    store: Any
    machine: str
    unmatched: str = "fail"
    threshold: float = _core.DEFAULT_PRECISION
    alpha: float = _core.FAMILY_ALPHA
    family: int = 0
    stored: dict[str, set[str]] = field(default_factory=dict)

    def stored_points(self, nodeid: str) -> set[str]:
        """The point ids the store holds runs of for test ``nodeid`` on this machine."""
        if nodeid not in self.stored:
            rows = self.store.points(machine=self.machine, labels={TEST_LABEL: nodeid})
            self.stored[nodeid] = {p for p, _ in rows}
        return self.stored[nodeid]

    def count(self, nodeids: list[str]) -> None:
        """The session's family: the stored points of every collected test."""
        self.family = sum(len(self.stored_points(n)) for n in nodeids)

    def judge(self, nodeid: str, results: list[Any]) -> tuple[pd.DataFrame | None, list[str]]:
        """The test's points judged against their series (None: no point measured), and
        the stored points it did not measure."""
        from ._series import judge
        from .frame import concat

        stored = self.stored_points(nodeid)
        if not results:
            return None, sorted(stored)
        new = concat(tagged(nodeid, r) for r in results)
        measured = set(new["point_id"].dropna())
        missing = sorted(stored - measured)
        k = len(stored & measured)
        share = self.alpha * k / max(self.family, k, 1)
        table = judge(
            new,
            self.store,
            machine=self.machine,
            labels={TEST_LABEL: nodeid},
            threshold=self.threshold,
            family_alpha=share if share > 0 else self.alpha,
            by=("test",),
            earlier_only=True,
        )
        table.attrs["context"] = []
        return table, missing

    def keep(self, nodeid: str, results: list[Any]) -> None:
        """The test's runs into the store, labelled with its node id."""
        for r in results:
            self.store.keep(tagged(nodeid, r), labels={TEST_LABEL: nodeid})

    def change_points(self, nodeid: str, table: pd.DataFrame) -> pd.DataFrame:
        """``table`` with each point's ``change_point``: whether the test's series (its
        runs kept, this one included) has a change point, where, and what this run can
        show yet (``report.change_point_words``)."""
        from .report import change_point_words

        series = [
            (p, self.store.series(p, machine=self.machine, labels={TEST_LABEL: nodeid}))
            for p in table["point_id"]
        ]
        scans = _core.change_points(
            [(f"{p} @ {self.machine}", [r.ln_value for r in runs]) for p, runs in series]
        )
        table["change_point"] = [
            change_point_words(runs, scan) for (_, runs), scan in zip(series, scans)
        ]
        return table


def tagged(nodeid: str, result: Any) -> Any:
    """A copy of ``result`` whose metadata names the test (the result keeps its own)."""
    return replace(result, metadata={**result.metadata, "test": nodeid})


def unmatched_message(nodeid: str, missing: list[str]) -> str:
    """What a test that no longer measures some of its stored points is told."""
    from .report._comparison import plain

    shown = "\n".join(f"  {plain(p)}" for p in missing[:10])
    more = f"\n  ... and {len(missing) - 10} more" if len(missing) > 10 else ""
    return (
        f"ctxbench: {nodeid} no longer measures {len(missing)} point(s) it has a stored "
        f"baseline of (a changed engine, transport, placement or size changes every key):\n"
        f"{shown}{more}\n  --ctxbench-unmatched warn lets it pass; deleting the test's runs "
        "from the store (ctxbench store delete --label test=...) starts a new series"
    )
