"""What a caller's options do to the optimizer's plan: forced types, their own embedding text, the
arms they asked for, and the custom arms the ensemble was given.

One function, so `EnsembleMemory.plan` (and the adapters' optimizer Runnables built on it) show the
plan `retrieve` runs with the same options, not the rules' plan before the caller's say: a plan shown
without forced types would not be the plan that ran.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from ..results import QueryPlan
from ..types import MemoryType

__all__ = ["with_caller"]


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
            plan = replace(full, reasons=(*full.reasons, why))
        else:
            plan = replace(plan, fallback=with_caller(full, forced=None, embed_text=None, arms=None, custom=custom))
    if forced is not None:
        plan = replace(plan, type_hints=forced, hard_filter=True,
                       arms=tuple(dict.fromkeys((*plan.arms, "type"))),
                       skipped={a: why for a, why in plan.skipped.items() if a != "type"},
                       reasons=(*plan.reasons, f"caller types {sorted(t.value for t in forced)} -> every arm keeps "
                                                "only memories of those types (no widening); type runs"))
    if embed_text is not None:  # the caller's text replaces what the masking rules would embed
        plan = replace(plan, embed_text=embed_text, reasons=(
            *(r for r in plan.reasons if " -> vector arms embed " not in r),
            "caller_embed_text: the vector arms embed the caller's text, not the query"))
    if custom:
        plan = replace(plan, arms=(*plan.arms, *custom), reasons=(*plan.reasons, f"custom arms {list(custom)} -> run"))
    if arms is not None:
        plan = replace(plan, arms=tuple(a for a in plan.arms if a in arms),
                       skipped={**plan.skipped, **{a: "not requested by caller" for a in plan.arms if a not in arms}})
    return plan
