"""Small protocols for the three kinds of backend. The store and the arms depend only on these,
so an embedded engine and a server are interchangeable and pass one contract suite each."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..types import Hit, MemoryType, TimeWindow

__all__ = [
    "VectorFilter", "VectorQuery", "VectorRecord", "ScoredPayload", "VectorBackend",
    "LexicalDoc", "LexicalIndex",
    "EntityMention", "Entity", "Relation", "GraphStore",
]


# ---------------------------------------------------------------- vectors + payload (Qdrant)
@dataclass(frozen=True)
class VectorFilter:
    """Backend-neutral payload filter. `namespace` is mandatory: no query can cross tenants."""

    namespace: str
    types: frozenset[MemoryType] | None = None
    event_window: TimeWindow | None = None
    memory_ids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class VectorQuery:
    """One search: nearest neighbours of `vector` under `filter`, at most `limit` results."""

    vector: tuple[float, ...]
    filter: VectorFilter
    limit: int


@dataclass(frozen=True)
class VectorRecord:
    """What the store writes per memory: its vector and its payload (the source of truth)."""

    memory_id: str
    namespace: str
    vector: tuple[float, ...]
    payload: Mapping[str, Any]


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


# ---------------------------------------------------------------- lexical (BM25)
@dataclass(frozen=True)
class LexicalDoc:
    memory_id: str
    namespace: str
    text: str
    predicate: str | None
    type: MemoryType | None


@runtime_checkable
class LexicalIndex(Protocol):
    """BM25 over one namespace at a time; scores normalized to [0, 1] per query."""

    def add(self, docs: Sequence[LexicalDoc]) -> None: ...
    def delete(self, namespace: str, memory_ids: Sequence[str]) -> None: ...
    def search(self, namespace: str, text: str, k: int,
               types: frozenset[MemoryType] | None = None) -> list[tuple[str, float]]: ...
    def count(self, namespace: str) -> int: ...


# ---------------------------------------------------------------- entity graph
@dataclass(frozen=True)
class EntityMention:
    """An entity named in a memory, as ingest found it (`kind` is spaCy's label, e.g. PERSON)."""

    name: str
    kind: str | None = None


@dataclass(frozen=True)
class Entity:
    id: str
    name: str
    aliases: tuple[str, ...] = ()
    kind: str | None = None
    mentions: int = 0


@dataclass(frozen=True)
class Relation:
    src: str
    rel: str
    dst: str
    kind: str = "semantic"  # structural | semantic | lifecycle
    confidence: float = 1.0
    valid_from: datetime | None = None
    valid_to: datetime | None = None


@runtime_checkable
class GraphStore(Protocol):
    """Entities, MENTIONS edges and entity relations, scoped by namespace in every call."""

    name: str

    def open(self) -> None: ...
    def link(self, namespace: str,
             items: Sequence[tuple[str, Sequence[EntityMention], MemoryType | None]]) -> None:
        """Batch: for each (memory_id, mentions, type) write MENTIONS edges and co-mention edges."""
        ...
    def unlink(self, namespace: str, memory_ids: Sequence[str]) -> None: ...
    def relate(self, namespace: str, relation: Relation) -> None: ...
    def entities(self, namespace: str) -> list[Entity]: ...
    def traverse(self, namespace: str, seeds: Sequence[tuple[str, float]], max_hops: int,
                 limit: int, now: datetime) -> list[Hit]:
        """Memories reachable from the seed entities (entity id, ref confidence), best first."""
        ...
    def close(self) -> None: ...
