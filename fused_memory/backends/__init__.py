"""Storage behind a `MemoryStore`: one family per kind of index, each behind a small protocol.

* `vector/`: Qdrant, in process (`edge`, qdrant-edge) or a server / cluster (`server`, qdrant-client);
  vectors and the payloads that are the source of truth; the dense, temporal and type arms search it.
* `lexical/`: BM25 for the lexical arm: in process, exact to rank-bm25's scores (`bm25`), or in the
  vector engine on sparse vectors shared by every process (`engine`, `sparse`).
* `graph/`: the entity graph, embedded (`embedded`, SQLite) or over Bolt (`cypher`, Neo4j / FalkorDB).
* `protocols`: what the store and the arms need of each family, and the optional capabilities a
  backend may declare; `codec`: a `Memory` as a payload and back.

Backends import only the bottom layer (types, errors, text, validation), never the store, the
query side or each other's families. This package exports the protocols (to write a backend of
your own); the family packages import nothing heavy, so picking a backend loads only its own
engine (`store.factory`).
"""

from __future__ import annotations

from .protocols import (
                        FacetCounter,
                        GraphStore,
                        IndexState,
                        LexicalDoc,
                        LexicalIndex,
                        LiveNamespaces,
                        OrderedScan,
                        PayloadLister,
                        PayloadWriter,
                        PersistedIndex,
                        RebuiltOnOpen,
                        Reconcilable,
                        ScoredPayload,
                        SparseAnswer,
                        SparseQuery,
                        SparseSearch,
                        SparseVector,
                        TypeCounter,
                        VectorBackend,
                        VectorFilter,
                        VectorQuery,
                        VectorReader,
                        VectorRecord,
)

__all__ = ["VectorBackend", "LexicalIndex", "GraphStore", "PayloadWriter", "PayloadLister", "LiveNamespaces",
           "VectorReader", "TypeCounter", "RebuiltOnOpen", "Reconcilable", "OrderedScan", "VectorFilter", "VectorQuery",
           "VectorRecord", "ScoredPayload", "LexicalDoc", "SparseSearch", "FacetCounter", "SparseVector",
           "SparseQuery", "SparseAnswer", "PersistedIndex", "IndexState"]
