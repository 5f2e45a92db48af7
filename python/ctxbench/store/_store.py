"""The results store: each run kept as one row set, each point's runs read back as a series
(``Run``), oldest first; the run history's queries (``_history``) read the same rows."""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _db, _rows


@dataclass(frozen=True)
class Run:
    """One stored run of one point on one machine (see ``docs/guide/store.md``)."""

    run_id: int
    time: float
    point_id: str
    machine: str
    value_us: float
    ln_value: float
    rel_se: float
    instances_us: tuple[float, ...]
    load: float | None
    steal: float | None
    labels: dict[str, str]
    switches_per_hop: float | None


_RUN_COLUMNS = (
    "r.id, r.time, p.point_id, r.machine, p.value_us, p.ln_value, p.rel_se, p.instances_us, "
    "r.runnable_per_cpu, r.steal, p.switches_per_hop, r.kernel"
)


def _labels_where(labels: dict[str, str] | None, params: list[Any]) -> str:
    """SQL that holds for a run carrying every one of ``labels`` (``kernel`` is the run's
    own kernel release where no user label names one)."""
    sql = ""
    for key, value in (labels or {}).items():
        own = (
            " OR (r.kernel = ? AND NOT EXISTS (SELECT 1 FROM labels k WHERE k.run = r.id "
            "AND k.key = 'kernel'))"
            if key == "kernel"
            else ""
        )
        sql += (
            f" AND (EXISTS (SELECT 1 FROM labels l WHERE l.run = r.id AND l.key = ? AND "
            f"l.value = ?){own})"
        )
        params += [key, value] + ([value] if own else [])
    return sql


