"""Stores written before the lexical index lived in the engine still open and serve: the sparse vector
is added to the collection on open, and the memories written before get theirs (and an `answers` tag,
if older still) per namespace on first use or through `MemoryStore.upgrade()`; never by a scan of the
whole collection in `open()` of a server-backed store.

The backends are the real ones; `Counting` only records which namespaces the store reads in full."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient

from fused_memory import EnsembleMemory, Memory, MemoryStore
from fused_memory.backends.lexical.engine import EngineLexicalIndex
from fused_memory.backends.vector.common import point_id
from fused_memory.backends.vector.server import QdrantClientBackend
from fused_memory.embeddings import HashingEmbedder

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
EMB = HashingEmbedder(dim=64)
OLD = {
    "alice": [Memory(text="my badge number is E-47821", namespace="alice", id="a1"),
              Memory(text="I ran the Berlin marathon on 2024-04-07", namespace="alice", id="a2")],
    "bob": [Memory(text="the staging VPN password rotates on Fridays", namespace="bob", id="b1")],
}


class Counting(QdrantClientBackend):
    """The real server backend, recording the namespaces it scrolls in full (None: every namespace)
    and those it looks for memories without the sparse vector."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.scrolled: list[str | None] = []
        self.checked: list[str] = []

    def scroll(self, namespace: str | None = None) -> Iterator[Mapping[str, Any]]:
        self.scrolled.append(namespace)
        return super().scroll(namespace)

    def missing_sparse(self, namespace: str) -> Iterator[Mapping[str, Any]]:
        self.checked.append(namespace)
        return super().missing_sparse(namespace)


def server_store(client: QdrantClient) -> MemoryStore:
    """A worker of a server deployment: the lexical index in the engine, no graph to reconcile."""
    vectors = Counting(client=client, sparse=True)
    return MemoryStore(vectors, EngineLexicalIndex(vectors), EMB, graph=None).open()


def written_by_an_older_version(client: QdrantClient) -> None:
    """What a store of an older release looks like: no sparse vector, a meta without "upgraded", no
    stated times or slot keys, and (older still) alice's memories without the `answers` tag."""
    with MemoryStore.connect(qdrant_client=client, embedder=EMB, ner=False, lexical="bm25") as old:
        for memories in OLD.values():
            old.add(memories)
        meta = old.vectors.read_meta()
        assert meta is not None
        del meta["upgraded"]
        old.vectors.write_meta(meta)
    client.delete_payload("fused_memory", keys=["answers"], points=[point_id("alice", m.id) for m in OLD["alice"]])
    client.delete_payload("fused_memory", keys=["stated", "stated_iso", "slot_keys"],
                          points=[point_id(ns, m.id) for ns, ms in OLD.items() for m in ms])


def lexical(store: MemoryStore, query: str, namespace: str) -> list[str]:
    return EnsembleMemory(store).retrieve(query, namespace=namespace, arms=["lexical"], now=NOW).ids()


def test_an_older_server_store_opens_without_a_scan_and_serves_per_namespace() -> None:
    client = QdrantClient(location=":memory:")
    written_by_an_older_version(client)
    store = server_store(client)
    vectors: Counting = store.vectors  # type: ignore[assignment]
    assert vectors.sparse_added and vectors.scrolled == [] and vectors.checked == []  # open read no memory
    assert lexical(store, "badge E-47821", "alice") == ["a1"]  # alice brought up to date on first use ...
    assert vectors.checked == ["alice"] and set(vectors.scrolled) == {"alice"}  # ... and alice only
    assert all("answers" in p and "stated" in p for p in vectors.get("alice", ["a1", "a2"]))  # and what they lacked
    assert EnsembleMemory(store).retrieve("when did I run the marathon?", namespace="alice", arms=["temporal"],
                                          now=NOW).ids()[0] == "a2"
    lexical(store, "badge", "alice")
    assert vectors.checked == ["alice"]  # once per process
    assert lexical(store, "VPN password", "bob") == ["b1"] and vectors.checked == ["alice", "bob"]
    store.close()


