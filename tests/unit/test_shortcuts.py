"""Which queries get a plan that needs no query embedding (`query.shapes`, `query.shortcuts`), what
that plan runs, and that it keeps the full plan as its fallback."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fused_memory.ensemble.options import check_rules_off
from fused_memory.errors import ConfigurationError
from fused_memory.query import DEFAULT_RULES, RULE_NAMES, EntityMatcher, optimize, optimize_off, parse_query
from fused_memory.query.shapes import MAX_IDENTIFIER_COMPANIONS, identifier_led, only_names, pure_time
from fused_memory.query.store_rules import STORE_RULE_NAMES, with_store
from fused_memory.types import Entity

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
SESSION = datetime(2024, 5, 10, 18, 0, tzinfo=timezone.utc)
MATCHER = EntityMatcher([
    Entity("sarah chen", "Sarah Chen", ("Sarah",), "PERSON", 10),
    Entity("sarah park", "Sarah Park", ("Sarah",), "PERSON", 3),
    Entity("kestrel", "Kestrel", ("Kestrel project",), "PRODUCT", 1),
    Entity("caroline", "Caroline", (), "PERSON", 40),
    Entity("melanie", "Melanie", ("Mel",), "PERSON", 30),
])


def parsed(text: str):  # type: ignore[no-untyped-def]
    return parse_query(text, now=NOW, matcher=MATCHER, last_session_end=SESSION)


@pytest.mark.parametrize(("query", "shortcut", "arms"), [
    ("what happened yesterday?", "time", ("temporal",)),
    ("anything from last week?", "time", ("temporal",)),
    ("what did I do in March 2024?", "time", ("temporal",)),
    ("E-47821", "identifier", ("lexical",)),
    ("what was JIRA-9921 about?", "identifier", ("lexical",)),
    ("v2.3.1 release notes", "identifier", ("lexical",)),
    ("Sarah Chen", "name", ("lexical", "graph")),
    ("Sarah and Melanie", "name", ("lexical", "graph")),
    ("who is Caroline?", "name", ("lexical", "graph")),
    ("what did I tell you yesterday?", "time", ("temporal",)),  # what was said then: said in the window
    # not a shortcut: a topic beside the time, the names or the id
    ("what did I paint yesterday?", None, None),
    ("the bug fixed in v2.3.1 that broke the login page", None, None),
    ("what happened to JIRA-9921 on 2024-05-02?", None, None),
    ("what does Sarah Chen think about pottery?", None, None),
    ("what did Melanie do last week?", None, None),
    ("what should I configure for Kestrel?", None, None),
    ("when did Caroline go to the support group?", None, None),
])
def test_which_queries_need_no_embedding(query: str, shortcut: str | None, arms: tuple[str, ...] | None) -> None:
    q = parsed(query)
    plan = optimize(q)
    assert plan.shortcut == shortcut, plan.reasons
    if shortcut is None:
        assert plan.fallback is None and "dense" in plan.arms
        return
    assert plan.arms == arms and "dense" in plan.skipped and not plan.hard_filter
    assert plan.fallback is not None and "dense" in plan.fallback.arms and plan.fallback.shortcut is None
    assert plan.reasons[:-1] == plan.fallback.reasons  # the full plan is everything before the shortcut
    assert plan.reasons[-1].startswith(f"{shortcut}_shortcut: ")
    assert optimize_off(q).shortcut is None  # the optimizer off runs everything


def test_shapes() -> None:
    assert pure_time(parsed("what happened yesterday?")) and not pure_time(parsed("what did I paint yesterday?"))
    assert identifier_led(parsed("JIRA-9921 flaky test"))
    words = " ".join(["checkout", "payments", "flaky", "clock"][:MAX_IDENTIFIER_COMPANIONS + 1])
    assert not identifier_led(parsed(f"JIRA-9921 {words}"))
    assert not identifier_led(parsed("JIRA-9921 yesterday"))  # a window: the time plan's or the full plan's
    assert only_names(parsed("Sarah Chen?")) and not only_names(parsed("Sarah Chen's pottery"))
    assert not only_names(parsed("Sarah Chen recently"))  # a time cue


def test_stage_2b_shapes_the_fallback_not_the_shortcut() -> None:
    q = parsed("Caroline")
    plan = optimize(q)
    hub = with_store(plan, q, True, lambda types: None, lambda entity_id: 0.1, MATCHER)
    assert hub.arms == plan.arms and not hub.graph_scope  # the name plan walks the graph
    assert hub.fallback is not None and hub.fallback.graph_scope  # its full plan scopes the hub


def test_rules_off() -> None:
    q = parsed("what happened yesterday?")
    rules = tuple(r for r in DEFAULT_RULES if r.__name__ != "time_shortcut")
    assert optimize(q, rules=rules).shortcut is None
    assert check_rules_off(["time_shortcut", "mask_hub_names"]) == {"time_shortcut", "mask_hub_names"}
    assert set(RULE_NAMES) & set(STORE_RULE_NAMES) == set()
    for bad in ("time_shortcut", ["time_shortcutt"], 3):
        with pytest.raises(ConfigurationError, match="rules_off"):
            check_rules_off(bad)  # type: ignore[arg-type]
    q = parsed("what did Caroline say about pottery?")
    masked = with_store(optimize(q), q, True, lambda types: None, lambda entity_id: 0.1, MATCHER)
    kept = with_store(optimize(q), q, True, lambda types: None, lambda entity_id: 0.1, MATCHER, off={"mask_hub_names"})
    assert masked.embed_text and kept.embed_text is None
