"""`StoredBM25Index`: `BM25Index` kept in files beside the vectors, so an embedded store opens flat.

Layout under `path` (the store's `lexical/` folder):

    index.sqlite3     meta (format, parameters, whether the last full rebuild finished), the
                      manifest (namespace -> its segment file, the last write folded into it, its
                      size and documents), the namespaces to rebuild, and the write log: every add
                      and delete since each namespace's segment, one row per memory, in order
    <key>-<gen>.seg   a namespace's segment (`segment`): key a hash of the namespace, gen a counter

Writes: `add` and `delete` tokenize, then append their rows to the log in one SQLite transaction
(WAL, synchronous=FULL: on disk when the call returns, before the store clears the write from its
journal, so not even an OS crash or a power loss loses a write the journal no longer names), then
hand the entries to the namespace's shard if it is loaded. When a namespace's log passes a share of
the namespace (`_Shard.MERGE_MIN`, `MERGE_SHARE`), the writer merges: base and overlay become a new
segment, written to a new file (fsync, rename), then one transaction points the manifest at it and
deletes the log rows it folded in; the old file goes after. A crash at any point leaves the
manifest on a complete file and the log holding every write since; a file no manifest row names is
deleted on the next `load`. `close` merges every namespace whose log holds `MERGE_ON_CLOSE` rows or
more, so a reopened namespace replays a short log. A merge is an optimisation: one that fails (a
full disk) is logged once and tried again later (`_merge_in_write`); the write that triggered it
succeeds.

Reads: `load` opens the database and compares each file's size with the manifest's (a stat per
namespace, no postings read). A namespace is loaded on its first use: its file mapped and its
checksums verified (the file read once: ~0.3 ms at 5k memories, ~2 ms at 50k, page cache warm),
its log rows since replayed into the overlay.

What is rebuilt from the payloads (by the store, `store.recovery`; logged there): everything when
the folder is new (a store written before this index), when its meta records another format or
other parameters (type table included) or an unfinished rebuild, or when the database is damaged
anywhere `load` reads it (`database_damaged`: SQLite says corrupt or not a database; "locked" or "disk
full" are errors, not damage); one namespace when its file is missing or truncated, or, found on
its first use, damaged (a checksum, the header): then the index asks the store's `refill` for that
namespace's documents. A database found damaged after `load` (the log's pages, read on a first use
or a write) is discarded and every namespace refilled, logged once (`_start_over`). A namespace
stays marked until its rebuild commits, so a crash during one is redone on the next open, never
left empty.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import BackendError, StoreClosed
from ..protocols import IndexState, LexicalDoc
from .bm25 import BM25Index, _Entry, _Shard
from .columns import TYPE_CODE, TYPE_OF
from .docs import DEFAULT_CONTEXT_WEIGHT, doc_weights
from .segment import (
    FORMAT,
    SegmentBuilder,
    SegmentError,
    SegmentParams,
    load_segment,
    tokenizer_fingerprint,
    write_segment,
)

__all__ = ["StoredBM25Index", "DB_NAME", "MERGE_ON_CLOSE", "database_damaged"]

_log = logging.getLogger(__name__)

#: The database's file name inside the index's folder.
DB_NAME = "index.sqlite3"
#: `close` merges a namespace whose log holds this many rows or more (a reopened namespace replays
#: fewer, a few milliseconds' work); smaller logs stay, so closing a store of many namespaces
#: does not rewrite them all.
MERGE_ON_CLOSE = 256

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS segment(ns TEXT PRIMARY KEY, file TEXT NOT NULL, seq INTEGER NOT NULL,
    size INTEGER NOT NULL, docs INTEGER NOT NULL, gen INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS stale(ns TEXT PRIMARY KEY, why TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log(seq INTEGER PRIMARY KEY AUTOINCREMENT, ns TEXT NOT NULL, mid TEXT NOT NULL,
    entry TEXT);
CREATE INDEX IF NOT EXISTS log_by_ns ON log(ns, seq);
"""


