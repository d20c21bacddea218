"""The optimizer's last rules: plans that need no query embedding, where the embedding adds nothing.

Embedded, the arms the optimizer can skip are cheap; what costs is embedding the query and the
vector search. So the only way the optimizer saves real time on a simple query is to skip both,
and it may only do that where they add nothing to what another arm finds alone (`shapes`):

* **time** - a query that is only a time ("what happened yesterday?", "what did I tell you
  yesterday?"): the window's memories, those that happened or state a time there first, newest
  first, with ordered payload scans (`retrievers.scan`). The embedding of "what happened" ranks a
  window's memories about at random, so the full plan's answer is the same set in another order.
* **identifier** - identifiers, with at most two other words ("E-47821", "what was JIRA-9921
  about?", "v2.3.1 release notes"): BM25 alone. A sentence embedding of "E-47821" is close to
  every badge id; BM25 matches the string.
* **name** - only known names ("Sarah Chen", "tell me about Sarah Chen"): the graph (the
  memories that mention them, and their neighbours) and BM25 over the names alone. The embedding
  of a bare name ranks memories that mention *similar* names ("Sarah Novak") beside the right ones.

Each keeps the plan built so far as its fallback (`PlanBuilder.take_shortcut`): the ensemble runs
it when the shortcut's arm fails, or when it finds nothing - no memory in the window, no memory
holding the identifier, no memory of the names (`ensemble.plans`); a window that holds nothing
then stays a soft preference, nearest first. They run last, after every other rule, so that
fallback is the whole plan.
"""

from __future__ import annotations

from ..results import Arm, ParsedQuery, Shortcut
from ..types import MemoryType
from .plan_builder import PlanBuilder
from .shapes import identifier_led, identifiers_outside_time, only_names, pure_time

__all__ = ["TIME", "IDENTIFIER", "NAME", "SHORTCUTS", "TIME_ORDER_WEIGHT", "time_shortcut", "identifier_shortcut",
           "name_shortcut"]

TIME, IDENTIFIER, NAME = Shortcut.TIME, Shortcut.IDENTIFIER, Shortcut.NAME
SHORTCUTS: tuple[Shortcut, ...] = tuple(Shortcut)
#: The temporal arm's weight in the time plan. It is the plan's only arm, so only its order counts;
#: the weight is `optimizer.PURE_TIME_WEIGHT`'s, so the plan reads like the full one it replaces.
TIME_ORDER_WEIGHT = 8.0


def time_shortcut(b: PlanBuilder, q: ParsedQuery) -> None:
    """Only a time -> the window's memories newest first, no embedding."""
    if pure_time(q) and not b.hard_filter:
        b.take_shortcut(TIME, {Arm.TEMPORAL.value: TIME_ORDER_WEIGHT},
                        f"only a time ({q.temporal_phrase!r}) -> the window's memories newest first, no query "
                        "embedding")


def identifier_shortcut(b: PlanBuilder, q: ParsedQuery) -> None:
    """Identifiers (and at most two other words) -> BM25 alone, no embedding."""
    if identifier_led(q) and not b.type_hints:
        ids = ", ".join(repr(i) for i in identifiers_outside_time(q)[:3])
        b.take_shortcut(IDENTIFIER, {Arm.LEXICAL.value: 1.0},
                        f"identifier {ids} -> BM25 alone, no query embedding (full plan if no memory holds it)")


def name_shortcut(b: PlanBuilder, q: ParsedQuery) -> None:
    """Only known names ("who is" / "tell me about" them too) -> graph and BM25, no embedding."""
    if only_names(q) and b.type_hints <= {MemoryType.ENTITY} and not b.hard_filter:
        names = ", ".join(repr(r.text) for r in q.entity_refs[:3])
        b.take_shortcut(NAME, {Arm.LEXICAL.value: 1.0, Arm.GRAPH.value: 1.0},
                        f"only names ({names}) -> graph and BM25 (over the names alone), no query embedding")
