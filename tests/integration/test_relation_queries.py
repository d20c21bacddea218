"""A question about a relation ("who reports to Sarah?") is answered by who is at its other end.

In the demo, Tom and Lena report to Sarah. Before, the graph arm ranked Sarah's own memories (hop 0)
above her reports' (hop 1), and fusion followed dense and lexical to Sarah's memories: Lena's came
8th. Now the graph arm re-roots at the reports and the optimizer lets it lead (`graph_common`,
`store_rules.asked_relation_leads`). Real store, real spaCy and MiniLM, the demo's memories,
relations and clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fused_memory.demo_data import DEMO_NAMESPACE, DEMO_NOW, DEMO_RELATIONS, demo_memories
from fused_memory.ensemble import EnsembleMemory
from fused_memory.query.store_rules import ASKED_RELATION_WEIGHT
from fused_memory.store.memory_store import MemoryStore

TOM = "Tom Becker is a backend engineer on the platform team."
LENA = "Lena Fischer joined the platform team as a site reliability engineer."


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    s = MemoryStore.embedded(Path(tmp_path_factory.mktemp("relations")) / "store")
    s.add(demo_memories())
    for src, rel, dst, kind, conf in DEMO_RELATIONS:
        s.relate(src, rel, dst, namespace=DEMO_NAMESPACE, kind=kind, confidence=conf)
    yield s
    s.close()


def _top(ens: EnsembleMemory, query: str, k: int = 5) -> list[str]:
    return [h.memory.text for h in ens.retrieve(query, namespace=DEMO_NAMESPACE, k=k, now=DEMO_NOW).hits]


def test_both_reports_are_in_the_top_five(store: MemoryStore) -> None:
    ens = EnsembleMemory(store)
    try:
        r = ens.retrieve("who reports to Sarah?", namespace=DEMO_NAMESPACE, k=5, now=DEMO_NOW)
        texts = [h.memory.text for h in r.hits]
        assert LENA in texts and any(t.startswith("Tom") or "Tom Becker" in t for t in texts), texts
        assert r.plan.weights["graph"] == ASKED_RELATION_WEIGHT
        assert any(x.startswith("asked_relation_leads: asks a relation (Sarah Chen reports_to)")
                   for x in r.plan.reasons)
        lena = next(h for h in r.hits if h.memory.text == LENA)
        graph = next(c for c in lena.contributions if c.arm == "graph")
        assert graph.detail == "Sarah Chen <-reports_to- Lena Fischer -> memory (hop 0, asked relation)"
        assert "asked_relation_leads" in r.explain()
    finally:
        ens.close()


def test_with_the_optimizer_off_the_graph_arm_still_reroots(store: MemoryStore) -> None:
    ens = EnsembleMemory(store, optimizer=False)
    try:
        r = ens.retrieve("who reports to Sarah?", namespace=DEMO_NAMESPACE, k=10, now=DEMO_NOW)
        assert r.plan.weight("graph") == 1.0 and not any("asked_relation" in x for x in r.plan.reasons)
        alone = ens.retrieve("who reports to Sarah?", namespace=DEMO_NAMESPACE, k=6, now=DEMO_NOW, arms=["graph"])
        texts = [h.memory.text for h in alone.hits]
        # the reports lead the arm's own list: Tom's latest, Lena's, then Tom's others (ANSWER_SPREAD)
        assert texts[1] == LENA and TOM in texts[:5] and all("Sarah" not in t for t in texts[:5]), texts
    finally:
        ens.close()


def test_a_question_that_names_no_relation_is_unchanged(store: MemoryStore) -> None:
    ens = EnsembleMemory(store)
    try:
        r = ens.retrieve("what did Sarah approve?", namespace=DEMO_NAMESPACE, k=5, now=DEMO_NOW)
        assert not any(x.startswith("asked_relation_leads") for x in r.plan.reasons)
        assert r.hits[0].memory.text == "Sarah approved my vacation for the first week of May."
    finally:
        ens.close()