class Store:
    """An open results store (``store.open``); a context manager that closes it."""

    def __init__(self, path: Path, db: sqlite3.Connection) -> None:
        self.path = path
        self._db = db

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def __repr__(self) -> str:
        return f"<ctxbench store {self.path}>"

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        def work() -> list[tuple[Any, ...]]:
            with _db.transaction(self._db, write=False) as db:
                return db.execute(sql, params).fetchall()

        return _db.retrying(self.path, work)

    # --- writing ------------------------------------------------------------------------

    def keep(
        self, result: Any, labels: dict[str, str] | None = None, *, source: str = "saved",
        **how: Any,
    ) -> int:  # fmt: skip
        """Keeps one result (or a list of them) as one row set each; the rows added (one
        per point, one per matrix).
        A run kept before (the same ``metadata.run_id`` on the same machine) is not kept
        again: measuring keeps a run, and saving it afterwards adds only the labels it is
        saved with (a label the run has already keeps its value)."""
        from ..record import encode

        user = _rows.check_labels(labels)
        items = result if isinstance(result, (list, tuple)) else [result]
        sets = []
        for r in items:
            if getattr(r, "kind", None) not in (*_rows.KINDS, _rows.MATRIX):
                continue  # an A/B result: its two sides are not one run of a point
            # As a results file holds it (a file's JSON, whatever figures it has).
            text = json.dumps(encode(r), separators=(",", ":")).encode()
            rows = _rows.row_set(r, text, labels=user, source=source, **how)
            if rows is not None:
                rows.record = zlib.compress(text, 1)
                sets.append(rows)
        return self.add(sets)

    def add(self, sets: Iterable[_rows.RowSet]) -> int:
        """Writes row sets in one transaction; the point rows added."""
        sets = list(sets)

        def work() -> int:
            added = 0
            with _db.transaction(self._db, write=True) as db:
                for s in sets:
                    added += _insert(db, s)
            return added

        return _db.retrying(self.path, work) if sets else 0

    def label(self, run_ids: Sequence[int], labels: dict[str, str]) -> int:
        """Sets ``labels`` on the runs ``run_ids``; how many runs there were."""
        pairs = list(_rows.check_labels(labels).items())

        def work() -> int:
            with _db.transaction(self._db, write=True) as db:
                found = [i for i in run_ids if db.execute(
                    "SELECT 1 FROM runs WHERE id = ?", (i,)).fetchone()]  # fmt: skip
                db.executemany(
                    "INSERT OR REPLACE INTO labels (run, key, value) VALUES (?, ?, ?)",
                    [(i, k, v) for i in found for k, v in pairs],
                )
                return len(found)

        return _db.retrying(self.path, work)

    def delete(self, labels: dict[str, str]) -> int:
        """Removes every run carrying all of ``labels`` (at least one); how many."""
        labels = _rows.check_labels(labels)
        if not labels:
            raise ValueError("labels: name at least one label of the runs to delete")
        params: list[Any] = []
        where = _labels_where(labels, params)

        def work() -> int:
            with _db.transaction(self._db, write=True) as db:
                return db.execute(
                    f"DELETE FROM runs WHERE id IN (SELECT r.id FROM runs r WHERE 1{where})",
                    params,
                ).rowcount

        return _db.retrying(self.path, work)

    def forget(self, machine: str, kernel: str | None, version: str | None, since: float) -> int:
        """Removes the runs the history of this machine, kernel and build reads (those since
        ``since``); how many."""

        def work() -> int:
            with _db.transaction(self._db, write=True) as db:
                return _forget(db, machine, kernel, version, since)

        return _db.retrying(self.path, work)

    # --- reading -----------------------------------------------------------------------

    def series(
        self,
        point_id: str,
        *,
        machine: str,
        labels: dict[str, str] | None = None,
        newest: int | None = None,
    ) -> list[Run]:
        """Every stored run of ``point_id`` on ``machine`` carrying ``labels``, oldest first
        (the ``newest`` of them only, where given)."""
        params: list[Any] = [point_id, machine]
        sql = (
            f"SELECT {_RUN_COLUMNS} FROM points p JOIN runs r ON r.id = p.run "
            "WHERE p.point_id = ? AND r.machine = ?" + _labels_where(labels, params)
        )
        sql += " ORDER BY r.time DESC, r.id DESC"
        if newest is not None:
            sql += f" LIMIT {int(newest)}"
        rows = self._read(sql, params)[::-1]
        return self._runs(rows)

    def _runs(self, rows: list[tuple[Any, ...]]) -> list[Run]:
        labels = self._labels_of([row[0] for row in rows])
        out = []
        for rid, t, pid, machine, v, y, s, inst, load, steal, hop, kernel in rows:
            marks = {"kernel": kernel} if kernel else {}
            marks.update(labels.get(rid, {}))
            inst_us = tuple(json.loads(inst)) if inst else ()
            rel = float("nan") if s is None else s
            out.append(Run(rid, t, pid, machine, v, y, rel, inst_us, load, steal, marks, hop))
        return out

    def _labels_of(self, run_ids: list[int]) -> dict[int, dict[str, str]]:
        out: dict[int, dict[str, str]] = {}
        ids = sorted(set(run_ids))
        for at in range(0, len(ids), 500):
            chunk = ids[at : at + 500]
            marks = ",".join("?" * len(chunk))
            for run, key, value in self._read(
                f"SELECT run, key, value FROM labels WHERE run IN ({marks})", chunk
            ):
                out.setdefault(run, {})[key] = value
        return out

    def points(
        self, *, machine: str | None = None, labels: dict[str, str] | None = None
    ) -> list[tuple[str, str]]:
        """(point_id, machine) of every series with at least one run (carrying ``labels``)."""
        params: list[Any] = []
        sql = "SELECT DISTINCT p.point_id, r.machine FROM points p JOIN runs r ON r.id = p.run"
        sql += " WHERE 1"
        if machine is not None:
            sql += " AND r.machine = ?"
            params.append(machine)
        sql += _labels_where(labels, params) + " ORDER BY r.machine, p.point_id"
        return [(p, m) for p, m in self._read(sql, params)]

    def machines(self) -> list[str]:
        return [m for (m,) in self._read("SELECT DISTINCT machine FROM runs ORDER BY machine")]

    def runs(self, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """Every run (carrying ``labels``), oldest first: its row, its labels and its
        points' count."""
        params: list[Any] = []
        rows = self._read(
            "SELECT r.id, r.time, r.machine, r.kernel, r.kind, r.source, r.runnable_per_cpu, "
            "r.steal, r.observer, (SELECT count(*) FROM points p WHERE p.run = r.id) "
            f"FROM runs r WHERE 1{_labels_where(labels, params)} ORDER BY r.time, r.id",
            params,
        )
        names = ("run_id", "time", "machine", "kernel", "kind", "source", "load", "steal",
                 "observer", "points")  # fmt: skip
        labels_of = self._labels_of([row[0] for row in rows])
        return [{**dict(zip(names, row)), "labels": labels_of.get(row[0], {})} for row in rows]

    def run_points(self, run_id: int) -> list[dict[str, Any]]:
        """Every point of one run: its figures."""
        rows = self._read(
            "SELECT point_id, value_us, rel_se, ci_low, ci_high, switches_per_hop, "
            "instances_us, figures FROM points WHERE run = ? ORDER BY point_id",
            (run_id,),
        )
        names = ("point_id", "value_us", "rel_se", "ci_low", "ci_high", "switches_per_hop")
        out = []
        for row in rows:
            point = dict(zip(names, row[:6]))
            point["instances_us"] = json.loads(row[6]) if row[6] else []
            point.update(json.loads(row[7]) if row[7] else {})
            out.append(point)
        return out

    def matrices(
        self, *, machine: str | None = None, labels: dict[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Every stored matrix run (on ``machine``, carrying ``labels``), oldest first: its
        run's columns, its size, engine, transport, median cell and labels; its record by
        ``records``."""
        params: list[Any] = []
        sql = (
            "SELECT r.id, r.time, r.machine, r.kernel, r.source, m.cpus, m.cells, m.engine, "
            "m.transport, m.median_us FROM matrices m JOIN runs r ON r.id = m.run WHERE 1"
        )
        if machine is not None:
            sql += " AND r.machine = ?"
            params.append(machine)
        rows = self._read(sql + _labels_where(labels, params) + " ORDER BY r.time, r.id", params)
        names = ("run_id", "time", "machine", "kernel", "source", "cpus", "cells", "engine",
                 "transport", "median_us")  # fmt: skip
        labels_of = self._labels_of([row[0] for row in rows])
        return [{**dict(zip(names, row)), "labels": labels_of.get(row[0], {})} for row in rows]

    def records(self, run_ids: Sequence[int]) -> list[dict[str, Any] | None]:
        """Each run's whole record (None: kept by a store before records were)."""
        out: list[dict[str, Any] | None] = []
        for rid in run_ids:
            found = self._read("SELECT record FROM records WHERE run = ?", (rid,))
            out.append(json.loads(zlib.decompress(found[0][0])) if found else None)
        return out

    # --- the run history's view --------------------------------------------------------

    def earlier(
        self, machine: str, kernel: str | None, version: str | None, keys: Sequence[str],
        since: float,
    ) -> list[tuple[Any, ...]]:  # fmt: skip
        """The runs of the points ``keys`` (the history's ids) on this machine, kernel and
        build since ``since``, oldest first: (key, time, point id, ln figure, relative
        error, load, steal) each."""
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        rows = self._read(
            "SELECT p.point_key, r.time, p.point_id, p.ln_value, p.rel_se, r.runnable_per_cpu, "
            "r.steal FROM points p JOIN runs r ON r.id = p.run WHERE r.machine = ? AND "
            "r.kernel IS ? AND r.version IS ? AND r.time >= ? AND p.rel_se IS NOT NULL AND "
            f"p.point_key IN ({marks}) ORDER BY r.time, r.id",
            [machine, kernel, version, since, *keys],
        )
        return rows

    def recent(
        self, machine: str, kernel: str | None, version: str | None, since: float
    ) -> list[tuple[Any, ...]]:
        """Every point's runs on this machine, kernel and build since ``since``, as
        ``earlier``'s."""
        rows = self._read(
            "SELECT p.point_key, r.time, p.point_id, p.ln_value, p.rel_se, r.runnable_per_cpu, "
            "r.steal FROM points p JOIN runs r ON r.id = p.run WHERE r.machine = ? AND "
            "r.kernel IS ? AND r.version IS ? AND r.time >= ? AND p.rel_se IS NOT NULL "
            "ORDER BY r.time, r.id",
            [machine, kernel, version, since],
        )
        return rows


def _forget(db: sqlite3.Connection, machine: str, kernel: str | None, version: str | None,
            since: float) -> int:  # fmt: skip
    # The history reads the runs of points: a matrix run is not one of them.
    return db.execute(
        "DELETE FROM runs WHERE machine = ? AND kernel IS ? AND version IS ? AND time >= ? "
        "AND kind != ?",
        (machine, kernel, version, since, _rows.MATRIX),
    ).rowcount


def _insert(db: sqlite3.Connection, s: _rows.RowSet) -> int:
    """One row set; 0 when its run is there already."""
    cols = list(s.run)
    cur = db.execute(
        f"INSERT OR IGNORE INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
        [s.run[c] for c in cols],
    )
    if cur.rowcount == 0:
        # Kept before (by measuring): the labels it is kept with now are added to it.
        (run,) = db.execute(
            "SELECT id FROM runs WHERE run_key = ? AND machine = ?",
            (s.run["run_key"], s.run["machine"]),
        ).fetchone()
        db.executemany(
            "INSERT OR IGNORE INTO labels (run, key, value) VALUES (?, ?, ?)",
            [(run, k, v) for k, v in s.labels.items()],
        )
        return 0
    run = cur.lastrowid
    for point in s.points:
        names = ["run", *point]
        db.execute(
            f"INSERT OR REPLACE INTO points ({', '.join(names)}) VALUES "
            f"({', '.join('?' * len(names))})",
            [run, *point.values()],
        )
    db.executemany(
        "INSERT INTO labels (run, key, value) VALUES (?, ?, ?)",
        [(run, k, v) for k, v in s.labels.items()],
    )
    if s.record is not None:
        db.execute("INSERT INTO records (run, record) VALUES (?, ?)", (run, s.record))
    if s.matrix is not None:
        names = ["run", *s.matrix]
        db.execute(
            f"INSERT INTO matrices ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [run, *s.matrix.values()],
        )
        return 1
    return len(s.points)
