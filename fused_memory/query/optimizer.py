"""Stage 2: `ParsedQuery` -> `QueryPlan`: type hints, which arms run at what weight, graph depth,
the hard type pre-filter, and a reason for every decision.

Why rules as data: the plan must be explainable (`--explain` prints `reasons`) and tunable without
touching control flow. Each rule is a named function `(builder, parsed) -> None`; `optimize` runs an
ordered tuple of them over one mutable `PlanBuilder`, and a rule that changes the plan says why with
`builder.note(...)`, which records "rule_name: why" in `reasons`. Reordering, removing or adding a
rule is a change to a tuple, and a test can assert exactly which rules fired (`fired_rules`).

Unlike a router, the plan runs every arm with something to contribute: a mixed query ("what did I
tell Sarah about the Berlin office last week?") lights up dense, lexical, graph, temporal and type at
once. Rules only *skip* an arm when it provably cannot help (no entity -> no graph seeds), and the
last ones (`shortcuts`) answer a query that is only a time, identifiers or names without embedding it.

Every rule earns its place (docs/decisions/0006-every-rule-earns-its-place.md):
benchmarks/bench_rules.py measures each one left out, on public LoCoMo (Recall@5 / @10 with a
paired bootstrap interval) and on the bench's latency and work. A rule whose measured effect is
within noise stays only for a reason the table gives: an answer a test pins (the demo's pure time
and relation questions, which LoCoMo does not ask), or a LoCoMo category that would fall past the
0.3-point bound without it (the type arm on a hint).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..results import ARMS, Arm, ParsedQuery, QueryPlan
from ..types import MemoryType
from .cues import TemporalMode, temporal_mode
from .plan_builder import DEFAULT_HOPS, PlanBuilder, Rule
from .plan_builder import describe_ref as _describe
from .shapes import pure_time, strong_refs
from .shortcuts import identifier_shortcut, name_shortcut, time_shortcut
from .store_rules import (
    ASKED_RELATION_WEIGHT,
    MAX_FILTER_SHARE,
    MIN_SEED_DAMPING,
    asked_relation_leads,
    mask_hub_names,
    scope_hub_seeds,
    skip_unselective,
    with_store,
)

__all__ = ["PlanBuilder", "Rule", "optimize", "optimize_off", "fired_rules", "with_arm_rules", "DEFAULT_RULES",
           "OFF_RULES", "RULE_NAMES", "SPECULATIVE_TEMPORAL_WEIGHT", "DEFAULT_HOPS", "ANSWER_TIME_WEIGHT",
           "PURE_TIME_WEIGHT", "WINDOW_TEMPORAL_WEIGHT", "current_state_recency", "reaches_now",
           # stage 2b, in store_rules.py, re-exported here where the rest of the optimizer is
           "with_store", "skip_unselective", "scope_hub_seeds", "asked_relation_leads", "mask_hub_names",
           "MAX_FILTER_SHARE", "MIN_SEED_DAMPING", "ASKED_RELATION_WEIGHT"]

#: The temporal arm's weight with the optimizer off when the query names no window and asks for no
#: time: events by relevance, at half weight. The optimizer does not run the arm then: on public
#: LoCoMo leaving it out changed nothing (docs/decisions/0002-per-query-weights.md).
SPECULATIVE_TEMPORAL_WEIGHT = 0.5
#: The temporal arm's weight (times its base 0.5) when the query asks for a time and names no window:
#: it then ranks the memories that state a time, the answer type itself, so it counts like dense
#: (docs/decisions/0002-per-query-weights.md).
ANSWER_TIME_WEIGHT = 2.0
#: The temporal arm's weight (times its base 0.5) when the query is only a time ("what happened
#: yesterday?"). With RRF k = 10 a window memory at temporal rank r adds >= 4 * 0.71 / (10 + r)
#: (its score is >= 0.5), more than dense's #1 can give a memory outside it (<= 1.5 / 11) for r up
#: to 10 (docs/decisions/0002-per-query-weights.md).
PURE_TIME_WEIGHT = 8.0
#: The temporal arm's weight (times its base 0.5) when the query names a window ("last week", "in
#: May 2023") beside other words: the window's events by relevance then count like dense (1.5), and
#: "what did I tell Sarah last week?" finds the one inside the week (docs/decisions/0002-per-query-weights.md).
WINDOW_TEMPORAL_WEIGHT = 3.0
#: The temporal arm's weight by mode (`cues.temporal_mode`) when no skip rule applies.
_TEMPORAL_WEIGHTS = {TemporalMode.WINDOW: WINDOW_TEMPORAL_WEIGHT, TemporalMode.ANSWER: ANSWER_TIME_WEIGHT,
                     TemporalMode.SPECULATIVE: SPECULATIVE_TEMPORAL_WEIGHT}
_I = re.IGNORECASE
#: Explicit preference words: strong enough to pre-filter dense and lexical (widening catches misses).
#: "setting"/"favorite" count only as the asker's own ("my setting", "our default", "my favorite"):
#: "a futuristic setting" or "Jon's favorite" are soft at most.
_PREF_STRONG = re.compile(r"\b(?:prefer(?:s|red|ring|ences?)?|configur(?:e|ed|es|ing|ation)|config|settings"
                          r"|(?:my|our)\s+(?:\w+\s+){0,2}?(?:settings?|defaults?|favou?rites?)"
                          r"|default\s+(?:setting|value|option)s?)\b", _I)
#: Softer preference signals: a type hint for the type arm, never a pre-filter.
_PREF_SOFT = re.compile(r"\b(?:favou?rites?|likes|liked|loves?|loved|enjoys?|enjoyed|hates?|dislikes?|wants?"
                        r"|wanted|wish(?:es)?|hobby|hobbies|interested\s+in|passionate\s+about|fan\s+of"
                        r"|(?:would|'d)\s+like)\b", _I)
#: "like" is a preference only as a verb: "does Caroline like", not "what was it like".
_LIKE = re.compile(r"\b(?:i|you|we|they|he|she|do|does|did|would|to|really|also|not|n't)\s+(?:\w+\s+){0,2}?like\b", _I)
_LIKE_NOT_VERB = frozenset("look looks looked looking seem seems seemed feel feels felt sound sounds something "
                           "anything things just more much was is".split())
_EVENT = re.compile(r"\bwhen\s+(?:did|was|were|is|are|do|does|will|had|has|have)\b|\b(?:at\s+)?what\s+time\b"
                    r"|\bwhat\s+date\b|\bwhich\s+(?:day|date|month|year)\b|\bhappen(?:ed|s|ing)?\b"
                    r"|\boccur(?:red|s|ring)?\b|\bwas\s+it\b|\bdid\s+(?:i|we)\b|\bhow\s+long\s+ago\b", _I)
_WHO_IS = re.compile(r"\bwho(?:\s+(?:is|was|are|were)|'s|\u2019s)\b", _I)
#: Prefixes only; the object is the rest of the text (a regex ending in `$` backtracks quadratically).
_WHAT_IS = re.compile(r"\bwhat(?:\s+(?:is|was|are|were)|'s|\u2019s)\s+(?:the\s+|a\s+|an\s+)?", _I)
_TELL_ABOUT = re.compile(r"\b(?:tell\s+me|what\s+do\s+(?:you|i|we)\s+know)\s+about\s+(?:the\s+)?", _I)




# ------------------------------------------------------------------ type triggers
def preference_trigger(b: PlanBuilder, q: ParsedQuery) -> None:
    """prefer/like/want/setting/configure/my default -> preference (explicit words are "strong")."""
    strong = _PREF_STRONG.search(q.text)
    soft = _PREF_SOFT.search(q.text) or _like_verb(q.text)
    if strong or soft:
        word = (strong or soft).group(0)  # type: ignore[union-attr]
        b.hint(MemoryType.PREFERENCE, strong=bool(strong))
        b.note(f"{word!r} -> hint preference" + (" (explicit)" if strong else ""))


def event_trigger(b: PlanBuilder, q: ParsedQuery) -> None:
    """when did/at what time/happened/occurred/was it/did I -> event."""
    m = _EVENT.search(q.text)
    if m:
        b.hint(MemoryType.EVENT)
        b.note(f"{' '.join(m.group(0).split())!r} -> hint event")


def entity_trigger(b: PlanBuilder, q: ParsedQuery) -> None:
    """who is X / what is <known entity> / tell me about <someone> -> entity."""
    refs = {r.text.casefold() for r in q.entity_refs}
    who, what, tell = _WHO_IS.search(q.text), _WHAT_IS.search(q.text), _TELL_ABOUT.search(q.text)
    what_obj = q.text[what.end():].rstrip(" \t\n?.!") if what else ""
    tell_obj = q.text[tell.end():].rstrip(" \t\n?.!") if tell else ""
    if who:
        why = f"{who.group(0)!r}"
    elif what_obj and what_obj.casefold() in refs:  # the whole object is the entity, not "Melanie's hobby"
        why = f"'what is {what_obj}' names a known entity"
    elif tell_obj and (tell_obj[0].isupper() or any(tell_obj.casefold().startswith(r) for r in refs)):
        why = f"'tell me about {tell_obj[:40]}'"
    else:
        return
    b.hint(MemoryType.ENTITY)
    b.note(f"{why} -> hint entity")


def hard_filter_explicit_hint(b: PlanBuilder, q: ParsedQuery) -> None:
    """One hint, from an explicit word ("setting", "prefer", "favorite"): pre-filter dense and lexical
    to that type. Soft or several hints never pre-filter: a misclassified memory would vanish, while
    the type arm alone only adds evidence. The ensemble widens when the filter leaves too few."""
    if len(b.type_hints) == 1 and b.type_hints <= b.strong_hints:
        (t,) = b.type_hints
        b.hard_filter = True
        b.note(f"explicit {t.value} trigger -> pre-filter dense and lexical to {t.value} (widened if too few)")


# ------------------------------------------------------------------ arms
def graph_from_entities(b: PlanBuilder, q: ParsedQuery) -> None:
    """Entity refs -> graph arm (weight 1.0; the arm itself discounts multi-hop hits to 0.8)."""
    strong = strong_refs(q)
    if strong:
        b.run(Arm.GRAPH, 1.0)
        b.note("entities " + ", ".join(_describe(r) for r in strong) + " -> graph")


def temporal_window(b: PlanBuilder, q: ParsedQuery) -> None:
    if q.temporal_window is not None:
        b.run(Arm.TEMPORAL, WINDOW_TEMPORAL_WEIGHT)
        b.note(f"{q.temporal_phrase!r} -> window {q.temporal_window} -> temporal")


def asks_for_time(b: PlanBuilder, q: ParsedQuery) -> None:
    """"When did...?" with no window: the answer is a memory that states a time, so the temporal
    arm ranks those (`cues.mentions_time`, stored at ingest) at `ANSWER_TIME_WEIGHT`."""
    if temporal_mode(q.temporal_window, q.answer_type) == TemporalMode.ANSWER:
        b.run(Arm.TEMPORAL, ANSWER_TIME_WEIGHT)
        b.note(f"asks for a time -> temporal over memories that state one, at {ANSWER_TIME_WEIGHT}")


def skip_lexical_pure_time(b: PlanBuilder, q: ParsedQuery) -> None:
    """"what happened yesterday?": nothing but the time is left to match words on. The time plan
    answers such a query without BM25 anyway; in the full plan (the caller's arms or types, an
    empty window) BM25 matched the time phrase's own words: "what did I do last week?" ranked
    "approved my vacation for the first week of May" above the week's events (the demo)."""
    if pure_time(q):
        b.skip(Arm.LEXICAL, "pure time query: no words to match besides the time phrase")
        b.note("pure time query -> skip lexical")