@dataclass(frozen=True)
class _File:
    """A manifest row: the namespace's segment file and what it holds."""

    name: str
    seq: int
    size: int
    docs: int
    gen: int


def _key(namespace: str) -> str:
    """A file-name-safe stand-in for a namespace (namespaces are arbitrary text)."""
    return hashlib.blake2b(namespace.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


#: SQLite's result codes for a file that is not a database or is damaged (`sqlite3.DatabaseError`
#: proper): what says the file cannot be trusted, unlike "locked", "disk full" or an I/O error
#: (`sqlite3.OperationalError`), after which the file is as good as before.
_DAMAGED = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB


def database_damaged(exc: sqlite3.Error) -> bool:
    """Whether `exc` says the database file is damaged (`_DAMAGED`; on Python 3.10, which has no
    error codes, any `DatabaseError` that is not an `OperationalError` or a misuse)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _DAMAGED
    return type(exc) is sqlite3.DatabaseError


def _encode(entry: _Entry | None) -> str | None:
    if entry is None:
        return None
    return json.dumps([entry.length, TYPE_CODE[entry.type], entry.freqs], separators=(",", ":"))


def _decode(text: str | None) -> _Entry | None:
    if text is None:
        return None
    length, code, freqs = json.loads(text)
    return _Entry(freqs, float(length), TYPE_OF[code])


class StoredBM25Index(BM25Index):
    """`BM25Index` kept in files under `path` (module docstring); a `PersistedIndex`. The
    constructor does no I/O: `load` opens the files (a first use does, too)."""

    def __init__(self, path: str | Path, predicate_weight: int = 4, k1: float = 0.9, b: float = 0.4,
                 epsilon: float = 0.25, context_weight: float = DEFAULT_CONTEXT_WEIGHT) -> None:
        super().__init__(predicate_weight, k1, b, epsilon, context_weight)
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()  # the database, the manifest, the log counts, loading shards
        self._files: dict[str, _File] = {}
        self._logged: dict[str, int] = {}  # namespace -> log rows since its segment
        self._refill: Callable[[str], Iterable[LexicalDoc]] | None = None
        self._closed = False
        self._created = False  # the last `load` created the database (a new index, or one written before)
        self._params: SegmentParams | None = None
        #: namespace -> the log size at which a merge that failed is tried again (`_write`)
        self._retry_at: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"StoredBM25Index({str(self.path)!r}, {'open' if self._db is not None else 'closed'})"

    @property
    def params(self) -> SegmentParams:
        if self._params is None:
            self._params = SegmentParams(self.predicate_weight, self.context_weight, tokenizer_fingerprint(),
                                         tuple(t.value for t in TYPE_OF if t is not None))
        return self._params

    def _wanted_meta(self) -> dict[str, str]:
        return {"format": str(FORMAT), "params": json.dumps(self.params.as_json(), sort_keys=True)}

    # ------------------------------------------------------------ life cycle
    def set_refill(self, refill: Callable[[str], Iterable[LexicalDoc]] | None) -> None:
        """How to read one namespace's documents again (from the payloads), for a file found
        damaged on the namespace's first use."""
        self._refill = refill

    def load(self) -> IndexState:
        """Open the database, check the meta and every file's size; say what must be rebuilt. A
        database found damaged anywhere while loading (not only its first page) cannot be trusted:
        it is discarded and the whole index is to be rebuilt (`IndexState.whole` says why)."""
        with self._lock:
            if self._db is not None:
                return IndexState()
            self._closed = False
            self._shards.clear()
            self._created = not (self.path / DB_NAME).exists()
            try:
                self.path.mkdir(parents=True, exist_ok=True)
                try:
                    return self._load(None)
                except sqlite3.DatabaseError as exc:
                    if not database_damaged(exc):
                        raise
                    self._discard_database()
                    return self._load(f"its database cannot be read ({exc})")
            except (OSError, sqlite3.Error) as exc:
                raise BackendError(f"cannot open the lexical index at {self.path}: {exc}") from exc

    def _load(self, whole: str | None) -> IndexState:
        """`load`'s reading of the database (a new one when `whole` says the old one was discarded);
        on an error the connection is closed and `_db` left unset."""
        db = self._connect()
        try:
            return self._read_database(db, whole)
        except BaseException:
            self._db = None
            db.close()
            raise

    def _read_database(self, db: sqlite3.Connection, whole: str | None) -> IndexState:
        created = self._created
        meta = dict(db.execute("SELECT key, value FROM meta"))
        want = self._wanted_meta()
        if whole is None and created:
            whole = "the store has no lexical index files yet"
        elif whole is None and meta.get("complete") != "1":
            whole = meta.get("stale") or "an earlier rebuild of it did not finish"
        elif whole is None and {k: meta.get(k) for k in want} != want:
            whole = f"its files were written with {meta}, this version writes {want}"
        self._db = db
        if whole is not None:
            with db:  # until `rebuild` commits, the index is marked unusable: a crash before then is redone
                db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [*want.items(), ("complete", "0")])
            self._files, self._logged = {}, {}
            return IndexState(whole)
        self._files = {ns: _File(f, seq, size, docs, gen) for ns, f, seq, size, docs, gen
                       in db.execute("SELECT ns, file, seq, size, docs, gen FROM segment")}
        stale = dict(db.execute("SELECT ns, why FROM stale"))
        for ns, f in self._files.items():
            try:
                size = (self.path / f.name).stat().st_size
            except OSError:
                stale.setdefault(ns, f"its postings file {f.name} is missing")
                continue
            if size != f.size:
                stale.setdefault(ns, f"its postings file {f.name} is truncated ({size} of {f.size} bytes)")
        if stale:
            with db:
                db.executemany("INSERT OR REPLACE INTO stale VALUES (?, ?)", list(stale.items()))
        self._logged = dict(db.execute("SELECT ns, count(*) FROM log GROUP BY ns"))
        self._sweep_files()
        return IndexState(None, stale)

    def invalidate(self, why: str) -> bool:
        """Mark files under `path`, if any, as not to be trusted, so the next `load` rebuilds the
        whole index (saying `why`): the store is about to be written without this index (opened with
        another lexical index), and its files would miss those writes. True when there were files.
        Only for an index that is not loaded (the store's other lexical index is in use)."""
        with self._lock:
            if self._db is not None:
                raise BackendError("invalidate() is for the files of an index that is not open")
            if not (self.path / DB_NAME).exists():
                return False
            try:
                db = self._connect()
            except (OSError, sqlite3.Error) as exc:
                raise BackendError(f"cannot mark the lexical index at {self.path} for a rebuild: {exc}") from exc
            try:
                with db:
                    db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [("complete", "0"), ("stale", why)])
            finally:
                db.close()
            return True

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path / DB_NAME), check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            # FULL: a write's log rows are on disk when `add` returns, before the store clears the
            # write from its journal (`store.journal`), so not even an OS crash loses them unrepaired
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_SCHEMA)
            db.execute("SELECT count(*) FROM meta").fetchone()
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _discard_database(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            (self.path / f"{DB_NAME}{suffix}").unlink(missing_ok=True)

    def _sweep_files(self) -> None:
        """Delete segment files no manifest row names (a merge or rebuild cut short by a crash)."""
        keep = {f.name for f in self._files.values()}
        for path in self.path.iterdir():
            if (path.suffix == ".seg" and path.name not in keep) or path.name.endswith(".seg.tmp"):
                with contextlib.suppress(OSError):
                    path.unlink()

    def close(self, *, merge: bool = True) -> None:
        """Merge the namespaces with a long log (`MERGE_ON_CLOSE`), release the files. Idempotent;
        a merge that fails is logged and left to the log, which still holds every write. Without
        `merge` (a store whose open failed: nothing it holds is to be rewritten), only release."""
        with self._lock:
            if self._db is None:
                self._closed = True
                return
            for ns in [ns for ns, n in self._logged.items() if merge and n >= MERGE_ON_CLOSE]:
                try:
                    self._merge(ns)
                except (OSError, sqlite3.Error, SegmentError, BackendError) as exc:
                    _log.warning("lexical index: namespace %.80r not merged on close (%s); its writes stay "
                                 "in the log", ns, exc)
            self._shards.clear()
            self._db.close()
            self._db, self._closed = None, True

    def _require(self) -> sqlite3.Connection:
        """The database, opening it on first use (not after `close`)."""
        if self._db is None:
            if self._closed:
                raise StoreClosed(f"the lexical index at {self.path} was closed")
            state = self.load()
            if state.whole is not None and self._created:
                self.rebuild(())  # a new index on its own (no store to refill it): empty
            elif state.whole is not None or state.namespaces:
                raise BackendError(f"the lexical index at {self.path} must be rebuilt from the memories first "
                                   f"({state.whole or state.namespaces}): open the store")
        assert self._db is not None
        return self._db

    # ------------------------------------------------------------ rebuilding from the payloads
    def rebuild(self, docs: Iterable[LexicalDoc], namespaces: Collection[str] | None = None) -> None:
        """Replace the whole index (`namespaces` None) or those namespaces with `docs` (each memory
        once, as a scan of the payloads gives them; documents of other namespaces are skipped)."""
        with self._lock:
            db = self._require_open()
            wanted = None if namespaces is None else set(namespaces)
            builders: dict[str, SegmentBuilder] = {ns: SegmentBuilder() for ns in wanted or ()}
            for doc in docs:
                if wanted is not None and doc.namespace not in wanted:
                    continue
                freqs, length = doc_weights(doc, self.predicate_weight, self.context_weight)
                builder = builders.get(doc.namespace)
                if builder is None:
                    builder = builders[doc.namespace] = SegmentBuilder()
                builder.add(str(doc.memory_id), freqs, length, TYPE_CODE[doc.type])
            (seq,) = db.execute("SELECT coalesce(max(seq), 0) FROM (SELECT seq FROM sqlite_sequence "
                                "WHERE name = 'log' UNION ALL SELECT max(seq) FROM log)").fetchone()
            written: dict[str, _File] = {}
            for ns, builder in builders.items():
                if not len(builder):
                    continue
                segment = builder.build(seq=seq)
                written[ns] = self._write_file(ns, segment)
            gone = set(self._files) if wanted is None else wanted
            with db:
                if wanted is None:
                    db.execute("DELETE FROM segment")
                    db.execute("DELETE FROM log")
                    db.execute("DELETE FROM stale")
                else:
                    for ns in wanted:
                        db.execute("DELETE FROM segment WHERE ns = ?", (ns,))
                        db.execute("DELETE FROM log WHERE ns = ?", (ns,))
                        db.execute("DELETE FROM stale WHERE ns = ?", (ns,))
                db.executemany("INSERT INTO segment VALUES (?, ?, ?, ?, ?, ?)",
                               [(ns, f.name, f.seq, f.size, f.docs, f.gen) for ns, f in written.items()])
                db.execute("INSERT OR REPLACE INTO meta VALUES ('complete', '1')")
                db.execute("DELETE FROM meta WHERE key = 'stale'")
            old = [self._files[ns] for ns in gone if ns in self._files]
            for ns in gone:
                self._files.pop(ns, None)
                self._logged.pop(ns, None)
                self._shards.pop(ns, None)
            if wanted is None:
                self._files, self._logged = {}, {}
                self._shards.clear()
            self._files.update(written)
            for f in old:
                if f.name not in {w.name for w in written.values()}:
                    with contextlib.suppress(OSError):
                        (self.path / f.name).unlink()
            if wanted is None:
                self._sweep_files()  # files of the index this one replaced

    def _require_open(self) -> sqlite3.Connection:
        if self._db is None:
            raise BackendError(f"the lexical index at {self.path} is not open (call load() first)")
        return self._db

    def _write_file(self, ns: str, segment: Any) -> _File:
        gen = self._files[ns].gen + 1 if ns in self._files else 1
        name = f"{_key(ns)}-{gen}.seg"
        size = write_segment(segment, self.path / name, ns, self.params)
        return _File(name, segment.seq, size, segment.docs, gen)

    # ------------------------------------------------------------ writes
    def add(self, docs: Sequence[LexicalDoc]) -> None:
        """Upsert by (namespace, memory id): logged, then handed to the loaded shard; a namespace
        whose log has grown past its share is merged into a new segment file now."""
        self._write({ns: dict(entries) for ns, entries in self._entries(docs).items()})

    def delete(self, namespace: str, ids: Sequence[str]) -> None:
        """Remove memories; unknown ids and namespaces are ignored (their log rows are no-ops)."""
        if ids:
            self._write({namespace: {str(m): None for m in ids}})

    def _write(self, by_ns: dict[str, dict[str, _Entry | None]]) -> None:
        if not by_ns:
            return
        rows = [(ns, mid, _encode(entry)) for ns, entries in by_ns.items() for mid, entry in entries.items()]
        with self._lock:
            db = self._require()
            try:
                with db:
                    db.executemany("INSERT INTO log(ns, mid, entry) VALUES (?, ?, ?)", rows)
                    (last,) = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'log'").fetchone()
            except sqlite3.Error as exc:
                if database_damaged(exc) and self._refill is not None:
                    # the payloads hold this write already (the store writes the vectors first)
                    self._start_over(f"its database is damaged ({exc})")
                    return
                raise BackendError(f"lexical index write failed: {exc}") from exc
            seq = int(last) - len(rows)  # AUTOINCREMENT under one writer: the rows took the next numbers
            for ns, entries in by_ns.items():
                shard = self._shards.get(ns)
                numbered = [(mid, (seq + i + 1, e)) for i, (mid, e) in enumerate(entries.items())]
                seq += len(entries)
                if shard is not None:
                    with shard.pending_lock:
                        shard.pending.update(numbered)
                self._logged[ns] = self._logged.get(ns, 0) + len(entries)
            for ns in by_ns:
                f = self._files.get(ns)
                due = max(_Shard.MERGE_MIN, (f.docs if f else 0) // _Shard.MERGE_SHARE, self._retry_at.get(ns, 0))
                if self._logged[ns] > due:
                    self._merge_in_write(ns)

    def _merge_in_write(self, ns: str) -> None:
        """Merge for a write. A merge only makes later loads shorter: one that fails (a full disk,
        a file that cannot be written) must not fail the write, whose rows are committed in the
        log already. It is logged once, and tried again when the log has grown by another
        `MERGE_MIN` rows, or on `close`."""
        try:
            self._merge(ns)
        except (OSError, sqlite3.Error, SegmentError, BackendError) as exc:
            if ns not in self._retry_at:
                _log.warning("lexical index: namespace %.80r not merged (%s); its writes stay in the log, and the "
                             "merge is tried again later", ns, exc)
            self._retry_at[ns] = self._logged.get(ns, 0) + _Shard.MERGE_MIN
        else:
            if self._retry_at.pop(ns, None) is not None:
                _log.info("lexical index: namespace %.80r merged after an earlier failure", ns)

    def clear(self, namespace: str | None = None) -> None:
        """Forget one namespace, or all of them, in the files too."""
        with self._lock:
            self._require()
            self.rebuild((), None if namespace is None else [namespace])

    def _merge(self, ns: str) -> None:
        """Fold the namespace's log into a new segment file (module docstring). Caller holds `_lock`."""
        db = self._require()
        shard = self._load_shard(ns)
        if shard is None:
            return
        with shard.index_lock:
            shard.apply_pending()
            segment = shard.merge()
            written = self._write_file(ns, segment) if segment.docs else None
            with db:
                if written is not None:
                    db.execute("INSERT OR REPLACE INTO segment VALUES (?, ?, ?, ?, ?, ?)",
                               (ns, written.name, written.seq, written.size, written.docs, written.gen))
                else:
                    db.execute("DELETE FROM segment WHERE ns = ?", (ns,))
                db.execute("DELETE FROM log WHERE ns = ? AND seq <= ?", (ns, segment.seq))
            old = self._files.pop(ns, None)
            if written is not None:
                self._files[ns] = written
                # mapped (off the heap); not verified: this process wrote those bytes just now
                shard.reset(load_segment(self.path / written.name, ns, self.params, verify=False))
            (self._logged[ns],) = db.execute("SELECT count(*) FROM log WHERE ns = ?", (ns,)).fetchone()
            if old is not None and (written is None or old.name != written.name):
                with contextlib.suppress(OSError):
                    (self.path / old.name).unlink()

    # ------------------------------------------------------------ reads
    def _shard(self, namespace: str, create: bool) -> _Shard | None:
        shard = self._shards.get(namespace)
        if shard is not None:
            return shard
        with self._lock:
            self._require()
            return self._load_shard(namespace)

    def _load_shard(self, ns: str) -> _Shard | None:
        """The namespace's shard, loaded now if it is not: its segment mapped, its log replayed
        (None when the index holds nothing of it). A damaged segment is rebuilt through `refill`."""
        shard = self._shards.get(ns)
        if shard is not None:
            return shard
        db = self._require()
        f = self._files.get(ns)
        if f is None and not self._logged.get(ns):
            return None
        base = None
        if f is not None:
            try:
                base = load_segment(self.path / f.name, ns, self.params)
            except SegmentError as exc:
                return self._refilled(ns, str(exc))
        shard = _Shard(base, merges=False)
        try:
            rows = db.execute("SELECT seq, mid, entry FROM log WHERE ns = ? AND seq > ? ORDER BY seq",
                              (ns, base.seq if base is not None else 0)).fetchall()
        except sqlite3.DatabaseError as exc:
            if not database_damaged(exc):
                raise BackendError(f"cannot read the lexical index of namespace {ns!r}: {exc}") from exc
            self._start_over(f"its database is damaged ({exc})")
            return self._shards.get(ns) or self._load_shard(ns)
        shard.pending.update((mid, (seq, _decode(entry))) for seq, mid, entry in rows)
        self._shards[ns] = shard
        return shard

    def _refilled(self, ns: str, why: str) -> _Shard | None:
        if self._refill is None:
            raise BackendError(f"the lexical index of namespace {ns!r} cannot be read ({why}) and this index "
                               "has no way to rebuild it: reopen the store")
        _log.warning("rebuilding the lexical index of namespace %.80r from its memories: %s", ns, why)
        db = self._require()
        with db:  # marked until the rebuild commits: a crash during it is redone on the next open
            db.execute("INSERT OR REPLACE INTO stale VALUES (?, ?)", (ns, why))
        self.rebuild(self._refill(ns), [ns])
        return self._load_shard(ns)

    def _start_over(self, why: str) -> None:
        """Discard a database found damaged in use and rebuild the whole index from the payloads
        (every namespace the index knew, through `refill`), logged once. Its rows cannot be trusted,
        and a namespace's rebuild would write to the same damaged pages. Caller holds `_lock`."""
        refill = self._refill
        if refill is None:
            raise BackendError(f"the lexical index at {self.path} cannot be read ({why}) and this index has no way "
                               "to rebuild it: reopen the store")
        namespaces = sorted(set(self._files) | set(self._logged) | set(self._shards))
        _log.warning("rebuilding the lexical index from the memories of its %d namespaces: %s", len(namespaces), why)
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        self._discard_database()
        self._shards.clear()
        self._files, self._logged, self._retry_at = {}, {}, {}
        self._load(why)  # a new database, marked incomplete until the rebuild commits
        self.rebuild(doc for ns in namespaces for doc in refill(ns))

    def logged(self, namespace: str) -> int:
        """Log rows of the namespace since its segment (what a load replays; for checks and tests)."""
        with self._lock:
            return self._logged.get(namespace, 0)
