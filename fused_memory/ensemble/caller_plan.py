"""What a caller's options do to the optimizer's plan: forced types, their own embedding text, the
arms they asked for, and the custom arms the ensemble was given.

One function, so `EnsembleMemory.plan` (and the adapters' optimizer Runnables built on it) show the
plan `retrieve` runs with the same options, not the rules' plan before the caller's say: a plan shown
without forced types would not be the plan that ran.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from ..query.store_rules import mask_hub_names
from ..results import Arm, QueryPlan
from ..types import MemoryType

__all__ = ["with_caller", "CALLER_FULL_PLAN", "CALLER_TYPES", "CALLER_EMBED_TEXT", "CUSTOM_ARMS", "CALLER_ARMS"]

#: The ids of the caller's notes among a plan's reasons (`QueryPlan.reason_rules`).
CALLER_FULL_PLAN, CALLER_TYPES, CALLER_EMBED_TEXT, CUSTOM_ARMS, CALLER_ARMS = (
    "caller_full_plan", "caller_types", "caller_embed_text", "custom_arms", "caller_arms")


def with_caller(plan: QueryPlan, *, forced: frozenset[MemoryType] | None, embed_text: str | tuple[str, ...] | None,
                arms: Sequence[str] | None, custom: Collection[str]) -> QueryPlan:
    """`plan` as the caller's options change it. `custom` are the custom arms under names the rules
    do not know (they run on every query); `arms` keeps only those asked for. A plan that needs no
    query embedding (`QueryPlan.shortcut`) gives way to its full plan when the caller forces types,
    gives their own text to embed or picks the arms: each of those is about the arms it skips."""
    full = plan.fallback
    if full is not None:
        if forced is not None or embed_text is not None or arms is not None:
            why = f"caller options -> the full plan, not the {plan.shortcut} plan"
            plan = full.noted(CALLER_FULL_PLAN, why)
        else:
            plan = replace(plan, fallback=with_caller(full, forced=None, embed_text=None, arms=None, custom=custom))
    if forced is not None:
        plan = plan.noted(CALLER_TYPES, f"caller types {sorted(t.value for t in forced)} -> every arm keeps "
                                        "only memories of those types (no widening); type runs",
                          type_hints=forced, hard_filter=True, arms=tuple(dict.fromkeys((*plan.arms, Arm.TYPE.value))),
                          skipped={a: why for a, why in plan.skipped.items() if a != Arm.TYPE})
    if embed_text is not None:  # the caller's text replaces what the masking rules would embed
        plan = plan.without_rule(mask_hub_names.__name__).noted(
            CALLER_EMBED_TEXT, "caller_embed_text: the vector arms embed the caller's text, not the query",
            embed_text=embed_text)
    if custom:
        plan = plan.noted(CUSTOM_ARMS, f"custom arms {list(custom)} -> run", arms=(*plan.arms, *custom))
    if arms is not None:
        plan = plan.noted(CALLER_ARMS, f"caller arms {list(arms)} -> only those run",
                          arms=tuple(a for a in plan.arms if a in arms),
                          skipped={**plan.skipped,
                                   **{a: "not requested by caller" for a in plan.arms if a not in arms}})
    return plan
