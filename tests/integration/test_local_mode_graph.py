"""`MemoryStore.connect(qdrant_location=FOLDER)`, qdrant-client's local mode, keeps its graph in a
SQLite graph inside that folder (the embedded graph `graph_path=` gives), durable across reopening,
not in the engine, where local mode scans without indexes (a graph question took 0.4-0.65 s at 2,000
memories). A store an earlier version wrote there with its graph in the engine opens as it is and
says once how to move it; a server, or a client the caller passes, keeps the engine graph."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from fused_memory import EnsembleMemory, Memory, MemoryStore
from fused_memory.backends.graph.embedded import EmbeddedGraphStore
from fused_memory.backends.graph.engine import EngineGraphStore
from fused_memory.backends.lexical.engine import EngineLexicalIndex
from fused_memory.backends.vector.server import QdrantClientBackend
from fused_memory.embeddings import HashingEmbedder

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
NS = "alice"
MEMORIES = [Memory(text="Sarah Chen leads the platform team.", namespace=NS, id="sarah", entities=("Sarah Chen",)),
            Memory(text="Tom Becker started on Monday.", namespace=NS, id="tom", entities=("Tom Becker",))]


def _local(folder: Path, **kw: object) -> MemoryStore:
    return MemoryStore.connect(qdrant_location=str(folder), embedder=HashingEmbedder(dim=64), ner=False,
                               **kw).open()  # type: ignore[arg-type]


def _reports_to_sarah(store: MemoryStore) -> list[str]:
    return EnsembleMemory(store).retrieve("who reports to Sarah Chen?", namespace=NS, arms=["graph"], now=NOW).ids()


def test_a_new_local_mode_store_keeps_its_graph_in_sqlite_inside_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "qdrant"
    store = _local(folder)
    store.add(MEMORIES)
    store.relate("Tom Becker", "reports_to", "Sarah Chen", namespace=NS, kind="structural")
    assert isinstance(store.graph, EmbeddedGraphStore) and store.graph.path == str(folder / "fused_memory__graph")
    assert (folder / "fused_memory__graph" / "graph.sqlite3").is_file()
    store.close()
    again = _local(folder)
    assert isinstance(again.graph, EmbeddedGraphStore)
    assert _reports_to_sarah(again)[0] == "tom"  # the relation outlived the process's store
    again.close()
    client = QdrantClient(path=str(folder))
    assert not client.collection_exists("fused_memory__graph")  # nothing of the graph in the engine
    client.close()


def test_two_collections_in_one_folder_keep_two_graphs(tmp_path: Path) -> None:
    for collection in ("first", "second"):
        store = _local(tmp_path / "q", collection=collection)
        assert store.graph is not None and store.graph.path == str(tmp_path / "q" / f"{collection}__graph")  # type: ignore[attr-defined]
        store.close()


def test_an_existing_store_with_its_graph_in_the_engine_opens_as_it_is_and_says_once_how_to_move_it(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "qdrant"
    vectors = QdrantClientBackend(location=str(folder), sparse=True)  # what connect() built here before
    old = MemoryStore(vectors, EngineLexicalIndex(vectors), HashingEmbedder(dim=64), EngineGraphStore(vectors))
    old.extractor.enabled = False
    old.add(MEMORIES)
    old.relate("Tom Becker", "reports_to", "Sarah Chen", namespace=NS, kind="structural")
    old.close()
    caplog.set_level(logging.WARNING, logger="fused_memory")
    for _ in range(2):
        store = _local(folder)
        assert isinstance(store.graph, EngineGraphStore)
        assert _reports_to_sarah(store)[0] == "tom"  # its relation is where it was
        store.close()
    said = [r.getMessage() for r in caplog.records if "is in the Qdrant engine" in r.getMessage()]
    moved_to = str(folder / "fused_memory__graph")
    assert len(said) == 1 and f"graph_path={moved_to!r}" in said[0] and "relate()" in said[0]
    assert not (folder / "fused_memory__graph").exists()  # opening as it is wrote no graph file
    moved = _local(folder, graph_path=moved_to)  # the move, as the message says it
    assert isinstance(moved.graph, EmbeddedGraphStore)
    assert set(EnsembleMemory(moved).retrieve("Sarah Chen", namespace=NS, arms=["graph"], now=NOW).ids()) == {"sarah"}
    moved.close()
    after = _local(folder)
    assert isinstance(after.graph, EmbeddedGraphStore)  # the SQLite graph, from now on
    after.close()


def test_a_server_or_a_callers_client_keeps_the_graph_in_the_engine_and_memory_mode_in_memory() -> None:
    client = QdrantClient(location=":memory:")
    store = MemoryStore.connect(qdrant_client=client, embedder=HashingEmbedder(dim=64), ner=False)
    assert isinstance(store.graph, EngineGraphStore)
    in_memory = MemoryStore.connect(qdrant_location=":memory:", embedder=HashingEmbedder(dim=64), ner=False)
    assert isinstance(in_memory.graph, EmbeddedGraphStore) and in_memory.graph.path is None
    client.close()
