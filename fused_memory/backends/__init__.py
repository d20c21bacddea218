"""Storage behind a `MemoryStore`: one family per kind of index, each behind a small protocol.

* `vector/`: Qdrant, in process (`edge`, qdrant-edge) or a server / cluster (`server`, qdrant-client);
  vectors and the payloads that are the source of truth; the dense, temporal and type arms search it.
* `lexical/`: BM25 in process, exact to rank-bm25's scores, for the lexical arm.
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
                        GraphStore,
                        LexicalDoc,
                        LexicalIndex,
                        OrderedScan,
                        PayloadWriter,
                        RebuiltOnOpen,
                        Reconcilable,
                        ScoredPayload,
                        TypeCounter,
                        VectorBackend,
                        VectorFilter,
                        VectorQuery,
                        VectorRecord,
)

__all__ = ["VectorBackend", "LexicalIndex", "GraphStore", "PayloadWriter", "TypeCounter", "RebuiltOnOpen",
           "Reconcilable", "OrderedScan", "VectorFilter", "VectorQuery", "VectorRecord", "ScoredPayload", "LexicalDoc"]
