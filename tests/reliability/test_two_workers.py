"""Two app workers behind a load balancer on one Qdrant collection: what one writes, the other's lexical
arm finds on its next query, without reopening; what one deletes, the other no longer finds; namespaces
never mix.

Stood up as two `MemoryStore`s over one shared `QdrantClient` (local mode: the server's API, the
server backend's code), each with its own lexical index and graph objects, as two processes would
have. With the lexical index and the graph in the engine (connect()'s defaults) nothing lexical is
per worker; `test_an_in_process_index_is_blind_to_the_other_worker` shows `lexical="bm25"`'s limit. The
graph's side is in `test_engine_graph.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

import pytest
from qdrant_client import QdrantClient

from fused_memory import EnsembleMemory, Memory, MemoryStore, MemoryType
from fused_memory.embeddings import HashingEmbedder

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def server() -> Iterator[QdrantClient]:
    client = QdrantClient(location=":memory:")
    yield client
    client.close()


def worker(server: QdrantClient, lexical: str | None = None) -> MemoryStore:
    """One worker process's store: its own objects, the shared collection."""
    return MemoryStore.connect(qdrant_client=server, embedder=HashingEmbedder(dim=64), ner=False,
                               lexical=lexical).open()


def lexical(store: MemoryStore, query: str, namespace: str = "alice") -> list[str]:
    """The lexical arm's ranking, through the ensemble as a caller asks for it."""
    return EnsembleMemory(store).retrieve(query, namespace=namespace, arms=["lexical"], now=NOW).ids()


def test_a_write_through_one_worker_is_found_by_the_others_next_query(server: QdrantClient) -> None:
    a, b = worker(server), worker(server)
    a.add(Memory(text="the staging VPN password rotates on Fridays", namespace="alice", id="vpn"))
    assert lexical(b, "staging VPN password") == ["vpn"]  # B has not reopened, nor been told
    b.add(Memory(text="my badge number is E-47821", namespace="alice", id="badge"))
    assert lexical(a, "badge E-47821") == ["badge"]
    # and the fused ensemble of the other worker: an identifier only the lexical arm can match
    assert EnsembleMemory(a).retrieve("E-47821", namespace="alice", now=NOW).ids()[0] == "badge"
    a.close()
    b.close()


def test_a_delete_or_rewrite_through_one_worker_shows_in_the_other_at_once(server: QdrantClient) -> None:
    a, b = worker(server), worker(server)
    a.add([Memory(text="Zelda Quist joined the Kestrel team", namespace="alice", id="z"),
           Memory(text="the Kestrel launch slipped to June", namespace="alice", id="k")])
    assert set(lexical(b, "Kestrel")) == {"z", "k"}
    a.delete("alice", ["z"])
    assert lexical(b, "Kestrel") == ["k"] and lexical(b, "Zelda Quist") == []
    b.add(Memory(text="the Osprey launch moved to July", namespace="alice", id="k"))  # B rewrites k
    assert lexical(a, "Kestrel") == [] and lexical(a, "Osprey launch") == ["k"]
    a.close()
    b.close()


def test_namespaces_never_mix_between_workers(server: QdrantClient) -> None:
    a, b = worker(server), worker(server)
    b.add([Memory(text="bob's Kestrel notes", namespace="bob", id="b1"),
           Memory(text="bob likes tea", namespace="bob", id="b2")])
    before = b.lexical_search("bob", "Kestrel tea", 10)
    a.add([Memory(text=f"Kestrel notes number {i}", namespace="alice", id=f"a{i}") for i in range(30)])
    assert b.lexical_search("bob", "Kestrel tea", 10) == before  # alice's 30 memories change no IDF of bob's
    assert lexical(b, "Kestrel notes", "bob") == ["b1"]
    assert set(lexical(b, "Kestrel notes", "alice")) <= {f"a{i}" for i in range(30)}
    assert lexical(a, "tea", "alice") == [] and lexical(a, "tea", "bob") == ["b2"]
    a.close()
    b.close()


def test_the_planners_type_counts_follow_the_other_worker(server: QdrantClient) -> None:
    a, b = worker(server), worker(server)
    b.lexical.ttl_s = 0.0  # type: ignore[attr-defined]  # read every time (default: at most once a second)
    assert b.type_counts("alice") == {}
    a.add([Memory(text="I prefer dark mode", namespace="alice", id="p", type=MemoryType.PREFERENCE),
           Memory(text="the office is in Lisbon", namespace="alice", id="f", type=MemoryType.FACT)])
    assert b.type_counts("alice") == {MemoryType.PREFERENCE: 1, MemoryType.FACT: 1}
    a.close()
    b.close()


def test_an_in_process_index_is_blind_to_the_other_worker(server: QdrantClient) -> None:
    """What lexical="bm25" (the index the server backend used before) does with two workers: B's
    index was filled when it opened, so A's later write stays invisible to B's lexical arm until B
    reopens. The engine's index above has no such window."""
    a, b = worker(server, "bm25"), worker(server, "bm25")
    a.add(Memory(text="the staging VPN password rotates on Fridays", namespace="alice", id="vpn"))
    assert lexical(a, "staging VPN password") == ["vpn"]
    assert lexical(b, "staging VPN password") == []
    b.close()
    assert lexical(worker(server, "bm25"), "staging VPN password") == ["vpn"]
    a.close()
