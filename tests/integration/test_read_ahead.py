"""While the query is embedded, BM25 and the graph read their own top memories (`ensemble.slack`):
hydration then finds them at hand. The read happens only while the embedding runs, never changes
a ranking, and a read that fails or finds a memory gone leaves hydration to do what it did."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from fused_memory.config import FusionConfig
from fused_memory.embeddings import HashingEmbedder
from fused_memory.ensemble import EnsembleMemory
from fused_memory.ensemble import engine as engine_module
from fused_memory.ensemble.slack import Slack, read_ahead
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


def _slack(depth: int) -> Slack:
    return Slack(depth, {})


def test_an_open_slack_reads_the_first_hits_memories_beside_the_hits(store):
    ids = [m.id for m in store.memories(NS)][:6]
    hits = [Hit(i, 0.5) for i in ids]
    slack = _slack(4)
    read_ahead(store, NS, hits, slack)
    assert sorted(slack.memories) == sorted(ids[:4])
    assert all(slack.memories[i].id == i and slack.memories[i].namespace == NS for i in ids[:4])
    assert all(h.memory is None for h in hits)  # what the arm answered is left as it was


def test_a_closed_slack_reads_nothing(store):
    slack = _slack(4)
    slack.close()
    read_ahead(store, NS, [Hit(m.id, 0.5) for m in store.memories(NS)][:4], slack)
    assert slack.memories == {} and store.reads == []


def test_a_memory_deleted_since_the_arm_saw_it_is_left_to_hydration(store):
    ids = [m.id for m in store.memories(NS)][:3]
    store.delete(NS, [ids[1]])
    slack = _slack(3)
    read_ahead(store, NS, [Hit(i, 0.5) for i in ids], slack)
    assert sorted(slack.memories) == sorted([ids[0], ids[2]])


def _retrieve(ens, query, ahead: bool):
    shipped = engine_module.read_ahead
    if not ahead:
        engine_module.read_ahead = lambda store_, namespace, hits, slack: None
    try:
        return ens.retrieve(query, namespace=NS, k=5, now=NOW)
    finally:
        engine_module.read_ahead = shipped


@pytest.mark.parametrize("order", ["rrf", "learned"])
def test_the_arms_read_ahead_while_the_query_is_embedded_and_the_ranking_is_the_same(store, order):
    """Dense carries only its top 5 (`depth=5`), so BM25's memories in the fused top 5 need a read:
    with the read-ahead it happens in BM25's thread, while the slow query embedding runs, and
    hydration (in the caller's thread) reads nothing; without it, hydration reads them. The
    ranking, in RRF's order and in the learned one (whose features read what the arms carried), is
    the same either way."""
    query = "what did Sarah do about the Berlin office ticket?"
    ens = EnsembleMemory(store, FusionConfig(depth=5, order=order))
    try:
        store.reads.clear()
        plain = _retrieve(ens, query, ahead=False)
        assert "lexical" in plain.plan.arms and "dense" in plain.plan.arms
        assert threading.current_thread().name in store.reads  # hydration had memories to read
        store.reads.clear()
        shipped = _retrieve(ens, query, ahead=True)
        assert store.reads and threading.current_thread().name not in store.reads  # read in the arms' threads
        assert [(h.memory.id, h.score, h.contributions) for h in shipped.hits] == \
               [(h.memory.id, h.score, h.contributions) for h in plain.hits]
    finally:
        ens.close()


def test_a_read_that_fails_leaves_the_hits_to_hydration(tmp_path):
    class Unreadable(MemoryStore):
        def get_many(self, namespace: str, memory_ids: str | Sequence[str]) -> list[Memory]:
            raise RuntimeError("the vector engine is down")

    with Unreadable.embedded(tmp_path / "u", embedder=HashingEmbedder(dim=128), ner=False) as s:
        hits = [Hit(m.id, 0.5) for m in s.add([Memory(text=t, namespace=NS) for t in TEXTS[:3]])]
        slack = _slack(3)
        read_ahead(s, NS, hits, slack)
        assert slack.memories == {}
