"""Two processes serving one Qdrant server: what one records must survive the other's writes.

Stood up as two `QdrantClientBackend`s over one qdrant-client (local mode, the same API as a
server): against a real server each process has its own client to the same collections, which is
exactly what sharing the client object reproduces. The second instance's `end_session` must not
write back the meta it read at `open()`, erasing the first's.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from qdrant_client import QdrantClient

from fused_memory.backends.graph.embedded import EmbeddedGraphStore
from fused_memory.backends.lexical.bm25 import BM25Index
from fused_memory.backends.vector.server import QdrantClientBackend
from fused_memory.embeddings.hashing import HashingEmbedder
from fused_memory.store.memory_store import MemoryStore

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)


def _instance(server: QdrantClient) -> MemoryStore:
    vectors = QdrantClientBackend(client=server)  # this process's connection to the shared server
    return MemoryStore(vectors, BM25Index(), HashingEmbedder(dim=64), EmbeddedGraphStore(None)).open()


def test_session_ends_from_two_instances_are_both_kept() -> None:
    server = QdrantClient(location=":memory:")
    a, b = _instance(server), _instance(server)
    a.end_session("alice", at=NOW)
    b.end_session("bob", at=NOW + timedelta(hours=1))
    assert b.last_session_end("alice") == NOW  # B merged what the server held
    fresh = _instance(server)  # a restart, or a third process
    assert fresh.last_session_end("alice") == NOW
    assert fresh.last_session_end("bob") == NOW + timedelta(hours=1)
    a.end_session("alice", at=NOW - timedelta(days=1))  # an older end never moves it back
    assert _instance(server).last_session_end("alice") == NOW


@pytest.mark.slow  # the Bolt server
def test_a_store_sees_entities_another_process_adds_or_deletes_on_a_shared_graph(bolt_server: str) -> None:
    """The query matcher was rebuilt only after the store's own writes: on one Bolt graph, B's new
    entity was never matched by A's queries, and a name B deleted was still planned by A (found by
    review of the entity collection). A now re-reads the graph's entity version, at most once a
    second per namespace (`store.versions.SharedVersions`; here every time)."""
    from fused_memory.backends.graph.cypher import CypherGraphStore
    from fused_memory.store.ingest import EntityExtractor
    from fused_memory.types import Memory

    server, ns = QdrantClient(location=":memory:"), "shared-matcher"

    def instance() -> MemoryStore:
        vectors = QdrantClientBackend(client=server)
        store = MemoryStore(vectors, BM25Index(), HashingEmbedder(dim=64), CypherGraphStore(bolt_server),
                            extractor=EntityExtractor(enabled=False)).open()
        store._shared_versions.ttl_s = 0.0
        return store

    a, b = instance(), instance()
    try:
        with b.graph._work(write=True) as w:  # type: ignore[union-attr]
            w.run("MATCH (n) WHERE n.ns = $ns DETACH DELETE n", ns=ns)
        assert [e.id for e in a.entity_matcher(ns).entities] == []
        b.add([Memory(text="lunch with Zelda Quist", namespace=ns, id="z", entities=("Zelda Quist",))])
        assert [e.id for e in a.entity_matcher(ns).entities] == ["zelda quist"]
        b.delete(ns, ["z"])
        assert [e.id for e in a.entity_matcher(ns).entities] == []
    finally:
        a.close()
        b.close()
