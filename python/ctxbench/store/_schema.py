"""The store's tables, and how a store of an older schema becomes this one.

A store is recognised by SQLite's ``application_id`` (``APPLICATION_ID``: "ctxb"), and its
schema by ``user_version``: the number of ``MIGRATIONS`` applied. A new migration is a new
entry at the end of the list, never an edit of one before it: every store, whatever version
it was left at, then reaches the same tables. A store of a newer schema than this ctxbench
knows is refused, never written (it might hold what this one would drop).

One run is one row set: a ``runs`` row (when, which machine, the conditions it ran in), one
``points`` row per point it measured (its figures), its ``labels``, and (v2) its whole
record, from which a results document is exported. A matrix run (v3) is a ``runs`` row of
kind ``matrix``, its labels, its record and one ``matrices`` row: no point rows (a matrix's
cells are not points of a series).
"""

from __future__ import annotations

import sqlite3

APPLICATION_ID = 0x63747862  # "ctxb"

_V1 = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_key TEXT NOT NULL,          -- the result's metadata run_id (or its record's digest)
    time REAL NOT NULL,             -- when the run started, seconds since the epoch
    machine TEXT NOT NULL,          -- the machine's fingerprint (store.machine_of)
    kernel TEXT,                    -- the kernel release
    boot TEXT,                      -- the boot's hash (metadata.machine_identity's kernel)
    version TEXT,                   -- ctxbench's version
    kind TEXT NOT NULL,             -- ring, pingpong
    runnable_per_cpu REAL,          -- other tasks runnable per CPU just before it
    loadavg REAL,                   -- the 1-minute load average then
    steal REAL,                     -- the hypervisor's steal share, where readable
    observer TEXT,                  -- who watched (the counters setting)
    source TEXT NOT NULL,           -- measured, saved, imported
    UNIQUE (run_key, machine)
);
CREATE TABLE points (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    point_id TEXT NOT NULL,         -- the core's canonical point id
    point_key TEXT NOT NULL,        -- the run history's id of the point (its digest)
    value_us REAL NOT NULL,         -- µs per switch (per hop), net
    ln_value REAL NOT NULL,
    rel_se REAL,                    -- the run's own relative standard error
    ci_low REAL,
    ci_high REAL,
    switches_per_hop REAL,
    instances_us TEXT,              -- JSON list: each ring instance's median
    figures TEXT,                   -- JSON object: the point's other figures
    PRIMARY KEY (run, point_id)
);
CREATE INDEX points_by_id ON points (point_id);
CREATE INDEX points_by_key ON points (point_key);
CREATE INDEX runs_by_machine ON runs (machine, time);
CREATE TABLE labels (
    run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run, key)
);
CREATE INDEX labels_by_pair ON labels (key, value);
"""

# v2: each run's whole record (zlib-compressed JSON), so that the store exports results
# documents any ctxbench command reads; runs kept by a v1 store have none.
_V2 = """
CREATE TABLE records (
    run INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    record BLOB NOT NULL
);
"""

# v3: matrix runs (``ctxbench matrix``, ``ctxbench.save`` of a MatrixResult), each a runs row
# of kind 'matrix' with its labels and record, and here what a listing and the published page
# read without opening the record. A new version, not only new rows: a v2 ctxbench would take
# a matrix run for a run that measured nothing, and refuses a store of a newer schema.
_V3 = """
CREATE TABLE matrices (
    run INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    cpus INTEGER NOT NULL,          -- CPUs of the matrix
    cells INTEGER NOT NULL,         -- cells measured (every pass)
    engine TEXT,
    transport TEXT,
    median_us REAL                  -- the median of the cells' µs per switch
);
"""

MIGRATIONS: list[str] = [_V1, _V2, _V3]
VERSION = len(MIGRATIONS)


def migrate(db: sqlite3.Connection, have: int) -> None:
    """Applies the migrations after ``have`` inside the caller's transaction (which holds
    the write lock, so that two processes never apply one twice)."""
    for n, script in enumerate(MIGRATIONS[have:], have + 1):
        for statement in script.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {n}")
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
