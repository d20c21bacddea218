"""Stage 2b: the rules that read the store's statistics, after the query-only rules of `optimizer`,
and what the vector arms embed (`mask_hub_names`).

Split from `optimizer.py` because these need numbers only the store has (how much of the namespace
a type filter keeps, how many memories mention a seed entity), read once per query by the ensemble
and passed in as plain callables, so the rules stay pure and testable without a store. A statistic
that cannot be had is unknown: nothing is skipped or masked for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import replace

from ..results import Arm, ParsedQuery, QueryPlan
from ..text import tokenize
from ..types import MemoryType
from .entities import EntityMatcher
from .relations import asked_relations

__all__ = ["with_store", "skip_unselective", "scope_hub_seeds", "asked_relation_leads", "mask_hub_names",
           "MAX_FILTER_SHARE", "MIN_SEED_DAMPING", "ASKED_RELATION_WEIGHT", "filter_share",
           "STORE_RULE_NAMES"]

#: A filter arm whose filter keeps more than this share of the namespace ranks nearly the memories
#: dense ranks, by the same cosine: it double-counts dense in the fusion and costs a vector search
#: (docs/decisions/0004-skipping-and-scoping-arms.md).
MAX_FILTER_SHARE = 0.5
#: Graph seeds whose hub damping is below this (an entity in more than ~22% of the namespace's
#: memories, see `backends.graph.traversal.hub_damping`) spread their score over everything: when every seed of a
#: query is such a hub, a traversal ranks memories by little more than link order, so the graph arm
#: ranks the hubs' memories by relevance instead (`scope_hub_seeds`).
MIN_SEED_DAMPING = 0.5
#: The graph arm's weight (times its base 0.5) when the query asks a relation a seed has ("who
#: reports to Sarah?", `query.relations`): only the graph knows who is at the other end, and the
#: people it re-roots at (`backends.graph.traversal`, "Asked relations") share no words with the question, so
#: dense and lexical rank them low and rank the seed's own memories high. Public LoCoMo has no
#: explicit relations, so it cannot tune this. On the demo's six relation questions ("who reports to
#: Sarah?", "who does Tom report to?", "what does Priya work on?" ...), answer entities found in the
#: top 5 (of 8) / rank of the first answer memory, summed over the six, at weights 1 / 2 / 4 / 6 / 8 / 12:
#: 6 / 16, 6 / 16, 7 / 15, 7 / 15, 8 / 13, 8 / 8. 8 is the least that finds every answer entity
#: (both of Sarah's reports); 12 ranks them higher still, but six questions of one sample are too
#: few to push a weight that far. Questions that name no relation in a verb phrase never get it.
ASKED_RELATION_WEIGHT = 8.0


def filter_share(counts: Mapping[MemoryType | None, int] | None, types: Iterable[MemoryType]) -> float | None:
    """The share of the memories counted in `counts` that a filter on `types` keeps (None: no counts)."""
    total = sum(counts.values()) if counts else 0
    return sum(counts.get(t, 0) for t in set(types)) / total if counts and total else None


#: Stage 2b's rules, in the order `with_store` runs them (names as `EnsembleMemory(rules_off=...)` takes them).
STORE_RULE_NAMES = ("skip_unselective", "scope_hub_seeds", "asked_relation_leads", "mask_hub_names")


def with_store(plan: QueryPlan, parsed: ParsedQuery, optimizer: bool,
               share: Callable[[frozenset[MemoryType]], float | None], damping: Callable[[str], float] | None,
               matcher: EntityMatcher | None, off: Collection[str] = ()) -> QueryPlan:
    """Stage 2b in order, over stage 2's plan. The skip and weight rules run with the optimizer on;
    how the arms read the query (scoping hubs, asked relations, masking hub names) runs
    either way. `matcher` is the namespace's `EntityMatcher` (None when the graph is down); the rules
    named in `off` are left out (to measure what each is worth). A plan that needs no embedding
    (`QueryPlan.shortcut`) is left as it is: these rules shape how the vector arms and the graph read
    the query, and apply to its fallback, which is what runs those arms."""
    if plan.fallback is not None:
        return replace(plan, fallback=with_store(plan.fallback, parsed, optimizer, share, damping, matcher, off))
    if optimizer and "skip_unselective" not in off:
        plan = skip_unselective(plan, parsed, share)
    if "scope_hub_seeds" not in off:
        plan = scope_hub_seeds(plan, parsed, damping, matcher.surface_forms if matcher is not None else None)
    if "asked_relation_leads" not in off:
        plan = asked_relation_leads(plan, parsed, matcher.relations if matcher is not None else None, lead=optimizer)
    return plan if "mask_hub_names" in off else mask_hub_names(plan, parsed, damping)


def skip_unselective(plan: QueryPlan, parsed: ParsedQuery,
                     share: Callable[[frozenset[MemoryType]], float | None]) -> QueryPlan:
    """Stage 2b, with the store's statistics: skip the type arm when its filter keeps more than
    `MAX_FILTER_SHARE` of the namespace. `share(types)` is that fraction, or None when unknown
    (nothing is skipped). A graph arm whose seeds are all hubs is not skipped but scoped
    (`scope_hub_seeds`)."""
    types = plan.type_hints
    kept = share(types) if Arm.TYPE in plan.arms and types else None
    if kept is None or kept <= MAX_FILTER_SHARE:
        return plan
    names = ",".join(sorted(t.value for t in types))
    arms = tuple(a for a in plan.arms if a != Arm.TYPE)
    return plan.noted(skip_unselective.__name__,
                      f"skip_unselective: {names} is {kept:.0%} of the namespace -> skip type",
                      arms=arms, weights={a: w for a, w in plan.weights.items() if a in arms},
                      skipped={**plan.skipped, Arm.TYPE.value: f"its filter ({names}) keeps {kept:.0%} of the "
                                                               "namespace: it would repeat dense"})


def scope_hub_seeds(plan: QueryPlan, parsed: ParsedQuery, damping: Callable[[str], float] | None,
                    forms: Callable[[str], tuple[str, ...]] | None) -> QueryPlan:
    """When every seed is a hub, the graph arm ranks the hubs' memories by relevance instead of
    traversing from them.

    A hub (every candidate of every mention below `MIN_SEED_DAMPING`: "what did Caroline say about
    pottery?" where Caroline speaks every other turn) reaches most of the namespace at hop 0, every
    memory at the same score, so a traversal ranks by link order. The memories mentioning it are
    still the right *set* to look in; the rest of the question is what orders them. So the graph
    arm searches that set by cosine to the query as the vector arms embed it (without the hub
    names): an entity-scoped vector search, sent to the engine in the same batch. `forms(entity_id)`
    gives the names as memories store them (`EntityMatcher.surface_forms`). On a chat log the
    speakers are the hubs, and most turns answering a question that names one speaker are that
    speaker's (docs/decisions/0004-skipping-and-scoping-arms.md). Applied with the optimizer on or
    off: it is how the arm reads the query, not a skip rule. Unknown statistics leave the plan as
    it is."""
    seeds = [c for ref in parsed.entity_refs for c in ref.candidates]
    if damping is None or forms is None or Arm.GRAPH not in plan.arms or not seeds:
        return plan
    damped = [(c.name, damping(c.entity_id)) for c in seeds]
    if not all(d < MIN_SEED_DAMPING for _, d in damped):
        return plan
    scope = tuple(sorted({f for c in seeds for f in forms(c.entity_id)}))
    if not scope:
        return plan
    listed = ", ".join(f"{name} {d:.2f}" for name, d in damped[:4])
    return plan.noted(scope_hub_seeds.__name__, f"scope_hub_seeds: every seed is a hub ({listed}) -> graph ranks "
                      "their memories by relevance", graph_scope=scope)


def asked_relation_leads(plan: QueryPlan, parsed: ParsedQuery,
                         relations: Callable[[str], tuple[tuple[str, bool], ...]] | None,
                         lead: bool = True) -> QueryPlan:
    """When the query asks a relation of one of its entities ("who reports to Sarah?" and Sarah has
    `reports_to` edges; `query.relations` decides, and in which direction), the plan records it for
    the graph arm, which re-roots its walk there, traversing even from a hub (a scope set by
    `scope_hub_seeds` is dropped: the walk starts at the relation's other end, not at the hub).
    With `lead` (the optimizer on) the graph arm also leads at `ASKED_RELATION_WEIGHT`.
    `relations(entity_id)` gives an entity's directed relations (`EntityMatcher.relations`); an ask
    counts only in a direction the entity has edges in. Unknown relations leave the plan as it is.
    So does a time window: the window says which memories, and the graph knows no time."""
    if relations is None or Arm.GRAPH not in plan.arms or parsed.temporal_window is not None:
        return plan
    asked = asked_relations(parsed.text, parsed.entity_refs, relations)
    if not asked:
        return plan
    names = {c.entity_id: c.name for ref in parsed.entity_refs for c in ref.candidates}
    listed = ", ".join(f"{names.get(eid, eid)} {rel} {'->' if fwd else '<-'}" for eid, rel, fwd in asked[:4])
    weight = plan.weight(Arm.GRAPH) * (ASKED_RELATION_WEIGHT if lead else 1.0)
    then = f"graph leads at {weight:g}" if lead else "graph starts at its other end"
    return plan.noted(asked_relation_leads.__name__, f"asked_relation_leads: asks {listed} -> {then}",
                      weights={**plan.weights, Arm.GRAPH.value: weight}, graph_scope=(), asked_relations=asked)


def mask_hub_names(plan: QueryPlan, parsed: ParsedQuery,
                   damping: Callable[[str], float] | None) -> QueryPlan:
    """The vector arms embed the query without the names of hub entities.

    A name in most of the namespace's memories (every candidate below `MIN_SEED_DAMPING`, as for
    the graph rule) tells memories apart no better than a stopword, but a sentence embedding weighs
    names heavily: "what did Melanie realize after the charity race?" lands on whatever Melanie
    said, not on the race. BM25 already discounts such a name by its IDF; the dense, temporal and
    type arms embed "what did realize after the charity race?" (docs/decisions/0005-masking-hub-names.md).
    Runs with the optimizer on or off: it is query preparation, not a skip rule. Nothing is masked
    when the names are all the query has, or when the statistic is unknown."""
    if damping is None or not parsed.entity_refs:
        return plan
    hubs = [ref.text for ref in parsed.entity_refs
            if ref.candidates and all(damping(c.entity_id) < MIN_SEED_DAMPING for c in ref.candidates)]
    if not hubs:
        return plan
    text = parsed.text
    for name in sorted(set(hubs), key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(name)}(?:['\u2019]s)?(?!\w)", " ", text, flags=re.IGNORECASE)
    listed = ", ".join(repr(h) for h in dict.fromkeys(hubs))
    return _embed_instead(plan, parsed.text, text, mask_hub_names.__name__,
                          f"mask_hub_names: {listed} in most memories")


def _embed_instead(plan: QueryPlan, before: str, after: str, rule: str, why: str) -> QueryPlan:
    """`plan` with the vector arms embedding `after` (whitespace collapsed) and `why` among its
    reasons; `plan` itself when nothing was taken out of `before`, or only stopwords would be left."""
    after = " ".join(after.split())
    if after == " ".join(before.split()) or not tokenize(after):
        return plan
    return plan.noted(rule, f"{why} -> vector arms embed {after!r}", embed_text=after)
