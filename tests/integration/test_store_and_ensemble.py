"""The store and the ensemble over both vector backends: read-your-writes, isolation, delete,
reopen, fault isolation and bad input. One suite, identical expectations for both backends."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import numpy as np
import pytest

from fused_memory import (
    BackendUnavailable,
    EmbeddingMismatch,
    EnsembleMemory,
    FusionConfig,
    Hit,
    InvalidMemory,
    Memory,
    MemoryType,
    QueryError,
    conversation_context,
)
from fused_memory.embeddings import HashingEmbedder
from fused_memory.query.optimizer import ANSWER_TIME_WEIGHT
from fused_memory.retrievers.base import ArmRequest
from tests.conftest import NOW

FACTS = [
    Memory(text="My employee badge ID is E-47821.", namespace="alice", type=MemoryType.FACT, id="badge"),
    Memory(text="I prefer dark mode in every editor.", namespace="alice", type=MemoryType.PREFERENCE, id="dark"),
    Memory(text="Met Sarah to discuss the Berlin office.", namespace="alice", type=MemoryType.EVENT, id="berlin",
           event_at=NOW - timedelta(days=3)),
    Memory(text="Deployed Kestrel to staging.", namespace="alice", type=MemoryType.EVENT, id="deploy",
           event_at=NOW - timedelta(days=1)),
    Memory(text="Bob's badge ID is E-11111.", namespace="bob", type=MemoryType.FACT, id="bob-badge"),
]


def ids(result) -> list[str]:
    return [h.memory.id for h in result.hits]


def test_read_your_writes_through_every_query_path(store):
    store.add(FACTS)
    ens = EnsembleMemory(store)
    r = ens.retrieve("what's my badge ID E-47821?", namespace="alice", k=3, now=NOW)
    assert ids(r)[0] == "badge"
    assert r.hits[0].explain().endswith(f"-> {r.hits[0].score:.4f}")
    store.add(Memory(text="My locker code is L-5521.", namespace="alice", id="locker"))
    assert ids(ens.retrieve("locker code L-5521", namespace="alice", k=1, now=NOW)) == ["locker"]


def test_namespaces_never_leak(store):
    store.add(FACTS)
    ens = EnsembleMemory(store)
    for q in ("badge ID E-11111", "what's my badge ID?", "what did I do yesterday?", "what do I prefer?"):
        r = ens.retrieve(q, namespace="alice", k=10, now=NOW)
        assert all(h.memory.namespace == "alice" for h in r.hits)
        assert "bob-badge" not in ids(r)
    assert ids(ens.retrieve("badge ID E-11111", namespace="bob", k=10, now=NOW)) == ["bob-badge"]
    for arm in ("dense", "lexical", "temporal", "type"):
        assert all(h.memory.namespace == "bob" for h in
                   ens.retrieve("badge", namespace="bob", k=10, now=NOW, arms=[arm]).hits)


def test_delete_removes_from_every_arm_and_only_that_namespace(store):
    store.add(FACTS)
    store.delete("alice", ["badge"])
    ens = EnsembleMemory(store)
    r = ens.retrieve("badge ID E-47821", namespace="alice", k=10, now=NOW)
    assert "badge" not in ids(r)
    assert store.get_many("alice", ["badge"]) == []
    assert [m.id for m in store.get_many("bob", ["bob-badge"])] == ["bob-badge"]


def test_upsert_by_id_replaces(store):
    store.add(FACTS)
    store.add(Memory(text="My employee badge ID is now E-99999.", namespace="alice", id="badge"))
    assert store.count("alice") == 4
    [m] = store.get_many("alice", ["badge"])
    assert "E-99999" in m.text
    ens = EnsembleMemory(store)
    assert "badge" not in ids(ens.retrieve("E-47821", namespace="alice", k=10, now=NOW, arms=["lexical"]))


def test_reopen_gives_the_same_answers(store_factory):
    s = store_factory("persist")
    s.add(FACTS)
    s.end_session("alice", NOW - timedelta(days=2))
    before = EnsembleMemory(s).retrieve("badge ID and dark mode", namespace="alice", k=5, now=NOW)
    s.close()
    s2 = store_factory("persist")
    after = EnsembleMemory(s2).retrieve("badge ID and dark mode", namespace="alice", k=5, now=NOW)
    assert ids(after) == ids(before)
    assert [h.score for h in after.hits] == pytest.approx([h.score for h in before.hits])
    assert s2.last_session_end("alice") == NOW - timedelta(days=2)


def test_other_embedder_is_refused(store_factory):
    s = store_factory("pinned")
    s.add(FACTS[:1])
    s.close()
    with pytest.raises(EmbeddingMismatch):
        store_factory("pinned", embedder=HashingEmbedder(dim=64)).open()


class Raising:
    name = "dense"

    def search(self, request: ArmRequest) -> list[Hit]:
        raise RuntimeError("vector backend exploded")


class Sleeping:
    name = "lexical"

    def search(self, request: ArmRequest) -> list[Hit]:
        time.sleep(1.5)
        return [Hit("badge", 1.0)]


def _faulty(store) -> EnsembleMemory:
    cfg = FusionConfig(timeouts_s={"lexical": 0.2})
    return EnsembleMemory(store, cfg, arms={"dense": Raising(), "lexical": Sleeping()})


def test_raising_and_sleeping_arms_are_dropped_and_flagged(store):
    store.add(FACTS)
    r = _faulty(store).retrieve("what do I prefer?", namespace="alice", k=5, now=NOW)
    failed = {f.arm: f.kind for f in r.failures}
    assert failed == {"dense": "error", "lexical": "timeout"}
    assert "dark" in ids(r)  # the type arm still answered
    assert all(c.arm == "type" for h in r.hits for c in h.contributions)


async def test_async_path_isolates_faults_the_same_way(store):
    store.add(FACTS)
    r = await _faulty(store).aretrieve("what do I prefer?", namespace="alice", k=5, now=NOW)
    assert {f.arm: f.kind for f in r.failures} == {"dense": "error", "lexical": "timeout"}
    assert "dark" in ids(r)


async def test_sync_and_async_agree(store):
    store.add(FACTS)
    ens = EnsembleMemory(store)
    for q in ("badge E-47821", "what did I do yesterday?", "what do I prefer?"):
        a = ens.retrieve(q, namespace="alice", k=5, now=NOW)
        b = await ens.aretrieve(q, namespace="alice", k=5, now=NOW)
        assert ids(a) == ids(b)


def test_every_arm_failing_raises_one_clear_error(store):
    store.add(FACTS)

    class Boom:
        def __init__(self, name): self.name = name
        def search(self, request): raise ConnectionError(f"{self.name} down")

    ens = EnsembleMemory(store, arms={a: Boom(a) for a in ("dense", "lexical", "temporal", "type", "graph")})
    with pytest.raises(BackendUnavailable) as exc:
        ens.retrieve("what did I do yesterday?", namespace="alice", k=5, now=NOW)
    assert set(exc.value.causes) >= {"dense", "temporal"}
    assert "dense down" in str(exc.value)


@pytest.mark.parametrize("query,kw,error", [
    ("", {}, QueryError),
    ("   \n\t ", {}, QueryError),
    ("x" * 100_000, {}, QueryError),
    ("badge", {"k": 0}, QueryError),
    ("badge", {"k": -3}, QueryError),
    ("badge", {"types": ["opinion"]}, QueryError),
    ("badge", {"now": datetime(2024, 5, 15, 12, 0)}, QueryError),
    ("badge", {"namespace": ""}, QueryError),
    ("badge", {"arms": ["telepathy"]}, QueryError),
])
def test_bad_queries_get_clear_errors(store, query, kw, error):
    store.add(FACTS)
    args = {"namespace": "alice", "k": 5, "now": NOW, **kw}
    with pytest.raises(error):
        EnsembleMemory(store).retrieve(query, **args)


def test_unknown_namespace_is_a_defined_empty_result(store):
    store.add(FACTS)
    r = EnsembleMemory(store).retrieve("badge", namespace="nobody", k=5, now=NOW)
    assert r.hits == () and r.failures == ()


def test_a_bad_memory_in_a_batch_writes_nothing(store):
    with pytest.raises(InvalidMemory):
        store.add([FACTS[0], "not a memory"])  # type: ignore[list-item]
    with pytest.raises(InvalidMemory):
        Memory(text="naive", event_at=datetime(2024, 1, 1))
    with pytest.raises(InvalidMemory):
        Memory(text="bad type", type="opinion")  # type: ignore[arg-type]
    with pytest.raises(InvalidMemory):
        Memory(text="   ")
    assert store.count("alice") == 0


def test_type_hint_widens_when_the_filter_leaves_too_few(store):
    store.add(FACTS)
    r = EnsembleMemory(store).retrieve("what's my setting for the badge?", namespace="alice", k=5, now=NOW)
    assert r.plan.hard_filter  # "setting" implies a preference, as a hard filter
    assert set(r.widened) <= {"dense", "lexical"} and r.widened
    assert "badge" in ids(r)  # a Fact, found although the query implies a preference


def test_forced_types_restrict_the_type_arm(store):
    store.add(FACTS)
    r = EnsembleMemory(store).retrieve("anything about work", namespace="alice", k=5, now=NOW,
                                       types=["event"], arms=["type"])
    assert {h.memory.type for h in r.hits} == {MemoryType.EVENT}


def test_forced_types_are_not_reported_skipped(store):
    """The plan said both: "type" among the arms that ran and, for the same query, skipped for
    "no type hint"."""
    store.add(FACTS)
    r = EnsembleMemory(store).retrieve("anything about work", namespace="alice", k=5, now=NOW, types=["event"])
    assert "type" in r.plan.arms and "type" not in r.plan.skipped
    assert "type" not in r.to_json()["plan"]["skipped"]


def test_context_finds_a_reply_survives_reopen_and_is_never_returned_as_text(store_factory):
    s = store_factory("ctx")
    turns = conversation_context([
        Memory(text="How did the kids handle the accident?", namespace="alice", session_id="s1", id="q"),
        Memory(text="They were scared but we reassured them.", namespace="alice", session_id="s1", id="a"),
        Memory(text="We should go camping again soon.", namespace="alice", session_id="s1", id="later"),
    ])
    s.add(turns)
    r = EnsembleMemory(s).retrieve("kids accident", namespace="alice", k=3, now=NOW, arms=["lexical"])
    assert ids(r)[:2] == ["q", "a"]
    assert r.hits[1].memory.text == "They were scared but we reassured them."
    assert r.hits[1].memory.context == "How did the kids handle the accident?"
    s.close()
    s2 = store_factory("ctx")  # BM25 is rebuilt from the payloads on open, context included
    again = EnsembleMemory(s2).retrieve("kids accident", namespace="alice", k=3, now=NOW, arms=["lexical"])
    assert ids(again) == ids(r)
    assert [h.score for h in again.hits] == pytest.approx([h.score for h in r.hits])


def test_a_memory_with_context_is_embedded_as_the_mean_of_alone_and_read_after(store):
    emb = store.embedder
    m = Memory(text="They were scared.", namespace="alice", context="How did the kids handle it?")
    alone = np.asarray(emb.embed_documents([m.text]))[0]
    after = np.asarray(emb.embed_documents([f"{m.context}\n{m.text}"]))[0]
    want = (alone + after) / np.linalg.norm(alone + after)
    got = store.embed_memories([m, m.with_(context=None)])
    assert got[0] == pytest.approx(want, abs=1e-6)
    assert got[1] == pytest.approx(alone / np.linalg.norm(alone), abs=1e-6)


def test_type_share_counts_the_namespace_and_unselective_arms_are_skipped(store):
    store.add(FACTS)
    assert store.type_share("alice", [MemoryType.EVENT]) == pytest.approx(0.5)
    assert store.type_share("alice", [MemoryType.EVENT, MemoryType.FACT]) == pytest.approx(0.75)
    assert store.type_share("nobody", [MemoryType.EVENT]) is None
    events = [Memory(text=f"Went to the {w} meetup.", namespace="carol", type=MemoryType.EVENT,
                     event_at=NOW - timedelta(days=i + 1)) for i, w in enumerate(["rust", "go", "ml"])]
    store.add(events)
    q = "what happened at the rust meetup?"  # an event hint: the type arm would filter to all of carol's
    r = EnsembleMemory(store).retrieve(q, namespace="carol", k=3, now=NOW)
    assert "type" not in r.plan.arms and "would repeat dense" in r.plan.skipped["type"]
    off = EnsembleMemory(store, optimizer=False).retrieve(q, namespace="carol", k=3, now=NOW)
    assert "type" in off.plan.arms
    # "when did...?" filters to memories that state a time, not to events: never unselective for events
    r = EnsembleMemory(store).retrieve("when did I go to the rust meetup?", namespace="carol", k=3, now=NOW)
    assert "temporal" in r.plan.arms


def test_identical_vector_searches_run_once(store, monkeypatch):
    store.add(FACTS)  # optimizer off: the temporal arm on a time cue and the type arm on an event hint both run
    batches: list[int] = []
    real = store.vector_search

    def counting(queries):
        batches.append(len(queries))
        return real(queries)

    monkeypatch.setattr(store, "vector_search", counting)
    q = "what happened at the latest Kestrel deploy?"
    r = EnsembleMemory(store, FusionConfig(pool_min=0), optimizer=False).retrieve(q, namespace="alice", k=3, now=NOW)
    assert {"dense", "temporal", "type"} <= set(r.plan.arms)
    assert batches == [2] and r.pooled == ()  # dense, and one events-only search shared by temporal and type
    top = r.hits[0]
    assert top.memory.id == "deploy" and {c.arm for c in top.contributions} >= {"temporal", "type"}
    # pooled (the default): alice has fewer memories than dense's depth, so dense's one search saw
    # every event there is, and the events-only search is read off it: one engine search, same answer
    batches.clear()
    pooled = EnsembleMemory(store, optimizer=False).retrieve(q, namespace="alice", k=3, now=NOW)
    assert batches == [1] and set(pooled.pooled) == {"temporal", "type"}
    assert pooled.ids() == r.ids() and "pooled temporal" in pooled.explain()
    assert [h.score for h in pooled.hits] == pytest.approx([h.score for h in r.hits])


def test_a_query_whose_only_seed_is_a_hub_searches_the_hubs_memories_by_relevance(store, monkeypatch):
    topics = ["pottery", "camping", "painting", "adoption", "running", "poetry", "music", "books",
              "hiking", "cooking", "dancing", "chess"]
    store.add([Memory(text=f"Caroline: I spent the weekend on {t}.", namespace="conv", entities=("Caroline",),
                      id=f"t{i}") for i, t in enumerate(topics)])
    store.add([Memory(text="Melanie: pottery is my thing, I glaze every weekend.", namespace="conv", id="mel")])
    embedded: list[str] = []
    batches: list[int] = []
    real_embed, real_search = store.embed_query, store.vector_search
    monkeypatch.setattr(store, "embed_query", lambda text: embedded.append(text) or real_embed(text))
    monkeypatch.setattr(store, "vector_search", lambda qs: batches.append(len(qs)) or real_search(qs))
    r = EnsembleMemory(store).retrieve("what did Caroline say about pottery?", namespace="conv", k=3, now=NOW)
    # the traversal would rank all 12 Caroline memories alike; scoped, the graph arm ranks them by relevance
    assert "graph" in r.plan.arms and "graph" not in r.plan.skipped
    assert r.plan.graph_scope == ("CAROLINE", "Caroline", "caroline")
    assert any(x.startswith("scope_hub_seeds: every seed is a hub (Caroline") for x in r.plan.reasons)
    assert r.hits[0].memory.id == "t0"
    graph = [c for c in r.hits[0].contributions if c.arm == "graph"]
    assert graph and graph[0].rank == 1 and graph[0].detail == "mentions Caroline (a hub), ranked by relevance"
    graph_ids = {h.memory.id for h in r.hits for c in h.contributions if c.arm == "graph"}
    assert "mel" not in graph_ids and graph_ids <= {f"t{i}" for i in range(len(topics))}
    # one embedding, one engine search: the 13 memories are fewer than dense's depth, so the scoped
    # search is read off dense's (`FusionConfig.pool_min`)
    assert batches == [1] and r.pooled == ("graph",)
    # the hub's name is no evidence either for the vector arms: they embed the query without it
    assert r.plan.embed_text == "what did say about pottery?" and embedded == ["what did say about pottery?"]
    assert any(x.startswith("mask_hub_names:") for x in r.plan.reasons)
    off = EnsembleMemory(store, optimizer=False).retrieve("what did Caroline say about pottery?",
                                                          namespace="conv", k=3, now=NOW)
    assert off.plan.graph_scope == r.plan.graph_scope and off.plan.embed_text == "what did say about pottery?"
    alone = EnsembleMemory(store).retrieve("what did Caroline say about pottery?", namespace="conv", k=3,
                                           now=NOW, arms=["graph"])
    assert [h.memory.id for h in alone.hits][0] == "t0" and "mel" not in [h.memory.id for h in alone.hits]


def test_a_when_question_ranks_the_memories_that_state_a_time(store):
    """Answer-type matching: "when did...?" names no window, so the temporal arm ranks the memories
    whose text states a time (tagged at ingest), of any type, by relevance."""
    store.add([
        Memory(text="I went to the pottery class yesterday.", namespace="dana", id="pottery-when",
               event_at=NOW - timedelta(days=2)),
        Memory(text="The pottery class was fun and messy.", namespace="dana", id="pottery-fun"),
        Memory(text="I like pottery a lot.", namespace="dana", type=MemoryType.PREFERENCE, id="pottery-like"),
        Memory(text="My pottery teacher retires next month.", namespace="dana", type=MemoryType.FACT,
               id="teacher-when"),
        Memory(text="I started running in March 2023.", namespace="dana", id="run-when"),
    ])
    ens = EnsembleMemory(store)
    r = ens.retrieve("When did I go to the pottery class?", namespace="dana", k=5, now=NOW)
    assert "asks_for_time" in {x.split(":", 1)[0] for x in r.plan.reasons}
    assert r.plan.weight("temporal") == ANSWER_TIME_WEIGHT
    assert r.hits[0].memory.id == "pottery-when"
    timed = {h.memory.id for h in r.hits for c in h.contributions if c.arm == "temporal"}
    assert timed <= {"pottery-when", "teacher-when", "run-when"} and "pottery-when" in timed
    assert all(c.detail == "states a time" for h in r.hits for c in h.contributions if c.arm == "temporal")
    alone = ens.retrieve("When did I go to the pottery class?", namespace="dana", k=5, now=NOW, arms=["temporal"])
    assert set(ids(alone)) == {"pottery-when", "teacher-when", "run-when"}
    # a question that does not ask for a time leaves the arm in its usual modes
    r = ens.retrieve("What did I say about the pottery class?", namespace="dana", k=5, now=NOW)
    assert "temporal" not in r.plan.arms
