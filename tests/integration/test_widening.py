"""Widening a filter the caller forced fills the list up; it does not reorder it. With
`types=["entity"]` the demo has 4 entity memories, fewer than `widen_below` (5), so dense and
lexical rerun without the filter. Before, the rerun's list replaced the filtered one and a fact, a
preference and an event outranked the entities (found by probing the adapters); now the filtered
hits come first, then the rest of the rerun, scored at most the weakest kept hit (fusion weighs
scores as well as ranks). A filter the optimizer guessed still widens to the rerun's own list, which
is how a misfiled answer is found. Real store, real MiniLM and BM25."""

from __future__ import annotations

import pytest

from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW, demo_memories
from fused_memory.ensemble import EnsembleMemory
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory, MemoryType

ENTITIES = {m.id for m in demo_memories() if m.type is MemoryType.ENTITY}


@pytest.fixture
def ensemble(demo_ensemble: EnsembleMemory) -> EnsembleMemory:
    return demo_ensemble  # the demo's memories, shared by the integration tests that only read them


@pytest.mark.parametrize("arm, on_type", [
    ("dense", len(ENTITIES)),   # the vector batch's path: every entity memory is a cosine match
    ("lexical", 2),             # the single arm's path: "platform" is in Tom's and Marco's entries only
])
def test_the_wanted_types_come_first(ensemble: EnsembleMemory, arm: str, on_type: int) -> None:
    assert len(ENTITIES) == 4
    r = ensemble.retrieve("who is on the platform team?", namespace=DEMO_NAMESPACE, k=8, now=DEMO_NOW,
                          types=["entity"], arms=[arm])
    assert r.widened == (arm,)
    kinds = [h.memory.type for h in r.hits]
    assert kinds[:on_type] == [MemoryType.ENTITY] * on_type, [(h.memory.type, h.memory.text[:40]) for h in r.hits]
    assert MemoryType.ENTITY not in kinds[on_type:] and len(r.hits) == 8  # then filled up with the rest
    assert len({h.memory.id for h in r.hits}) == len(r.hits)


def test_fused_the_entities_lead(ensemble: EnsembleMemory) -> None:
    r = ensemble.retrieve("who is on the platform team?", namespace=DEMO_NAMESPACE, k=5, now=DEMO_NOW,
                          types=["entity"])
    assert set(r.widened) == {"dense", "lexical"}
    # Tom's and Marco's entries (the two with "platform") lead; they were 1st and 5th
    assert [h.memory.type for h in r.hits[:2]] == [MemoryType.ENTITY, MemoryType.ENTITY]
    off = next(c for h in r.hits[2:] for c in h.contributions if c.arm == "dense")
    assert off.detail is not None and off.detail.startswith("off-type, widened (own score ")


MISFILED = [("I prefer dark mode in every editor.", MemoryType.PREFERENCE),
            ("I prefer async standups over video calls.", MemoryType.PREFERENCE),
            ("I drink my coffee black, never with sugar or milk.", MemoryType.FACT),
            ("The office coffee machine is on the third floor.", MemoryType.FACT),
            ("Our team uses Python for tooling.", MemoryType.FACT),
            ("The VPN token rotates every 30 days.", MemoryType.FACT),
            ("Tea is served in the afternoon.", MemoryType.FACT), ("The Berlin office has a rooftop.", MemoryType.FACT)]


@pytest.mark.parametrize("query", ["how do I prefer my coffee?", "what is my preferred way to drink coffee?",
                                   "do I prefer milk in my coffee?"])
def test_a_guessed_filter_still_rescues_a_misfiled_answer(tmp_path, query: str) -> None:
    """The optimizer's filter is a guess from one word ("prefer"); widening is what finds the answer
    filed under another type. Capped at the weakest kept preference, it fell to 3rd-4th (review)."""
    store = MemoryStore.embedded(tmp_path / "s", ner=False)
    try:
        store.add([Memory(t, namespace="n", type=ty, id=f"m{i}") for i, (t, ty) in enumerate(MISFILED)])
        ens = EnsembleMemory(store)
        r = ens.retrieve(query, namespace="n", k=5, now=DEMO_NOW)
        assert r.plan.hard_filter and set(r.widened) == {"dense", "lexical"}
        assert r.hits[0].memory.text.startswith("I drink my coffee black")
        dense = next(c for c in r.hits[0].contributions if c.arm == "dense")
        assert dense.raw_score > 0.5 and dense.detail is None  # its own cosine, not capped
        ens.close()
    finally:
        store.close()


def test_a_forced_type_leads_when_one_arm_keeps_none_of_it(tmp_path) -> None:
    """BM25 finds only a preference for "Zephyr", so under types=["fact"] its filtered list is empty
    and it widens; with nothing kept, the preference came back at its full score at BM25 #1 and
    outranked dense's only fact (found by probing the API). The rest now counts a hundredth there."""
    from fused_memory.embeddings import HashingEmbedder

    with MemoryStore.embedded(tmp_path / "s", embedder=HashingEmbedder(dim=64), ner=False) as store:
        store.add([Memory(text="Office is on floor 4", type=MemoryType.FACT, namespace="z"),
                   Memory(text="I prefer Zephyr desks", type=MemoryType.PREFERENCE, namespace="z")])
        ens = EnsembleMemory(store)
        try:
            r = ens.retrieve("Zephyr", namespace="z", k=5, now=DEMO_NOW, types=["fact"])
            assert [h.memory.type for h in r.hits] == [MemoryType.FACT, MemoryType.PREFERENCE], r.explain()
        finally:
            ens.close()