def pure_time_window_decides(b: PlanBuilder, q: ParsedQuery) -> None:
    """"what happened yesterday?": the window is the whole question, so the temporal arm (the
    window's events) leads at `PURE_TIME_WEIGHT` and the type arm, which would rank every event by
    likeness to "what happened", is skipped. Dense still runs: its similarity to the bare question
    is close to noise, but it orders what follows the window's memories."""
    if pure_time(q):
        b.run(Arm.TEMPORAL, PURE_TIME_WEIGHT)
        if Arm.TYPE in b.weights:
            b.skip(Arm.TYPE, "pure time query: the temporal arm searches the window's events")
        b.note(f"pure time query -> the window decides: temporal at {PURE_TIME_WEIGHT}, skip type")


def type_arm_for_hints(b: PlanBuilder, q: ParsedQuery) -> None:
    if b.type_hints:
        b.run(Arm.TYPE, 1.0)
        b.note("hints " + ",".join(sorted(t.value for t in b.type_hints)) + " -> type")


def every_arm_that_can_run(b: PlanBuilder, q: ParsedQuery) -> None:
    """Optimizer off: no skip rule, no pre-filter; graph needs seeds and type needs a hint to run."""
    if q.entity_refs:
        b.run(Arm.GRAPH, 1.0)
    else:
        b.skip(Arm.GRAPH, "no entity to start from")
    b.run(Arm.TEMPORAL, _TEMPORAL_WEIGHTS[temporal_mode(q.temporal_window, q.answer_type)])
    if b.type_hints:
        b.run(Arm.TYPE, 1.0)
    else:
        b.skip(Arm.TYPE, "no type hint")
    b.note("optimizer off -> every arm that can run")


