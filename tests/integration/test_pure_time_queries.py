"""A question that is only a time ("what happened yesterday?") is answered by the window: the
memories in it come first. At the window's usual weight the one memory of "yesterday" in the demo
came 6th, behind dense's and the type arm's guesses at "what happened" (found by probing the
adapters). Real store, real MiniLM embedder, the demo's memories and clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW, demo_memories
from fused_memory.ensemble import EnsembleMemory
from fused_memory.query.optimizer import PURE_TIME_WEIGHT, WINDOW_TEMPORAL_WEIGHT
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory

QUERIES = [
    "what happened yesterday?", "yesterday", "what did I do yesterday?", "what happened on March 17?",
    "what did I do last week?", "what happened this month?", "what did I do in February?",
    "anything from last Tuesday?", "what happened in January?", "what did I do last weekend?",
]


@pytest.fixture
def ensemble(demo_ensemble: EnsembleMemory) -> EnsembleMemory:
    return demo_ensemble  # the demo's memories, shared by the integration tests that only read them


@pytest.mark.parametrize("query", QUERIES)
def test_the_windows_events_come_first(ensemble: EnsembleMemory, query: str) -> None:
    r = ensemble.retrieve(query, namespace=DEMO_NAMESPACE, k=10, now=DEMO_NOW)
    window = r.parsed.temporal_window
    assert window is not None
    events = [m for m in demo_memories() if m.namespace == DEMO_NAMESPACE and m.type is not None
              and m.type.value == "event" and m.event_at is not None and window.start <= m.event_at <= window.end]
    assert events, "each query's window holds at least one of the demo's events"
    want = min(len(events), 10)
    top = r.hits[:want]
    assert all(h.memory.event_at is not None and window.start <= h.memory.event_at <= window.end for h in top), \
        [(h.rank, h.memory.text[:40], h.explain) for h in r.hits]
    assert r.plan.weights["temporal"] > 1.0 and "type" in r.plan.skipped and "lexical" in r.plan.skipped


@pytest.mark.parametrize("query", QUERIES)
def test_the_windows_events_come_first_in_the_full_plan_too(ensemble: EnsembleMemory, query: str) -> None:
    """The full plan runs when the caller picks the arms: there the window leads at `PURE_TIME_WEIGHT`
    (`pure_time_window_decides`) and BM25 is left out (`skip_lexical_pure_time`). At the window's
    usual weight dense's guesses at "what happened" came before the window's memories; with BM25,
    "the first week of May" came before last week's events."""
    r = ensemble.retrieve(query, namespace=DEMO_NAMESPACE, k=10, now=DEMO_NOW, arms=["dense", "lexical", "temporal"])
    window = r.parsed.temporal_window
    events = [m for m in demo_memories() if m.namespace == DEMO_NAMESPACE and m.type is not None
              and m.type.value == "event" and m.event_at is not None and window.start <= m.event_at <= window.end]
    top = r.hits[:min(len(events), 10)]
    assert r.plan.shortcut is None and r.plan.weights["temporal"] == PURE_TIME_WEIGHT
    assert all(h.memory.event_at is not None and window.start <= h.memory.event_at <= window.end for h in top), \
        [(h.rank, h.memory.text[:40], h.explain()) for h in r.hits]


def test_a_time_with_a_topic_is_not_a_pure_time_query(ensemble: EnsembleMemory) -> None:
    r = ensemble.retrieve("what did I tell Sarah about the Berlin office last week?", namespace=DEMO_NAMESPACE,
                          k=5, now=DEMO_NOW)
    assert r.plan.weights["temporal"] == WINDOW_TEMPORAL_WEIGHT and "lexical" in r.plan.arms


@pytest.mark.parametrize(("query", "first"), [
    ("what did I tell Sarah last week?", "Told Sarah that the Berlin office needs two more desks"),
    ("what did I discuss with Tom last week?", "Had lunch with Tom Becker"),
])
def test_a_window_beside_a_topic_puts_the_windows_answer_first(ensemble: EnsembleMemory, query: str,
                                                                 first: str) -> None:
    """The tool description's own example: at the window's old weight (1.0) two of Sarah's events
    from 8 and 11 days before came first, and the one inside "last week" third."""
    r = ensemble.retrieve(query, namespace=DEMO_NAMESPACE, k=5, now=DEMO_NOW)
    assert r.hits[0].memory.text.startswith(first), [h.memory.text[:50] for h in r.hits]


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EnsembleMemory]:
    """An agent's diary with plans ahead of DEMO_NOW (Friday 2026-03-20) beside the same kinds of
    events behind it: the window, not the words, must tell them apart."""
    store = MemoryStore.embedded(tmp_path_factory.mktemp("plans") / "store", ner=False)
    at = {"past_dentist": DEMO_NOW - timedelta(days=12), "dentist": DEMO_NOW + timedelta(days=4),
          "flight": DEMO_NOW + timedelta(days=1, hours=-8), "review": DEMO_NOW + timedelta(days=17),
          "past_review": DEMO_NOW - timedelta(days=3), "past_flight": DEMO_NOW - timedelta(days=30)}
    texts = {"past_dentist": "Dentist appointment with Dr. Alvarez, cleaning",
             "dentist": "Dentist appointment with Dr. Alvarez, filling",
             "flight": "Flight to Berlin for the office opening",
             "review": "Quarterly review with Sarah",
             "past_review": "Quarterly review prep with Sarah",
             "past_flight": "Flight to Lisbon for the conference"}
    store.add([Memory(text=texts[k], namespace="plans", id=k, event_at=at[k]) for k in texts])
    ens = EnsembleMemory(store)
    yield ens
    ens.close()
    store.close()


@pytest.mark.parametrize(("query", "first"), [
    ("what do I have next week?", "dentist"),  # Tuesday 24th, in Mon 23 - Sun 29
    ("when is my dentist appointment next week?", "dentist"),  # not the one 12 days ago
    ("anything tomorrow?", "flight"),
    ("any flights in the next few weeks?", "flight"),  # not last month's to Lisbon
    ("when is my review with Sarah next month?", "review"),  # April 6th
    ("what do I have on Tuesday?", "dentist"),  # the Tuesday to come (it was the 17th)
    ("what's on March 24?", "dentist"),  # this year's (it was March 2025)
])
def test_a_window_ahead_finds_the_plans_in_it(plans: EnsembleMemory, query: str, first: str) -> None:
    """"next week", "tomorrow" were read but gave no window: the plan was found by words alone,
    and the past dentist appointment ranked with the coming one."""
    r = plans.retrieve(query, namespace="plans", k=3, now=DEMO_NOW)
    window = r.parsed.temporal_window
    assert window is not None and window.end > DEMO_NOW and "temporal" in r.plan.arms
    assert r.ids()[0] == first, [(h.memory.id, h.explain) for h in r.hits]
    if query in ("what do I have next week?", "anything tomorrow?"):  # the window is the whole question
        inside = [window.contains(h.memory.event_at) for h in r.hits]
        assert inside == sorted(inside, reverse=True), [(h.memory.id, h.explain) for h in r.hits]
