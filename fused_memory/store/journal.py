"""The write journal of an embedded store: which memories a write is about to touch, kept until
every index holds the write.

Why: the vectors (the source of truth), the lexical index and the graph are three files, written
one after the other. A crash between them leaves the later ones behind. Without a record of what
was under way, the only repair is to read every payload on open and compare (what `open` did
while the lexical index was rebuilt on every open anyway). With the lexical index kept on disk,
`open` reads no payload: the journal names the memories of each write that did not finish, and
only those are read back and made to agree (`recovery.repair`).

A write is journaled before the vectors are touched (`begin`: one committed SQLite transaction in
WAL mode, synchronous=FULL: the write-ahead log is fsync'd before `begin` returns) and cleared once
every index has it (`end`). The order is what survives a power loss or an OS crash: the intent is
on disk before the vectors change, and the lexical log and the graph commit with
synchronous=FULL too, so an entry is cleared only after both hold the write durably. `end` itself
is not fsync'd (it is made durable by the next `begin`'s fsync): losing it costs only a comparison
on the next open. A write that fails and is rolled back keeps its entry: the next open compares
those memories again, which is harmless when they agree.

A journal that cannot be read (not a database, damaged) is moved aside (`<name>.unreadable`) and
a new one started, as if it were missing (`created`, `unreadable` says why): the store then
compares every memory on that open, as for a missing journal, rather than refusing to open.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from ..backends.lexical.stored import database_damaged
from ..errors import BackendError

__all__ = ["WriteJournal", "JOURNAL_NAME"]

#: The journal's file name inside the store's folder.
JOURNAL_NAME = "journal.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS intent(ticket INTEGER NOT NULL, ns TEXT NOT NULL, mid TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS intent_by_ticket ON intent(ticket);
"""


class WriteJournal:
    """The journal in one SQLite file (module docstring). The constructor does no I/O; `open`
    creates the file and says whether it did (`created`: a store written before the journal, or
    whose journal is gone, cannot say which writes were cut short)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.created = False
        #: Why the last `open` found the file unreadable and moved it aside (None: it did not).
        self.unreadable: str | None = None
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._ticket = 0

    def __repr__(self) -> str:
        return f"WriteJournal({str(self.path)!r})"

    def open(self) -> None:
        with self._lock:
            if self._db is not None:
                return
            self.created = not self.path.exists()
            self.unreadable = None
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                try:
                    db, last = self._connect()
                except sqlite3.DatabaseError as exc:
                    if not database_damaged(exc):
                        raise
                    self._move_aside()
                    self.created, self.unreadable = True, f"{exc}; moved aside to {self.path.name}.unreadable"
                    db, last = self._connect()
            except (OSError, sqlite3.Error) as exc:
                raise BackendError(f"cannot open the write journal at {self.path}: {exc}") from exc
            self._db, self._ticket = db, int(last)

    def _connect(self) -> tuple[sqlite3.Connection, int]:
        db = sqlite3.connect(str(self.path), check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # `begin` is durable when it returns (module docstring)
            db.executescript(_SCHEMA)
            (last,) = db.execute("SELECT coalesce(max(ticket), 0) FROM intent").fetchone()
        except BaseException:
            db.close()
            raise
        return db, int(last)

    def _move_aside(self) -> None:
        """Keep the unreadable file (and its write-ahead log, which must not be applied to the new
        one) under another name, for whoever wants to look at it."""
        for suffix in ("", "-wal", "-shm"):
            src = self.path.with_name(f"{self.path.name}{suffix}")
            if src.exists():
                os.replace(src, self.path.with_name(f"{self.path.name}.unreadable{suffix}"))

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _require(self) -> sqlite3.Connection:
        if self._db is None:
            raise BackendError(f"the write journal at {self.path} is not open")
        return self._db

    def begin(self, items: Iterable[tuple[str, str]]) -> int:
        """Record that the (namespace, memory id) pairs are about to be written or deleted; returns
        the ticket `end` takes. Committed when it returns."""
        rows = list(dict.fromkeys(items))
        with self._lock:
            db = self._require()
            self._ticket += 1
            try:
                with db:
                    db.executemany("INSERT INTO intent VALUES (?, ?, ?)", [(self._ticket, ns, mid) for ns, mid in rows])
            except sqlite3.Error as exc:
                raise BackendError(f"cannot write the write journal at {self.path}: {exc}") from exc
            return self._ticket

    def end(self, ticket: int) -> None:
        """The write of `ticket` reached every index."""
        with self._lock:
            db = self._require()
            try:
                db.execute("PRAGMA synchronous=NORMAL")  # not fsync'd: the next `begin` is (module docstring)
                try:
                    with db:
                        db.execute("DELETE FROM intent WHERE ticket = ?", (ticket,))
                finally:
                    db.execute("PRAGMA synchronous=FULL")
            except sqlite3.Error as exc:
                raise BackendError(f"cannot write the write journal at {self.path}: {exc}") from exc

    def unfinished(self) -> dict[str, set[str]]:
        """Namespace -> the memories of the writes that began and never ended."""
        with self._lock:
            out: dict[str, set[str]] = {}
            for ns, mid in self._require().execute("SELECT ns, mid FROM intent"):
                out.setdefault(ns, set()).add(mid)
            return out

    def clear(self) -> None:
        """Forget every entry (they were repaired, or a full comparison just ran)."""
        with self._lock:
            db = self._require()
            with db:
                db.execute("DELETE FROM intent")
