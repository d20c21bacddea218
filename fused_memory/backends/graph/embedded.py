"""The embedded entity graph: adjacency dicts in process, persisted to one SQLite file.

Why SQLite: it is in the standard library, a write is one atomic transaction (a crash mid-batch
leaves the previous state, never a torn log line to repair), and a namespace's in-memory adjacency
is rebuilt from five small tables, read by the namespace's key. Co-mention counts and mention
counts are not stored at all: they are recomputed from the MENTIONS table when they are read, so
they can never drift from the edges they count. A namespace is loaded on its first use, not on
`open()`, so opening a store of many namespaces reads none of them, and a process holds only the
namespaces it has used. A read loads its catalogue alone (`partial`: names, mention counts from
the MENTIONS index by entity, relations), and a walk then reads the memories and co-mentions of the
entities it reaches, once each; the first write loads the namespace whole. Reads of what is loaded
never touch SQLite; a traversal is dict lookups plus `traversal.traverse_source`. The adjacency
dicts of one namespace are `space.NamespaceGraph`; this module persists and locks them. Entity
groups that nothing mentions, relates or asserts (`asserted`: the names given to `add_alias`) are
deleted by the write that leaves them so, and, for stores written before, when their namespace is
loaded (`gc`).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import datetime
from itertools import groupby
from pathlib import Path
from typing import Any

from ...errors import BackendError, QueryError, StoreClosed
from ...results import Hit
from ...text import normalize_entity_id
from ...types import Entity, EntityMention, MemoryType, Relation
from .aliases import EntityPlan, NewEntity, name_tokens, plan_entities
from .gc import collect_space
from .partial import PartialNamespaceGraph
from .space import NamespaceGraph
from .traversal import traverse_source
from .values import check_name, check_namespace, check_relation, clean_mentions, epoch_ms, quantize_confidence

__all__ = ["EmbeddedGraphStore"]

_log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entity(ns TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, kind TEXT,
    canon TEXT NOT NULL, PRIMARY KEY (ns, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memory(ns TEXT NOT NULL, mid TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT,
    PRIMARY KEY (ns, mid)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mention(ns TEXT NOT NULL, mid TEXT NOT NULL, eid TEXT NOT NULL,
    PRIMARY KEY (ns, mid, eid)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS relation(ns TEXT NOT NULL, src TEXT NOT NULL, rel TEXT NOT NULL, dst TEXT NOT NULL,
    kind TEXT NOT NULL, conf REAL NOT NULL, vf INTEGER, vt INTEGER, PRIMARY KEY (ns, src, rel, dst)) WITHOUT ROWID;
"""
#: Added with `gc`: the names given to add_alias. In a script of its own, so a store written
#: before it still opens where it cannot be written (a read-only mount): the table is then empty.
_ASSERTED = ("CREATE TABLE IF NOT EXISTS asserted(ns TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (ns, id)) "
             "WITHOUT ROWID")
#: Added with `partial`: mentions by entity, so a namespace's first read counts mentions per entity
#: and reads one entity's memories without reading all of them. Apart for the same reason as
#: `asserted`: a store written before it opens read-only without it, and loads namespaces whole.
_BY_ENTITY = "CREATE INDEX IF NOT EXISTS mention_by_entity ON mention(ns, eid)"
#: SQLite's default limit of host parameters was 999 before 3.32: fills ask for at most this many ids at once.
_IDS_PER_SELECT = 500