# ------------------------------------------------------------------ after fusion
_CURRENT_STATE = re.compile(r"\b(?:now|nowadays|currently|current|these\s+days|still|any\s?more|latest|newest"
                            r"|most\s+recent(?:ly)?|at\s+the\s+moment|at\s+present|right\s+now)\b", _I)


def current_state_recency(b: PlanBuilder, q: ParsedQuery) -> None:
    """"where do I live now?", "what's my current editor?", "do I still...?": the answer is the
    latest version of a fact that may have changed, so the recency list fused after the arms runs at
    `FusionConfig.current_state_recency` (`ensemble.recency`). Not with a window that ended before
    today: "currently ... in August 2023" asks about then ("these days" is a window up to now)."""
    m = _CURRENT_STATE.search(q.text)
    if m and reaches_now(q):
        b.note(f"{' '.join(m.group(0).split())!r} asks for the current state -> recency list at its current-state "
               "weight")


def reaches_now(q: ParsedQuery) -> bool:
    """The query asks about the present: it names no time window, or one that runs up to today."""
    return q.temporal_window is None or (q.now - q.temporal_window.end).total_seconds() <= 86400


#: The optimizer, in order: hints first (later rules read them), then arms.
DEFAULT_RULES: tuple[Rule, ...] = (
    preference_trigger, event_trigger, entity_trigger, hard_filter_explicit_hint,
    graph_from_entities, temporal_window, asks_for_time, skip_lexical_pure_time, type_arm_for_hints,
    pure_time_window_decides, current_state_recency,
    time_shortcut, identifier_shortcut, name_shortcut,
)
#: The "optimizer off" baseline: same hints, every arm that can run.
OFF_RULES: tuple[Rule, ...] = (preference_trigger, event_trigger, entity_trigger, every_arm_that_can_run)
RULE_NAMES: tuple[str, ...] = tuple(r.__name__ for r in DEFAULT_RULES)
_SHORTCUT_RULES = (time_shortcut, identifier_shortcut, name_shortcut)


