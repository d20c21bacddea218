"""Query understanding: Stage 1 (parse) and Stage 2 (plan) of the pipeline (docs/design.md, "The pipeline").

    parsed = parse_query("what did I tell Sarah about Berlin last week?", now=now, matcher=matcher)
    plan = optimize(parsed)          # or optimize_off(parsed) for the every-arm baseline
    plan.arms, plan.weights, plan.type_hints, plan.reasons

`temporal` turns time phrases into windows, `cues` tells whether a query asks for a time and whether a
text states one, `entities` finds known (and, optionally, unknown) entity names, `parse` builds the
`ParsedQuery`, `optimizer` the `QueryPlan`, and `store_rules` adjusts it with the store's statistics
(skip arms that would repeat dense, mask hub names for the vector arms).
"""

from __future__ import annotations

from ..text import normalize_entity_id
from .cues import asks_time, has_time_cue, mentions_time
from .entities import EntityMatcher, Mention, load_nlp, ner_mentions, ner_refs
from .optimizer import DEFAULT_RULES, OFF_RULES, RULE_NAMES, PlanBuilder, Rule, fired_rules, optimize, optimize_off
from .parse import parse_query
from .temporal import TemporalMatch, parse_time

__all__ = [
    "parse_query",
    "optimize", "optimize_off", "fired_rules", "PlanBuilder", "Rule", "DEFAULT_RULES", "OFF_RULES", "RULE_NAMES",
    "parse_time", "has_time_cue", "asks_time", "mentions_time", "TemporalMatch",
    "EntityMatcher", "Mention", "normalize_entity_id", "ner_refs", "ner_mentions", "load_nlp",
]