class _Reader:
    """The indexed reads a `PartialNamespaceGraph` of one namespace fills itself from. A mention
    row has its memory row (both are written and deleted in one transaction), so counts from the
    MENTIONS index are those a whole load counts from the memories. The joins are CROSS JOINs,
    which SQLite never reorders: the asked entities' mentions are the outer loop. Left to itself
    (the file has no ANALYZE statistics) it scanned the whole namespace's mentions as the outer
    loop of the co-mention count, 30 ms instead of 5 for a hub of 6k memories."""

    def __init__(self, db: sqlite3.Connection, namespace: str) -> None:
        self.db = db
        self.ns = namespace

    def memory_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM memory WHERE ns = ?", (self.ns,)).fetchone()[0])

    def _chunks(self, ids: Collection[str]) -> Iterator[tuple[str, list[str]]]:
        items = sorted(ids)
        for i in range(0, len(items), _IDS_PER_SELECT):
            part = items[i:i + _IDS_PER_SELECT]
            yield ",".join("?" * len(part)), part

    def mentions(self, entity_ids: Collection[str]) -> list[tuple[str, str, int, str | None]]:
        rows: list[tuple[str, str, int, str | None]] = []
        for marks, part in self._chunks(entity_ids):
            rows += self.db.execute(
                "SELECT m.eid, m.mid, y.seq, y.type FROM mention m CROSS JOIN memory y "
                f"ON y.ns = m.ns AND y.mid = m.mid WHERE m.ns = ? AND m.eid IN ({marks})", (self.ns, *part))  # noqa: S608
        rows.sort(key=lambda r: r[2])  # across chunks too: link order
        return rows

    def co_mentions(self, entity_ids: Collection[str]) -> list[tuple[str, str, int]]:
        rows: list[tuple[str, str, int]] = []
        for marks, part in self._chunks(entity_ids):
            rows += self.db.execute(
                "SELECT a.eid, b.eid, count(*) FROM mention a CROSS JOIN mention b ON b.ns = a.ns AND b.mid = a.mid "
                f"AND b.eid <> a.eid WHERE a.ns = ? AND a.eid IN ({marks}) GROUP BY a.eid, b.eid",  # noqa: S608
                (self.ns, *part))
        return rows

    def mentioned_by(self, memory_id: str) -> list[str]:
        return [e for (e,) in self.db.execute("SELECT eid FROM mention WHERE ns = ? AND mid = ? ORDER BY eid",
                                              (self.ns, memory_id))]


