"""The one `Retriever` protocol every arm implements, and the request it receives.

An arm is given an `ArmRequest` (the parsed query, its embedding computed once by the ensemble,
namespace, depth, type filter, window) and returns ranked `Hit`s with scores in [0, 1]. Arms never
see each other; the ensemble owns parallelism, timeouts and fusion.

What an arm reads is a protocol too, not a store class: `VectorSource` (a query embedder and the
engine's batched search), `LexicalSource` and `GraphSearch`. A `MemoryStore` is all three (it opens
its backends on first use, so an arm never opens, or reopens, storage itself); a bare `GraphStore`
is a `GraphSearch`, which is how the graph contract tests run the arm on each backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol, runtime_checkable

from ..backends.protocols import GraphStore, ScoredPayload, VectorQuery
from ..results import Hit, ParsedQuery
from ..times import TimeKind, TimeMatch, describe_day
from ..types import MemoryType, TimeWindow

__all__ = ["ArmRequest", "Retriever", "dedupe_hits", "time_detail", "VectorSource", "LexicalSource", "GraphSearch",
           "MemorySource"]


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


def time_detail(found: TimeMatch, now: datetime) -> str:
    """How a hit's time fell in the window, for its explanation: "happened yesterday", "states Jun
    14", "said today"."""
    verb = {TimeKind.EVENT: "happened", TimeKind.STATED: "states", TimeKind.SAID: "said"}[found.kind]
    return f"{verb} {describe_day(found.at, now)}"


# ---------------------------------------------------------------- what the arms read
@runtime_checkable
class VectorSource(Protocol):
    """Where the vector arms search: one query embedding, and the engine's batched search."""

    def embed_query(self, text: str | Sequence[str]) -> tuple[float, ...]:
        """The query vector (several texts: the normalized mean of their vectors)."""
        ...

    def vector_search(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPayload]]: ...


@runtime_checkable
class LexicalSource(Protocol):
    """Where the lexical arm searches: BM25 scores normalized to [0, 1], best first."""

    def lexical_search(self, namespace: str, text: str, k: int,
                       types: frozenset[MemoryType] | None = None) -> list[tuple[str, float]]: ...


@runtime_checkable
class GraphSearch(Protocol):
    """Where the graph arm walks: `GraphStore.traverse`'s call (a `GraphStore`, or a store that opens
    its graph first)."""

    def traverse(self, namespace: str, seeds: Sequence[tuple[str, float]], max_hops: int,
                 limit: int, now: datetime, *, multi_hop_factor: float = 1.0,
                 types: frozenset[MemoryType] | None = None,
                 asked: Sequence[tuple[str, str, bool]] = ()) -> list[Hit]: ...


@runtime_checkable
class MemorySource(VectorSource, LexicalSource, GraphSearch, Protocol):
    """All five arms' reads in one (a `MemoryStore`); `graph` is None when there is no graph to walk."""

    @property
    def graph(self) -> GraphStore | None: ...
