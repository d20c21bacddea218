"""Knowledge updates, on facts as people write them (no predicate given), over a real store with real
spaCy and the real MiniLM embedder:

* a write states a slot key when a rule is sure ("My manager is ..." -> "user manager"); a caller's
  predicate always wins; a chat model may name the slot (scripted here: langchain_core's fake chat
  model stands in for an LLM), and a model that fails, hangs or answers garbage costs no write;
* versions are found by their relation to each other, not by their distance to the query: the
  newer statement comes first for "now", the older for "before", and a fact that did not change
  is not superseded by a newer memory about something else;
* explain() and the framework metadata say which memory supersedes which.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta, timezone

import pytest

from fused_memory import EnsembleMemory, Memory, MemoryStore
from fused_memory.query.entities import load_nlp
from fused_memory.query.slots import SLOT_FIELD, memory_slot, slot_key
from fused_memory.store.slot_model import ChatSlotExtractor

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
NS = "me"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with MemoryStore.embedded(tmp_path_factory.mktemp("updates"), ner=True) as s:
        yield s


@pytest.fixture(scope="module")
def ens(store):
    e = EnsembleMemory(store)
    yield e
    e.close()


def _at(days: int) -> datetime:
    return NOW - timedelta(days=days)


def _add(store: MemoryStore, ns: str, *texts_days: tuple[str, int]) -> list[Memory]:
    return store.add([Memory(text=t, namespace=ns, id=f"{ns}-{i}", created_at=_at(d))
                      for i, (t, d) in enumerate(texts_days)])


# ------------------------------------------------------------------ slot keys at write time
@pytest.mark.parametrize(("text", "key"), [
    ("My manager is Priya Raman.", "user manager"),
    ("Since the reorg my manager is Tomasz Nowak.", "user manager"),
    ("Reporting to Tom now.", "user manager"),
    ("After the reorg, my boss is Fatima.", "user manager"),
    ("I live in Lisbon.", "user home"),
    ("We moved to Munich last spring.", "user home"),
    ("Now living in Amsterdam.", "user home"),
    ("I drive a 2015 Honda Civic.", "user car"),
    ("Sold the Civic, I now drive a Tesla Model 3.", "user car"),
    ("New phone number: 0176 9988 112.", "user phone number"),
    ("My phone number is 0151 2345 678.", "user phone number"),
    ("Switched car insurance to HUK.", "user car insurance"),
    ("Sam's new boss is Marcus.", "sam manager"),
    ("Sam reports to Elena.", "sam manager"),
    ("Caroline: I moved to Denver last year.", "caroline home"),
])
def test_a_rule_keys_what_it_is_sure_of(text, key):
    assert slot_key(load_nlp()(text)) == key


@pytest.mark.parametrize(("text", "key"), [
    ("My manager's manager is Sofia.", "user manager's manager"),  # another slot
    ("My parents live in Boulder.", "user parents home"),           # another subject
    ("My wife drives a Mini.", "user wife car"),
    ("Jonas and I went hiking in the Alps.", None),                # no fact slot: no key
    ("Therapy session moved to 5pm on Thursday.", None),            # a session moved, not the user
    ("Booked a cleaning for next Tuesday.", None),
])
def test_no_key_where_the_rule_is_not_sure_and_other_subjects_keep_their_own(text, key):
    assert slot_key(load_nlp()(text)) == key


def test_the_derived_key_is_stored_and_a_callers_predicate_wins(store):
    derived, given = store.add([
        Memory(text="My manager is Priya Raman.", namespace="keys", id="k1"),
        Memory(text="My manager is Tomasz Nowak.", namespace="keys", id="k2", predicate="reporting line")])
    assert derived.metadata[SLOT_FIELD] == "user manager" and memory_slot(derived) == "user manager"
    assert SLOT_FIELD not in given.metadata and memory_slot(given) == "reporting line"
    (read,) = store.get_many("keys", ["k1"])
    assert read.metadata[SLOT_FIELD] == "user manager"  # kept in the payload


# ------------------------------------------------------------------ versions at query time
def test_the_issue_trace_the_newer_manager_comes_first_and_explains_itself(store, ens):
    old, new = _add(store, "trace", ("My manager is Priya Raman.", 200),
                    ("Since the reorg my manager is Tomasz Nowak.", 2))
    r = ens.retrieve("who is my manager currently?", namespace="trace", k=5, now=NOW)
    assert r.ids()[:2] == [new.id, old.id]
    top, second = r.hits[0], r.hits[1]
    assert top.supersedes == (old.id,) and second.superseded_by == new.id
    assert f"supersedes {old.id} (slot: user manager, 198 days older)" in top.explain()
    # the older one no longer takes the recency list alone: both versions are in it, the newer first
    recency = {h.memory.id: c.rank for h in r.hits for c in h.contributions if c.arm == "recency"}
    assert recency == {new.id: 1, old.id: 2}


def test_a_memory_without_another_version_gets_no_recency_boost(store, ens):
    _add(store, "lone", ("I live in Porto.", 300), ("Booked flights to Rome for September.", 12))
    r = ens.retrieve("where do I live now?", namespace="lone", k=5, now=NOW)
    assert r.ids()[0] == "lone-0"
    assert not [c for h in r.hits for c in h.contributions if c.arm == "recency"]


def test_versions_that_share_no_word_and_have_no_key_are_grouped_by_their_relation(store, ens):
    _add(store, "unkeyed", ("Dana works at Spotify.", 300), ("Dana left Spotify and joined Klarna.", 12))
    r = ens.retrieve("Where does Dana work?", namespace="unkeyed", k=5, now=NOW)
    assert r.ids()[0] == "unkeyed-1" and r.hits[1].superseded_by == "unkeyed-1"


def test_three_versions_newest_first_and_before_names_the_one_asked_for(store, ens):
    _add(store, "three", ("I live in Paris.", 900), ("Moved to Berlin in 2024.", 500), ("Now living in Amsterdam.", 20))
    assert ens.retrieve("Which city do I live in now?", namespace="three", k=5, now=NOW).ids()[0] == "three-2"
    assert ens.retrieve("Where did I live before Amsterdam?", namespace="three", k=5, now=NOW).ids()[0] == "three-1"


@pytest.mark.parametrize("question", ["who was my manager before the reorg?", "who was my previous manager?",
                                      "who did I use to report to?", "who was formerly my manager?"])
def test_past_value_questions_put_the_older_version_first(store, ens, question):
    _add(store, "past", ("My manager is Priya Raman.", 200), ("Since the reorg my manager is Tomasz Nowak.", 2))
    assert ens.retrieve(question, namespace="past", k=5, now=NOW).ids()[0] == "past-0"


def test_what_was_it_in_a_year_is_the_version_in_effect_then(store, ens):
    _add(store, "year", ("My laptop is a ThinkPad X1.", 600), ("My laptop is a MacBook Air M3.", 30))
    assert ens.retrieve("What was my laptop in 2024?", namespace="year", k=5, now=NOW).ids()[0] == "year-0"
    assert ens.retrieve("What laptop do I use?", namespace="year", k=5, now=NOW).ids()[0] == "year-1"


def test_when_did_i_move_finds_the_statement_of_the_move(store, ens):
    _add(store, "move", ("I live in Lisbon.", 400), ("We moved to Munich last spring.", 60))
    assert ens.retrieve("when did I move to Munich?", namespace="move", k=5, now=NOW).ids()[0] == "move-1"


@pytest.mark.parametrize(("facts", "question"), [
    ((("I live in Denver.", 300), ("My parents live in Boulder.", 20)), "Do I still live in Denver?"),
    ((("My manager is Rahul.", 200), ("My manager's manager is Sofia.", 10)), "Is Rahul still my manager?"),
    ((("Lena lives in Hamburg.", 300), ("Lena visited Copenhagen for a weekend.", 10)),
     "Does Lena still live in Hamburg?"),
])
def test_still_questions_where_nothing_changed_are_not_superseded(store, ens, facts, question):
    ns = f"still-{abs(hash(question)) % 10_000}"
    _add(store, ns, *facts)
    r = ens.retrieve(question, namespace=ns, k=5, now=NOW)
    assert r.ids()[0] == f"{ns}-0" and r.hits[0].superseded_by is None


# ------------------------------------------------------------------ the chat-model hook (scripted model)
def _scripted(*answers: str):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    return GenericFakeChatModel(messages=iter([AIMessage(content=a) for a in answers]))


def test_a_chat_model_names_the_slot_no_rule_found(tmp_path):
    with MemoryStore.embedded(tmp_path, ner=True) as store:
        store.slot_extractor = ChatSlotExtractor(_scripted("user | editor"))
        (m,) = store.add(Memory(text="Everything happens in the new tool now.", namespace=NS))
        assert m.metadata[SLOT_FIELD] == "user editor"
        # a rule's key is not asked for again, and a predicate is never overridden
        ruled, given = store.add([Memory(text="I live in Lisbon.", namespace=NS),
                                  Memory(text="Helix is my editor.", namespace=NS, predicate="editor")])
        assert ruled.metadata[SLOT_FIELD] == "user home" and SLOT_FIELD not in given.metadata


class _Hangs:
    def invoke(self, prompt: str) -> str:
        time.sleep(3.0)
        return "user | editor"


class _Breaks:
    def invoke(self, prompt: str) -> str:
        raise ConnectionError("model endpoint down")


@pytest.mark.parametrize(("model", "said"), [
    (_scripted("I think it's about code editors, probably!!! | | |"), "not '<subject> | <slot>'"),
    (_Breaks(), "ConnectionError"),
    (_Hangs(), "no answer within"),
])
def test_a_failing_hanging_or_garbage_model_leaves_the_memory_written_without_a_key(tmp_path, caplog, model, said):
    with MemoryStore.embedded(tmp_path, ner=True) as store:
        # the scripted models answer well within the timeout, even on a loaded host
        store.slot_extractor = ChatSlotExtractor(model, timeout_s=1.0)
        with caplog.at_level(logging.WARNING, logger="fused_memory"):
            (m,) = store.add(Memory(text="Everything happens in the new tool now.", namespace=NS, id="kept"))
        assert SLOT_FIELD not in m.metadata and store.get_many(NS, ["kept"])[0].text == m.text
        assert said in caplog.text


# ------------------------------------------------------------------ what agents see
def test_langchain_metadata_and_langgraph_items_carry_superseded_by(store):
    from langchain_fused_memory import FusedMemoryRetriever

    _add(store, "lc", ("My manager is Priya Raman.", 200), ("Since the reorg my manager is Tomasz Nowak.", 2))
    docs = FusedMemoryRetriever(store=store, namespace="lc", k=5, now=NOW).invoke("who is my manager currently?")
    assert docs[0].metadata["memory_id"] == "lc-1" and docs[0].metadata["supersedes"] == ["lc-0"]
    assert docs[1].metadata["superseded_by"] == "lc-1"


def test_writes_through_the_langgraph_store_get_slot_keys_and_its_items_carry_superseded_by(tmp_path):
    from langchain_fused_memory import FusedMemoryStore

    with MemoryStore.embedded(tmp_path, ner=True) as store:
        lg = FusedMemoryStore(store)
        lg.put(("users", "u1"), "old", {"content": "My manager is Priya Raman."})
        lg.put(("users", "u1"), "new", {"content": "Since the reorg my manager is Tomasz Nowak."})
        (m,) = [x for ns in store.namespaces() for x in store.get_many(ns, ["old"])]
        assert m.metadata[SLOT_FIELD] == "user manager"
        items = lg.search(("users", "u1"), query="who is my manager currently?", limit=2)
        assert [i.key for i in items] == ["new", "old"]  # written the same day: the later write first
        assert items[1].value["superseded_by"] == "new" and "superseded_by" not in items[0].value


def test_before_a_name_finds_the_version_just_older_than_the_one_naming_it(store, ens):
    # the question's words and the versions' values are compared as tokens alike ("James" both sides)
    _add(store, "named", ("My manager is Tom Berger.", 700), ("My manager is James Okafor.", 300),
         ("My manager is Priya Raman.", 20))
    assert ens.retrieve("who was my manager before James?", namespace="named", k=5, now=NOW).ids()[0] == "named-0"
    assert ens.retrieve("who was my manager before Priya?", namespace="named", k=5, now=NOW).ids()[0] == "named-1"
