"""What the ensemble does for a plan that needs no query embedding (`query.shortcuts`), and when its
answer gives way to the full plan.

* The time plan's temporal arm reads the window in time order, not by a vector search
  (`shortcut_arm`, `retrievers.scan`); the name plan's BM25 searches the names alone
  (`shortcut_request`).
* In the identifier plan BM25 reads its own top `k` memories inside its task (`with_memories`): the
  plan checks that a memory it found holds the identifier, and hydration then finds them at hand.
  In the plans that embed the query, BM25 and the graph read theirs only while the embedding still
  runs (`slack`): read there whatever the timing, it cost more CPU than it saved
  (docs/decisions/0017-python-beside-the-search.md).
* `missed` decides, from the arms' outcomes alone, whether the shortcut's answer stands: not when its
  arm failed, nor when it found nothing (no memory in the window, no memory holding the identifier,
  no memory of the names). The ensemble then runs the fallback plan, sync or async the same way
  (`EnsembleMemory._fallback`). A question about a time is never answered with nothing while the
  namespace holds memories: when the window holds none, the other arms answer, and the stage after
  fusion puts the memories nearest the window first (`recency.add_nearness`); `plan.reasons` says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..enums import StrEnum
from ..errors import FusedMemoryError, StoreClosed
from ..query.shapes import identifiers_outside_time
from ..query.shortcuts import IDENTIFIER, NAME, TIME
from ..results import Arm, Hit, ParsedQuery, QueryPlan
from ..retrievers.base import ArmRequest, Retriever
from ..retrievers.scan import TimeOrderRetriever
from ..text import identifiers, tokenize
from .fanout import Outcome, Task
from .source import EnsembleSource

__all__ = ["shortcut_arm", "shortcut_request", "with_memories", "missed", "fallback_plan", "soft_window_plan",
           "EMPTY_WINDOW", "GaveWay", "SHORTCUT_FALLBACK", "SOFT_WINDOW"]

#: The ids of the ensemble's own notes among a plan's reasons (`QueryPlan.reason_rules`): a shortcut
#: gave way to the full plan; a window that holds nothing became a soft preference.
SHORTCUT_FALLBACK, SOFT_WINDOW = "shortcut_fallback", "soft_window"


def shortcut_arm(plan: QueryPlan, name: str, store: EnsembleSource) -> Retriever | None:
    """The arm a shortcut plan runs instead of the usual one, or None (the usual one)."""
    if plan.shortcut == TIME and name == Arm.TEMPORAL:
        return TimeOrderRetriever(store)
    return None


def shortcut_request(plan: QueryPlan, name: str, request: ArmRequest) -> ArmRequest:
    """What an arm of a shortcut plan is asked: in the name plan BM25 searches the names alone. The
    other words of "tell me about Sarah Chen" name no topic (`shapes.only_names`), and BM25 would
    rank a memory that happens to hold "tell" beside the ones holding the name."""
    if plan.shortcut == NAME and name == Arm.LEXICAL:
        names = " ".join(ref.text for ref in request.query.entity_refs)
        return replace(request, query=replace(request.query, text=names, terms=tuple(tokenize(names))))
    return request


def with_memories(store: EnsembleSource, namespace: str, hits: list[Hit], k: int) -> list[Hit]:
    """`hits` with the memories of the first `k` read in (one read, for those that carry none). A
    read that fails leaves them as they were: hydration reads them again, and reports what it
    cannot, as it would have without this read."""
    wanted = [h.memory_id for h in hits[:k] if h.memory is None and h.payload is None]
    if not wanted:
        return hits
    try:
        found = {m.id: m for m in store.get_many(namespace, wanted)}
    except StoreClosed:
        raise
    except FusedMemoryError:
        return hits
    return [replace(h, memory=found[h.memory_id]) if h.memory_id in found else h for h in hits]


class GaveWay(StrEnum):
    """Why a shortcut plan gave way to its full plan (`missed`)."""

    FAILED = "failed"
    EMPTY_WINDOW = "the window holds no memory"
    NOTHING_FOUND = "nothing found"
    NO_IDENTIFIER = "no memory found holds the identifier"


def missed(plan: QueryPlan, parsed: ParsedQuery, tasks: Sequence[Task],
           outcomes: Mapping[str, Any]) -> tuple[GaveWay, str] | None:
    """Why a shortcut plan's answer gives way to its fallback (the kind, and the words for the plan's
    reasons), or None when it stands (or the plan is not a shortcut). `outcomes` are the tasks'
    results by label, as `_finish` reads them."""
    if plan.fallback is None:
        return None
    hits: list[Hit] = []
    for task in tasks:
        outcome = outcomes.get(task.label)
        if isinstance(outcome, BaseException) or outcome is None:
            what = f"{type(outcome).__name__}: {outcome}" if outcome is not None else "no answer"
            return GaveWay.FAILED, f"{'+'.join(task.arms)} failed ({what})"
        by_arm: Outcome = outcome[0]
        hits.extend(h for arm in task.arms for h in by_arm.get(arm, ([], ""))[0])
    if not hits:  # an empty window too: the other arms answer, the window a soft preference
        kind = GaveWay.EMPTY_WINDOW if plan.shortcut == TIME else GaveWay.NOTHING_FOUND
        return kind, kind.value
    if plan.shortcut == IDENTIFIER:
        wanted = {i.casefold() for i in identifiers_outside_time(parsed)}
        if not any(h.memory is not None and wanted & {i.casefold() for i in identifiers(_text(h))} for h in hits):
            return GaveWay.NO_IDENTIFIER, f"no memory found holds {', '.join(sorted(wanted))}"
    return None


def _text(hit: Hit) -> str:
    memory = hit.memory
    assert memory is not None
    return f"{memory.predicate} {memory.text}" if memory.predicate else memory.text


def fallback_plan(plan: QueryPlan, kind: GaveWay, why: str) -> QueryPlan:
    """The full plan a shortcut gives way to, saying why among its reasons. After a time plan whose
    window held nothing, the window is a soft preference there (`QueryPlan.soft_window`): no
    temporal search (it would find nothing again), the memories nearest the window first."""
    full = plan.fallback
    assert full is not None
    full = full.noted(SHORTCUT_FALLBACK, f"{plan.shortcut} plan: {why} -> the full plan")
    if plan.shortcut != TIME or kind is not GaveWay.EMPTY_WINDOW:
        return full
    return soft_window_plan(full)


#: Why a time plan gives way when its window holds nothing (`missed`).
EMPTY_WINDOW = GaveWay.EMPTY_WINDOW.value


def soft_window_plan(plan: QueryPlan, ran: bool = False) -> QueryPlan:
    """`plan` with its window a soft preference, the memories nearest the window first at the
    weight the temporal arm had (`QueryPlan.soft_window`). Before the arms run (`ran` False), the
    temporal arm is left out: its window holds nothing; after (the arm ran and found nothing), it
    stays in the plan as the arm that answered with nothing."""
    weight = plan.weight(Arm.TEMPORAL) if Arm.TEMPORAL in plan.arms else 1.0
    note = "the window holds no memory: the other arms answer, the memories nearest it first"
    if ran:
        return plan.noted(SOFT_WINDOW, f"soft window: {note}", soft_window=weight)
    weights = {a: w for a, w in plan.weights.items() if a != Arm.TEMPORAL}
    return plan.noted(SOFT_WINDOW, f"soft window: {note}", arms=tuple(a for a in plan.arms if a != Arm.TEMPORAL),
                      weights=weights, skipped={**plan.skipped, Arm.TEMPORAL.value: note}, soft_window=weight)
