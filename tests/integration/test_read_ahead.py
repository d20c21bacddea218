"""While the query is embedded, BM25 and the graph read their own top memories (`ensemble.slack`):
hydration then finds them at hand. The read happens only while the embedding runs, never changes
a ranking, and a read that fails or finds a memory gone leaves hydration to do what it did."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from fused_memory.embeddings import HashingEmbedder
from fused_memory.ensemble import EnsembleMemory
from fused_memory.ensemble import engine as engine_module
from fused_memory.ensemble.slack import Slack, read_ahead
from fused_memory.errors import BackendUnavailable
from fused_memory.results import Hit
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory
from tests.conftest import NOW

NS = "ra"
TEXTS = [f"Ticket OPS-{i} about the Berlin office move was closed by Sarah" if i % 3 == 0 else
         f"Lunch order {i}: the usual noodles from the place near the office" for i in range(40)]


class SlowQueryEmbedder(HashingEmbedder):
    """The hashing embedder, with the query embedding taking as long as MiniLM's on a slow host
    (a sleep releases the GIL, as onnxruntime does): the other arms finish inside it."""

    def embed_query(self, text: str) -> np.ndarray:
        time.sleep(0.05)
        return super().embed_query(text)


class ReadCountingStore(MemoryStore):
    """A real store that records which thread asked for memories by id."""

    reads: list[str]

    def get_many(self, namespace: str, memory_ids: str | Sequence[str]) -> list[Memory]:
        self.reads.append(threading.current_thread().name)
        return super().get_many(namespace, memory_ids)


@pytest.fixture
def store(tmp_path):
    s = ReadCountingStore.embedded(tmp_path / "s", embedder=SlowQueryEmbedder(dim=128), ner=False)
    s.reads = []
    with s:
        s.add([Memory(text=t, namespace=NS, event_at=NOW) for t in TEXTS])
        yield s


def test_an_open_slack_reads_the_first_hits_memories(store):
    ids = [m.id for m in store.memories(NS)][:6]
    hits = [Hit(i, 0.5) for i in ids]
    out = read_ahead(store, NS, hits, Slack(4))
    assert [h.memory_id for h in out] == ids
    assert [h.memory.id if h.memory else None for h in out] == [*ids[:4], None, None]


def test_a_closed_slack_reads_nothing(store):
    slack = Slack(4)
    slack.close()
    hits = [Hit(m.id, 0.5) for m in store.memories(NS)][:4]
    assert read_ahead(store, NS, hits, slack) == hits and store.reads == []


def test_a_memory_deleted_since_the_arm_saw_it_is_left_to_hydration(store):
    ids = [m.id for m in store.memories(NS)][:3]
    store.delete(NS, [ids[1]])
    out = read_ahead(store, NS, [Hit(i, 0.5) for i in ids], Slack(3))
    assert [h.memory is not None for h in out] == [True, False, True]


def test_the_arms_read_ahead_while_the_query_is_embedded_and_the_ranking_is_the_same(store):
    query = "what did Sarah do about the Berlin office ticket?"
    ens = EnsembleMemory(store)
    try:
        store.reads.clear()
        shipped = ens.retrieve(query, namespace=NS, k=5, now=NOW)
        assert "lexical" in shipped.plan.arms and "dense" in shipped.plan.arms
        # read in the arms' threads; hydration, in this one, found every memory at hand
        assert store.reads and all(name.startswith("fused-memory") for name in store.reads)
        read_ahead_off = engine_module.read_ahead
        engine_module.read_ahead = lambda store_, namespace, hits, slack: hits
        try:
            plain = ens.retrieve(query, namespace=NS, k=5, now=NOW)
        finally:
            engine_module.read_ahead = read_ahead_off
        assert [(h.memory.id, h.score) for h in shipped.hits] == [(h.memory.id, h.score) for h in plain.hits]
    finally:
        ens.close()


def test_a_read_that_fails_leaves_the_hits_to_hydration(tmp_path):
    class Unreadable(MemoryStore):
        def get_many(self, namespace: str, memory_ids: str | Sequence[str]) -> list[Memory]:
            raise BackendUnavailable("the vector engine is down")

    with Unreadable.embedded(tmp_path / "u", embedder=HashingEmbedder(dim=128), ner=False) as s:
        hits = [Hit(m.id, 0.5) for m in s.add([Memory(text=t, namespace=NS) for t in TEXTS[:3]])]
        assert read_ahead(s, NS, hits, Slack(3)) == hits
