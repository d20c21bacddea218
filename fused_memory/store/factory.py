"""The parts `MemoryStore.embedded` and `MemoryStore.connect` assemble: which backends, built how.

Kept apart from `memory_store.py` (the write path and the open/close life cycle) because choosing
backends is configuration, not storage: nothing here does I/O, every backend opens on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..backends.protocols import GraphStore
from ..config import StoreConfig
from ..errors import ConfigurationError

__all__ = ["embedded_parts", "connected_parts"]


def _embedder(embedder: Any) -> Any:
    from ..embeddings import as_embedder, default_embedder
    return as_embedder(embedder) if embedder is not None else default_embedder()


def embedded_parts(path: str | Path, *, embedder: Any, ner: bool, show_progress: bool | None) -> dict[str, Any]:
    """Everything in process under `path`: qdrant-edge shard, BM25, embedded graph."""
    from ..backends.graph.embedded import EmbeddedGraphStore
    from ..backends.lexical.bm25 import BM25Index
    from ..backends.vector.edge import QdrantEdgeBackend

    if not isinstance(path, (str, Path)) or not str(path).strip():  # "" was the current directory
        raise ConfigurationError(f"MemoryStore.embedded needs a directory path, got {path!r}")
    root = Path(path)
    return {"vectors": QdrantEdgeBackend(str(root / "vectors")), "lexical": BM25Index(),
            "embedder": _embedder(embedder), "graph": EmbeddedGraphStore(str(root / "graph")),
            "config": StoreConfig(path=str(root), ner=ner, show_progress=show_progress)}


def connected_parts(*, qdrant_url: str | None, qdrant_api_key: str | None, qdrant_location: str | None,
                    qdrant_client: Any, collection: str, neo4j_uri: str | None,
                    neo4j_auth: tuple[str, str] | None, neo4j_driver: Any, neo4j_database: str | None,
                    graph_dialect: str | None, graph_path: str | None, embedder: Any, ner: bool,
                    show_progress: bool | None) -> dict[str, Any]:
    """A Qdrant server or cluster (or qdrant-client local mode, or the caller's own `QdrantClient`)
    and, when `neo4j_uri` or `neo4j_driver` is given, a Bolt server for the graph; else an embedded
    graph. A client or driver the caller passes is used as configured and never closed by the store."""
    from ..backends.graph.embedded import EmbeddedGraphStore
    from ..backends.lexical.bm25 import BM25Index
    from ..backends.vector.server import QdrantClientBackend

    qdrant = [name for name, v in (("qdrant_url", qdrant_url), ("qdrant_location", qdrant_location),
                                   ("qdrant_client", qdrant_client)) if v]
    if len(qdrant) != 1:
        raise ConfigurationError("connect() needs exactly one of qdrant_url (a server), qdrant_location (local "
                                 f"mode) or qdrant_client (your QdrantClient); got {', '.join(qdrant) or 'none'}")
    if neo4j_uri and neo4j_driver is not None:
        raise ConfigurationError("connect() takes neo4j_uri or neo4j_driver, not both")
    cfg = StoreConfig(qdrant_url=qdrant_url, qdrant_api_key=qdrant_api_key, qdrant_collection=collection,
                      qdrant_location=qdrant_location, neo4j_uri=neo4j_uri, neo4j_auth=neo4j_auth,
                      neo4j_database=neo4j_database, graph_dialect=graph_dialect, ner=ner,
                      show_progress=show_progress)
    graph: GraphStore
    if neo4j_uri or neo4j_driver is not None:
        from ..backends.graph.cypher import CypherGraphStore
        graph = CypherGraphStore(neo4j_uri or None, auth=neo4j_auth, database=neo4j_database, dialect=graph_dialect,
                                 driver=neo4j_driver)
    else:
        graph = EmbeddedGraphStore(graph_path)
    vectors = QdrantClientBackend(url=qdrant_url or None, api_key=qdrant_api_key, location=qdrant_location or None,
                                  collection=collection, client=qdrant_client)
    return {"vectors": vectors, "lexical": BM25Index(), "embedder": _embedder(embedder), "graph": graph,
            "config": cfg}
