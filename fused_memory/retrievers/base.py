"""The one `Retriever` protocol every arm implements, and the request it receives.

An arm is given an `ArmRequest` (the parsed query, its embedding computed once by the ensemble,
namespace, depth, type filter, window) and returns ranked `Hit`s with scores in [0, 1]. Arms never
see each other; the ensemble owns parallelism, timeouts and fusion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from ..results import Hit, ParsedQuery
from ..types import MemoryType, TimeWindow

__all__ = ["ArmRequest", "Retriever", "dedupe_hits"]


@dataclass(frozen=True)
class ArmRequest:
    """Everything one arm needs for one query.

    `types` is the hard type pre-filter (None = all types); `window` the temporal window;
    `vector` the query embedding (computed once, shared by every Qdrant-backed arm); `max_hops`
    the graph depth the optimizer chose; `embed_text` what to embed when it is not the query
    itself (the plan's `embed_text`: the query without hub names, or the caller's texts, whose
    embeddings are averaged); `scope` the entity names
    whose memories a scoped graph search is limited to (the plan's `graph_scope`); `asked` the
    relations the query asks (the plan's `asked_relations`), where the graph walk re-roots.
    """

    query: ParsedQuery
    namespace: str
    k: int
    vector: tuple[float, ...] | None = None
    types: frozenset[MemoryType] | None = None
    window: TimeWindow | None = None
    max_hops: int = 2
    embed_text: str | tuple[str, ...] | None = None
    scope: tuple[str, ...] = ()
    asked: tuple[tuple[str, str, bool], ...] = ()

    def without_type_filter(self) -> ArmRequest:
        return replace(self, types=None)

    def text_to_embed(self) -> str | tuple[str, ...]:
        return self.embed_text or self.query.text


@runtime_checkable
class Retriever(Protocol):
    """One arm. `name` is its key in plans, weights and explanations."""

    name: str

    def search(self, request: ArmRequest) -> list[Hit]:
        """Ranked hits, best first, at most `request.k`, each memory at most once."""
        ...


def dedupe_hits(hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
    """Keep each memory's best hit, best first; ties broken by memory id so rankings are stable."""
    best: dict[str, Hit] = {}
    for h in hits:
        cur = best.get(h.memory_id)
        if cur is None or h.score > cur.score:
            best[h.memory_id] = h
    ordered = sorted(best.values(), key=lambda h: (-h.score, h.memory_id))
    return ordered if k is None else ordered[:k]
