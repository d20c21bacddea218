"""Stage 1 + Stage 2 on mixed queries: hints, arms, window, entities, and exactly which rules fired.

Every example query of issue 3's seed is a row here; so are LoCoMo-style questions ("When did
Caroline ...", "What is Melanie's hobby?"). `NOW` is Wednesday 2024-05-15 12:00 UTC.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fused_memory.query import (
    DEFAULT_RULES,
    OFF_RULES,
    RULE_NAMES,
    EntityMatcher,
    PlanBuilder,
    fired_rules,
    optimize,
    optimize_off,
    parse_query,
)
from fused_memory.query.optimizer import (
    ANSWER_TIME_WEIGHT,
    PURE_TIME_WEIGHT,
    SPECULATIVE_TEMPORAL_WEIGHT,
    WINDOW_TEMPORAL_WEIGHT,
    mask_hub_names,
    scope_hub_seeds,
    skip_unselective,
)
from fused_memory.results import ARMS, ParsedQuery
from fused_memory.types import Entity, MemoryType

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
SESSION = datetime(2024, 5, 10, 18, 0, tzinfo=timezone.utc)
MATCHER = EntityMatcher([
    Entity("sarah chen", "Sarah Chen", ("Sarah",), "PERSON", 10),
    Entity("sarah park", "Sarah Park", ("Sarah",), "PERSON", 3),
    Entity("berlin office", "Berlin office", ("Berlin",), "FAC", 2),
    Entity("kestrel", "Kestrel", ("Kestrel project",), "PRODUCT", 1),
    Entity("caroline", "Caroline", (), "PERSON", 40),
    Entity("melanie", "Melanie", ("Mel",), "PERSON", 30),
])

D, L, G, T, Y = "dense", "lexical", "graph", "temporal", "type"
PREF, EVENT, ENT = MemoryType.PREFERENCE, MemoryType.EVENT, MemoryType.ENTITY
GRAPH, WIN, TYPE = "graph_from_entities", "temporal_window", "type_arm_for_hints"
ASK = "asks_for_time"
PURE = "pure_time_window_decides"

# (query, session?, hints, arms, temporal phrase, entity mentions, fired rules, hard_filter, hops)
CASES = [
    ("what's my badge ID?", True, set(), (D, L), None, [], (), False, 2),
    ("what did I do last Tuesday?", True, {EVENT}, (D, T), "last Tuesday", [],
     ("event_trigger", WIN, "skip_lexical_pure_time", TYPE, PURE), False, 2),
    ("who reports to Sarah?", True, set(), (D, L, G), None, ["Sarah"], (GRAPH,), False, 2),
    ("what did I tell Sarah about the Berlin office last week?", True, {EVENT}, (D, L, G, T, Y), "last week",
     ["Sarah", "Berlin office"], ("event_trigger", GRAPH, WIN, TYPE), False, 2),
    ("what should I configure?", True, {PREF}, (D, L, Y), None, [],
     ("preference_trigger", "hard_filter_explicit_hint", TYPE), True, 2),
    ("when did the outage happen?", True, {EVENT}, (D, L, T, Y), None, [],
     ("event_trigger", ASK, TYPE), False, 2),
    ("when did the Kestrel launch happen?", True, {EVENT}, (D, L, G, T, Y), None, ["Kestrel"],
     ("event_trigger", GRAPH, ASK, TYPE), False, 2),
    ("what's my setting for the Kestrel project timeout?", True, {PREF}, (D, L, G, Y), None, ["Kestrel project"],
     ("preference_trigger", "hard_filter_explicit_hint", GRAPH, TYPE), True, 2),
    ("what changed since we last talked?", True, set(), (D, T), "since we last talked", [],
     (WIN, "skip_lexical_pure_time", PURE), False, 2),
    ("what changed since we last talked?", False, set(), (D, L), None, [], (), False, 2),
    ("what's been on my mind lately?", True, set(), (D, L, T), "lately", [], (WIN,), False, 2),
    ("When did Caroline go to the LGBTQ support group?", True, {EVENT}, (D, L, G, T, Y), None, ["Caroline"],
     ("event_trigger", GRAPH, ASK, TYPE), False, 2),
    ("In what year did Melanie start painting?", True, set(), (D, L, G, T), None, ["Melanie"],
     (GRAPH, ASK), False, 2),
    ("what did Melanie say when I asked about painting?", True, set(), (D, L, G), None, ["Melanie"],
     (GRAPH,), False, 2),
    ("What is Melanie's hobby?", True, {PREF}, (D, L, G, Y), None, ["Melanie"],
     ("preference_trigger", GRAPH, TYPE), False, 2),
    ("Would Caroline likely pursue writing as a career?", True, set(), (D, L, G), None, ["Caroline"],
     (GRAPH,), False, 2),
    ("who is Caroline?", True, {ENT}, (D, L, G, Y), None, ["Caroline"],
     ("entity_trigger", GRAPH, TYPE), False, 2),
    ("tell me about Melanie", True, {ENT}, (D, L, G, Y), None, ["Melanie"],
     ("entity_trigger", GRAPH, TYPE), False, 2),
    ("what is Kestrel?", True, {ENT}, (D, L, G, Y), None, ["Kestrel"],
     ("entity_trigger", GRAPH, TYPE), False, 2),
    ("who does Sarah Chen work with who also knows Melanie?", True, set(), (D, L, G), None, ["Sarah Chen", "Melanie"],
     (GRAPH,), False, 2),
    ("what happened yesterday?", True, {EVENT}, (D, T), "yesterday", [],
     ("event_trigger", WIN, "skip_lexical_pure_time", TYPE, PURE), False, 2),
    ("what's the latest on JIRA-9921?", True, set(), (D, L), None, [], ("current_state_recency",), False, 2),
    ("which editor do I prefer?", True, {PREF}, (D, L, Y), None, [],
     ("preference_trigger", "hard_filter_explicit_hint", TYPE), True, 2),
    ("what do I like to eat?", True, {PREF}, (D, L, Y), None, [],
     ("preference_trigger", TYPE), False, 2),
    ("What was the party like?", True, set(), (D, L), None, [], (), False, 2),
    ("what did Melanie paint in June 2023?", True, set(), (D, L, G, T), "June 2023", ["Melanie"],
     (GRAPH, WIN), False, 2),
    ("what happened to JIRA-9921 on 2024-05-02?", True, {EVENT}, (D, L, T, Y), "2024-05-02", [],
     ("event_trigger", WIN, TYPE), False, 2),
    ("what did Mel and Caroline do between May 1 and May 10?", True, set(), (D, L, G, T),
     "between May 1 and May 10", ["Mel", "Caroline"], (GRAPH, WIN), False, 2),
]


#: The CASES whose plan needs no query embedding (`query.shortcuts`); their row above is the full plan,
#: which is the shortcut's fallback.
SHORTCUT_CASES = {
    "what did I do last Tuesday?": "time", "what changed since we last talked?": "time",
    "what happened yesterday?": "time", "who is Caroline?": "name", "tell me about Melanie": "name",
    "what is Kestrel?": "name", "what's the latest on JIRA-9921?": "identifier",
}


def plan_for(query: str, session: bool = True):  # type: ignore[no-untyped-def]
    parsed = parse_query(query, now=NOW, matcher=MATCHER, last_session_end=SESSION if session else None)
    return parsed, optimize(parsed)


@pytest.mark.parametrize("query,session,hints,arms,phrase,mentions,fired,hard,hops", CASES,
                         ids=[f"{c[0]}{'' if c[1] else ' (no session)'}" for c in CASES])
def test_mixed_queries(query: str, session: bool, hints: set[MemoryType], arms: tuple[str, ...], phrase: str | None,
                       mentions: list[str], fired: tuple[str, ...], hard: bool, hops: int) -> None:
    parsed, shown = plan_for(query, session)
    shortcut = SHORTCUT_CASES.get(query) if session else None
    assert shown.shortcut == shortcut
    plan = shown.fallback or shown
    assert plan.type_hints == frozenset(hints)
    assert plan.arms == arms
    assert parsed.temporal_phrase == phrase and (parsed.temporal_window is None) == (phrase is None)
    assert [r.text for r in parsed.entity_refs] == mentions
    assert fired_rules(plan) == fired
    assert fired_rules(shown) == fired + ((f"{shortcut}_shortcut",) if shortcut else ())
    assert (plan.hard_filter, plan.max_hops) == (hard, hops)
    assert set(plan.weights) == set(arms) and plan.weights["dense"] == 1.0
    assert set(plan.skipped) == set(ARMS) - set(arms)  # every arm not run says why
    assert set(shown.skipped) == set(ARMS) - set(shown.arms) and "dense" not in shown.arms or not shortcut
    assert all(r.split(":", 1)[0] in RULE_NAMES for r in shown.reasons)


def test_mixed_query_lights_up_every_arm() -> None:
    parsed, plan = plan_for("what did I tell Sarah about the Berlin office last week?")
    assert plan.arms == ARMS and plan.weights["temporal"] == WINDOW_TEMPORAL_WEIGHT and plan.weights["graph"] == 1.0
    (sarah, office) = parsed.entity_refs
    assert sarah.ambiguous and [c.entity_id for c in sarah.candidates] == ["sarah chen", "sarah park"]
    assert not office.ambiguous
    assert parsed.temporal_window is not None and parsed.temporal_window.end == NOW
    assert any("2 candidates" in r for r in plan.reasons)  # the explanation shows the fan-out


def test_weights() -> None:
    assert "temporal" not in plan_for("what happened at the latest outage?")[1].arms  # a cue, no window
    assert optimize_off(plan_for("what happened at the latest outage?")[0]).weights["temporal"] == \
        SPECULATIVE_TEMPORAL_WEIGHT
    assert plan_for("when did the outage happen?")[1].weights["temporal"] == ANSWER_TIME_WEIGHT
    assert optimize_off(plan_for("when did the outage happen?")[0]).weights["temporal"] == ANSWER_TIME_WEIGHT
    assert plan_for("what happened yesterday?")[1].weights["temporal"] == PURE_TIME_WEIGHT  # the window is all
    assert plan_for("what did I paint yesterday?")[1].weights["temporal"] == WINDOW_TEMPORAL_WEIGHT  # a topic too
    assert optimize_off(plan_for("what happened yesterday?")[0]).weights["temporal"] == WINDOW_TEMPORAL_WEIGHT
    for said in ("what did I tell you yesterday?", "what did we talk about last week?", "what did I plan yesterday?"):
        plan = plan_for(said)[1]  # what was said then is in the window by when it was said: the window leads
        assert plan.weights["temporal"] == PURE_TIME_WEIGHT and plan.shortcut == "time", said
        assert "pure_time_window_decides" in fired_rules(plan), said
    assert "pure_time_window_decides" in fired_rules(plan_for("what changed since we last talked?")[1])
    assert plan_for("who reports to Sarah?")[1].weights["graph"] == 1.0


def test_soft_preference_words_do_not_prefilter() -> None:
    for q in ("What is Jon's favorite style of dance?", "What game has Nate been playing with a futuristic setting?",
              "what settings did I change?"):  # third person / noun sense / two hints
        assert not plan_for(q)[1].hard_filter, q


def test_optimize_off_runs_every_arm_that_can_run() -> None:
    parsed, on = plan_for("what's my badge ID?")
    off = optimize_off(parsed)
    assert on.arms == (D, L)
    assert off.arms == (D, L, T) and off.weights["temporal"] == SPECULATIVE_TEMPORAL_WEIGHT
    assert set(off.skipped) == {G, Y} and not off.hard_filter
    parsed, _ = plan_for("what should I configure?")
    off = optimize_off(parsed)
    assert off.arms == (D, L, T, Y) and not off.hard_filter and off.type_hints == {PREF}
    parsed, _ = plan_for("what did I tell Sarah about the Berlin office last week?")
    assert optimize_off(parsed).arms == ARMS
    assert fired_rules(optimize_off(parsed))[-1] == "every_arm_that_can_run"
    assert OFF_RULES[-1].__name__ == "every_arm_that_can_run"


def test_rules_are_data() -> None:
    parsed, _ = plan_for("who reports to Sarah?")
    assert tuple(r.__name__ for r in DEFAULT_RULES) == RULE_NAMES
    without_graph_rule = tuple(r for r in DEFAULT_RULES if r.__name__ != "graph_from_entities")
    assert G not in optimize(parsed, rules=without_graph_rule).arms

    def always_three_hops(b: PlanBuilder, q: ParsedQuery) -> None:
        b.max_hops = 3
        b.note("test rule")

    plan = optimize(parsed, rules=(*DEFAULT_RULES, always_three_hops))
    assert plan.max_hops == 3 and plan.reasons[-1] == "always_three_hops: test rule"
    assert optimize(parsed, rules=()).arms == (D, L)  # the builder's starting point


def test_builder_guards() -> None:
    b = PlanBuilder(parse_query("hi", now=NOW))
    with pytest.raises(ValueError):
        b.skip("dense", "never")
    with pytest.raises(ValueError):
        b.run("bogus")


def test_plan_is_frozen() -> None:
    _, plan = plan_for("who reports to Sarah?")
    with pytest.raises((TypeError, AttributeError)):
        plan.weights["graph"] = 0.0  # type: ignore[index]
    with pytest.raises(AttributeError):
        plan.arms = ()  # type: ignore[misc]


def test_capitalized_unknown_name_uses_ner_only_when_given() -> None:
    class Nlp:
        calls = 0

        def __call__(self, text: str):  # type: ignore[no-untyped-def]
            Nlp.calls += 1
            at = text.find("Priya")
            ent = type("E", (), {"label_": "PERSON", "start_char": at, "end_char": at + 5})()
            return type("Doc", (), {"ents": [ent] if at >= 0 else []})()

    nlp = Nlp()
    parsed = parse_query("what did Priya say?", now=NOW, matcher=MATCHER)
    assert parsed.entity_refs == ()  # nlp=None (the default): spaCy stays off the hot path
    parsed = parse_query("what did Priya say?", now=NOW, matcher=MATCHER, nlp=nlp)
    assert [(r.text, r.source) for r in parsed.entity_refs] == [("Priya", "ner")]
    assert G in optimize(parsed).arms
    before = Nlp.calls
    parse_query("What did Caroline say on Monday?", now=NOW, matcher=MATCHER, nlp=nlp)  # all placed: no NER
    parse_query("what did she say?", now=NOW, matcher=MATCHER, nlp=nlp)  # nothing capitalized: no NER
    assert Nlp.calls == before


def test_entity_inside_the_time_phrase_is_not_a_ref() -> None:
    m = EntityMatcher([Entity("may", "May", (), "PERSON", 5)])
    parsed = parse_query("what did I do in May 2023?", now=NOW, matcher=m)
    assert parsed.entity_refs == () and parsed.temporal_phrase == "May 2023"
    assert [r.text for r in parse_query("what did May say?", now=NOW, matcher=m).entity_refs] == ["May"]


# ------------------------------------------------------------------ stage 2b: selectivity
@pytest.mark.parametrize("query, shares, arms, skipped", [
    # the type arm only filters to events: where events are most of the namespace it repeats dense
    ("what happened at the outage?", {EVENT: 0.97}, ("dense", "lexical"), {"type"}),
    ("what happened at the outage?", {EVENT: 0.30}, ("dense", "lexical", "type"), set()),
    ("what happened at the outage?", {EVENT: 0.51}, ("dense", "lexical"), {"type"}),
    ("what happened at the outage?", {EVENT: 0.50}, ("dense", "lexical", "type"), set()),
    # the temporal arm's window (or its time answers) is selective by itself, whatever share events have
    ("what happened to JIRA-9921 on 2024-05-02?", {EVENT: 0.99}, ("dense", "lexical", "temporal"), {"type"}),
    ("when did the outage happen?", {EVENT: 0.97}, ("dense", "lexical", "temporal"), {"type"}),
    # a statistic the store cannot give skips nothing
    ("what happened at the outage?", {EVENT: None}, ("dense", "lexical", "type"), set()),
])
def test_unselective_filter_arms_are_skipped(query, shares, arms, skipped) -> None:
    parsed, plan = plan_for(query)
    assert "type" in plan.arms
    pruned = skip_unselective(plan, parsed, lambda types: shares.get(next(iter(types))) if len(types) == 1 else None)
    assert pruned.arms == arms
    assert set(pruned.weights) == set(arms)
    for arm in skipped:
        assert "would repeat dense" in pruned.skipped[arm]
    assert fired_rules(pruned)[-1:] == (("skip_unselective",) if skipped else fired_rules(plan)[-1:])
    if not skipped:
        assert pruned is plan


@pytest.mark.parametrize("dampings, scope", [
    # every seed a hub: the graph arm searches the memories naming any of them, by relevance
    ({"sarah chen": 0.1, "sarah park": 0.3, "berlin office": 0.2},
     ("BERLIN", "BERLIN OFFICE", "Berlin", "Berlin Office", "Berlin office", "SARAH", "SARAH CHEN", "SARAH PARK",
      "Sarah", "Sarah Chen", "Sarah Park", "berlin", "berlin office", "sarah", "sarah chen", "sarah park")),
    ({"sarah chen": 0.1, "sarah park": 0.3, "berlin office": 1.0}, ()),   # one ordinary seed: traverse
    ({"sarah chen": 0.5, "sarah park": 0.5, "berlin office": 0.5}, ()),   # at the threshold: not a hub
])
def test_a_graph_whose_every_seed_is_a_hub_is_scoped_not_skipped(dampings, scope) -> None:
    parsed, plan = plan_for("what did I tell Sarah about the Berlin office last week?")
    assert "graph" in plan.arms
    scoped = scope_hub_seeds(plan, parsed, lambda eid: dampings[eid], MATCHER.surface_forms)
    assert scoped.graph_scope == scope
    assert (scoped.arms, scoped.weights, scoped.skipped) == (plan.arms, plan.weights, plan.skipped)
    if scope:
        assert scoped.reasons[-1].startswith("scope_hub_seeds: every seed is a hub (")
    else:
        assert scoped is plan
    # the skip rule leaves a hub-seeded graph alone now
    assert "graph" in skip_unselective(plan, parsed, lambda types: None).arms


@pytest.mark.parametrize("query, damping, forms, graph", [
    ("what did Melanie say about pottery?", None, MATCHER.surface_forms, True),   # statistic unknown
    ("what did Melanie say about pottery?", 0.1, None, True),                      # no names to filter on
    ("what did Melanie say about pottery?", 0.1, lambda eid: (), True),            # nothing known of it
    ("what did I say about pottery?", 0.1, MATCHER.surface_forms, False),          # no seed, no graph
])
def test_scoping_needs_the_statistic_the_names_and_a_seed(query, damping, forms, graph) -> None:
    parsed, plan = plan_for(query)
    assert ("graph" in plan.arms) == graph
    assert scope_hub_seeds(plan, parsed, None if damping is None else (lambda eid: damping), forms) is plan


def test_surface_forms_are_the_names_as_memories_may_store_them() -> None:
    assert MATCHER.surface_forms("melanie") == ("MEL", "MELANIE", "Mel", "Melanie", "mel", "melanie")
    assert MATCHER.surface_forms("kestrel") == ("KESTREL", "KESTREL PROJECT", "Kestrel", "Kestrel Project",
                                                "Kestrel project", "kestrel", "kestrel project")
    assert MATCHER.surface_forms("nobody") == ()


# ------------------------------------------------------------------ stage 2b: hub names and the vector arms
@pytest.mark.parametrize("query, dampings, embed_text", [
    # every candidate of the mention is a hub: the vector arms embed the query without it
    ("What did Melanie realize after the charity race?", {"melanie": 0.15}, "What did realize after the charity race?"),
    ("what is Mel's favorite pottery glaze?", {"melanie": 0.15}, "what is favorite pottery glaze?"),
    ("what is Mel\u2019s favorite pottery glaze?", {"melanie": 0.15}, "what is favorite pottery glaze?"),
    ("When did Caroline and Melanie go camping?", {"caroline": 0.1, "melanie": 0.2}, "When did and go camping?"),
    # an ordinary entity keeps its name; so does one hub among non-hubs of the same mention
    ("What did Melanie realize after the charity race?", {"melanie": 0.9}, None),
    ("who reports to Sarah?", {"sarah chen": 0.1, "sarah park": 0.8}, None),
    # nothing but the name would be left: nothing is masked
    ("Melanie?", {"melanie": 0.1}, None),
])
def test_hub_names_are_masked_for_the_vector_arms(query, dampings, embed_text) -> None:
    parsed, plan = plan_for(query)
    masked = mask_hub_names(plan, parsed, lambda eid: dampings[eid])
    assert masked.embed_text == embed_text
    if embed_text is None:
        assert masked is plan
    else:
        assert masked.reasons[-1].startswith("mask_hub_names:") and repr(embed_text) in masked.reasons[-1]
        assert (masked.arms, masked.weights) == (plan.arms, plan.weights)  # masking never changes the plan


def test_hub_masking_needs_the_statistic() -> None:
    parsed, plan = plan_for("What did Melanie realize after the charity race?")
    assert mask_hub_names(plan, parsed, None) is plan


def test_a_plan_is_json_for_traces() -> None:
    """`QueryOptimizerChain` returns a QueryPlan; LangSmith and json.dumps could not serialize it."""
    import json

    plan = plan_for("what did I tell Sarah about the Berlin office last week?")[1]
    data = json.loads(json.dumps(plan.to_json()))
    assert data["arms"] == list(plan.arms) and data["weights"]["temporal"] == WINDOW_TEMPORAL_WEIGHT
    assert data["type_hints"] == ["event"] and data["reasons"] == list(plan.reasons)
