"""Versions of a fact at formula level (`ensemble.versions`): which memories are versions of one
another (the same slot, another value; never by similarity alone), and the order a question about
now or about an earlier value puts them in."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from fused_memory.ensemble.candidate import Candidate
from fused_memory.ensemble.versions import MAX_VERSIONS, order_versions, said_before, same_value, version_groups
from fused_memory.query.cues import asks_past
from fused_memory.query.slots import SLOT_FIELD, SLOTS_FIELD
from fused_memory.types import Memory

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def cand(mid: str, days: float, text: str, *, slot: str | None = None, new: tuple[str, ...] = (),
         old: tuple[str, ...] = (), predicate: str | None = None, entities: tuple[str, ...] = (),
         subject: str = "user") -> Candidate:
    meta = {SLOT_FIELD: slot, SLOTS_FIELD: [{"key": slot, "subject": subject, "new": list(new), "old": list(old)}]} \
        if slot is not None else {}
    if slot == "":
        meta = {SLOTS_FIELD: [{"key": "", "subject": subject, "new": list(new), "old": list(old)}]}
    m = Memory(text=text, id=mid, predicate=predicate, created_at=NOW - timedelta(days=days), metadata=meta,
               entities=entities)
    return Candidate(m, 1.0 / (1 + days), ())


def test_one_slot_with_another_value_is_a_version():
    manager = [cand("old", 200, "My manager is Priya Raman.", slot="user manager", new=("priya raman",)),
               cand("new", 2, "Since the reorg my manager is Tomasz Nowak.", slot="user manager",
                    new=("tomasz nowak",))]
    assert [(g.members, g.slot) for g in version_groups(manager, 10)] == [((0, 1), "user manager")]


def test_the_same_value_said_twice_is_no_change():
    cs = [cand("a", 300, "I live in Bristol.", slot="user home", new=("bristol",)),
          cand("b", 10, "Bristol is lovely, so glad I live in Bristol now.", slot="user home", new=("bristol",))]
    assert version_groups(cs, 10) == []  # neither is superseded


def test_a_change_that_names_the_value_before_is_a_version_even_of_the_same_value():
    cs = [cand("york", 400, "I moved from Leeds to York.", slot="user home", new=("york",), old=("leeds",)),
          cand("bristol", 30, "We moved from York to Bristol.", slot="user home", new=("bristol",), old=("york",))]
    assert [g.members for g in version_groups(cs, 10)] == [(0, 1)]


def test_a_callers_predicate_needs_no_value():
    cs = [cand("a", 300, "Alice lives in Berlin", predicate="alice home"),
          cand("b", 10, "Alice settled in Oslo", predicate="Alice_Home")]
    assert [g.members for g in version_groups(cs, 10)] == [(0, 1)]


def test_a_change_with_no_attribute_named_joins_the_fact_whose_value_it_says_was_before():
    cs = [cand("gym", 400, "Joined Smart Fit.", slot="user gym", new=("smart fit",)),
          cand("switch", 20, "Cancelled Smart Fit, switched to bouldering at Casa de Pedra.", slot="",
               new=("casa de pedra",), old=("smart fit",)),
          cand("other", 10, "Switched from tea to coffee.", slot="", new=("coffee",), old=("tea",))]
    groups = version_groups(cs, 10)
    assert [(g.members, g.slot) for g in groups] == [((0, 1), "user gym")]


def test_alike_memories_without_a_slot_are_never_versions():
    cs = [cand("wed", 300, "My sister Dana got married in Porto", entities=("Dana", "Porto")),
          cand("lunch", 5, "Had lunch with Dana", entities=("Dana",)),
          cand("q", 3, "Where should we eat on Friday?"),
          cand("a", 2, "The Vietnamese place near the office")]
    assert version_groups(cs, 10) == []


def test_other_subjects_keep_their_own_facts():
    cs = [cand("me", 300, "I work at Spotify.", slot="user employer", new=("spotify",)),
          cand("dana", 12, "Dana left Spotify and joined Klarna.", slot="dana employer", new=("klarna",),
               old=("spotify",), subject="dana")]
    assert version_groups(cs, 10) == []


def test_more_versions_than_a_fact_has_is_a_slot_read_too_loosely():
    cs = [cand(f"m{i}", 100 - i, f"My thing is {i}.", slot="user thing", new=(f"v{i}",))
          for i in range(MAX_VERSIONS + 1)]
    assert version_groups(cs, 20) == []


def test_now_puts_the_newest_first_past_the_one_asked_for_others_keep_their_places():
    cs = [cand("paris", 900, "I live in Paris.", slot="user home", new=("paris",), entities=("Paris",)),
          cand("x", 1, "Booked flights to Rome."),
          cand("berlin", 500, "Moved to Berlin in 2024.", slot="user home", new=("berlin",), entities=("Berlin",)),
          cand("amsterdam", 20, "Now living in Amsterdam.", slot="user home", new=("amsterdam",),
               entities=("Amsterdam",))]
    groups = version_groups(cs, 10)
    now = order_versions(cs, groups)
    assert [c.memory.id for c in now] == ["amsterdam", "x", "berlin", "paris"]
    assert [c.score for c in now] == [c.score for c in cs]  # each takes the score of the place it lands at
    assert now[0].supersedes == ("berlin", "paris") and now[0].older_by_days == (480.0, 880.0)
    assert now[0].version_slot == "user home" and now[2].superseded_by == "amsterdam"
    before = order_versions(cs, groups, past=True, query_words=frozenset({"before", "amsterdam"}))
    assert [c.memory.id for c in before][0] == "berlin"
    in_2025 = order_versions(cs, groups, past=True, before=NOW - timedelta(days=300))
    assert in_2025[0].memory.id == "berlin"  # in effect when the window ended
    long_ago = order_versions(cs, groups, past=True, before=NOW - timedelta(days=2000))
    assert [c.memory.id for c in long_ago] == [c.memory.id for c in cs]  # none then: the fused order


def test_a_change_says_what_was_before_and_values_match_by_their_words():
    change = cand("hooli", 10, "I left Initech and joined Hooli.", slot="user employer", new=("hooli",),
                  old=("initech",)).memory
    assert said_before(change, frozenset({"user employer"})) and not said_before(change, frozenset({"user home"}))
    assert same_value("Golf", "the old VW Golf") and same_value("smart fit gym", "Smart Fit")
    assert not same_value("Golf", "Zoe")


def test_past_value_cues():
    for q in ("who was my manager before the reorg?", "what did I use to drive?", "my previous address?",
              "where did I work formerly?", "what was my old number?", "where did I work until March?"):
        assert asks_past(q), q
    for q in ("how old is Tom?", "who is my manager?", "do I still live in Denver?"):
        assert not asks_past(q), q
