"""The parts `MemoryStore.embedded` and `MemoryStore.connect` assemble: which backends, built how.

Kept apart from `memory_store.py` (the write path and the open/close life cycle) because choosing
backends is configuration, not storage: nothing here does I/O, every backend opens on first use.

The graph of `connect()`: a Bolt server when one is named; beside qdrant-client's local mode (one
process owns the folder anyway, and local mode scans without indexes, which made a graph question
in the engine 0.4-0.65 s at 2,000 memories) the embedded SQLite graph in that folder
(`LocalModeGraph`), unless an existing store there keeps its graph in the engine; else, beside a
server, the graph in the Qdrant collection, shared by every worker.

The lexical index (`StoreConfig.lexical`) defaults per backend:

* `connect()`: "engine", BM25 on the Qdrant collection's sparse vectors. Several worker processes
  share one collection; an index in each process would be refilled from every payload on open
  (minutes and gigabytes at millions of memories) and blind to the other workers' writes.
* `embedded()`: "bm25", rank-bm25-exact in the process. One process owns the shard, so nothing
  is shared, and the in-process index measured at least as good as the engine's there
  (docs/decisions/0010-lexical-index-placement.md). It is kept in files beside the vectors
  (`StoredBM25Index`, in `lexical/`), with a write journal (`journal.sqlite3`) naming the writes
  under way, so `open()` reads no payload (docs/decisions/0041-lexical-index-kept-on-disk.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..backends.graph.embedded import EmbeddedGraphStore
from ..backends.protocols import GraphStore, LexicalIndex, VectorBackend
from ..config import LEXICAL_MODES, StoreConfig
from ..errors import ConfigurationError

__all__ = ["embedded_parts", "connected_parts", "EMBEDDED_LEXICAL", "CONNECTED_LEXICAL", "LocalModeGraph",
           "local_graph_path"]

#: The lexical index each constructor uses when not told (see the module docstring).
EMBEDDED_LEXICAL = "bm25"
CONNECTED_LEXICAL = "engine"


class LocalModeGraph(EmbeddedGraphStore):
    """The embedded graph `connect(qdrant_location=FOLDER)` defaults to, in that folder
    (`local_graph_path`). Its type records that it was defaulted, not asked for: on open, a store
    whose graph an earlier version kept in the engine keeps it there (`recovery.local_mode_graph`),
    where a `graph_path` the caller gave is always used. Anything else about it is
    `EmbeddedGraphStore`'s."""


def local_graph_path(location: str | Path, collection: str) -> str:
    """Where local mode's SQLite graph lives: inside the Qdrant folder, named as the engine graph's
    collection would be (`<collection>__graph`), so two collections in one folder keep two graphs."""
    from ..backends.graph.engine_points import GRAPH_SUFFIX  # qdrant-client's models: not for embedded()
    return str(Path(location) / f"{collection}{GRAPH_SUFFIX}")


def _embedder(embedder: Any) -> Any:
    from ..embeddings import as_embedder, default_embedder
    return as_embedder(embedder) if embedder is not None else default_embedder()


def _lexical_mode(lexical: Any, default: str) -> str:
    if lexical is None:
        return default
    if lexical not in LEXICAL_MODES:
        raise ConfigurationError(f"lexical must be one of {', '.join(map(repr, LEXICAL_MODES))}, got {lexical!r}")
    return str(lexical)


def _lexical_index(mode: str, vectors: VectorBackend, ttl_s: float | None, folder: Path | None = None) -> LexicalIndex:
    """The index for `mode`: BM25 kept in `folder` when given, else in the process; the engine's
    reads the other processes' type counts every `ttl_s`."""
    if mode == "bm25" and folder is not None:
        from ..backends.lexical.stored import StoredBM25Index
        return StoredBM25Index(folder)
    if mode == "bm25":
        from ..backends.lexical.bm25 import BM25Index
        return BM25Index()
    from ..backends.lexical.engine import EngineLexicalIndex
    return EngineLexicalIndex(vectors, ttl_s=ttl_s)


def lexical_folder(root: str | Path) -> Path:
    """Where an embedded store under `root` keeps its BM25 index (`StoredBM25Index`)."""
    return Path(root) / "lexical"


def embedded_parts(path: str | Path, *, embedder: Any, ner: bool, show_progress: bool | None,
                   lexical: str | None = None) -> dict[str, Any]:
    """Everything in process under `path`: qdrant-edge shard, the lexical index (kept in `lexical/`
    when in process), embedded graph, and the write journal that keeps them in step."""
    from ..backends.vector.edge import QdrantEdgeBackend
    from .journal import JOURNAL_NAME, WriteJournal

    if not isinstance(path, (str, Path)) or not str(path).strip():  # "" was the current directory
        raise ConfigurationError(f"MemoryStore.embedded needs a directory path, got {path!r}")
    mode = _lexical_mode(lexical, EMBEDDED_LEXICAL)
    root = Path(path)
    vectors = QdrantEdgeBackend(str(root / "vectors"), sparse=mode == "engine")
    return {"vectors": vectors, "lexical": _lexical_index(mode, vectors, ttl_s=None, folder=lexical_folder(root)),
            "embedder": _embedder(embedder), "graph": EmbeddedGraphStore(str(root / "graph")),
            "config": StoreConfig(path=str(root), ner=ner, show_progress=show_progress, lexical=mode),
            "journal": WriteJournal(root / JOURNAL_NAME)}


