"""Which relation a query asks, in which direction (`query.relations`), and the stage-2b rule that
records it and lets the graph arm lead (`store_rules.asked_relation_leads`). `NOW` is Wednesday
2024-05-15 12:00 UTC; the entities below carry the relation names `Entity.relations` lists. The
negative rows are the review's false positives of the first version, which matched a bag of stems."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fused_memory.query import EntityMatcher, optimize, parse_query
from fused_memory.query.relations import asked_relations, relation_words
from fused_memory.query.store_rules import ASKED_RELATION_WEIGHT, asked_relation_leads, scope_hub_seeds
from fused_memory.results import EntityCandidate, EntityRef
from fused_memory.types import Entity

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
FWD, BACK = True, False
MATCHER = EntityMatcher([  # Tom and Lena report to Sarah, Sarah mentors and works in Berlin, Tom works on Kestrel
    Entity("sarah chen", "Sarah Chen", ("Sarah",), "PERSON", 10,
           (("mentors", FWD), ("reports_to", BACK), ("works_in", FWD))),
    Entity("tom becker", "Tom Becker", ("Tom",), "PERSON", 4, (("reports_to", FWD), ("works_on", FWD))),
    Entity("lena fischer", "Lena Fischer", ("Lena",), "PERSON", 2, (("reports_to", FWD),)),
    Entity("kestrel", "Kestrel", (), "PRODUCT", 3, (("works_on", BACK),)),
    Entity("caroline", "Caroline", (), "PERSON", 40, (("knows", FWD),)),
    Entity("berlin", "Berlin", (), "GPE", 2, (("works_in", BACK),)),
])
S, T, K, C = "sarah chen", "tom becker", "kestrel", "caroline"


def asked(query: str) -> tuple[tuple[str, str, bool], ...]:
    parsed = parse_query(query, now=NOW, matcher=MATCHER)
    return asked_relations(parsed.text, parsed.entity_refs, MATCHER.relations)


@pytest.mark.parametrize("query, expected", [
    ("who reports to Sarah?", ((S, "reports_to", BACK),)),           # Sarah is the target: her reports
    ("Who does Tom report to?", ((T, "reports_to", FWD),)),          # Tom is the source: his manager
    ("Tom reports to whom?", ((T, "reports_to", FWD),)),
    ("who reported to Sarah?", ((S, "reports_to", BACK),)),          # any form of the verb
    ("what does Tom work on?", ((T, "works_on", FWD),)),
    ("what does Tom work on by himself?", ((T, "works_on", FWD),)),  # "by" after an active verb: no flip
    ("who works on Kestrel?", ((K, "works_on", BACK),)),
    ("who does Sarah mentor?", ((S, "mentors", FWD),)),              # one word: after the entity
    ("who is mentored by Sarah?", ((S, "mentors", FWD),)),           # passive: "by" turns it round
    ("who does Caroline know?", ((C, "knows", FWD),)),
    ("who reports to Sarah or Tom?", ((S, "reports_to", BACK),)),    # no one reports to Tom
    # not asked
    ("who mentors Sarah?", ()),                                      # Sarah mentors; no one mentors her
    ("what did Sarah report to the board?", ()),                     # Sarah reports to no one
    ("does Tom report to Sarah?", ()),                               # both ends named: is there such an edge?
    ("which office in Berlin does Sarah work in?", ((S, "works_in", FWD),)),  # both named before the phrase
    ("does Sarah work in Berlin?", ()),                              # named on both sides, and no wh-word
    ("who in Kestrel reports to Sarah?", ()),                        # named on both sides
    ("Tom worked on the migration", ()),                             # a statement: no wh-word
    ("what does Sarah think about working from home?", ()),          # "work" without "in"
    ("where does Sarah work?", ()),                                  # "in" is only implied: left alone
    ("what was in Sarah's quarterly report?", ()),                   # a noun
    ("what did Tom report?", ()),                                    # "report" without "to"
    ("what happened to the report to Sarah?", ()),                   # after a determiner: a noun
    ("what does Caroline know about pottery?", ()),                  # a preposition after a one-word relation
    ("what did Sarah say about Berlin?", ()),
])
def test_what_a_query_asks(query: str, expected: tuple) -> None:
    assert asked(query) == expected


@pytest.mark.parametrize("name, words", [
    ("reports_to", ("reports", "to")), ("reportsTo", ("reports", "to")), ("reports-to", ("reports", "to")),
    ("works.on", ("works", "on")), ("manager of", ("manager", "of")), ("MENTORS", ("mentors",)),
    ("is_a", ()), ("has", ()), ("is", ()), ("_", ()), ("-", ()), ("/", ()), ("", ()),  # never asked
])
def test_relation_names_are_read_as_words(name: str, words: tuple) -> None:
    assert relation_words(name) == words


def test_a_name_with_no_word_is_never_asked() -> None:
    """Labels of separators only ("_", "-") split into no words; matching them crashed every query
    naming their entities with an IndexError."""
    rels = {"tom becker": (("_", FWD), ("-", BACK), ("is", FWD))}.get
    parsed = parse_query("who is Tom?", now=NOW, matcher=MATCHER)
    assert asked_relations(parsed.text, parsed.entity_refs, lambda e: rels(e, ())) == ()


def test_only_the_candidates_the_graph_seeds_from_are_asked() -> None:
    """A confident ref seeds its best candidate only, so another candidate's relations are not asked."""
    ref = EntityRef("Sarah", (EntityCandidate("sarah chen", "Sarah Chen", 0.85),
                              EntityCandidate("sarah park", "Sarah Park", 0.15)))
    rels = {"sarah park": (("reports_to", BACK),)}.get
    assert asked_relations("who reports to Sarah?", [ref], lambda e: rels(e, ())) == ()
    ambiguous = EntityRef("Sarah", (EntityCandidate("sarah chen", "Sarah Chen", 0.5),
                                    EntityCandidate("sarah park", "Sarah Park", 0.4)))
    assert asked_relations("who reports to Sarah?", [ambiguous], lambda e: rels(e, ())) == \
        (("sarah park", "reports_to", False),)


