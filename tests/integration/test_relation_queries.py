"""A question about a relation ("who reports to Sarah?") is answered by who is at its other end.

In the demo, Tom and Lena report to Sarah. Before, the graph arm ranked Sarah's own memories (hop 0)
above her reports' (hop 1), and fusion followed dense and lexical to Sarah's memories: Lena's came
8th. Now the graph arm re-roots at the reports and the optimizer lets it lead (`backends.graph.traversal`,
`store_rules.asked_relation_leads`). Real store, real spaCy and MiniLM, the demo's memories,
relations and clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fused_memory.config import FusionConfig
from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW, DEMO_RELATIONS, demo_memories
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
        graph = {h.memory.text: c.detail for h in r.hits for c in h.contributions if c.arm == "graph"}
        assert graph.get(LENA) == "Sarah Chen <-reports_to- Lena Fischer, 1 hop, asked relation", graph
        tom = "Sarah Chen <-reports_to- Tom Becker, 1 hop, asked relation"
        assert tom in graph.values(), graph  # one of Tom's, reached as an answer, not as Sarah's hop-1 neighbour
        assert r.plan.weights["graph"] == ASKED_RELATION_WEIGHT
        assert r.plan.asked_relations == (("sarah chen", "reports_to", False),)
        assert "asked_relation_leads: asks Sarah Chen reports_to <-" in r.explain()
    finally:
        ens.close()


@pytest.mark.parametrize("query, top", [
    ("does Lena report to Sarah?", LENA),   # both ends named: is there such an edge? the walk from both answers
    ("what does Sarah think about working from home?", None),
    ("what did Sarah approve?", "Sarah approved my vacation for the first week of May."),
])
def test_questions_that_ask_no_relation_are_left_alone(store: MemoryStore, query: str, top: str | None) -> None:
    # the top hit checks what the arms' evidence ranks first under RRF (the walk from both names);
    # the learned order puts "Sarah Chen leads the platform team" above Lena's turn for the first query
    ens = EnsembleMemory(store, FusionConfig(order="rrf"))
    try:
        r = ens.retrieve(query, namespace=DEMO_NAMESPACE, k=5, now=DEMO_NOW)
        assert r.plan.asked_relations == () and r.plan.weight("graph") == 1.0
        assert not any(x.startswith("asked_relation_leads") for x in r.plan.reasons)
        assert top is None or r.hits[0].memory.text == top
    finally:
        ens.close()


def test_with_the_optimizer_off_the_graph_arm_still_reroots(store: MemoryStore) -> None:
    ens = EnsembleMemory(store, optimizer=False)
    try:
        r = ens.retrieve("who reports to Sarah?", namespace=DEMO_NAMESPACE, k=10, now=DEMO_NOW)
        assert r.plan.weight("graph") == 1.0 and r.plan.asked_relations  # recorded, not weighted
        alone = ens.retrieve("who reports to Sarah?", namespace=DEMO_NAMESPACE, k=6, now=DEMO_NOW, arms=["graph"])
        texts = [h.memory.text for h in alone.hits]
        # the reports lead the arm's own list: Tom's latest, Lena's, then Tom's others (ANSWER_SPREAD)
        assert texts[1] == LENA and TOM in texts[:5] and all("Sarah" not in t for t in texts[:5]), texts
    finally:
        ens.close()


def test_a_graph_hit_names_its_path_in_every_explanation(store: MemoryStore, capsys: pytest.CaptureFixture) -> None:
    """The demo's #1 for "who reports to Sarah?" read as a keyword false positive ("Tom reported a
    memory leak...": `graph#1(0.85)`) while the graph had found it through Tom's reports_to edge."""
    from fused_memory.cli import main
    from langchain_fused_memory import EnsembleMemoryRetriever

    ens = EnsembleMemory(store)
    try:
        r = ens.retrieve("who reports to Sarah?", namespace=DEMO_NAMESPACE, k=5, now=DEMO_NOW)
    finally:
        ens.close()
    toms = [h for h in r.hits if any(c.arm == "graph" and "Tom Becker" in (c.detail or "") for c in h.contributions)]
    assert toms and all(": Sarah Chen <-reports_to- Tom Becker, 1 hop, asked relation)" in h.explain() for h in toms)
    assert "<-reports_to- Tom Becker, 1 hop, asked relation)" in r.explain()
    docs = EnsembleMemoryRetriever(store=store, namespace=DEMO_NAMESPACE, k=5, now=DEMO_NOW).invoke(
        "who reports to Sarah?")
    assert any("Sarah Chen <-reports_to- Tom Becker, 1 hop" in d.metadata["explain"] for d in docs)
    assert main(["demo", "--k", "3", "who reports to Sarah?"]) == 0
    assert "<-reports_to- " in capsys.readouterr().out
