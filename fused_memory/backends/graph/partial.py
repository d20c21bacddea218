"""A namespace of the embedded graph read catalogue first: its names at once, the rest on demand.

Why: loading a namespace whole (every memory, mention and co-mention count as Python objects) took
~240 ms for a namespace of 50k memories, all of it paid by that namespace's first query, which
needs far less. Query planning needs the names (the entity matcher) and how many memories mention
each (`df`); a walk needs the memories of the few groups it reaches, and the co-mention edges of
the groups it expands. So `PartialNamespaceGraph` starts with the catalogue (entities, mention
counts, relations, asserted names) and reads, through indexed lookups, an entity's memories the
first time a walk asks for them (`memories`) and its co-mention counts the first time a walk
expands it (`edges`); both stay in memory, so later queries read dicts as a whole graph's do.

Each fill is whole for the entities it fills: every memory mentioning an entity, every co-mention
count of a pair it is in. A walk reads only filled entities, so it sees exactly what the whole graph
holds: same edges, counts, recency order, hence the same hits and explanations. Writes need the
whole namespace (re-linking, unlinking and collection change counts this view does not keep), so
the store loads it whole before its first write (`embedded`). Like `space`, this module never
touches SQLite: the reads are a `MentionReader` that `embedded` implements.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

from ...types import MemoryType
from .space import NamespaceGraph
from .traversal import EdgeView

__all__ = ["MentionReader", "PartialNamespaceGraph"]


class MentionReader(Protocol):
    """The indexed reads of one namespace a partial graph fills itself from."""

    def memory_count(self) -> int:
        """How many memories the namespace holds (hub damping's N)."""
        ...

    def mentions(self, entity_ids: Collection[str]) -> Iterable[tuple[str, str, int, str | None]]:
        """(entity id, memory id, seq, memory type) of every memory mentioning one of `entity_ids`,
        by seq ascending (link order)."""
        ...

    def co_mentions(self, entity_ids: Collection[str]) -> Iterable[tuple[str, str, int]]:
        """(entity id, other entity id, memories mentioning both) for every entity co-mentioned
        with one of `entity_ids`."""
        ...

    def mentioned_by(self, memory_id: str) -> list[str]:
        """The entity ids one memory mentions, sorted."""
        ...


class PartialNamespaceGraph(NamespaceGraph):
    """A namespace's catalogue (`ent`, `members`, `tok`, `rel`, `adj`'s relation edges,
    `asserted`), `counts` (mentions per entity id) and what walks have read so far (module
    docstring). Read-only: its owner loads the namespace whole before writing it."""

    def __init__(self, namespace: str, reader: MentionReader) -> None:
        super().__init__(namespace)
        self.reader = reader
        self.counts: dict[str, int] = {}
        self.total: int | None = None      # memories in the namespace, read on first need
        self.mtype: dict[str, str | None] = {}  # memory id -> type, for the memories read so far
        self.with_mentions: set[str] = set()  # entity ids whose `ment` is complete
        self.with_edges: set[str] = set()     # entity ids whose co-mention edges are in `co` and `adj`

    # -------------------------------------------------- TraversalSource, over the catalogue
    def memory_count(self) -> int:
        if self.total is None:
            self.total = self.reader.memory_count()
        return self.total

    def df(self, g: str) -> int:
        return sum(self.counts.get(x, 0) for x in self.members.get(g, ()))

    def memory_type(self, mid: str) -> str | None:
        return self.mtype[mid]

    def memory_entities(self, mid: str) -> list[str]:
        return self.reader.mentioned_by(mid)

    # -------------------------------------------------- TraversalSource, filled on demand
    def edges(self, handles: Sequence[str], cap: int) -> dict[str, list[EdgeView]]:
        self._fill_edges(self._members(handles, self.with_edges))
        return super().edges(handles, cap)

    def memories(self, handles: Sequence[str], cap: int,
                 types: frozenset[MemoryType] | None) -> dict[str, list[str]]:
        self._fill_mentions(self._members(handles, self.with_mentions))
        return super().memories(handles, cap, types)

    # `relation_edges` needs no fill: every relation is in the catalogue, and it reads no co-mention.

    def _members(self, handles: Sequence[str], done: set[str]) -> list[str]:
        return sorted({x for g in handles for x in self.members.get(g, ()) if x not in done})

    def _fill_mentions(self, ids: list[str]) -> None:
        if not ids:
            return
        for eid, mid, seq, mtype in self.reader.mentions(ids):  # by seq: `ment` keeps link order
            self.ment.setdefault(eid, {})[mid] = seq
            self.mtype[mid] = mtype
        self.with_mentions.update(ids)

    def _fill_edges(self, ids: list[str]) -> None:
        """Set the co-mention count of every pair with an end in `ids`. A pair whose other end was
        filled before is set again to the same count: each count is the whole namespace's."""
        if not ids:
            return
        for a, b, n in self.reader.co_mentions(ids):
            pair = self.pairs((a, b))[0]
            self.co[pair] = n
            edge = ("c", *pair)
            self.adj.setdefault(a, set()).add(edge)
            self.adj.setdefault(b, set()).add(edge)
        self.with_edges.update(ids)