class EmbeddedGraphStore:
    """`GraphStore` in process. `path` is a directory (created on open) holding `graph.sqlite3`;
    None keeps everything in memory. Thread-safe: one RLock guards every call."""

    name = "embedded"
    #: In process: no other writer, no network (`GraphStore.remote`).
    remote = False

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._spaces: dict[str, NamespaceGraph] = {}
        #: Namespaces a read found the file holds nothing of: later reads skip the SELECTs (this
        #: process is the file's one writer; forgotten whenever `_spaces` is, and by a write).
        self._absent: set[str] = set()
        self._ops: list[tuple[str, tuple[Any, ...]]] = []
        self._checkpoint = False  # a collected name is in the write-ahead log too: empty it after the commit
        self._asserted_table = False  # whether the file has the table of names given to add_alias
        self._by_entity = False  # whether the file has the index of mentions by entity: reads load catalogues
        self._legacy = False  # the file was written before the `asserted` table (`gc.orphaned`)
        #: The last open made the file (a new store, or one whose graph file is gone: `Reconcilable`).
        self.created = False
        self._opened = False
        self._closed = False  # close() was called: only open() opens it again, not a first use

    # ------------------------------------------------------------------ lifecycle
    def open(self) -> None:
        with self._lock:
            self._closed = False
            self._open_files()

    def _open_files(self) -> None:
        if self._opened:
            return
        if self.path is not None:
            try:
                Path(self.path).mkdir(parents=True, exist_ok=True)
                self.created = not (Path(self.path) / "graph.sqlite3").exists()
                self._db = sqlite3.connect(str(Path(self.path) / "graph.sqlite3"), check_same_thread=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                # FULL: a write is on disk when it returns, before the store clears it from its
                # write journal (`store.journal`): an OS crash cannot lose it unrepaired
                self._db.execute("PRAGMA synchronous=FULL")
                # a deleted name is overwritten in the file, not left in a free page (`gc`);
                # Debian's SQLite defaults to this, other builds do not
                self._db.execute("PRAGMA secure_delete=ON")
                self._db.executescript(_SCHEMA)
            except (OSError, sqlite3.Error) as exc:
                raise BackendError(f"cannot open the embedded graph at {self.path}: {exc}") from exc
            legacy = self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'asserted'").fetchone() is None
            try:
                self._db.execute(_ASSERTED)
                self._asserted_table = True
            except sqlite3.Error as exc:  # a read-only store written before it: open as it is
                _log.warning("embedded graph opened without its 'asserted' table: %s", exc)
                self._asserted_table = not legacy
            self._legacy = legacy
            try:
                self._db.execute(_BY_ENTITY)  # once, on a store written before it: a second or so at 1M mentions
            except sqlite3.Error as exc:  # a read-only store written before it: load namespaces whole
                _log.warning("embedded graph opened without its index of mentions by entity: %s", exc)
            self._by_entity = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'mention_by_entity'").fetchone() is not None
        self._forget()
        self._opened = True
        if self._db is not None and self._legacy:
            # The legacy rule applies on the first open since the `asserted` table only: a namespace
            # left unloaded now would never get it. So a file written before it has every namespace
            # collected here, once (later opens load none), and then let go.
            for namespace in self._namespaces():
                self._load(namespace)
            self._forget()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._forget()
            self._opened, self._closed = False, True

    def _forget(self) -> None:
        """Drop what memory holds of the file (reloaded on next use)."""
        self._spaces.clear()
        self._absent.clear()

    def _load(self, namespace: str, *, whole: bool = False) -> NamespaceGraph | None:
        """Rebuild one namespace from the tables: entities, then memories in link order (which
        restores recency order and recounts co-mentions), then relations; None when the file holds
        nothing of it. Unless `whole` (or the file has no index of mentions by entity), only the
        catalogue: mention counts per entity instead of the memories (`partial`). An in-memory
        graph (no file) holds everything it has in `_spaces` already."""
        db = self._db
        if db is None:
            return None
        partial = not whole and self._by_entity
        sp = PartialNamespaceGraph(namespace, _Reader(db, namespace)) if partial else NamespaceGraph(namespace)
        for eid, name, kind, canon in db.execute("SELECT id, name, kind, canon FROM entity WHERE ns = ?", (namespace,)):
            sp.add_entity(NewEntity(eid, name, kind, canon))
        if isinstance(sp, PartialNamespaceGraph):
            sp.counts.update(db.execute("SELECT eid, count(*) FROM mention WHERE ns = ? GROUP BY eid", (namespace,)))
            held = bool(sp.counts) or db.execute("SELECT 1 FROM memory WHERE ns = ? LIMIT 1",
                                                 (namespace,)).fetchone() is not None
        else:
            targets: dict[str, list[str]] = {}
            for mid, eid in db.execute("SELECT mid, eid FROM mention WHERE ns = ?", (namespace,)):
                targets.setdefault(mid, []).append(eid)
            for mid, seq, mtype in db.execute("SELECT mid, seq, type FROM memory WHERE ns = ? ORDER BY seq",
                                              (namespace,)):
                sp.add_memory(mid, seq, mtype, tuple(sorted(targets.get(mid, ()))))
                sp.seq = max(sp.seq, seq)
            held = bool(sp.mem)
        for s, rel, d, kind, conf, vf, vt in db.execute(
                "SELECT src, rel, dst, kind, conf, vf, vt FROM relation WHERE ns = ?", (namespace,)):
            sp.put_rel(s, rel, d, (kind, conf, vf, vt))
        if self._asserted_table:
            sp.asserted.update(eid for (eid,) in db.execute("SELECT id FROM asserted WHERE ns = ?", (namespace,)))
        if not (sp.ent or held or sp.rel or sp.asserted):
            return None
        self._spaces[namespace] = sp
        self._sweep(sp)
        return sp

    def _sweep(self, sp: NamespaceGraph) -> None:
        """Collect the orphaned entities a store written before `gc` kept (their memories were
        deleted), when their namespace is loaded; with the legacy rule on a file's first open since
        (`gc.orphaned`). Best effort: a store that cannot be written now still opens, as it is."""
        try:
            n = self._write(lambda: self._collect(sp, list(sp.ent), legacy=self._legacy))
        except BackendError as exc:
            _log.warning("not collecting orphaned graph entities of namespace %.80r: %s", sp.namespace, exc)
            return
        if n:
            _log.info("collected %d graph entities no memory mentions any more", n)

    def _space(self, namespace: str) -> NamespaceGraph:
        """The namespace's whole graph, loaded on first use (and in place of a catalogue a read
        loaded); created empty when the file holds none."""
        sp = self._spaces.get(namespace)
        if sp is None or isinstance(sp, PartialNamespaceGraph):
            sp = self._load(namespace, whole=True)
        if sp is None:
            sp = self._spaces[namespace] = NamespaceGraph(namespace)
        return sp

    def _namespaces(self) -> list[str]:
        """Every namespace the file or memory holds."""
        found = set(self._spaces)
        if self._db is not None:
            for table in ("entity", "memory", "relation"):
                found.update(ns for (ns,) in self._db.execute(f"SELECT DISTINCT ns FROM {table}"))  # noqa: S608
        return sorted(found)

    def _ensure_open(self) -> None:
        """Open on first use, but not after `close()`: a read racing its store's close must not
        reopen the files behind it (only `open()` does)."""
        with self._lock:  # decided under the lock, so a close() racing a first use is not undone
            if self._opened:
                return
            if self._closed:
                raise StoreClosed(f"the embedded graph at {self.path} was closed; call open() to use it again")
            self._open_files()

    def _check(self, namespace: str, write: bool = True, *, whole: bool = False) -> NamespaceGraph:
        """The namespace's graph (opening the store on first use); reads of an unknown namespace get
        a throwaway empty one, so queries never grow the store. A read loads the catalogue alone
        (`partial`) unless `whole` (a read that counts memories)."""
        self._ensure_open()
        check_namespace(namespace)
        if write:
            self._absent.discard(namespace)
            return self._space(namespace)
        sp = self._spaces.get(namespace)
        if whole and isinstance(sp, PartialNamespaceGraph):
            sp = None
        if sp is None and namespace not in self._absent:
            sp = self._load(namespace, whole=whole)
            if sp is None and self._db is not None:
                self._absent.add(namespace)
        return sp or NamespaceGraph(namespace)

    def _commit(self) -> None:
        ops, self._ops = self._ops, []
        checkpoint, self._checkpoint = self._checkpoint, False
        if self._db is None:
            return
        try:
            with self._db:
                for sql, group in groupby(ops, key=lambda o: o[0]):
                    self._db.executemany(sql, [p for _, p in group])
        except sqlite3.Error as exc:
            self._forget()  # memory may hold the failed batch: go back to what is on disk
            raise BackendError(f"embedded graph write failed: {exc}") from exc
        if checkpoint:  # best effort: a reader holding an old snapshot keeps the log until it is done
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                _log.debug("write-ahead log not emptied after collecting entities: %s", exc)

    def _write(self, fn: Any, *args: Any) -> Any:
        """Run one mutation; on any failure drop its pending SQL and reload from disk."""
        with self._lock:
            try:
                result = fn(*args)
            except BaseException:
                self._ops.clear()
                if self._db is not None:
                    self._forget()  # reloaded from the file on next use
                raise
            self._commit()
            return result

    # ------------------------------------------------------------------ primitive writes
    def _apply_plan(self, sp: NamespaceGraph, plan: EntityPlan, kinds: Mapping[str, str | None]) -> None:
        for e in plan.created:
            sp.add_entity(e)
            self._ops.append(("INSERT OR REPLACE INTO entity VALUES (?,?,?,?,?)",
                              (sp.namespace, e.id, e.name, e.kind, e.canon)))
        for old, new in plan.merges:
            self._fold(sp, old, new)
        for eid, kind in kinds.items():
            if kind and eid in sp.ent and sp.ent[eid][1] is None:
                sp.ent[eid][1] = kind
                sp.reindex_tokens(eid)
                sp.version += 1
                self._ops.append(("UPDATE entity SET kind=? WHERE ns=? AND id=?", (kind, sp.namespace, eid)))

    def _fold(self, sp: NamespaceGraph, group: str, into: str) -> None:
        for x in sorted(sp.members.get(group, ())):
            self._move(sp, x, into)

    def _move(self, sp: NamespaceGraph, eid: str, into: str) -> None:
        sp.set_canon(eid, into)
        self._ops.append(("UPDATE entity SET canon=? WHERE ns=? AND id=?", (into, sp.namespace, eid)))

    def _drop(self, sp: NamespaceGraph, mid: str) -> tuple[str, ...]:
        self._ops.append(("DELETE FROM memory WHERE ns=? AND mid=?", (sp.namespace, mid)))
        self._ops.append(("DELETE FROM mention WHERE ns=? AND mid=?", (sp.namespace, mid)))
        return sp.drop_memory(mid)

    def _unlink(self, sp: NamespaceGraph, mids: Sequence[str]) -> None:
        self._collect(sp, {e for m in mids for e in self._drop(sp, m)})

    def _collect(self, sp: NamespaceGraph, entity_ids: Collection[str], *, legacy: bool = False) -> int:
        """Delete the orphaned groups of `entity_ids` (`gc`); returns how many entities went.
        When some went, the commit also empties the write-ahead log, which held the names too."""
        removed = collect_space(sp, entity_ids, legacy=legacy)
        self._ops.extend(("DELETE FROM entity WHERE ns=? AND id=?", (sp.namespace, e)) for e in removed)
        self._checkpoint = self._checkpoint or bool(removed)
        return len(removed)

    # ------------------------------------------------------------------ GraphStore writes
    def link(self, namespace: str,
             items: Sequence[tuple[str, Sequence[EntityMention], MemoryType | None]]) -> None:
        with self._lock:  # from the check to the write: a close() in between must not strand it
            sp = self._check(namespace)
            batch = {check_name(str(mid), "memory id", entity=False): (clean_mentions(ms), mtype)
                     for mid, ms, mtype in items}
            if batch:
                self._write(self._link, sp, batch)

    def _link(self, sp: NamespaceGraph, batch: Mapping[str, tuple[list[tuple[str, str, str | None]], Any]]) -> None:
        names = [n for ms, _t in batch.values() for n in ms]
        plan = plan_entities(sp, names)
        self._apply_plan(sp, plan, {eid: kind for eid, _n, kind in names if kind})
        dropped: set[str] = set()  # entities the re-linked memories mentioned before
        for mid, (ms, mtype) in batch.items():
            if mid in sp.mem:
                dropped.update(self._drop(sp, mid))
            sp.seq += 1
            targets = tuple(sorted({plan.resolved[eid] for eid, _n, _k in ms}))
            tval = MemoryType(mtype).value if mtype is not None else None
            sp.add_memory(mid, sp.seq, tval, targets)
            self._ops.append(("INSERT INTO memory VALUES (?,?,?,?)", (sp.namespace, mid, sp.seq, tval)))
            self._ops.extend(("INSERT INTO mention VALUES (?,?,?)", (sp.namespace, mid, e)) for e in targets)
        self._collect(sp, dropped)

    def unlink(self, namespace: str, memory_ids: Sequence[str]) -> None:
        with self._lock:  # from the check to the write: a close() in between must not strand it
            sp = self._check(namespace)
            ids = [m for m in dict.fromkeys(str(x) for x in memory_ids) if m in sp.mem]
            if ids:
                self._write(self._unlink, sp, ids)

    def collect_orphans(self, namespace: str) -> int:
        """Delete every entity group of `namespace` that `gc` would collect; returns how many
        entities went. Writes do it for what they touch and open for the whole store: this is the
        Cypher store's one-off sweep, here for symmetry (optional beside `GraphStore`)."""
        with self._lock:
            sp = self._check(namespace)
            return self._write(self._collect, sp, list(sp.ent))

    @property
    def persistent(self) -> bool:
        """Kept on disk (`Reconcilable`): False for an in-memory graph, rebuilt on every open."""
        return self.path is not None

    def reconcile(self, want: Mapping[str, Mapping[str, tuple[Sequence[EntityMention], MemoryType | None]]],
                  only: Mapping[str, Collection[str]] | None = None) -> tuple[int, int]:
        """Make the linked memories match `want` (namespace -> memory id -> (mentions, type)), which
        the store reads from the vector payloads, the source of truth: memories missing here, or
        linked to other entities or with another type, are re-linked; memories absent from `want`
        are unlinked. Repairs a crash between the vector write and the graph write. Mentions are
        compared by entity group, so a memory whose name was re-pointed by a later `add_alias` is
        re-linked to what the name means now. With `only` (namespace -> memory ids), just those
        memories are compared (`want` then holds those of them the payloads still have): the
        repair of the writes a journal says were under way, without reading every namespace.
        Returns (re-linked, unlinked)."""
        relinked = unlinked = 0
        with self._lock:
            self._ensure_open()
            spaces = sorted(only) if only is not None else sorted(set(self._namespaces()) | set(want))
            for ns in spaces:
                wanted = want.get(ns, {})
                scope = None if only is None else set(only[ns])
                stale: dict[str, tuple[list[tuple[str, str, str | None]], Any]] = {}
                try:
                    sp = self._check(ns)
                    for mid, (ms, mtype) in wanted.items():
                        if scope is not None and mid not in scope:
                            continue
                        names = clean_mentions(ms)
                        rec = sp.mem.get(mid)
                        tval = MemoryType(mtype).value if mtype is not None else None
                        if rec is None or rec[1] != tval or not self._same_groups(sp, rec[2], names):
                            stale[mid] = (names, mtype)
                except QueryError as exc:  # written before today's limits: leave it, keep the store usable
                    _log.warning("not reconciling graph namespace %.80r: %s", ns, exc)
                    continue
                gone = [m for m in (sp.mem if scope is None else scope) if m in sp.mem and m not in wanted]
                if gone:
                    self._write(self._unlink, sp, gone)
                if stale:
                    self._write(self._link, sp, stale)
                relinked, unlinked = relinked + len(stale), unlinked + len(gone)
        return relinked, unlinked

    @staticmethod
    def _same_groups(sp: NamespaceGraph, targets: Sequence[str], names: Sequence[tuple[str, str, str | None]]) -> bool:
        have = {sp.ent[t][2] if t in sp.ent else None for t in targets}
        want = set()
        for eid, _name, _kind in names:
            if eid not in sp.ent:
                return False
            want.add(sp.ent[eid][2])
        return have == want

    def relate(self, namespace: str, relation: Relation) -> None:
        with self._lock:  # from the check to the write: a close() in between must not strand it
            sp = self._check(namespace)
            src, dst, label = check_relation(relation)
            self._write(self._relate, sp, relation, src, dst, label)

    def _relate(self, sp: NamespaceGraph, r: Relation, src: str, dst: str, label: str) -> None:
        plan = plan_entities(sp, [(src, " ".join(r.src.split()), None), (dst, " ".join(r.dst.split()), None)])
        self._apply_plan(sp, plan, {})
        s, d = plan.resolved[src], plan.resolved[dst]
        value = (r.kind, quantize_confidence(r.confidence), epoch_ms(r.valid_from), epoch_ms(r.valid_to))
        sp.put_rel(s, label, d, value)
        self._ops.append(("INSERT OR REPLACE INTO relation VALUES (?,?,?,?,?,?,?,?)",
                          (sp.namespace, s, label, d, *value)))

    def add_alias(self, namespace: str, entity: str, alias: str) -> None:
        with self._lock:  # from the check to the write: a close() in between must not strand it
            sp = self._check(namespace)
            eid = normalize_entity_id(check_name(entity, "entity name"))
            aid = normalize_entity_id(check_name(alias, "alias"))
            if not eid or not aid:
                raise QueryError(f"entity and alias must be non-empty names: {entity!r}, {alias!r}")
            self._write(self._add_alias, sp, eid, " ".join(entity.split()), aid, " ".join(alias.split()))

    def _add_alias(self, sp: NamespaceGraph, eid: str, ename: str, aid: str, aname: str) -> None:
        plan = plan_entities(sp, [(eid, ename, None)])
        self._apply_plan(sp, plan, {})
        target = plan.resolved[eid]
        if aid not in sp.ent:
            self._apply_plan(sp, EntityPlan({}, (NewEntity(aid, aname, None, target),), ()), {})
        elif sp.ent[aid][2] != target:
            left = sp.ent[aid][2]  # the group the alias leaves may have nothing else to keep it
            (self._fold if left == aid else self._move)(sp, aid, target)
            self._collect(sp, [left])
        sp.asserted.update((eid, aid))  # both names are the user's facts: `gc` keeps their group
        self._ops.extend(("INSERT OR IGNORE INTO asserted VALUES (?,?)", (sp.namespace, x)) for x in (eid, aid))

    # ------------------------------------------------------------------ reads
    def entities(self, namespace: str) -> list[Entity]:
        with self._lock:
            sp = self._check(namespace, write=False)
            return [sp.entity(g) for g in sorted(sp.members)]

    def resolve(self, namespace: str, name: str) -> list[Entity]:
        with self._lock:
            sp = self._check(namespace, write=False)
            eid = normalize_entity_id(name)
            found = [sp.ent[eid][2]] if eid in sp.ent else []
            if eid and len(name_tokens(eid)) == 1:
                found += [c for c in sorted(sp.tok.get(eid, ())) if c not in found]
            return [sp.entity(g) for g in found]

    def mentions_of(self, namespace: str, memory_id: str) -> list[str]:
        with self._lock:
            return self._check(namespace, write=False).memory_entities(str(memory_id))

    def entity_version(self, namespace: str) -> int:
        with self._lock:
            return self._check(namespace, write=False).version

    def stats(self, namespace: str | None = None) -> Mapping[str, int]:
        with self._lock:
            self._ensure_open()
            spaces = [self._check(ns, write=False, whole=True) for ns in self._namespaces()] if namespace is None \
                else [self._check(namespace, write=False, whole=True)]
            return {"entities": sum(len(s.ent) for s in spaces), "memories": sum(len(s.mem) for s in spaces),
                    "mentions": sum(len(r[2]) for s in spaces for r in s.mem.values()),
                    "relations": sum(len(s.rel) for s in spaces), "co_mentions": sum(len(s.co) for s in spaces)}

    def traverse(self, namespace: str, seeds: Sequence[tuple[str, float]], max_hops: int, limit: int,
                 now: datetime, *, multi_hop_factor: float = 1.0,
                 types: frozenset[MemoryType] | None = None,
                 asked: Sequence[tuple[str, str, bool]] = ()) -> list[Hit]:
        with self._lock:
            sp = self._check(namespace, write=False)
            found = traverse_source(sp, seeds, max_hops, limit, now, multi_hop_factor, types, asked)
        return [Hit(mid, score, detail) for mid, score, detail in found]

