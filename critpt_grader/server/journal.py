"""The journal: every accepted ``/verify`` row, on disk before any sandbox starts.

One SQLite database, ``journal.sqlite3`` in the ``--journal`` folder (WAL mode). A row is
inserted, and committed, between the row's admission and its first ``await`` on the grader;
so after a crash (even ``kill -9``) every row the server accepted is there, either with its
verdict or in a state that ``critpt-grader reverify`` re-grades. What a row keeps:

* ``id`` (a fresh UUID, also returned as ``critpt_grader.row_id``), ``seq``, times;
* the task: the request without its ``response`` when the task came in the row
  (``task_row``), or its ``problem_id`` in a loaded set (``task_key``; the sets' paths are in
  the ``meta`` table, so ``reverify`` reloads them);
* the extracted candidate ``source`` (re-graded with no new model call); for a response with
  no usable code, the ``response`` itself, so ``reverify`` reaches the same verdict;
* ``state``: ``accepted`` (graded or waiting, not finished), ``done`` (``category`` and the
  ``verdict`` JSON set), ``cancelled`` (the client went away), ``error`` (an internal fault);
* ``attempts``: how many times it was graded;
* ``owner``: the process grading it (:mod:`critpt_grader.server.owner`: boot id, pid and
  start time): the server that accepted it, or the ``reverify`` that claimed it;
* ``request_key``: the request's identity (a client's ``Idempotency-Key`` as sent, else
  ``sha256:`` and the hash of the body): a retry finds its row instead of making another
  (:mod:`critpt_grader.server.service`);
* ``request_hash``: the SHA-256 of the request's canonical body, which binds the key to that
  one request: the same key with another body is refused, never answered with this verdict.

Rows needing re-verification: every row not ``done``, and ``done`` rows whose category is
``provider_unavailable`` (the machine, not the answer, decided them). **Only orphans are
taken**: a row whose owner is alive is being graded now and is left to it, so ``reverify``
beside a live server re-grades only what a dead one left; a row is claimed (its owner
swapped, compare-and-set) before it is re-graded, so two re-graders never take one row. A row
of a journal written before owners were kept has none: an orphan.

**Private.** The folder is made ``0700`` and the database ``0600`` (and its ``-wal`` and
``-shm`` with it), checked each time the journal is opened: an existing file open to others
is narrowed first, a folder open to others only when it holds nothing but the journal's
files, else the journal refuses to open (:mod:`critpt_grader.private_files`).

The journal is used from the server's event loop thread only (plain blocking calls: a commit
in WAL mode with ``synchronous=NORMAL`` takes well under a millisecond, and survives a crash of
the process, though not of the machine's power).
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critpt_grader.private_files import private_file, private_folder
from critpt_grader.server.owner import alive, this_process

FILENAME = "journal.sqlite3"
FILES = frozenset({FILENAME, f"{FILENAME}-wal", f"{FILENAME}-shm", f"{FILENAME}-journal"})
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rows (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    accepted_at REAL NOT NULL,
    finished_at REAL,
    problem_id TEXT,
    task_row TEXT,
    task_key TEXT,
    source TEXT,
    response TEXT,
    state TEXT NOT NULL,
    category TEXT,
    verdict TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    request_key TEXT,
    request_hash TEXT
);
CREATE INDEX IF NOT EXISTS rows_state ON rows (state, category);
"""
RETRY_CATEGORIES = ("provider_unavailable",)


@dataclass(frozen=True, slots=True)
class JournalRow:
    id: str
    problem_id: str | None
    task_row: dict[str, Any] | None
    task_key: str | None
    source: str | None
    response: Any
    state: str
    category: str | None
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class KeyedRow:
    """A row found by its request key: where it stands, and its verdict when done."""

    id: str
    state: str
    category: str | None
    verdict: dict[str, Any] | None
    owner: str | None
    request_hash: str | None = None  # None: a row from before bodies were bound to keys

    @property
    def lasting(self) -> bool:
        """Done with a verdict a retry should get back (not one the machine decided)."""
        return self.state == "done" and self.category not in RETRY_CATEGORIES


