"""`MemoryStore.connect` takes the caller's own `QdrantClient` and neo4j `Driver`, as langchain-qdrant
takes `client=`: the store uses them as configured and closes only what it opened itself.

The clients are real: qdrant-client in local mode (the server's API) and the official neo4j
driver against a FalkorDB Bolt listener of this module's own (the driver's own `close()` says
GOODBYE, which leaves FalkorDB's listener deaf to the next connection: the shared server must not
see it, see `fused_memory.backends.graph.dialect`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

import neo4j
import pytest
from qdrant_client import QdrantClient

from fused_memory import ConfigurationError, EnsembleMemory, Memory, MemoryStore
from fused_memory.embeddings import HashingEmbedder

from falkordb_server import FalkorDBServer

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)


def _connect(**kw: object) -> MemoryStore:
    return MemoryStore.connect(embedder=HashingEmbedder(dim=64), ner=False, **kw)  # type: ignore[arg-type]


def test_a_store_over_your_qdrant_client_leaves_it_open_for_you() -> None:
    client = QdrantClient(location=":memory:")
    with _connect(qdrant_client=client, collection="mine") as store:
        store.add(Memory(text="my badge ID is E-47821", namespace="alice", id="badge"))
        assert EnsembleMemory(store).retrieve("E-47821", namespace="alice", now=NOW).ids() == ["badge"]
    assert client.collection_exists("mine")  # close() did not close the caller's client
    with _connect(qdrant_client=client, collection="mine") as again:  # a second store, same client
        assert again.count("alice") == 1
        assert again.get_many("alice", ["badge"])[0].text == "my badge ID is E-47821"
    client.close()


def test_two_stores_over_one_client_see_each_others_vectors_at_once() -> None:
    client = QdrantClient(location=":memory:")
    a, b = _connect(qdrant_client=client).open(), _connect(qdrant_client=client).open()
    a.add(Memory(text="the staging database lives in Frankfurt", namespace="ops", id="db"))
    assert [h.memory.id for h in EnsembleMemory(b).retrieve("staging database", namespace="ops",
                                                              arms=["dense"], now=NOW).hits] == ["db"]
    a.close()
    b.close()


@pytest.fixture(scope="module")
def own_bolt_server() -> Iterator[str]:
    srv = FalkorDBServer().start()
    yield srv.uri
    srv.cleanup()


@pytest.mark.slow  # starts its own Bolt server
def test_a_store_over_your_neo4j_driver_leaves_it_open_for_you(own_bolt_server: str) -> None:
    driver = neo4j.GraphDatabase.driver(own_bolt_server, auth=None)
    try:
        store = _connect(qdrant_location=":memory:", neo4j_driver=driver).open()
        store.relate("Tom", "reports_to", "Sarah", namespace="acme", kind="structural")
        assert {e.name for e in store.graph.entities("acme")} >= {"Tom", "Sarah"}  # type: ignore[union-attr]
        store.close()
        with driver.session() as session:  # close() let go of the driver without closing it
            assert session.run("RETURN 1 AS ok").single()["ok"] == 1
    finally:
        driver.close()


@pytest.mark.parametrize(("kw", "message"), [
    ({}, "exactly one of qdrant_url"),
    ({"qdrant_url": "http://localhost:6333", "qdrant_client": QdrantClient(location=":memory:")},
     "got qdrant_url, qdrant_client"),
    ({"qdrant_location": ":memory:", "qdrant_client": QdrantClient(location=":memory:")},
     "got qdrant_location, qdrant_client"),
    ({"qdrant_client": "http://localhost:6333"}, "must be a qdrant_client.QdrantClient"),
    ({"qdrant_location": ":memory:", "neo4j_uri": "bolt://localhost:7687",
      "neo4j_driver": neo4j.GraphDatabase.driver("bolt://localhost:7687")}, "neo4j_uri or neo4j_driver, not both"),
    ({"qdrant_location": ":memory:", "neo4j_driver": "bolt://localhost:7687"}, "must be a neo4j.Driver"),
])
def test_clients_that_do_not_fit_are_refused_before_anything_opens(kw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        _connect(**kw)
