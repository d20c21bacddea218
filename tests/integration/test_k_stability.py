"""The first answer never depends on k: over the demo, the update set and the personal-timeline set,
the first j hits at k=j are the first j at k=10 for every question and every j (the stage after
fusion works on one candidate window whatever k is: `ensemble.after_fusion.window`). Real store,
real spaCy, real embedder; the learned order and RRF's alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from fused_memory import EnsembleMemory, FusionConfig, MemoryStore
from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW, DEMO_QUERIES, DEMO_RELATIONS, demo_memories
from fused_memory.evaluation.timeline import load_timeline, run_timeline
from fused_memory.evaluation.updates import load_updates

pytestmark = pytest.mark.slow
DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"


def first_answers_hold(ens: EnsembleMemory, query: str, namespace: str, now) -> bool:  # noqa: ANN001
    top10 = ens.retrieve(query, namespace=namespace, k=10, now=now).ids()
    return all(ens.retrieve(query, namespace=namespace, k=j, now=now).ids() == top10[:j] for j in range(1, 11))


@pytest.mark.parametrize("order", ["learned", "rrf"])
def test_the_demo_and_the_update_set(tmp_path: Path, order: str) -> None:
    updates = load_updates(DATA / "updates.jsonl")
    cases = updates.split("dev")
    with MemoryStore.embedded(tmp_path) as store:
        store.add(demo_memories())
        for src, rel, dst, kind, confidence in DEMO_RELATIONS:
            store.relate(src, rel, dst, kind=kind, confidence=confidence, namespace=DEMO_NAMESPACE)
        store.add(updates.memories(cases))
        ens = EnsembleMemory(store, FusionConfig(order=order))
        unstable = [q for q in DEMO_QUERIES if not first_answers_hold(ens, q, DEMO_NAMESPACE, DEMO_NOW)]
        unstable += [q.text for c in cases for q in c.queries if not first_answers_hold(ens, q.text, c.namespace,
                                                                                        updates.now)]
        ens.close()
    assert unstable == []


@pytest.mark.parametrize("order", ["learned", "rrf"])
def test_the_personal_timeline_set(order: str) -> None:
    report = run_timeline(load_timeline(DATA / "timeline.jsonl"), "dev", config=FusionConfig(order=order))
    assert [o.question.text for o in report.outcomes if not o.stable] == []
    assert not any(o.empty for o in report.outcomes)  # no question answered with nothing
