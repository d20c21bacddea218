"""Versions of a fact at formula level (`ensemble.versions`): which memories are versions of one
another, and the order a question about now or about an earlier value puts them in."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from fused_memory.ensemble.candidate import Candidate
from fused_memory.ensemble.versions import MAX_VERSIONS, near_versions, order_versions, version_groups
from fused_memory.query.cues import asks_past
from fused_memory.query.slots import SLOT_FIELD
from fused_memory.types import Memory

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def cand(mid: str, days: float, text: str, *, slot: str | None = None, predicate: str | None = None,
         entities: tuple[str, ...] = ()) -> Candidate:
    meta = {SLOT_FIELD: slot} if slot else {}
    m = Memory(text=text, id=mid, predicate=predicate, created_at=NOW - timedelta(days=days), metadata=meta,
               entities=entities)
    return Candidate(m, 1.0 / (1 + days), ())


def test_a_derived_key_makes_versions_only_with_a_new_value():
    manager = [cand("old", 200, "My manager is Priya Raman.", slot="user manager", entities=("Priya Raman",)),
               cand("new", 2, "Since the reorg my manager is Tomasz Nowak.", slot="user manager",
                    entities=("Tomasz Nowak",))]
    assert [g.members for g in version_groups(manager, None, None, 10)] == [(0, 1)]
    same = [cand("a", 300, "Art is my passion.", slot="caroline art"),
            cand("b", 10, "Art is how I express myself.", slot="caroline art")]
    assert version_groups(same, None, None, 10) == []  # one topic, no new value: not a change


def test_a_callers_predicate_needs_no_value():
    cs = [cand("a", 300, "Alice lives in Berlin", predicate="alice home"),
          cand("b", 10, "Alice settled in Oslo", predicate="Alice_Home")]
    assert [g.members for g in version_groups(cs, None, None, 10)] == [(0, 1)]


def test_a_keyless_memory_joins_a_keyed_one_when_it_names_the_slot_with_a_new_value():
    cs = [cand("rent", 400, "Rent is 1200 euros a month.", slot="user rent"),
          cand("raise", 30, "The landlord raised the rent to 1350."),
          cand("mats", 10, "Bought new mats for the rent office.")]  # names "rent", no new value
    assert [g.members for g in version_groups(cs, None, None, 10)] == [(0, 1)]


def test_keyless_versions_need_alike_vectors_one_subject_and_a_new_value():
    cs = [cand("a", 300, "Dana works at Spotify.", entities=("Dana", "Spotify")),
          cand("b", 12, "Dana left Spotify and joined Klarna.", entities=("Dana", "Spotify", "Klarna")),
          cand("c", 5, "Omar joined Klarna.", entities=("Omar", "Klarna"))]
    vec = {"a": np.array([1.0, 0.0]), "b": np.array([0.8, 0.6]), "c": np.array([0.8, 0.6])}
    assert [g.members for g in version_groups(cs, vec, 0.5, 10)] == [(0, 1)]  # Omar is another subject
    assert version_groups(cs, vec, 0.9, 10) == []  # not alike enough
    assert version_groups(cs, vec, None, 10) == []  # similarity off: keyed versions only


def test_a_chain_of_alike_memories_is_a_topic_not_a_fact():
    cs = [cand(f"m{i}", 100 - i, f"Went climbing with {i} friends.") for i in range(MAX_VERSIONS + 1)]
    vec = {f"m{i}": np.array([1.0, 0.01 * i]) for i in range(MAX_VERSIONS + 1)}
    assert version_groups(cs, vec, 0.5, 10) == []


def test_now_puts_the_newest_first_past_the_one_asked_for_others_keep_their_places():
    cs = [cand("paris", 900, "I live in Paris.", slot="user home", entities=("Paris",)),
          cand("x", 1, "Booked flights to Rome."),
          cand("berlin", 500, "Moved to Berlin in 2024.", slot="user home", entities=("Berlin",)),
          cand("amsterdam", 20, "Now living in Amsterdam.", slot="user home", entities=("Amsterdam",))]
    groups = version_groups(cs, None, None, 10)
    now = order_versions(cs, groups)
    assert [c.memory.id for c in now] == ["amsterdam", "x", "berlin", "paris"]
    assert now[0].supersedes == ("berlin", "paris") and now[0].older_by_days == (480.0, 880.0)
    assert now[0].version_slot == "user home" and now[2].superseded_by == "amsterdam"
    before = order_versions(cs, groups, past=True, query_words=frozenset({"before", "amsterdam"}))
    assert [c.memory.id for c in before][0] == "berlin"
    in_2025 = order_versions(cs, groups, past=True, before=NOW - timedelta(days=300))
    assert in_2025[0].memory.id == "berlin"  # in effect when the window ended
    long_ago = order_versions(cs, groups, past=True, before=NOW - timedelta(days=2000))
    assert [c.memory.id for c in long_ago] == [c.memory.id for c in cs]  # none then: the fused order


def test_near_versions_are_alike_memories_of_one_subject_only():
    cs = [cand("a", 300, "Yuki Kowalski became engineering manager.", entities=("Yuki Kowalski",)),
          cand("b", 10, "Yuki Kowalski is a site reliability engineer.", entities=("Yuki Kowalski",)),
          cand("c", 5, "Met Jonas Kowalski in Lisbon.", entities=("Jonas Kowalski", "Lisbon"))]
    vec = {"a": np.array([1.0, 0.0]), "b": np.array([0.9, 0.43]), "c": np.array([0.9, 0.43])}
    assert near_versions(cs, [0, 1, 2], vec, 0.5) == {0, 1}
    assert near_versions(cs, [0, 1, 2], vec, None) == set()


def test_past_value_cues():
    for q in ("who was my manager before the reorg?", "what did I use to drive?", "my previous address?",
              "where did I work formerly?", "what was my old number?", "where did I work until March?"):
        assert asks_past(q), q
    for q in ("how old is Tom?", "who is my manager?", "do I still live in Denver?"):
        assert not asks_past(q), q
