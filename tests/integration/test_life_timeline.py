"""An assistant's memory of one life, used as users use it: memories saved as people say them (the
time it was said, no predicate, no event time), everyday questions months later. Real store, real
spaCy, real embedder.

The examples are the issue's own: time questions over memories that carry only when they were
said, dates written in the text, changes written as events, alike texts that are no versions, the
first answer at every k, and types read from the text."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from fused_memory import EnsembleMemory, Memory, MemoryStore, MemoryType, QueryError

pytestmark = pytest.mark.slow

TZ = timezone(timedelta(hours=2))
NOW = datetime(2026, 6, 10, 18, 0, tzinfo=TZ)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    with MemoryStore.embedded(tmp_path_factory.mktemp("life")) as s:
        yield s


@pytest.fixture(scope="module")
def ens(store: MemoryStore):  # noqa: ANN201
    e = EnsembleMemory(store)
    yield e
    e.close()


def said(ns: str, *texts_days: tuple[str, float]) -> list[Memory]:
    return [Memory(text=t, namespace=ns, id=f"{ns}-{i}", created_at=NOW - timedelta(days=d))
            for i, (t, d) in enumerate(texts_days)]


# ------------------------------------------------------------------ a memory's times
def test_memories_saved_with_no_time_answer_what_did_i_do_today(store: MemoryStore, ens: EnsembleMemory) -> None:
    store.add([Memory(text="Walked the dog by the lake", namespace="notime"),
               Memory(text="Paid the electricity bill", namespace="notime")])
    r = ens.retrieve("what did I do today?", namespace="notime", k=5)
    assert {h.memory.text for h in r.hits} == {"Walked the dog by the lake", "Paid the electricity bill"}
    assert r.hits[0].explain().count("said today")


def test_what_was_said_last_week_and_yesterday_is_found_by_when_it_was_said(store: MemoryStore,
                                                                            ens: EnsembleMemory) -> None:
    store.add(said("week", ("Fixed the bike's back brake.", 4), ("Rang mum about her hip.", 1),
                   ("Bought a new kettle.", 40)))
    assert ens.retrieve("what did I do last week?", namespace="week", k=5, now=NOW).ids()[:2] == ["week-1", "week-0"]
    yesterday = ens.retrieve("what did I tell you yesterday?", namespace="week", k=5, now=NOW)
    assert yesterday.ids() == ["week-1"] and "said yesterday" in yesterday.hits[0].explain()


def test_a_date_written_in_the_text_is_a_time_of_the_memory(store: MemoryStore, ens: EnsembleMemory) -> None:
    store.add(said("vet", ("Booked the vet for the 14th.", 7), ("Need to buy dog food.", 7),
                   ("Dinner at Sam's on June 23", 5)))
    r = ens.retrieve("what am I doing on June 14?", namespace="vet", k=5, now=NOW)
    assert r.ids()[0] == "vet-0" and "states Jun 14" in r.hits[0].explain()
    assert ens.retrieve("anything planned for the 14th of June?", namespace="vet", k=5, now=NOW).ids()[0] == "vet-0"
    assert ens.retrieve("what's happening on June 23?", namespace="vet", k=5, now=NOW).ids()[0] == "vet-2"


def test_a_window_that_holds_nothing_answers_from_the_others_and_says_so(store: MemoryStore,
                                                                         ens: EnsembleMemory) -> None:
    store.add(said("empty", ("Planted tomatoes on the balcony.", 30), ("Repainted the hallway.", 90)))
    r = ens.retrieve("what did I do yesterday?", namespace="empty", k=5, now=NOW)
    assert r.ids()[0] == "empty-0"  # the nearest to yesterday
    assert r.plan.soft_window > 0 and any("the window holds no memory" in why for why in r.plan.reasons)


# ------------------------------------------------------------------ changes as events, versions by slot
def test_changes_written_as_events_are_versions(store: MemoryStore, ens: EnsembleMemory) -> None:
    store.add(said("life", ("I moved from Leeds to York.", 900), ("I work at Initech as a tester.", 800),
                   ("I drive a VW Golf.", 700), ("We moved from York to Bristol.", 200),
                   ("I left Initech and joined Hooli.", 150), ("Sold the Golf and bought a Zoe.", 60),
                   ("Drove the Golf to Cornwall for the weekend.", 500)))
    where = ens.retrieve("where do I live?", namespace="life", k=5, now=NOW)
    assert where.ids()[0] == "life-3" and where.hits[0].supersedes and "slot: user home" in where.hits[0].explain()
    assert ens.retrieve("what car do I drive?", namespace="life", k=5, now=NOW).ids()[0] == "life-5"
    assert ens.retrieve("where do I work?", namespace="life", k=5, now=NOW).ids()[0] == "life-4"
    before = ens.retrieve("where did I work before Hooli?", namespace="life", k=5, now=NOW)
    assert before.ids()[0] == "life-1"  # the version before the one naming Hooli
    drove = ens.retrieve("what did I drive before the Zoe?", namespace="life", k=5, now=NOW).ids()
    assert drove[0] == "life-2" and drove[0] != ens.retrieve("what car do I drive?", namespace="life", k=5,
                                                              now=NOW).ids()[0]  # the Golf, not the current car


def test_alike_texts_are_not_versions(store: MemoryStore, ens: EnsembleMemory) -> None:
    store.add(said("dana", ("My sister Dana got married in Porto", 300), ("Had lunch with Dana", 3)))
    r = ens.retrieve("who is Dana?", namespace="dana", k=5, now=NOW)
    assert r.ids()[0] == "dana-0" and not any(h.superseded_by for h in r.hits)


def test_the_readmes_conversation_marks_no_answer_stale(store: MemoryStore, ens: EnsembleMemory) -> None:
    from fused_memory import conversation_context
    chat = ["Where should we eat on Friday?", "The Vietnamese place near the office"]
    store.add(conversation_context([Memory(text=t, namespace="chat", session_id="2026-03-15",
                                           created_at=NOW - timedelta(days=3)) for t in chat]))
    r = ens.retrieve("where are we eating on Friday?", namespace="chat", k=5, now=NOW)
    assert not any(h.superseded_by or h.supersedes for h in r.hits)


# ------------------------------------------------------------------ the first answer at every k
def test_the_first_answer_does_not_depend_on_k(store: MemoryStore, ens: EnsembleMemory) -> None:
    for q in ("where do I live?", "what car do I drive?", "where did I work before Hooli?", "who is Dana?"):
        ns = "dana" if "Dana" in q else "life"
        top10 = ens.retrieve(q, namespace=ns, k=10, now=NOW).ids()
        for j in range(1, 6):
            assert ens.retrieve(q, namespace=ns, k=j, now=NOW).ids() == top10[:j], (q, j)


# ------------------------------------------------------------------ types by the text, a caller's types strict
def test_types_follow_the_text_not_whether_a_time_was_given(store: MemoryStore) -> None:
    out = store.add([Memory(text="My passport number is C01X00T47.", namespace="types",
                            event_at=NOW - timedelta(days=3)),
                     Memory(text="Went to the cinema with Sam.", namespace="types", event_at=NOW)])
    assert [m.type for m in out] == [MemoryType.FACT, MemoryType.EVENT]


def test_a_callers_types_are_a_filter_in_every_arm(store: MemoryStore, ens: EnsembleMemory) -> None:
    store.add(said("strict", ("Went to the Zephyr concert yesterday.", 1), ("Zephyr is my favourite band.", 50),
                   ("The Zephyr tour tickets cost 80 euros.", 20)))
    for q in ("Zephyr", "what did I do yesterday about Zephyr?"):
        r = ens.retrieve(q, namespace="strict", k=5, types=["fact"], now=NOW)
        assert r.hits and all(h.memory.type is MemoryType.FACT for h in r.hits), q
        assert not r.widened and any("no widening" in why for why in r.plan.reasons)
    with pytest.raises(QueryError):
        ens.retrieve("Zephyr", namespace="strict", types=["opinion"])
