"""Small protocols for the three kinds of backend. The store and the arms depend only on these,
so an embedded engine and a server are interchangeable and pass one contract suite each.

Beside the three required protocols, a backend may declare optional capabilities, each a small
runtime-checkable protocol the store tests with `isinstance` (never by probing attributes):
`PayloadWriter` (merge payload keys without re-writing vectors), `PayloadLister` (the payloads a
filter matches, filtered by the engine), `OrderedScan` (payloads in the order of a payload field, no
vector), `VectorReader` (stored vectors by id, for the near-duplicate check after fusion),
`SparseSearch` (BM25-style search on the engine's sparse vectors, IDF counted by the engine per
namespace), `FacetCounter` (values of a payload field counted in a namespace), `TypeCounter`
(memories per type, read by the planner without a round trip), `RebuiltOnOpen` (a lexical index
that lives in the process, emptied and refilled from the payloads on open), `PersistedIndex` (a
lexical index kept in files beside the vectors, which opens without reading them) and
`Reconcilable` (a graph that can be made to agree with the payloads on open)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..results import Hit
from ..types import Entity, EntityMention, MemoryType, Relation, TimeWindow

__all__ = [
    "VectorFilter", "VectorQuery", "VectorRecord", "ScoredPayload", "VectorBackend", "PayloadWriter", "PayloadLister",
    "LiveNamespaces",
    "VectorReader", "SparseVector", "SparseQuery", "SparseAnswer", "SparseSearch", "FacetCounter", "OrderedScan",
    "LexicalDoc", "LexicalIndex", "TypeCounter", "RebuiltOnOpen", "PersistedIndex", "IndexState", "Reconcilable",
    "GraphStore", "VersionPolled",
]


# ---------------------------------------------------------------- vectors + payload (Qdrant)
@dataclass(frozen=True)
class VectorFilter:
    """Backend-neutral payload filter. `namespace` is mandatory: no query can cross tenants."""

    namespace: str
    types: frozenset[MemoryType] | None = None
    event_window: TimeWindow | None = None
    #: Only memories with a time of the kinds `times` names inside this window: "event" (`event_at`),
    #: "stated" (a time the text states, `Memory.stated_times`: one that overlaps it), "said"
    #: (`created_at`). A memory matches by any of them.
    time_window: TimeWindow | None = None
    times: frozenset[str] = frozenset({"event", "stated", "said"})
    memory_ids: tuple[str, ...] | None = None
    #: Only memories tagged with this answer type (payload `answers`, e.g. "time").
    answers: str | None = None
    #: Only memories mentioning at least one of these entity names, as the payload's `entities` holds
    #: them (each mention as written), compared exactly.
    entities: tuple[str, ...] | None = None
    #: Only memories of this conversation (payload `session_id`), compared exactly.
    session_id: str | None = None
    #: Only memories that state one of these slots (payload `slot_keys`: "user home"), compared exactly.
    slot_keys: tuple[str, ...] | None = None
    #: Only memories not expired at this time (epoch seconds): payload `expires_at` absent or later.
    alive_at: float | None = None
    #: Only memories that take part in ranking (no payload `unindexed`): what every arm searches.
    indexed_only: bool = False
    #: Only memories expired at this time (epoch seconds): what a sweep deletes.
    expired_at: float | None = None


@dataclass(frozen=True)
class VectorQuery:
    """One search: nearest neighbours of `vector` under `filter`, at most `limit` results."""

    vector: tuple[float, ...]
    filter: VectorFilter
    limit: int


@dataclass(frozen=True)
class SparseVector:
    """Term ids (ascending, distinct) and their weights: a memory's BM25 term weights, or a query's
    terms (`backends.lexical.sparse`)."""

    indices: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True)
class VectorRecord:
    """What the store writes per memory: its vector and its payload (the source of truth), and its
    sparse lexical vector when the collection keeps one (`SparseSearch`): the same write carries
    both, so the lexical index can never lag the vectors."""

    memory_id: str
    namespace: str
    vector: tuple[float, ...]
    payload: Mapping[str, Any]
    sparse: SparseVector | None = None


@dataclass(frozen=True)
class ScoredPayload:
    payload: Mapping[str, Any]
    score: float  # cosine similarity in [-1, 1]


@runtime_checkable
class VectorBackend(Protocol):
    """Qdrant-shaped storage. Constructors do no I/O; `open` creates or opens the collection."""

    name: str

    def open(self, dim: int) -> None: ...
    def upsert(self, records: Sequence[VectorRecord]) -> None: ...
    def delete(self, namespace: str, memory_ids: Sequence[str]) -> None: ...
    def get(self, namespace: str, memory_ids: Sequence[str]) -> list[Mapping[str, Any]]: ...
    def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPayload]]: ...
    def scroll(self, namespace: str | None = None) -> Iterator[Mapping[str, Any]]: ...
    def count(self, namespace: str) -> int: ...
    def namespaces(self) -> list[str]: ...
    def read_meta(self) -> dict[str, Any] | None: ...
    def write_meta(self, meta: Mapping[str, Any]) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


@runtime_checkable
class PayloadWriter(Protocol):
    """Optional beside `VectorBackend`: merge keys into stored payloads without touching vectors.
    `open` uses it to add fields a newer version derives (e.g. `answers`) to memories written
    before; a backend without it keeps serving them as before (see `recovery.backfill`)."""

    def set_payload(self, namespace: str, memory_ids: Sequence[str], payload: Mapping[str, Any]) -> None: ...


@runtime_checkable
class LiveNamespaces(Protocol):
    """Optional beside `VectorBackend`: the namespaces holding at least one memory not expired at
    `alive_at` (epoch seconds), sorted, counted by the engine. A namespace whose memories have all
    expired is gone for `MemoryStore.namespaces` at once; a backend without it lists every namespace
    until the sweep (`MemoryStore.sweep_expired`) deletes what expired."""

    def live_namespaces(self, alive_at: float) -> list[str]: ...


@runtime_checkable
class PayloadLister(Protocol):
    """Optional beside `VectorBackend`: every payload a filter matches (all of `VectorFilter`'s
    fields apply, the namespace always), filtered by the engine, in its scroll order. The store
    lists a namespace, or one conversation of it, through this (`MemoryStore.memories`); a backend
    without it is read with `scroll(namespace)` and filtered in Python, with the same result."""

    def scroll_where(self, flt: VectorFilter) -> Iterator[Mapping[str, Any]]: ...


@runtime_checkable
class VectorReader(Protocol):
    """Optional beside `VectorBackend`: the stored vectors of some memories of one namespace, by
    memory id (ids not stored are left out). The ensemble compares them to find near-duplicates
    in a result (`ensemble.duplicates`); a backend without it gets equal-text duplicates only."""

    def vectors(self, namespace: str, memory_ids: Sequence[str]) -> dict[str, list[float]]: ...


@dataclass(frozen=True)
class SparseQuery:
    """One lexical search in the engine: the memories under `filter` scored against `vector` (the
    query's term ids and weights), IDF counted over `filter.namespace` only, at most `limit`."""

    vector: SparseVector
    filter: VectorFilter
    limit: int


@dataclass(frozen=True)
class SparseAnswer:
    """A `SparseQuery`'s result: (memory id, raw engine score) best first, and the engine's IDF of
    each query term (parallel to `vector.indices`; None for a term no memory of the namespace
    holds), which the score's normalization needs (`backends.lexical.sparse`)."""

    hits: tuple[tuple[str, float], ...]
    idf: tuple[float | None, ...]


@runtime_checkable
class SparseSearch(Protocol):
    """Optional beside `VectorBackend`: a named sparse vector beside the dense one, searched with
    the engine's IDF counted per namespace. `sparse_enabled` (known once open) says whether the
    collection holds it; the store then writes `VectorRecord.sparse` with every memory.
    `missing_sparse` / `set_sparse` fill it in for memories written before it existed."""

    @property
    def sparse_enabled(self) -> bool: ...
    def sparse_search(self, queries: Sequence[SparseQuery]) -> list[SparseAnswer]: ...
    def missing_sparse(self, namespace: str) -> Iterator[Mapping[str, Any]]: ...
    def set_sparse(self, namespace: str, vectors: Sequence[tuple[str, SparseVector]]) -> None: ...


@runtime_checkable
class FacetCounter(Protocol):
    """Optional beside `VectorBackend`: how many memories of a namespace hold each value of a
    keyword payload field (memories without the field are not counted)."""

    def facet(self, namespace: str, key: str) -> dict[str, int]: ...


@runtime_checkable
class OrderedScan(Protocol):
    """Optional beside `VectorBackend`: the payloads `flt` keeps, ordered by the float payload field
    `key` (one with a range index: `event_at`), at most `limit`, with no query vector. The temporal
    arm reads a query that is only a time ("what happened yesterday?") this way: the window's
    memories newest first, without embedding the query (`retrievers.scan`)."""

    def scan_ordered(self, flt: VectorFilter, key: str, limit: int,
                     descending: bool = True) -> list[Mapping[str, Any]]: ...


# ---------------------------------------------------------------- lexical (BM25)
@dataclass(frozen=True)
class LexicalDoc:
    memory_id: str
    namespace: str
    text: str
    predicate: str | None
    type: MemoryType | None
    context: str | None = None  # indexed at the index's context weight (see Memory.context)


@runtime_checkable
class LexicalIndex(Protocol):
    """BM25 over one namespace at a time; scores normalized to [0, 1] per query."""

    def add(self, docs: Sequence[LexicalDoc]) -> None: ...
    def delete(self, namespace: str, memory_ids: Sequence[str]) -> None: ...
    def search(self, namespace: str, text: str, k: int,
               types: frozenset[MemoryType] | None = None) -> list[tuple[str, float]]: ...
    def count(self, namespace: str) -> int: ...


@runtime_checkable
class TypeCounter(Protocol):
    """Optional beside `LexicalIndex`: memories per type in a namespace, without a backend round trip.
    The planner skips a type filter that keeps most of the namespace (`query.store_rules`); an index
    without it leaves that rule unknowing, never wrong."""

    def type_counts(self, namespace: str) -> Mapping[MemoryType | None, int]: ...


@runtime_checkable
class RebuiltOnOpen(Protocol):
    """Optional beside `LexicalIndex`: the index lives in the process, so `open` empties it and adds
    every stored memory again from the vector payloads (`store.recovery.rebuild`). An index kept in
    the engine itself has nothing to rebuild."""

    def clear(self, namespace: str | None = None) -> None: ...


@dataclass(frozen=True)
class IndexState:
    """What a `PersistedIndex` found on `load`: `whole` says why none of its files can be used
    (missing, written by another version), None when they can; `namespaces` maps each namespace
    whose file cannot be used (missing, truncated) to why. Both are rebuilt from the payloads."""

    whole: str | None = None
    namespaces: Mapping[str, str] = dataclasses.field(default_factory=dict)


@runtime_checkable
class PersistedIndex(Protocol):
    """Optional beside `LexicalIndex`: the index keeps itself in files beside the vectors, written
    with every write as durably as the vectors' own, so `open` reads none of it and a namespace is
    read on its first use (`store.recovery`). `load` opens the files and says what cannot be used;
    `rebuild` refills the whole index (`namespaces` None) or those namespaces from the payloads'
    documents; `set_refill` hands it the way to read one namespace's documents again, for a file
    found damaged only when its namespace is first used; `close` releases the files."""

    def load(self) -> IndexState: ...
    def rebuild(self, docs: Iterable[LexicalDoc], namespaces: Collection[str] | None = None) -> None: ...
    def set_refill(self, refill: Callable[[str], Iterable[LexicalDoc]] | None) -> None: ...
    def close(self) -> None: ...


# ---------------------------------------------------------------- entity graph
@runtime_checkable
class GraphStore(Protocol):
    """Entities, MENTIONS edges and entity relations, scoped by namespace in every call.
    Constructors do no I/O; `open` connects or loads. Entity arguments are names or ids (both are
    normalized). `remote` is True when reads go over the network and other processes may write the
    same graph: the ensemble then bounds its planning-time entity lookup by the graph arm's timeout,
    and the store re-reads `entity_version` to see other writers' entities."""

    name: str
    remote: bool

    def open(self) -> None: ...
    def link(self, namespace: str,
             items: Sequence[tuple[str, Sequence[EntityMention], MemoryType | None]]) -> None:
        """Batch: for each (memory_id, mentions, type) write MENTIONS edges and co-mention edges.
        Upsert: re-linking a memory replaces its mentions (names left unmentioned go as in `unlink`)."""
        ...
    def unlink(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Forget memories: their MENTIONS edges go, co-mention counts are decremented, and the
        entities no memory mentions any more are deleted unless a relation or an `add_alias` keeps
        them (`graph.gc`: a deleted memory's names must not stay in storage)."""
        ...
    def relate(self, namespace: str, relation: Relation) -> None: ...
    def add_alias(self, namespace: str, entity: str, alias: str) -> None:
        """Make `alias` resolve to `entity` (both created when missing). Both names are user facts:
        their group stays when no memory mentions it."""
        ...
    def entities(self, namespace: str) -> list[Entity]: ...
    def resolve(self, namespace: str, name: str) -> list[Entity]:
        """Canonical entities a name may mean, best first: its own entity, then the full names it
        is the first or last token of (ambiguous "Sarah" -> Sarah Chen, Sarah Park)."""
        ...
    def mentions_of(self, namespace: str, memory_id: str) -> list[str]:
        """Ids of the entities a memory is linked to (sorted)."""
        ...
    def entity_version(self, namespace: str) -> int:
        """Changes whenever the namespace's entity list (names, aliases, kinds) changes."""
        ...
    def stats(self, namespace: str | None = None) -> Mapping[str, int]:
        """Counts: entities, memories, mentions, relations, co_mentions (all namespaces if None)."""
        ...
    def traverse(self, namespace: str, seeds: Sequence[tuple[str, float]], max_hops: int,
                 limit: int, now: datetime, *, multi_hop_factor: float = 1.0,
                 types: frozenset[MemoryType] | None = None,
                 asked: Sequence[tuple[str, str, bool]] = ()) -> list[Hit]:
        """Memories reachable from the seed entities (entity id, ref confidence), best first.
        `multi_hop_factor` scales hits found at hop >= 1; `types` keeps only those memory types;
        `asked` lists (entity id, relation, forward) the query asks: the walk re-roots at the
        other end of those edges (`graph.traversal`, "Asked relations")."""
        ...
    def close(self) -> None: ...


@runtime_checkable
class VersionPolled(Protocol):
    """Optional beside a remote `GraphStore`: how many seconds the store may reuse an
    `entity_version` it read (`store.versions`; 1 s for a graph that does not say). The engine
    graph says 0: its version is one point read by id, and another worker's new name must be
    matched on the next query."""

    version_ttl_s: float


@runtime_checkable
class Reconcilable(Protocol):
    """Optional beside `GraphStore`: made to agree with the vector payloads on open (the embedded
    graph): memories missing or linked differently are re-linked, memories the payloads no longer
    hold are unlinked. `want` maps namespace -> memory id -> (mentions, type); `only` (namespace ->
    memory ids), when given, limits the comparison to those memories (the writes a journal says
    were under way). Returns (re-linked, unlinked). `persistent` is False for a graph kept only in
    memory, which is rebuilt on every open (so a repair there is not news); `created` says the last
    open made the graph's file (a store whose graph file was missing: every memory is compared)."""

    persistent: bool
    created: bool

    def reconcile(self, want: Mapping[str, Mapping[str, tuple[Sequence[EntityMention], MemoryType | None]]],
                  only: Mapping[str, Collection[str]] | None = None) -> tuple[int, int]: ...
