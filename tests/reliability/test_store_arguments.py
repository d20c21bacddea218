"""Arguments every store entry point reads alike: `count("\\udc00")`
raised qdrant-edge's TypeError and `count(" ")` answered 0 where `get_many` refused both;
`relate()` took `confidence=True` or "0.5" and a validity ending before it starts;
`MemoryStore.embedded("")` made a store in the current directory; `arms="dense"` was read as the
arms 'd', 'e', 'n', 's', 'e'."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from fused_memory.ensemble import EnsembleMemory
from fused_memory.errors import ConfigurationError, QueryError
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory

from _support import NOW, embedded


@pytest.mark.parametrize("namespace", ["\udc00", " ", "a\x00b", "", 5])
def test_every_read_refuses_a_bad_namespace(tmp_path: Path, namespace: object) -> None:
    with embedded(tmp_path / "s") as store:
        for read in (store.count, store.type_counts, store.last_session_end,
                     lambda ns: store.get_many(ns, ["x"])):
            with pytest.raises(QueryError):
                read(namespace)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [{"confidence": True}, {"confidence": "0.5"}, {"confidence": 1.5},
                                    {"valid_from": NOW, "valid_to": NOW - timedelta(days=1)}])
def test_relate_refuses_what_it_would_store_wrong(tmp_path: Path, kwargs: dict) -> None:
    with embedded(tmp_path / "s") as store:
        with pytest.raises(QueryError):
            store.relate("Tom", "reports_to", "Sarah", namespace="a", **kwargs)
        store.relate("Tom", "reports_to", "Sarah", namespace="a", confidence=0.5,
                     valid_from=NOW - timedelta(days=1), valid_to=NOW)  # the same, right, is taken


@pytest.mark.parametrize("path", ["", "  ", None])
def test_an_embedded_store_needs_a_path(path: object) -> None:
    with pytest.raises(ConfigurationError):
        MemoryStore.embedded(path)  # type: ignore[arg-type]


def test_one_arm_may_be_named_bare(tmp_path: Path) -> None:
    with embedded(tmp_path / "s") as store:
        store.add(Memory(text="badge ID is 47821", namespace="a"))
        ens = EnsembleMemory(store)
        try:
            r = ens.retrieve("badge 47821", namespace="a", k=3, now=NOW, arms="lexical")  # type: ignore[arg-type]
            assert r.plan.arms == ("lexical",) and r.hits
        finally:
            ens.close()


def test_an_entity_whose_memories_are_gone_no_longer_plans_the_graph(tmp_path: Path) -> None:
    """After a delete (or an upsert with new text) the graph keeps the entity's name; the query
    naming it still planned the graph arm."""
    with embedded(tmp_path / "s") as store:
        store.add([Memory(text="Met Zanzibar Holdings", id="z", namespace="a", entities=("Zanzibar Holdings",)),
                   Memory(text="other", id="o", namespace="a")])
        store.relate("Tom", "reports_to", "Sarah", namespace="a")  # named by a relation only: kept
        store.delete("a", "z")
        ens = EnsembleMemory(store)
        try:
            assert "graph" not in ens.retrieve("Zanzibar Holdings news", namespace="a", now=NOW).plan.arms
            assert "graph" in ens.retrieve("who reports to Sarah?", namespace="a", now=NOW).plan.arms
        finally:
            ens.close()


def test_relate_takes_numpy_numbers(tmp_path: Path) -> None:
    import numpy as np

    with embedded(tmp_path / "s") as store:
        store.relate("Tom", "reports_to", "Sarah", namespace="a", confidence=np.float32(0.5))
        store.relate("Tom", "mentors", "Lena", namespace="a", confidence=np.int64(1))


def test_a_batch_with_an_entity_the_graph_would_refuse_writes_nothing(tmp_path: Path) -> None:
    """'\\ufdfa' passes Memory's checks at 1,000 characters but grows past 16 KB once normalized;
    the graph refused it after the first 256 memories of the batch were stored."""
    from fused_memory.errors import InvalidMemory

    with embedded(tmp_path / "s") as store:
        good = [Memory(text=f"note {i}", namespace="a") for i in range(300)]
        bad = Memory(text="odd name", namespace="a", entities=("\ufdfa" * 1000,))
        with pytest.raises(InvalidMemory):
            store.add([*good, bad])
        assert store.count("a") == 0


def test_delete_and_get_many_take_the_memories_add_returned(tmp_path: Path) -> None:
    """`store.delete(ns, memory)` refused the object with its whole repr as the bad id (found by
    probing the agent tools); a memory of another namespace is refused, not deleted there."""
    with embedded(tmp_path / "s") as store:
        a, b = store.add([Memory(text="dentist on Tuesday", id="d", namespace="me"),
                          Memory(text="rent due on the 1st", id="r", namespace="me")])
        assert [m.id for m in store.get_many("me", [a, "r"])] == ["d", "r"]
        store.delete("me", a)
        assert store.count("me") == 1
        with pytest.raises(QueryError, match="is in namespace 'me', not 'you'"):
            store.delete("you", [b])
        store.delete("me", [b])
        assert store.count("me") == 0


@pytest.mark.parametrize("bad", ["BM25", "sparse", "", 1, True])
def test_the_lexical_setting_is_one_of_two_names(tmp_path: Path, bad: object) -> None:
    from fused_memory.config import StoreConfig
    from fused_memory.embeddings import HashingEmbedder

    for make in (lambda: MemoryStore.embedded(tmp_path / "e", embedder=HashingEmbedder(dim=8), lexical=bad),
                 lambda: MemoryStore.connect(qdrant_location=":memory:", embedder=HashingEmbedder(dim=8), lexical=bad),
                 lambda: StoreConfig(lexical=bad)):  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="lexical must be one of 'engine', 'bm25'"):
            make()
    assert not (tmp_path / "e").exists()  # refused before anything was made
    emb = HashingEmbedder(dim=8)
    assert MemoryStore.embedded(tmp_path / "d", embedder=emb).config.lexical == "bm25"
    assert MemoryStore.connect(qdrant_location=":memory:", embedder=emb).config.lexical == "engine"