def test_upgrade_does_every_namespace_once_for_every_worker() -> None:
    client = QdrantClient(location=":memory:")
    written_by_an_older_version(client)
    first, other = server_store(client), server_store(client)  # two workers, both opened before the upgrade
    assert lexical(first, "badge", "alice") == ["a1"]
    # bob's memory (rewriting its times gave it its wording); alice's were done on first use
    assert first.upgrade() == {"bm25": 1, "times": 1, "wording1": 0, "answers": 0}
    assert first.upgrade() == {}
    other.end_session("bob", at=NOW)  # the other worker's meta write keeps the upgrade recorded
    assert set(other.vectors.read_meta()["upgraded"]) == {"answers", "bm25", "times", "wording1"}  # type: ignore[index]
    fresh = server_store(client)
    assert lexical(fresh, "VPN password", "bob") == ["b1"] and lexical(fresh, "badge", "alice") == ["a1"]
    assert fresh.vectors.checked == [] and fresh.vectors.scrolled == []  # type: ignore[attr-defined]
    for s in (first, other, fresh):
        s.close()


def test_a_new_server_store_never_checks() -> None:
    client = QdrantClient(location=":memory:")
    store = server_store(client)
    store.add(OLD["alice"])
    assert lexical(store, "badge", "alice") == ["a1"]
    again = server_store(client)
    assert lexical(again, "badge", "alice") == ["a1"]
    assert again.vectors.scrolled == [] and again.vectors.checked == []  # type: ignore[attr-defined]
    assert set(again.vectors.read_meta()["upgraded"]) == {"answers", "bm25", "times", "wording1"}  # type: ignore[index]
    store.close()
    again.close()


def test_an_embedded_store_switched_to_the_engine_index_upgrades_in_its_open_scan(tmp_path: Path) -> None:
    with MemoryStore.embedded(tmp_path, embedder=EMB, ner=False) as old:  # lexical="bm25", the default
        for memories in OLD.values():
            old.add(memories)
    with MemoryStore.embedded(tmp_path, embedder=EMB, ner=False, lexical="engine") as store:
        # open reads no payload (the store keeps a journal): the memories written without their
        # sparse vectors get them per namespace on first use, as a server store's do
        assert "bm25" not in store.vectors.read_meta()["upgraded"]  # type: ignore[index]
        assert lexical(store, "badge E-47821", "alice") == ["a1"] and lexical(store, "VPN", "bob") == ["b1"]
        store.upgrade()
        assert set(store.vectors.read_meta()["upgraded"]) == {"answers", "bm25", "times", "wording1"}  # type: ignore[index]
        store.add(Memory(text="the badge printer jams", namespace="alice", id="a4"))  # not in the BM25 files
    with MemoryStore.embedded(tmp_path, embedder=EMB, ner=False) as back:  # and back: the shard keeps its vector
        assert set(lexical(back, "badge", "alice")) == {"a1", "a4"}  # the BM25 files were rebuilt, not trusted
        back.add(Memory(text="a new badge reader", namespace="alice", id="a3"))
    with MemoryStore.embedded(tmp_path, embedder=EMB, ner=False, lexical="engine") as store:
        assert set(lexical(store, "badge", "alice")) == {"a1", "a3", "a4"}


@pytest.mark.parametrize("lexical_mode", ["engine", "bm25"])
def test_a_rolled_back_overwrite_restores_the_old_text_for_the_lexical_arm(lexical_mode: str) -> None:
    """A failed `add` restores an overwritten memory's previous version, sparse vector included."""
    client = QdrantClient(location=":memory:")
    store = MemoryStore.connect(qdrant_client=client, embedder=EMB, ner=False, lexical=lexical_mode).open()
    store.add(OLD["alice"][0])
    graph = store.graph
    assert graph is not None

    def broken_link(*_: Any, **__: Any) -> None:
        raise RuntimeError("graph down")

    graph.link = broken_link  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="graph down"):
        store.add(Memory(text="my parking spot is P-12", namespace="alice", id="a1"))
    assert lexical(store, "badge E-47821", "alice") == ["a1"] and lexical(store, "parking", "alice") == []
    store.close()
