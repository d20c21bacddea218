"""`MemoryStore`: the one write path, and the owner of every index.

A write embeds, classifies, extracts entities and only then touches storage, so a batch that fails
validation, embedding or extraction writes nothing. Storage order is vectors (the source of truth;
with the lexical index in the engine, each memory's sparse BM25 vector rides in the same write)
then BM25 then the graph; BM25 and the embedded graph can always be rebuilt from the payloads.

What `add` guarantees
---------------------
* When `add` returns, every memory of the batch is in the vector store, the lexical index and the
  graph, and a read that starts afterwards sees it. With the embedded default it is durable
  against a crash of the process (SIGKILL included): the vector write goes through qdrant-edge's
  WAL, and the lexical index's log and the graph write are committed SQLite transactions. (No
  fsync per write: an OS crash or power loss may lose the last writes.) With `connect()` and no
  graph server, the graph write goes to the same Qdrant as the vectors (`backends.graph.engine`):
  no part of the store is held only in the process.
* When `add` raises, no memory is left half-written: the indexes written for the failing chunk
  (256 memories) are rolled back - new memories removed, overwritten ones restored from their
  previous payload - and the error says what failed (and, as a note, what could not be undone if
  a backend is gone). Earlier chunks of a larger batch stay, complete in every index; retrying the
  batch is safe, `add` is an upsert.
* A crash between the vector write and the lexical or graph write (or a rollback that could not
  finish) is repaired on the next `open`. An embedded store journals each write before it touches
  the vectors (`journal`), and `open` compares only the memories of the writes that never ended
  with their payloads (`recovery.repair`); a store without the journal reconciles the embedded
  graph with every payload (memories missing from the graph or linked differently are re-linked,
  memories absent from the payloads are unlinked). A Cypher graph server is not reconciled (it
  would mean reading the whole graph); there, Neo4j's transactions and the rollback above keep it
  consistent, and ensemble hydration never returns a memory that the vector store does not hold.
* `delete` removes from the vector store first: once that succeeded the memory is gone for every
  reader, even if a later index fails (the error is raised; the leftovers are repaired on open for
  the embedded store, and retrying the delete finishes the job for a server graph).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..backends.codec import UNRANKED, from_payload, stored_time, to_payload
from ..backends.graph.values import check_relation
from ..backends.protocols import (
    GraphStore,
    LexicalIndex,
    LiveNamespaces,
    OrderedScan,
    PayloadLister,
    PayloadWriter,
    PersistedIndex,
    ScoredPayload,
    TypeCounter,
    VectorBackend,
    VectorFilter,
    VectorQuery,
    VectorReader,
    VectorRecord,
)
from ..backends.vector.common import EXPIRES_AT
from ..backends.wording import remember as remember_wording
from ..config import StoreConfig
from ..embeddings.base import LoadsLazily
from ..errors import BackendError, ConfigurationError, InvalidMemory, StoreClosed
from ..handles import SharedHandle
from ..query.entities import EntityMatcher
from ..query.store_rules import filter_share
from ..query.temporal import stated_times
from ..results import Hit
from ..types import Memory, MemoryType, Relation
from ..validation import check_namespace, require_storable, utcnow
from .arguments import check_mentions
from .arguments import memory_ids as keyed_ids
from .ingest import EntityExtractor, answer_tags, classify_type, extract_beside, lexical_doc, slot_keys, with_slot
from .listing import list_memories
from .meta import merged_sessions, merged_upgrades
from .recovery import open_backends, snapshot, undo
from .slot_model import SlotExtractor, derived_slot
from .upgrade import NamespaceUpgrades, sparse_vectors
from .versions import SharedVersions

if TYPE_CHECKING:
    from ..embeddings import Embedder
    from ..retrievers.base import Retriever
    from .journal import WriteJournal

__all__ = ["MemoryStore"]


def _expired(payload: Mapping[str, Any], now: float) -> bool:
    at = payload.get(EXPIRES_AT)
    return isinstance(at, (int, float)) and at <= now


def _ranked(flt: VectorFilter, now: float) -> VectorFilter:
    """What a search may see: memories that take part in ranking and have not expired."""
    return dataclasses.replace(flt, alive_at=now, indexed_only=True)


def _with_unindexed(batch: Sequence[Memory], mentions: list[Any], vectors: np.ndarray, dim: int
                    ) -> tuple[list[Any], np.ndarray]:
    """Mentions and vectors for the whole batch from those of its indexed memories: an unindexed
    one has no mentions and a placeholder unit vector (the engine needs one; no search sees it)."""
    if len(mentions) == len(batch):
        return mentions, vectors
    out = np.zeros((len(batch), dim), dtype=np.float32)
    out[:, 0] = 1.0
    found = iter(zip(mentions, vectors, strict=True))
    all_mentions: list[Any] = []
    for i, m in enumerate(batch):
        if m.indexed:
            ms, v = next(found)
            out[i] = v
            all_mentions.append(ms)
        else:
            all_mentions.append(())
    return all_mentions, out

_PROGRESS_MIN = 500  # batches smaller than this never show a progress bar


class MemoryStore(SharedHandle):
    """Memories for many tenants (namespaces) in one store. Constructing does no I/O: the backends
    are opened on first use (or by `open()`), which is when the embedder pin is checked. After
    `close()` only `open()` reopens it (`StoreClosed` otherwise); a copy is the same store.
    `journal` records the writes under way, so `open()` repairs only those (`embedded()` gives one:
    see the module docstring)."""

    def __init__(self, vectors: VectorBackend, lexical: LexicalIndex, embedder: Embedder,
                 graph: GraphStore | None = None, extractor: EntityExtractor | None = None,
                 config: StoreConfig | None = None, journal: WriteJournal | None = None) -> None:
        self.vectors = vectors
        self.lexical = lexical
        self.graph = graph
        self.journal = journal
        self.embedder = embedder
        self.extractor = extractor or EntityExtractor(enabled=(config.ner if config else True))
        self.config = config or StoreConfig()
        self._open = False
        self._closed = False  # close() was called: no use reopens it, open() does
        self._open_lock = threading.Lock()
        self._write_lock = threading.RLock()
        self._versions: dict[str, int] = {}
        self._matchers: dict[str, tuple[tuple[int, int], EntityMatcher]] = {}
        self._shared_versions = SharedVersions()  # other processes' entity writes on a shared graph
        self._meta: dict[str, Any] = {}
        self._ner_workers: ThreadPoolExecutor | None = None  # started by the first add with NER on
        self._ner_pid = 0  # the process that started it (a fork's child has the pool, not its thread)
        self._ner_lock = threading.Lock()
        #: Asked for the slot of a memory written without a predicate that no rule keyed
        #: (`slot_model.ChatSlotExtractor`: a chat model names it); None: rules only.
        self.slot_extractor: SlotExtractor | None = None
        self._upgrades = NamespaceUpgrades()  # namespaces this process brought up to date (`upgrade`)

    # ------------------------------------------------------------------ construction
    @classmethod
    def embedded(cls, path: str | Path, *, embedder: Embedder | Any = None, ner: bool = True,
                 show_progress: bool | None = None, lexical: str | None = None) -> MemoryStore:
        """Everything in process under `path`: qdrant-edge shard, BM25, embedded graph. `lexical`:
        "bm25" (the default here: rank-bm25-exact, in process) or "engine" (sparse vectors in the shard)."""
        from .factory import embedded_parts
        return cls(**embedded_parts(path, embedder=embedder, ner=ner, show_progress=show_progress, lexical=lexical))

    @classmethod
    def connect(cls, *, qdrant_url: str | None = None, qdrant_api_key: str | None = None,
                qdrant_location: str | None = None, qdrant_client: Any = None, collection: str = "fused_memory",
                neo4j_uri: str | None = None, neo4j_auth: tuple[str, str] | None = None, neo4j_driver: Any = None,
                neo4j_database: str | None = None, graph_dialect: str | None = None,
                graph_path: str | None = None, embedder: Embedder | Any = None, ner: bool = True,
                show_progress: bool | None = None, lexical: str | None = None) -> MemoryStore:
        """Scale-out: a Qdrant server or cluster (`qdrant_url`; `qdrant_location` for qdrant-client's
        local mode; or `qdrant_client`, a `QdrantClient` you configured, as langchain-qdrant takes
        `client=`) and, with `neo4j_uri` (or `neo4j_driver`, your own `neo4j.Driver`), Neo4j or any
        Bolt server; else, beside a server, the graph lives in the Qdrant collection too
        (`backends.graph.engine`), shared and durable like the memories. Beside local mode (one
        process owns the folder) it is the embedded SQLite graph inside `qdrant_location`, or at
        `graph_path`; a local-mode store an earlier version wrote with its graph in the engine keeps
        it there (and says once how to move it). A client or driver you pass is used
        as it is and left open by `close()`: the store closes only what it opened. `lexical`: "engine"
        (the default here: BM25 on the engine's sparse vectors, shared by every process; Qdrant >= 1.19)
        or "bm25" (an index in this process, refilled from every payload on open)."""
        from .factory import connected_parts
        return cls(**connected_parts(
            qdrant_url=qdrant_url, qdrant_api_key=qdrant_api_key, qdrant_location=qdrant_location,
            qdrant_client=qdrant_client, collection=collection, neo4j_uri=neo4j_uri, neo4j_auth=neo4j_auth,
            neo4j_driver=neo4j_driver, neo4j_database=neo4j_database, graph_dialect=graph_dialect,
            graph_path=graph_path, embedder=embedder, ner=ner, show_progress=show_progress, lexical=lexical))

    def open(self) -> MemoryStore:
        """Check the embedder pin and the layout, open the backends and repair what a crash left
        behind (see the module docstring and `recovery`): an embedded store reads only the memories
        of writes cut short; a lexical index that lives only in the process is rebuilt from every
        payload. A store that is refused is left untouched and closed."""
        return self._open_now(reopen=True)

    def _open_now(self, *, reopen: bool) -> MemoryStore:
        """`open()`, or (without `reopen`) the first use's open, which a `close()` forbids. Both
        decide under the lock, so a close racing a first use cannot be undone by it."""
        with self._open_lock:
            if self._open:
                return self
            if self._closed and not reopen:
                raise self._closed_error()
            self._meta = open_backends(self, self._embedder_meta())
            self._upgrades.reset()
            self._open, self._closed = True, False
        return self

    def _embedder_meta(self) -> dict[str, Any]:
        eid = self.embedder.id
        return {"name": eid.name, "dim": int(eid.dim), "weights_hash": eid.weights_hash}

    def _closed_error(self) -> StoreClosed:
        where = self.config.path or self.vectors
        return StoreClosed(f"the store at {where} was closed; call open() to use it again")

    def _ensure_open(self) -> None:
        if not self._open:
            self._open_now(reopen=False)

    def ensure_open(self) -> MemoryStore:
        """Open now, as the first use would (`StoreClosed` after `close()`, unlike `open()`): for a
        caller whose clock must not include the open, e.g. a TTL that counts from the write."""
        self._ensure_open()
        return self

    @contextmanager
    def _live(self) -> Iterator[None]:
        """A step that a concurrent close() may cut short (a backend released under a read, the NER
        pool shut under an add) says so with `StoreClosed`, not as a backend fault."""
        self._ensure_open()
        try:
            yield
        except (BackendError, RuntimeError) as exc:  # a backend released, an executor shut down
            if self._closed:
                raise self._closed_error() from exc
            raise

    def _ner_pool(self) -> ThreadPoolExecutor:
        """One worker thread for entity extraction beside the embedding (`ingest.extract_beside`).
        A process forked after it started inherits the pool but not its thread, so a job submitted
        there would wait forever (checked): such a child starts a pool of its own."""
        with self._ner_lock:
            if self._closed:  # an add that was under way when close() shut the pool down
                raise self._closed_error()
            if self._ner_workers is None or self._ner_pid != os.getpid():
                self._ner_workers = ThreadPoolExecutor(1, thread_name_prefix="fused-memory-ner")
                self._ner_pid = os.getpid()
            return self._ner_workers

    def close(self) -> None:
        """Release the backends; a write in flight finishes first. Later calls raise `StoreClosed`.
        The NER pool goes last, once no add can start one again."""
        with self._write_lock, self._open_lock:
            self._open, self._closed = False, True  # first: a read failing in what follows says why
            if self.graph is not None:
                self.graph.close()
            if isinstance(self.lexical, PersistedIndex):
                self.lexical.close()
            if self.journal is not None:
                self.journal.close()
            self.vectors.close()
        with self._ner_lock:
            if self._ner_workers is not None:
                self._ner_workers.shutdown(wait=True)
                self._ner_workers = None

    def __enter__(self) -> MemoryStore:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writes
    def add(self, memories: Memory | Iterable[Memory], *, show_progress: bool | None = None) -> list[Memory]:
        """Upsert memories (by id). Returns them as stored: type classified, entities extracted,
        `created_at` set. All-or-nothing for validation, embedding and extraction failures; a
        storage failure is rolled back (see the module docstring for what `add` guarantees)."""
        batch = [memories] if isinstance(memories, Memory) else list(memories)
        for m in batch:
            if not isinstance(m, Memory):
                raise InvalidMemory(f"add() takes Memory objects, got {type(m).__name__}")
            check_mentions(m)  # before any chunk is written: the graph refused these after 256 were
        if not batch:
            return []
        self._ensure_open()
        chunk = 256
        bar = self._progress(len(batch), show_progress)
        stored: list[Memory] = []
        try:
            for i in range(0, len(batch), chunk):
                stored.extend(self._add_chunk(batch[i:i + chunk]))
                if bar is not None:
                    bar.update(len(batch[i:i + chunk]))
        finally:
            if bar is not None:
                bar.close()
        return stored

    async def aadd(self, memories: Memory | Iterable[Memory], **kw: Any) -> list[Memory]:
        """`add` off the event loop (embedding and NER are CPU work)."""
        return await asyncio.to_thread(self.add, memories, **kw)

    def _progress(self, n: int, show: bool | None) -> Any:
        show = self.config.show_progress if show is None else show
        if show is None:
            show = n >= _PROGRESS_MIN and sys.stderr.isatty()
        if not show:
            return None
        from tqdm import tqdm
        return tqdm(total=n, desc="ingest", unit="mem")

    def _add_chunk(self, batch: list[Memory]) -> list[Memory]:
        now = utcnow()
        ranked = [m for m in batch if m.indexed]  # `indexed=False`: no embedding, NER, BM25 or graph
        with self._live():  # the embedded text is the memory's own: no need to wait for NER
            (found, found_slots), embedded = extract_beside(
                self.extractor, ranked, lambda: self.embed_memories(ranked),
                self._ner_pool() if self.extractor.enabled and ranked else None)
        mentions, vectors = _with_unindexed(batch, found, embedded, self.embedder.dim)
        ranked_slots = iter(found_slots)
        slots = [next(ranked_slots) if m.indexed else () for m in batch]
        prepared: list[Memory] = []
        for m, ms, facts in zip(batch, mentions, slots, strict=True):
            mtype, _rule = classify_type(m)
            ruled = next((f.key for f in facts if f.key), None)
            keyed = with_slot(m, derived_slot(m, ruled, self.slot_extractor), facts) if m.indexed else m
            said = m.created_at or m.event_at or now  # a turn dated only by its session was said then
            prepared.append(keyed.with_(type=mtype, created_at=m.created_at or now,
                                        entities=tuple(x.name for x in ms), stated_times=stated_times(m.text, said)))
        records = [VectorRecord(m.id, m.namespace, tuple(v.tolist()),  # and the sparse vector: one write
                                to_payload(m, [x.kind for x in ms], answer_tags(m.text) if m.indexed else (),
                                           slot_keys(m)), sparse)
                   for m, v, ms, sparse in zip(prepared, vectors, mentions,
                                               sparse_vectors(self.vectors, self.lexical, prepared), strict=True)]
        for ns in dict.fromkeys(m.namespace for m in prepared):  # older links first: recency keeps its order
            self._upgrades.ensure(self, ns)
        with self._write_lock:
            self._ensure_open()  # under the lock: a close() that ran before this write is seen
            before = snapshot(self.vectors, prepared)
            ticket = self._journal_begin((m.namespace, m.id) for m in prepared)
            try:
                self.vectors.upsert(records)
                self.lexical.add([lexical_doc(m) for m in prepared if m.indexed])
                unranked: dict[str, list[str]] = {}
                for m in prepared:
                    if not m.indexed:  # an item put again with index=False leaves every ranking
                        unranked.setdefault(m.namespace, []).append(m.id)
                for ns, ids in unranked.items():
                    self.lexical.delete(ns, ids)
                    if self.graph is not None:
                        self.graph.unlink(ns, ids)
                if self.graph is not None:
                    by_ns: dict[str, list[tuple[str, Any, Any]]] = {}
                    for m, ms in zip(prepared, mentions, strict=True):
                        if m.indexed:
                            by_ns.setdefault(m.namespace, []).append((m.id, ms, m.type))
                    for ns, items in by_ns.items():
                        self.graph.link(ns, items)
            except BaseException as exc:
                undo(self, prepared, before, exc)  # the journal keeps the ticket: the next open compares them
                raise
            else:
                self._journal_end(ticket)
            finally:
                for ns in {m.namespace for m in prepared}:
                    self._bump(ns)
        return prepared

    @staticmethod
    def embed_text(m: Memory) -> str:
        """The text a memory is embedded as: its predicate (when given) leads, then the text."""
        return f"{m.predicate}. {m.text}" if m.predicate else m.text

    def embed_memories(self, memories: Sequence[Memory]) -> np.ndarray:
        """One unit vector per memory. A memory with `context` is embedded twice, alone and read
        after its context, and the two are averaged: the context pulls the vector towards the
        question a reply answers, the lone embedding keeps what the memory itself says, which the
        concatenation alone loses on temporal questions (docs/decisions/0009-conversation-context.md)."""
        vectors = np.array(self.embedder.embed_documents([self.embed_text(m) for m in memories]),
                           dtype=np.float32)
        rows = [i for i, m in enumerate(memories) if m.context]
        if rows:
            read_after = self.embedder.embed_documents(
                [f"{memories[i].context}\n{self.embed_text(memories[i])}" for i in rows])
            blended = vectors[rows] + np.asarray(read_after, dtype=np.float32)
            norms = np.linalg.norm(blended, axis=1, keepdims=True)
            vectors[rows] = blended / np.where(norms > 0, norms, 1.0)
        return vectors

    def delete(self, namespace: str, memory_ids: str | Memory | Sequence[str | Memory]) -> None:
        """Remove memories (ids, or the `Memory` objects `add` returned) everywhere; unknown ids: no-op."""
        check_namespace(namespace)
        ids = keyed_ids(memory_ids, namespace)
        if not ids:
            return
        with self._write_lock:
            self._ensure_open()  # under the lock: a first use opens here, a close() before it is seen
            ticket = self._journal_begin((namespace, i) for i in ids)
            self.vectors.delete(namespace, ids)
            self.lexical.delete(namespace, ids)
            if self.graph is not None:
                self.graph.unlink(namespace, ids)
            self._journal_end(ticket)
            self._bump(namespace)

    def relate(self, src: str, rel: str, dst: str, *, namespace: str, kind: str = "semantic",
               confidence: float = 1.0, valid_from: datetime | None = None,
               valid_to: datetime | None = None) -> None:
        """An explicit entity relation, e.g. relate("Tom", "reports_to", "Sarah", kind="structural")."""
        check_namespace(namespace)
        relation = Relation(src, rel, dst, kind, confidence, valid_from, valid_to)
        check_relation(relation)  # what every graph backend checks, before the graph is even needed
        if self.graph is None:
            raise ConfigurationError("this store has no graph backend")
        with self._write_lock:
            self._ensure_open()  # under the lock: a first use opens here, a close() before it is seen
            self.graph.relate(namespace, relation)
            self._bump(namespace)

    def end_session(self, namespace: str, at: datetime | None = None) -> None:
        """Record that a conversation ended, for "since we last talked"."""
        check_namespace(namespace)
        at = require_storable(at, "at") if at is not None else utcnow()
        with self._write_lock:
            self._ensure_open()  # under the lock: a first use opens here, a close() before it is seen
            # merged into what the backend holds now, not the copy read at open(): another process
            # on the same Qdrant server may have ended its own sessions since (they were lost)
            with self._live():
                stored = self.vectors.read_meta() or {}
            self._meta["sessions"] = merged_sessions(stored.get("sessions"), self._meta.get("sessions"),
                                                     {namespace: at.timestamp()})
            self._meta["upgraded"] = merged_upgrades(stored.get("upgraded"), self._meta.get("upgraded"))
            self.vectors.write_meta(self._meta)

    def sweep_expired(self) -> int:
        """Delete every memory whose `expires_at` has passed (reads stopped seeing it then); returns
        how many. The engine finds them (payload index on `expires_at`), namespace by namespace."""
        now = time.time()
        gone = 0
        with self._live():
            every = self.vectors.namespaces()  # the expired-only ones too
        for namespace in every:
            with self._live():
                flt = VectorFilter(namespace, expired_at=now)
                if isinstance(self.vectors, PayloadLister):
                    ids = [str(p["memory_id"]) for p in self.vectors.scroll_where(flt)]
                else:
                    ids = [str(p["memory_id"]) for p in self.vectors.scroll(namespace) if _expired(p, now)]
            if ids:
                self.delete(namespace, ids)
                gone += len(ids)
        return gone

    def set_expiry(self, namespace: str, memory_ids: Sequence[str], expires_at: datetime | None) -> None:
        """Move these memories' expiry (a LangGraph TTL refreshed on read); vectors and indexes untouched.
        Ids no longer stored (deleted meanwhile) are skipped."""
        check_namespace(namespace)
        ids = keyed_ids(memory_ids, namespace)
        if expires_at is not None:
            require_storable(expires_at, "expires_at", InvalidMemory)
        if not ids:
            return
        if not isinstance(self.vectors, PayloadWriter):
            raise BackendError(f"the vector backend {type(self.vectors).__name__} cannot update payloads")
        with self._write_lock, self._live():  # under the lock no delete can race; a gone memory is skipped
            held = [str(p["memory_id"]) for p in self.vectors.get(namespace, ids)]
            if held:
                self.vectors.set_payload(namespace, held, {EXPIRES_AT: expires_at.timestamp() if expires_at else None})

    def _journal_begin(self, items: Iterable[tuple[str, str]]) -> int | None:
        """Journal a write before its first index is touched (`journal`); None without a journal."""
        return self.journal.begin(items) if self.journal is not None else None

    def _journal_end(self, ticket: int | None) -> None:
        if self.journal is not None and ticket is not None:
            self.journal.end(ticket)

    def _bump(self, namespace: str) -> None:
        self._versions[namespace] = self._versions.get(namespace, 0) + 1

    # ------------------------------------------------------------------ reads
    def last_session_end(self, namespace: str) -> datetime | None:
        check_namespace(namespace)
        self._ensure_open()
        ts = (self._meta.get("sessions") or {}).get(namespace)
        return stored_time(ts) if ts is not None else None

    def get_many(self, namespace: str, memory_ids: str | Sequence[str]) -> list[Memory]:
        """Memories by id, in the order asked; ids not in this namespace are left out."""
        check_namespace(namespace)
        ids = keyed_ids(memory_ids, namespace)
        with self._live():
            now = time.time()
            payloads = [p for p in self.vectors.get(namespace, ids) if not _expired(p, now)]
        for p in payloads:
            remember_wording(p)  # what the stage after fusion compares of it (`backends.wording`)
        return [from_payload(p) for p in payloads]

    def memories(self, namespace: str, *, session_id: str | None = None, limit: int | None = None,
                 offset: int = 0) -> list[Memory]:
        """The memories of `namespace` (or of one conversation in it), newest first; `limit` and
        `offset` take one page of that order (`listing`)."""
        check_namespace(namespace)
        with self._live():
            return list_memories(self.vectors, namespace, session_id, limit, offset, alive_at=time.time())

    def memories_with_slots(self, namespace: str, keys: Sequence[str], limit: int) -> list[Memory]:
        """The newest `limit` memories of `namespace` that state one of the slots `keys` ("user home"),
        newest first: the versions of a fact a question asks (`ensemble.after_fusion`). Read by the
        payload index when the backend scans in order, else from a filtered listing."""
        check_namespace(namespace)
        keys = tuple(k for k in keys if isinstance(k, str) and k)
        if not keys or limit <= 0:
            return []
        flt = VectorFilter(namespace, slot_keys=keys)
        with self._live():
            if isinstance(self.vectors, OrderedScan):
                payloads = self.vectors.scan_ordered(_ranked(flt, time.time()), "created_at", limit, True)
            else:
                now = time.time()
                found = [p for p in self.vectors.scroll(namespace) if set(p.get("slot_keys") or ()) & set(keys)
                         and not _expired(p, now) and p.get(UNRANKED[0]) != UNRANKED[1]]
                payloads = sorted(found, key=lambda p: -float(p.get("created_at") or 0.0))[:limit]
        return [from_payload(p) for p in payloads]

    def stored_vectors(self, namespace: str, memory_ids: Sequence[str]) -> dict[str, np.ndarray] | None:
        """The vectors stored for these memories (the ones the dense arm searched), by id; None when
        the vector backend cannot hand them out (`VectorReader`). The ensemble compares them to
        collapse near-duplicates (`ensemble.duplicates`)."""
        check_namespace(namespace)
        if not isinstance(self.vectors, VectorReader):
            return None
        ids = keyed_ids(memory_ids, namespace)
        with self._live():
            found = self.vectors.vectors(namespace, ids)
        if not found:
            return {}
        matrix = np.asarray(list(found.values()), dtype=np.float32)  # one conversion, not one per memory
        return dict(zip(found, matrix, strict=True))

    def count(self, namespace: str) -> int:
        check_namespace(namespace)
        with self._live():
            return self.vectors.count(namespace)

    def type_counts(self, namespace: str) -> Mapping[MemoryType | None, int] | None:
        """Memories per type in `namespace`, from the lexical index (no backend round trip); None
        when the index cannot tell."""
        check_namespace(namespace)
        self._ensure_open()
        return self.lexical.type_counts(namespace) if isinstance(self.lexical, TypeCounter) else None

    def type_share(self, namespace: str, types: Iterable[MemoryType]) -> float | None:
        """The share of `namespace` a filter on `types` keeps; None when the index cannot tell or the
        namespace is empty."""
        return filter_share(self.type_counts(namespace), types)

    def namespaces(self) -> list[str]:
        """The namespaces holding a memory; one whose memories have all expired is not listed when
        the backend can tell (`LiveNamespaces`, both Qdrant backends)."""
        with self._live():
            if isinstance(self.vectors, LiveNamespaces):
                return self.vectors.live_namespaces(time.time())
            return self.vectors.namespaces()

    def ready_to_embed(self) -> bool:
        """Load the embedding model now if it loads on first use and is not loaded yet; True when it
        loaded now. The ensemble calls it before the arms' timeouts start: on a store whose first
        read is a query (nothing added since it was opened), the load would otherwise run inside the
        dense arm's 2 s and, on a slow or busy host, fail the first query as a timeout."""
        if isinstance(self.embedder, LoadsLazily) and not self.embedder.loaded:
            self.embedder.load()
            return True
        return False

    def embed_query(self, text: str | Sequence[str]) -> tuple[float, ...]:
        """The query vector; for several texts (a HyDE answer and the question), the normalized mean
        of their vectors, as LlamaIndex's vector retrievers aggregate `custom_embedding_strs`."""
        if isinstance(text, str):
            return tuple(self.embedder.embed_query(text).tolist())
        mean = np.mean([self.embedder.embed_query(t) for t in text], axis=0)
        norm = float(np.linalg.norm(mean))
        return tuple((mean / norm if norm > 0 else mean).tolist())

    def vector_search(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPayload]]:
        """The engine's batched search (the vector arms' `VectorSource`)."""
        with self._live():
            for ns in {q.filter.namespace for q in queries}:
                self._upgrades.ensure(self, ns)  # older memories up to date, once (`store.upgrade`)
            now = time.time()  # expired and unindexed memories are left out by the engine
            return self.vectors.query_batch([dataclasses.replace(q, filter=_ranked(q.filter, now)) for q in queries])

    def scan_ordered(self, flt: VectorFilter, key: str, limit: int,
                     descending: bool = True) -> list[Mapping[str, Any]]:
        """Payloads `flt` keeps in `key` order, no vector (`retrievers.scan`, a query that is only a
        time); a vector backend that is not an `OrderedScan` cannot, and says so."""
        if not isinstance(self.vectors, OrderedScan):
            raise BackendError(f"the vector backend {type(self.vectors).__name__} cannot scan in payload order")
        with self._live():
            return self.vectors.scan_ordered(_ranked(flt, time.time()), key, limit, descending)

    def lexical_search(self, namespace: str, text: str, k: int,
                       types: frozenset[MemoryType] | None = None) -> list[tuple[str, float]]:
        """BM25 over `namespace` (the lexical arm's `LexicalSource`)."""
        with self._live():
            self._upgrades.ensure(self, namespace)
            return self.lexical.search(namespace, text, k, types)

    def upgrade(self) -> dict[str, int]:
        """Bring every memory an older fused-memory wrote up to date (its sparse lexical vector, its
        `answers` tag) and record that in the meta, so no process checks again (`store.upgrade`).
        Returns how many memories got what; a second call does nothing."""
        self._ensure_open()
        return self._upgrades.upgrade_all(self)

    def traverse(self, namespace: str, seeds: Sequence[tuple[str, float]], max_hops: int, limit: int,
                 now: datetime, *, multi_hop_factor: float = 1.0, types: frozenset[MemoryType] | None = None,
                 asked: Sequence[tuple[str, str, bool]] = ()) -> list[Hit]:
        """The graph walk (the graph arm's `GraphSearch`): `GraphStore.traverse` once the store is open,
        so a closed store's graph is refused, never reopened by its arm."""
        if self.graph is None:
            raise ConfigurationError("this store has no graph backend")
        self._ensure_open()
        self._upgrades.ensure(self, namespace)  # a graph brought into the engine on first use (`upgrade`)
        return self.graph.traverse(namespace, seeds, max_hops, limit, now, multi_hop_factor=multi_hop_factor,
                                   types=types, asked=asked)

    def entity_matcher(self, namespace: str) -> EntityMatcher:
        """The query-time phrase matcher over this namespace's entities, rebuilt after this store's
        writes and, on a graph other processes share, after theirs (`versions.SharedVersions`)."""
        self._ensure_open()
        self._upgrades.ensure(self, namespace)
        version = (self._versions.get(namespace, 0), self._shared_versions(self.graph, namespace))
        cached = self._matchers.get(namespace)
        if cached is not None and cached[0] == version:
            return cached[1]
        # an entity kept only for an alias the user asked for (`backends.graph.gc`) is no reason to plan the graph arm
        known = self.graph.entities(namespace) if self.graph is not None else []
        matcher = EntityMatcher([e for e in known if e.mentions or e.relations])
        self._matchers[namespace] = (version, matcher)
        return matcher

    def retriever(self, name: str) -> Retriever:
        """One arm over this store: "dense", "lexical", "graph", "temporal" or "type"."""
        from ..retrievers import make_retriever
        return make_retriever(self, name)
