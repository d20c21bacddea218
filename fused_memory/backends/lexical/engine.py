"""The lexical index kept in the vector engine: BM25 on its sparse vectors (`sparse`), for every
process that shares the collection.

Nothing lives here but a small cache: each memory's sparse vector is written by the store in the
same upsert as its dense vector (`VectorRecord.sparse`), deleted with it, and searched with the
engine's IDF over the query's namespace. So a write through one worker is found by the next query
of every other worker, and `open` has nothing to rebuild (this index is not `RebuiltOnOpen`).

`type_counts` (what the planner reads on every query, `TypeCounter`) comes from the engine too: a
facet on `type` and a count, cached per namespace for `ttl_s` seconds and dropped by this
process's own writes to the namespace. Other processes' writes show after at most `ttl_s`; the
counts only decide whether a type filter is selective enough to be worth a search
(`query.store_rules`), so a second's lag changes no result that matters. `ttl_s=None` keeps them
until this process writes (an engine no other process can write: qdrant-edge).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import ConfigurationError
from ...types import MemoryType, parse_memory_type
from ..protocols import FacetCounter, LexicalDoc, SparseQuery, SparseSearch, SparseVector, VectorBackend, VectorFilter
from .sparse import SparseBM25

__all__ = ["EngineLexicalIndex", "DEFAULT_STATS_TTL_S"]

#: Seconds another process's writes may take to show in `type_counts` on a shared engine.
DEFAULT_STATS_TTL_S = 1.0


class EngineLexicalIndex:
    """`LexicalIndex` (and `TypeCounter`) over a vector backend's sparse vectors.

    `vectors` must be a `SparseSearch` and `FacetCounter` backend opened with its sparse vector;
    `encoder` the BM25 weights the store writes with (`encode` is what the store calls per memory)."""

    def __init__(self, vectors: VectorBackend, encoder: SparseBM25 | None = None, *,
                 ttl_s: float | None = DEFAULT_STATS_TTL_S) -> None:
        if not isinstance(vectors, SparseSearch) or not isinstance(vectors, FacetCounter):
            raise ConfigurationError(f"{type(vectors).__name__} cannot keep the lexical index in the engine "
                                     "(no sparse vector search); use lexical=\"bm25\"")
        if ttl_s is not None and not ttl_s >= 0:
            raise ConfigurationError(f"ttl_s must be a number >= 0 or None, got {ttl_s!r}")
        self.vectors = vectors
        self.encoder = encoder or SparseBM25()
        self.ttl_s = ttl_s
        self._stats: dict[str, tuple[float, dict[MemoryType | None, int]]] = {}
        self._lock = threading.Lock()

    def encode(self, doc: LexicalDoc) -> SparseVector:
        """The sparse vector the store writes with the memory (one write, both vectors)."""
        return self.encoder.encode(doc)

    # ------------------------------------------------------------ writes: carried by the vector write
    def add(self, docs: Sequence[LexicalDoc]) -> None:
        """Nothing to write (the store's upsert carried the sparse vectors); the namespaces'
        cached type counts are dropped."""
        self._forget({d.namespace for d in docs})

    def delete(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Nothing to delete (the vector delete took the sparse vectors); the counts are dropped."""
        self._forget({namespace})

    def _forget(self, namespaces: set[str]) -> None:
        with self._lock:
            for ns in namespaces:
                self._stats.pop(ns, None)

    # ------------------------------------------------------------ reads
    def search(self, namespace: str, text: str, k: int,
               types: frozenset[MemoryType] | None = None) -> list[tuple[str, float]]:
        """Top `k` (memory id, score in [0, 1]) for `text`, best first, ties by memory id, as
        `BM25Index.search` answers (empty text, k <= 0, an empty namespace: [])."""
        if not isinstance(k, int) or k <= 0:
            return []
        query = self.encoder.query(text)
        if query is None:
            return []
        allowed = frozenset(parse_memory_type(t) for t in types) if types else None
        answer = self.vectors.sparse_search([SparseQuery(query, VectorFilter(namespace, allowed), k)])[0]
        if not answer.hits:
            return []
        n_docs = self._n_docs(namespace) if any(i is None for i in answer.idf) else 0
        ideal = self.encoder.ideal(query, answer.idf, n_docs)
        return [(mid, self.encoder.normalized(raw, ideal)) for mid, raw in answer.hits[:k]]

    def _n_docs(self, namespace: str) -> int:
        """Memories in the namespace, for the IDF of a query term none of them holds."""
        return sum(self.type_counts(namespace).values())

    def count(self, namespace: str) -> int:
        return self.vectors.count(namespace)

    def type_counts(self, namespace: str) -> Mapping[MemoryType | None, int]:
        """Memories per type (None: untyped) in the namespace, cached (see the module docstring)."""
        now = time.monotonic()
        with self._lock:
            cached = self._stats.get(namespace)
        if cached is not None and (self.ttl_s is None or now - cached[0] < self.ttl_s):
            return cached[1]
        counts = self._read_counts(namespace)
        with self._lock:
            self._stats[namespace] = (now, counts)
        return counts

    def _read_counts(self, namespace: str) -> dict[MemoryType | None, int]:
        by_value = self.vectors.facet(namespace, "type")  # a FacetCounter, checked
        counts: dict[MemoryType | None, int] = {}
        for value, n in by_value.items():
            kind = _memory_type(value)
            counts[kind] = counts.get(kind, 0) + n
        untyped = self.vectors.count(namespace) - sum(counts.values())
        if untyped > 0:
            counts[None] = untyped
        return counts

    def __repr__(self) -> str:
        return f"EngineLexicalIndex({self.vectors!r})"


def _memory_type(value: Any) -> MemoryType | None:
    try:
        return parse_memory_type(value)
    except Exception:  # noqa: BLE001 - a type this version does not know counts as untyped
        return None
