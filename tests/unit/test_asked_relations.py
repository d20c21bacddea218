"""Stage 2b, `asked_relation_leads`: a query that asks a relation one of its entities has puts the
graph arm in the lead at `ASKED_RELATION_WEIGHT`, and traverses even from a hub. `NOW` is Wednesday
2024-05-15 12:00 UTC; the entities below carry the relation names `Entity.relations` lists."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fused_memory.query import EntityMatcher, optimize, parse_query
from fused_memory.query.store_rules import ASKED_RELATION_WEIGHT, asked_relation_leads, scope_hub_seeds
from fused_memory.store.protocols import Entity

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
MATCHER = EntityMatcher([
    Entity("sarah chen", "Sarah Chen", ("Sarah",), "PERSON", 10, ("mentors", "reports_to", "works_in")),
    Entity("tom becker", "Tom Becker", ("Tom",), "PERSON", 4, ("reports_to", "works_on")),
    Entity("kestrel", "Kestrel", (), "PRODUCT", 3, ("works_on",)),
    Entity("berlin", "Berlin", (), "GPE", 2, ()),
])
LEADS = "asked_relation_leads: asks a relation"


def plan_for(query: str):  # type: ignore[no-untyped-def]
    parsed = parse_query(query, now=NOW, matcher=MATCHER)
    return parsed, optimize(parsed)


@pytest.mark.parametrize("query, asked", [
    ("who reports to Sarah?", "Sarah Chen reports_to"),
    ("Who does Tom report to?", "Tom Becker reports_to"),
    ("what does Tom work on?", "Tom Becker works_on"),
    ("who works on Kestrel?", "Kestrel works_on"),
    ("where does Sarah work?", "Sarah Chen works_in"),          # "work" names works_in ("in" a stopword)
    ("does Tom report to Sarah?", "Sarah Chen reports_to, Tom Becker reports_to"),
    ("who does Sarah mentor?", "Sarah Chen mentors"),
])
def test_a_relation_an_entity_has_puts_the_graph_in_the_lead(query: str, asked: str) -> None:
    parsed, plan = plan_for(query)
    led = asked_relation_leads(plan, parsed, MATCHER.relations)
    assert led.weights["graph"] == pytest.approx(plan.weight("graph") * ASKED_RELATION_WEIGHT)
    assert {a: w for a, w in led.weights.items() if a != "graph"} == \
        {a: w for a, w in plan.weights.items() if a != "graph"}
    assert (led.arms, led.skipped) == (plan.arms, plan.skipped)
    assert led.reasons[-1] == f"{LEADS} ({asked}) -> graph leads at {led.weights['graph']:g}"


@pytest.mark.parametrize("query", [
    "what did Sarah say about the offsite?",       # names no relation
    "what does Berlin report?",                    # Berlin has no reports_to edge
    "who reports to the CEO?",                     # no known entity: no graph arm at all
    "who reported to Sarah last week?",            # a window: the window says which memories
    "what is the reporting line?",                 # "report" but no entity
])
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
    assert led.graph_scope == () and led.reasons[-1].startswith(LEADS)


def test_the_matcher_lists_relations() -> None:
    assert MATCHER.relations("tom becker") == ("reports_to", "works_on")
    assert MATCHER.relations("berlin") == () and MATCHER.relations("nobody") == ()
