"""A sixth arm, written the way a built-in one is: this module (the retriever and the optimizer rule
that plans it) plus one registration (`PINNED`, added to a registry). `test_arm_registry.py` runs it
end to end; CONTRIBUTING's "Add an arm" walks the same two steps.

The arm: memories the user pinned (`metadata={"pinned": True}`), when a question asks for what
matters ("important", "pinned", "don't forget"), newest first.
"""

from __future__ import annotations

import re

from fused_memory import ArmSpec, Hit
from fused_memory.query import PlanBuilder
from fused_memory.results import ParsedQuery
from fused_memory.retrievers.base import ArmRequest

NAME = "pinned"
_ASKS = re.compile(r"\b(?:important|pinned|don'?t\s+forget|must\s+remember)\b", re.IGNORECASE)


class PinnedRetriever:
    """The namespace's pinned memories, newest first, scored 1.0 down to 0.5."""

    name = NAME

    def __init__(self, store) -> None:  # noqa: ANN001 - any store with `memories(namespace)`
        self.store = store

    def search(self, request: ArmRequest) -> list[Hit]:
        pinned = [m for m in self.store.memories(request.namespace) if (m.metadata or {}).get("pinned")]
        return [Hit(m.id, 1.0 - 0.5 * i / max(len(pinned), 1), "pinned", memory=m)
                for i, m in enumerate(pinned[:request.k])]


def pinned_when_asked(b: PlanBuilder, q: ParsedQuery) -> None:
    """"what's important...?", "anything pinned?" -> the pinned arm."""
    m = _ASKS.search(q.text)
    if m:
        b.run(NAME, 1.0)
        b.note(f"{m.group(0)!r} asks for what matters -> {NAME}")


PINNED = ArmSpec(NAME, PinnedRetriever, weight=1.0, timeout_s=1.0, rules=(pinned_when_asked,),
                 needs="the query does not ask for what matters", class_name="PinnedMemoryRetriever")