def optimize(parsed: ParsedQuery, *, rules: tuple[Rule, ...] = DEFAULT_RULES, arms: tuple[str, ...] = ARMS,
             needs: Mapping[str, str] | None = None) -> QueryPlan:
    """Run `rules` in order over a fresh `PlanBuilder` and freeze the result. `arms` are the arms
    the rules may plan, in the order plans list them; `needs` what an arm beyond the five needs to
    run (both from the arm registry, `retrievers.registry`)."""
    b = PlanBuilder(parsed, arms=arms, needs=needs or {})
    for rule in rules:
        b.rule = getattr(rule, "__name__", repr(rule))
        rule(b, parsed)
    return b.build()


def optimize_off(parsed: ParsedQuery, *, arms: tuple[str, ...] = ARMS) -> QueryPlan:
    """The baseline the optimizer is measured against: every arm that can run, at default weights.
    An arm beyond the five (`arms`, the registry's) has no known precondition, so it runs too."""
    b = PlanBuilder(parsed, arms=arms)
    for rule in OFF_RULES:
        b.rule = rule.__name__
        rule(b, parsed)
    extra = [a for a in arms if a not in ARMS]
    if extra:
        b.rule = every_arm_that_can_run.__name__
        for arm in extra:
            b.run(arm, 1.0)
        b.note(f"optimizer off -> {', '.join(extra)} too")
    return b.build()


def with_arm_rules(rules: tuple[Rule, ...], extra: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """`rules` with an arm's own rules (`ArmSpec.rules`) run before the shortcuts, which must come
    last: a shortcut keeps the plan built so far as its fallback, so that plan must be whole."""
    if not extra:
        return rules
    cut = next((i for i, r in enumerate(rules) if r in _SHORTCUT_RULES), len(rules))
    return (*rules[:cut], *extra, *rules[cut:])


def fired_rules(plan: QueryPlan) -> tuple[str, ...]:
    """The ids of the rules that fired, in order (`QueryPlan.fired`)."""
    return plan.fired


def _like_verb(text: str) -> re.Match[str] | None:
    for m in _LIKE.finditer(text):
        before = text[:m.end() - 4].split()
        if not before or before[-1].lower() not in _LIKE_NOT_VERB:
            return m
    return None
