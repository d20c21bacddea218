"""A caller's `types=` is a filter in every arm: only memories of those types come back, and
nothing widens (the MCP tool's schema says "only memories of these types", and the frameworks say
the same). A filter the optimizer guessed from one word ("prefer") still widens to the rerun's own
list, which is how a misfiled answer is found. Real store, real MiniLM and BM25."""

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


@pytest.mark.parametrize("arms", [["dense"], ["lexical"], ["graph"], ["temporal"], None])
def test_only_the_callers_types_come_back_and_nothing_widens(ensemble: EnsembleMemory, arms) -> None:
    assert len(ENTITIES) == 4  # fewer than widen_below: the optimizer's filter would widen
    r = ensemble.retrieve("who is on the platform team in Berlin last week?", namespace=DEMO_NAMESPACE, k=8,
                          now=DEMO_NOW, types=["entity"], arms=arms)
    assert r.widened == () and all(h.memory.type is MemoryType.ENTITY for h in r.hits), r.explain()
    assert any("no widening" in why for why in r.plan.reasons)


def test_fused_the_entities_of_the_question_lead(ensemble: EnsembleMemory) -> None:
    r = ensemble.retrieve("who is on the platform team?", namespace=DEMO_NAMESPACE, k=5, now=DEMO_NOW,
                          types=["entity"])
    assert {h.memory.id for h in r.hits} <= ENTITIES and r.hits
    assert "platform" in r.hits[0].memory.text  # Tom's or Marco's entry


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


def test_a_callers_type_no_arm_keeps_answers_with_nothing_of_another_type(tmp_path) -> None:
    """BM25 finds only a preference for "Zephyr": under types=["fact"] it keeps nothing, and the
    preference is no answer (not even widened, at a hundredth of its score)."""
    from fused_memory.embeddings import HashingEmbedder

    with MemoryStore.embedded(tmp_path / "s", embedder=HashingEmbedder(dim=64), ner=False) as store:
        store.add([Memory(text="Office is on floor 4", type=MemoryType.FACT, namespace="z"),
                   Memory(text="I prefer Zephyr desks", type=MemoryType.PREFERENCE, namespace="z")])
        ens = EnsembleMemory(store)
        try:
            r = ens.retrieve("Zephyr", namespace="z", k=5, now=DEMO_NOW, types=["fact"])
            assert [h.memory.type for h in r.hits] == [MemoryType.FACT], r.explain()
        finally:
            ens.close()