class Journal:
    """Open (creating) the journal in ``folder``. Use from one thread."""

    def __init__(self, folder: str | Path) -> None:
        folder = Path(folder)
        if folder.suffix == ".sqlite3" and not folder.is_dir():
            self.path = folder  # reverify may name the database file itself
        else:
            private_folder(folder, ours=FILES)
            self.path = folder / FILENAME
        # Private before SQLite opens it (it makes its -wal and -shm with the file's mode):
        # verdicts hold expected values, which a candidate under the weak-containment waiver,
        # an ordinary host user, could otherwise read (private_files.py).
        private_file(self.path)
        for suffix in ("-wal", "-shm"):
            if Path(f"{self.path}{suffix}").exists():
                private_file(f"{self.path}{suffix}")
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.executescript(_SCHEMA)
        columns = {r[1] for r in self._db.execute("PRAGMA table_info(rows)")}
        for column in ("owner", "request_key", "request_hash"):  # older journals: rows have none
            if column not in columns:
                self._db.execute(f"ALTER TABLE rows ADD COLUMN {column} TEXT")
        self._db.execute("CREATE INDEX IF NOT EXISTS rows_key ON rows (request_key)")
        self.owner = this_process()
        row = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM rows").fetchone()
        self._seq = int(row[0])

    def close(self) -> None:
        self._db.close()

    # -- meta -------------------------------------------------------------------------

    def set_task_paths(self, paths: list[Path]) -> None:
        """Remember the loaded sets, so ``reverify`` resolves ``task_key`` rows alone. A
        restart with other sets adds them (rows keep whatever their own start loaded)."""
        known = self.task_paths()
        merged = [*known, *(str(p) for p in paths if str(p) not in known)]
        self._db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('task_paths', ?)",
            (json.dumps(merged),),
        )

    def task_paths(self) -> list[str]:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'task_paths'").fetchone()
        return json.loads(row[0]) if row else []

    # -- rows -------------------------------------------------------------------------

    def accept(
        self,
        *,
        problem_id: str | None,
        task_row: dict[str, Any] | None,
        task_key: str | None,
        source: str | None,
        response: Any = None,
        request_key: str | None = None,
        request_hash: str | None = None,
    ) -> str:
        """Write an accepted row (committed on return) and give its id."""
        row_id = uuid.uuid4().hex
        self._seq += 1
        self._db.execute(
            "INSERT INTO rows (id, seq, accepted_at, problem_id, task_row, task_key, source, "
            "response, state, owner, request_key, request_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'accepted', ?, ?, ?)",
            (
                row_id,
                self._seq,
                time.time(),
                problem_id,
                None if task_row is None else json.dumps(task_row),
                task_key,
                source,
                None if response is None else json.dumps(response),
                self.owner,
                request_key,
                request_hash,
            ),
        )
        return row_id

    def finish(self, row_id: str, category: str, verdict: dict[str, Any]) -> None:
        self._db.execute(
            "UPDATE rows SET state = 'done', category = ?, verdict = ?, finished_at = ?, "
            "attempts = attempts + 1 WHERE id = ?",
            (category, json.dumps(verdict), time.time(), row_id),
        )

    def mark(self, row_id: str, state: str) -> None:
        """``cancelled`` or ``error``: the row has no verdict and is re-graded later."""
        self._db.execute(
            "UPDATE rows SET state = ?, finished_at = ? WHERE id = ?", (state, time.time(), row_id)
        )

    def pending(self) -> list[JournalRow]:
        """Rows to re-grade whose owner is gone (see the module docstring), oldest first."""
        marks = ",".join("?" * len(RETRY_CATEGORIES))
        cursor = self._db.execute(
            "SELECT id, problem_id, task_row, task_key, source, response, state, category, "
            f"owner FROM rows WHERE state != 'done' OR category IN ({marks}) ORDER BY seq",
            RETRY_CATEGORIES,
        )
        rows = cursor.fetchall()
        gone = {
            owner: owner != self.owner and not alive(owner) for owner in {r[8] for r in rows}
        }  # each owner looked up once, however many rows it holds
        return [
            JournalRow(
                id=r[0],
                problem_id=r[1],
                task_row=None if r[2] is None else json.loads(r[2]),
                task_key=r[3],
                source=r[4],
                response=None if r[5] is None else json.loads(r[5]),
                state=r[6],
                category=r[7],
                owner=r[8],
            )
            for r in rows
            if gone[r[8]]
        ]

    def claim(self, row: JournalRow) -> bool:
        """Make this process the row's owner, unless another took it first."""
        cursor = self._db.execute(
            "UPDATE rows SET owner = ? WHERE id = ? AND owner IS ?", (self.owner, row.id, row.owner)
        )
        return cursor.rowcount == 1

    def in_flight(self) -> int:
        """Unfinished rows whose owner is alive (being graded now, by whoever holds them)."""
        counts = self._db.execute(
            "SELECT owner, COUNT(*) FROM rows WHERE state = 'accepted' GROUP BY owner"
        ).fetchall()
        return sum(n for owner, n in counts if owner == self.owner or alive(owner))

    def by_key(self, request_key: str) -> KeyedRow | None:
        """The newest row accepted under ``request_key``, or None."""
        row = self._db.execute(
            "SELECT id, state, category, verdict, owner, request_hash FROM rows "
            "WHERE request_key = ? ORDER BY seq DESC LIMIT 1",
            (request_key,),
        ).fetchone()
        if row is None:
            return None
        verdict = json.loads(row[3]) if row[3] else None
        return KeyedRow(row[0], row[1], row[2], verdict, row[4], row[5])

    def reopen(self, row_id: str, owner: str | None) -> bool:
        """Take an orphaned row of a retried request back to ``accepted`` under this
        process, unless another took it first; the row keeps its id and its attempts."""
        cursor = self._db.execute(
            "UPDATE rows SET owner = ?, state = 'accepted' WHERE id = ? AND owner IS ?",
            (self.owner, row_id, owner),
        )
        return cursor.rowcount == 1

    def counts(self) -> dict[str, Any]:
        """Rows by state and by category (``done`` rows)."""
        states = dict(self._db.execute("SELECT state, COUNT(*) FROM rows GROUP BY state"))
        categories = dict(
            self._db.execute(
                "SELECT category, COUNT(*) FROM rows WHERE state = 'done' GROUP BY category"
            )
        )
        total = sum(states.values())
        return {"rows": total, "states": states, "categories": categories}

    def unfinished(self) -> int:
        return len(self.pending())

    def verdict(self, row_id: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT verdict FROM rows WHERE id = ?", (row_id,)).fetchone()
        return json.loads(row[0]) if row and row[0] else None
