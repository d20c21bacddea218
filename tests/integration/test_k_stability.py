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


@pytest.mark.parametrize("order", ["learned", "rrf"])
def test_a_day_that_holds_nothing_answers_nearest_first_at_every_k(tmp_path: Path, order: str) -> None:
    # "anything on the 22nd?" when nothing was saved for the 22nd: the time plan gives way to the full
    # plan, which the rules leave with dense alone (no words for BM25, no type, the window empty); the
    # memories nearest the day come first, and at every k the same ones (it is not the caller's one arm)
    from datetime import datetime, timedelta, timezone

    from fused_memory import Memory

    now = datetime(2025, 8, 30, 9, tzinfo=timezone(timedelta(hours=10)))
    days = {"bbq": 11, "dentist": 9, "rego": 6, "swim": 3, "boss": 40, "quote": 25, "party": 70, "tyres": 1}
    texts = {"bbq": "bbq at Tuan's, kids wrecked by 5", "dentist": "dentist was fine, no fillings",
             "rego": "paid the car rego online", "swim": "swim lessons for the kids start next term",
             "boss": "new boss starts monday", "quote": "got a quote for the fence", "party": "Linh's party was great",
             "tyres": "new tyres on the ute"}
    with MemoryStore.embedded(tmp_path) as store:
        store.add([Memory(text=texts[k], namespace="p", id=k, created_at=datetime(2025, 8, 22, 12, tzinfo=now.tzinfo)
                          + timedelta(days=d if k in ("dentist", "bbq") else -d)) for k, d in days.items()])
        ens = EnsembleMemory(store, FusionConfig(order=order))
        shown = ens.retrieve("anything on the 22nd", namespace="p", k=10, now=now)
        assert tuple(shown.plan.arms) == ("dense",) and shown.plan.soft_window > 0
        assert first_answers_hold(ens, "anything on the 22nd", "p", now)
        ens.close()