def _graph_file(graph_path: Any, vectors: Any) -> str:
    """The embedded graph's folder for connect(): only beside a Qdrant that this process alone
    uses (local mode). Beside a server, other workers could neither see its relations and
    entities nor keep them: refused, naming the fix (the graph then lives in the collection)."""
    if not isinstance(graph_path, (str, Path)) or not str(graph_path).strip():
        raise ConfigurationError(f"graph_path must be a directory path, got {graph_path!r}; leave it out to keep "
                                 "the graph in the Qdrant collection beside the memories")
    if not vectors.local:
        raise ConfigurationError(
            "graph_path keeps the graph in this process's files, which the other workers on this Qdrant server "
            "cannot see: leave graph_path out (the graph then lives in the Qdrant collection, shared and durable "
            "as the memories) or give neo4j_uri for a Bolt graph server")
    return str(graph_path)


def connected_parts(*, qdrant_url: str | None, qdrant_api_key: str | None, qdrant_location: str | None,
                    qdrant_client: Any, collection: str, neo4j_uri: str | None,
                    neo4j_auth: tuple[str, str] | None, neo4j_driver: Any, neo4j_database: str | None,
                    graph_dialect: str | None, graph_path: str | None, embedder: Any, ner: bool,
                    show_progress: bool | None, lexical: str | None = None) -> dict[str, Any]:
    """A Qdrant server or cluster (or qdrant-client local mode, or the caller's own `QdrantClient`)
    and, when `neo4j_uri` or `neo4j_driver` is given, a Bolt server for the graph. Else, beside a
    server (or a client the caller passes), the graph in the Qdrant collection itself
    (`backends.graph.engine`), as shared and as durable as the memories: no part of the store lives
    only in one process; beside local mode (`qdrant_location`), the embedded graph: in the folder
    (`LocalModeGraph`; `graph_path` puts it elsewhere), or in memory with ":memory:". A client or
    driver the caller passes is used as configured and never closed by the store."""
    from ..backends.lexical.engine import DEFAULT_STATS_TTL_S
    from ..backends.vector.server import QdrantClientBackend

    qdrant = [name for name, v in (("qdrant_url", qdrant_url), ("qdrant_location", qdrant_location),
                                   ("qdrant_client", qdrant_client)) if v]
    if len(qdrant) != 1:
        raise ConfigurationError("connect() needs exactly one of qdrant_url (a server), qdrant_location (local "
                                 f"mode) or qdrant_client (your QdrantClient); got {', '.join(qdrant) or 'none'}")
    if neo4j_uri and neo4j_driver is not None:
        raise ConfigurationError("connect() takes neo4j_uri or neo4j_driver, not both")
    mode = _lexical_mode(lexical, CONNECTED_LEXICAL)
    cfg = StoreConfig(qdrant_url=qdrant_url, qdrant_api_key=qdrant_api_key, qdrant_collection=collection,
                      qdrant_location=qdrant_location, neo4j_uri=neo4j_uri, neo4j_auth=neo4j_auth,
                      neo4j_database=neo4j_database, graph_dialect=graph_dialect, ner=ner,
                      show_progress=show_progress, lexical=mode)
    vectors = QdrantClientBackend(url=qdrant_url or None, api_key=qdrant_api_key, location=qdrant_location or None,
                                  collection=collection, client=qdrant_client, sparse=mode == "engine")
    graph: GraphStore
    if neo4j_uri or neo4j_driver is not None:
        from ..backends.graph.cypher import CypherGraphStore
        if graph_path is not None:
            raise ConfigurationError("connect() takes a Bolt graph (neo4j_uri / neo4j_driver) or graph_path, not both")
        graph = CypherGraphStore(neo4j_uri or None, auth=neo4j_auth, database=neo4j_database, dialect=graph_dialect,
                                 driver=neo4j_driver)
    elif graph_path is not None:
        graph = EmbeddedGraphStore(_graph_file(graph_path, vectors))
    elif qdrant_location == ":memory:":  # nothing of local mode's memory outlives the process either
        graph = EmbeddedGraphStore(None)
    elif qdrant_location:
        graph = LocalModeGraph(local_graph_path(qdrant_location, collection))
    else:
        from ..backends.graph.engine import EngineGraphStore
        graph = EngineGraphStore(vectors)
    return {"vectors": vectors, "lexical": _lexical_index(mode, vectors, ttl_s=DEFAULT_STATS_TTL_S),
            "embedder": _embedder(embedder), "graph": graph, "config": cfg}