def plan_for(query: str):  # type: ignore[no-untyped-def]
    parsed = parse_query(query, now=NOW, matcher=MATCHER)
    return parsed, optimize(parsed)


def test_the_rule_records_the_ask_and_lets_the_graph_lead() -> None:
    parsed, plan = plan_for("who reports to Sarah?")
    led = asked_relation_leads(plan, parsed, MATCHER.relations)
    assert led.asked_relations == ((S, "reports_to", False),)
    assert led.weights["graph"] == pytest.approx(plan.weight("graph") * ASKED_RELATION_WEIGHT)
    assert {a: w for a, w in led.weights.items() if a != "graph"} == \
        {a: w for a, w in plan.weights.items() if a != "graph"}
    assert (led.arms, led.skipped) == (plan.arms, plan.skipped)
    assert led.reasons[-1] == "asked_relation_leads: asks Sarah Chen reports_to <- -> graph leads at 8"


@pytest.mark.parametrize("query", ["what does Sarah think about working from home?", "does Tom report to Sarah?",
                                   "who reported to Sarah last week?",  # a window: it says which memories
                                   "who reports to the CEO?"])          # no entity, no graph arm
def test_other_queries_keep_their_plan(query: str) -> None:
    parsed, plan = plan_for(query)
    assert asked_relation_leads(plan, parsed, MATCHER.relations) is plan


def test_unknown_relations_keep_the_plan() -> None:
    parsed, plan = plan_for("who reports to Sarah?")
    assert asked_relation_leads(plan, parsed, None) is plan
    assert asked_relation_leads(plan, parsed, lambda eid: ()) is plan


def test_an_asked_relation_traverses_from_a_hub() -> None:
    """A hub's scope (`scope_hub_seeds`) is dropped: the walk starts at the relation's other end."""
    parsed, plan = plan_for("who reports to Sarah?")
    scoped = scope_hub_seeds(plan, parsed, lambda eid: 0.1, MATCHER.surface_forms)
    assert scoped.graph_scope
    led = asked_relation_leads(scoped, parsed, MATCHER.relations)
    assert led.graph_scope == () and led.asked_relations


def test_the_matcher_lists_relations() -> None:
    assert MATCHER.relations("tom becker") == (("reports_to", FWD), ("works_on", FWD))
    assert MATCHER.relations("berlin") == (("works_in", BACK),) and MATCHER.relations("nobody") == ()


def test_with_the_optimizer_off_the_ask_is_recorded_but_not_weighted() -> None:
    parsed, plan = plan_for("who reports to Sarah?")
    off = asked_relation_leads(plan, parsed, MATCHER.relations, lead=False)
    assert off.asked_relations == ((S, "reports_to", False),) and off.weights == plan.weights
    assert off.reasons[-1] == "asked_relation_leads: asks Sarah Chen reports_to <- -> graph starts at its other end"


def test_labels_and_questions_in_any_script() -> None:
    """Query words were [a-z0-9] only, so a label like "berät" could never be asked."""
    matcher = EntityMatcher([Entity("jürgen", "Jürgen", (), "PERSON", 2, (("berät", True),))])
    parsed = parse_query("who does Jürgen berät?", now=NOW, matcher=matcher)
    assert asked_relations(parsed.text, parsed.entity_refs, matcher.relations) == (("jürgen", "berät", True),)


@pytest.mark.parametrize("query, expected", [
    ("what's Tom working on?", ((T, "works_on", FWD),)),         # a contracted wh-word (review 3)
    ("who's Tom reporting to?", ((T, "reports_to", FWD),)),
    ("how many people report to Sarah?", ((S, "reports_to", BACK),)),
    ("who\u2019s Tom reporting to?", ((T, "reports_to", FWD),)),  # a curly apostrophe
    ("Who read Tom\u2019s report to the board?", ()),            # ... is a possessive too
    ("who reports to Sarah's manager?", ()),                     # Sarah names an owner, not an end
])
def test_contractions_apostrophes_and_owners(query: str, expected: tuple) -> None:
    assert asked(query) == expected


def test_many_labels_cost_a_lookup_each() -> None:
    """A store with thousands of labels: each is looked up by its first word's stem, not scanned
    across the query (1.4 s for 2,000 labels on a 9k-character query before; review 3)."""
    labels = tuple((f"label{i}_of", FWD) for i in range(5000)) + (("reports_to", FWD),)
    matcher = EntityMatcher([Entity("tom becker", "Tom Becker", ("Tom",), "PERSON", 4, labels)])
    parsed = parse_query("who does Tom report to? " + "filler words here " * 400, now=NOW, matcher=matcher)
    assert asked_relations(parsed.text, parsed.entity_refs, matcher.relations) == ((T, "reports_to", FWD),)
