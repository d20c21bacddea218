"""One namespace of the embedded entity graph: the adjacency dicts that reads and traversals use.

Split from `embedded.py` because it is a separate concern: that module owns the SQLite file,
the lock and the `GraphStore` API; this one is the in-process data structure alone (entities and
their groups, mentions, relations, co-mention counts, a per-group edge cache) and never touches
SQLite. It is the `CatalogView` and `TraversalSource` that `aliases` and `traversal` plan and traverse over.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Sequence
from itertools import combinations, islice
from typing import Any

from ...types import Entity, MemoryType
from .aliases import NewEntity, build_entity, name_parts, name_tokens, person_like
from .traversal import EDGE_CAP, EdgeView, GroupInfo, co_mention_confidence
from .values import CO_MENTION_REL, entity_key

__all__ = ["NamespaceGraph"]


class NamespaceGraph:
    """One namespace's graph. Edges join entity nodes; a group is a canonical node plus its aliases."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.ent: dict[str, list[Any]] = {}             # id -> [name, kind, canon]
        self.members: dict[str, set[str]] = {}          # canonical id -> ids in its group
        self.tok: dict[str, set[str]] = {}              # token -> multi-token person-like canonical ids
        self.ment: dict[str, dict[str, int]] = {}       # entity id -> {memory id: seq}, oldest first
        self.mem: dict[str, tuple[int, str | None, tuple[str, ...]]] = {}  # mid -> (seq, type, entity ids)
        self.rel: dict[tuple[str, ...], tuple[str, float, int | None, int | None]] = {}  # (src, rel, dst)
        self.co: dict[tuple[str, ...], int] = {}        # (a, b) ordered by entity key -> count
        self.adj: dict[str, set[tuple[str, ...]]] = {}  # id -> ('r', src, rel, dst) | ('c', a, b)
        self.okey: dict[str, str] = {}
        self.ecache: dict[str, tuple[int, list[EdgeView]]] = {}  # group -> (cap, its best edges)
        self.asserted: set[str] = set()                 # ids the user named in add_alias (kept by GC)
        self.seq = 0                                    # the last link's number: recency within the namespace
        self.version = 0

    def key(self, eid: str) -> str:
        k = self.okey.get(eid)
        if k is None:
            k = self.okey[eid] = entity_key(self.namespace, eid)
        return k

    # -------------------------------------------------- CatalogView
    def lookup(self, ids: Collection[str]) -> dict[str, tuple[str, str | None]]:
        return {i: (self.ent[i][2], self.ent[self.ent[i][2]][1]) for i in ids if i in self.ent}

    def person_tokens(self, tokens: Collection[str]) -> dict[str, list[str]]:
        return {t: sorted(self.tok[t]) for t in tokens if self.tok.get(t)}

    # -------------------------------------------------- TraversalSource
    def memory_count(self) -> int:
        return len(self.mem)

    def memory_type(self, mid: str) -> str | None:
        return self.mem[mid][1]

    def memory_entities(self, mid: str) -> list[str]:
        """The entity ids a memory mentions, sorted; [] for a memory not linked."""
        rec = self.mem.get(mid)
        return sorted(rec[2]) if rec else []

    def groups_of(self, entity_ids: Sequence[str]) -> dict[str, str]:
        return {i: self.ent[i][2] for i in entity_ids if i in self.ent}

    def df(self, g: str) -> int:
        return sum(len(self.ment.get(x, ())) for x in self.members.get(g, ()))

    def group_info(self, handles: Collection[str]) -> dict[str, GroupInfo]:
        return {g: GroupInfo(self.ent[g][0], self.df(g), self.key(g)) for g in handles if g in self.ent}

    def edges(self, handles: Sequence[str], cap: int) -> dict[str, list[EdgeView]]:
        out: dict[str, list[EdgeView]] = {}
        for g in handles:
            cached = self.ecache.get(g)
            if cached is None or (cap > cached[0] and len(cached[1]) == cached[0]):
                cached = self.ecache[g] = self._group_edges(g, max(cap, EDGE_CAP))
            out[g] = cached[1][:cap]
        return out

    def relation_edges(self, handles: Sequence[str], rels: Sequence[str], cap: int) -> dict[str, list[EdgeView]]:
        wanted = frozenset(rels)
        return {g: self._group_edges(g, cap, wanted)[1] for g in handles}

    def _group_edges(self, g: str, cap: int, rels: frozenset[str] | None = None) -> tuple[int, list[EdgeView]]:
        """The group's `cap` best edges (only relations named in `rels`, if given), ranked (-conf,
        neighbour key, rel, backward): sort keys are built for every incident edge, EdgeViews only
        for the winners (hubs have thousands)."""
        ranked: list[tuple[float, str, str, bool, int, str, tuple[str, ...]]] = []
        for x in self.members.get(g, ()):
            for e in self.adj.get(x, ()):
                if rels is not None and (e[0] != "r" or e[2] not in rels):
                    continue
                if e[0] == "r":
                    conf = self.rel[e[1:]][1]
                    ends = ([(e[3], True)] if x == e[1] else []) + ([(e[1], False)] if x == e[3] else [])
                    rel = e[2]
                else:
                    conf, rel = co_mention_confidence(self.co[e[1:]]), CO_MENTION_REL
                    ends = [(e[2] if x == e[1] else e[1], x == e[1])]
                for other, fwd in ends:
                    dst = self.ent[other][2]
                    if dst != g:
                        ranked.append((-conf, self.key(dst), rel, not fwd, len(ranked), dst, e))
        views = []
        for nconf, _k, rel, nfwd, _i, dst, e in heapq.nsmallest(cap, ranked):
            kind, vt = (self.rel[e[1:]][0], self.rel[e[1:]][3]) if e[0] == "r" else ("semantic", None)
            views.append(EdgeView(g, dst, rel, kind, -nconf, vt, not nfwd))
        return cap, views

    def memories(self, handles: Sequence[str], cap: int,
                 types: frozenset[MemoryType] | None) -> dict[str, list[str]]:
        allowed = None if types is None else {t.value for t in types}
        out: dict[str, list[str]] = {}
        for g in handles:
            lists = [self.ment[x] for x in sorted(self.members.get(g, ())) if self.ment.get(x)]
            if len(lists) == 1:
                stream: Any = reversed(lists[0])  # one member: already newest first, no duplicates
            else:
                merged = heapq.merge(*[((-s, m) for m, s in reversed(d.items())) for d in lists])
                seen: set[str] = set()
                stream = (m for _s, m in merged if not (m in seen or seen.add(m)))  # type: ignore[func-returns-value]
            if allowed is not None:
                stream = (m for m in stream if self.memory_type(m) in allowed)
            out[g] = list(islice(stream, cap))
        return out

    # -------------------------------------------------- in-memory mutations
    def reindex_tokens(self, eid: str) -> None:
        toks = name_tokens(eid)
        want = name_parts(eid) is not None and self.ent[eid][2] == eid and person_like(self.ent[eid][1])
        for t in {toks[0], toks[-1]}:
            s = self.tok.setdefault(t, set())
            (s.add if want else s.discard)(eid)

    def add_entity(self, e: NewEntity) -> None:
        self.ent[e.id] = [e.name, e.kind, e.canon]
        self.members.setdefault(e.canon, set()).add(e.id)
        self.reindex_tokens(e.id)
        self.version += 1

    def set_canon(self, eid: str, canon: str) -> None:
        old = self.ent[eid][2]
        self.members[old].discard(eid)
        if not self.members[old]:
            del self.members[old]
        self.ent[eid][2] = canon
        self.members.setdefault(canon, set()).add(eid)
        self.reindex_tokens(eid)
        self.ecache.clear()
        self.version += 1

    def touch(self, *ids: str) -> None:
        for i in ids:
            self.ecache.pop(self.ent[i][2], None)

    def add_memory(self, mid: str, seq: int, mtype: str | None, targets: tuple[str, ...]) -> None:
        self.mem[mid] = (seq, mtype, targets)
        for e in targets:
            self.ment.setdefault(e, {})[mid] = seq
        for a, b in self.pairs(targets):
            n = self.co.get((a, b), 0) + 1
            self.co[(a, b)] = n
            if n == 1:
                self.adj.setdefault(a, set()).add(("c", a, b))
                self.adj.setdefault(b, set()).add(("c", a, b))
            self.touch(a, b)

    def drop_memory(self, mid: str) -> tuple[str, ...]:
        """Forget a memory; returns the entities it mentioned (the candidates for `gc`)."""
        _seq, _t, targets = self.mem.pop(mid)
        for e in targets:
            self.ment.get(e, {}).pop(mid, None)
        for a, b in self.pairs(targets):
            n = self.co.get((a, b), 0) - 1
            if n > 0:
                self.co[(a, b)] = n
            else:
                self.co.pop((a, b), None)
                self.adj.get(a, set()).discard(("c", a, b))
                self.adj.get(b, set()).discard(("c", a, b))
            self.touch(a, b)
        return targets

    def remove_entity(self, eid: str) -> None:
        """Delete an entity node that nothing references (`gc` checked: no mention, hence no
        co-mention, no relation): every index that names it forgets it, and the version moves so
        cached matchers drop the name."""
        canon = self.ent.pop(eid)[2]
        toks = name_tokens(eid)
        for t in {toks[0], toks[-1]}:
            holders = self.tok.get(t)
            if holders is not None:
                holders.discard(eid)
                if not holders:
                    del self.tok[t]
        self.members.get(canon, set()).discard(eid)
        if not self.members.get(canon, True):
            del self.members[canon]
        self.ment.pop(eid, None)
        self.adj.pop(eid, None)
        self.okey.pop(eid, None)
        self.ecache.pop(eid, None)
        self.ecache.pop(canon, None)
        self.asserted.discard(eid)
        self.version += 1

    def pairs(self, targets: Sequence[str]) -> list[tuple[str, str]]:
        return [(a, b) if self.key(a) < self.key(b) else (b, a) for a, b in combinations(sorted(targets), 2)]

    def put_rel(self, s: str, rel: str, d: str, value: tuple[str, float, int | None, int | None]) -> None:
        self.rel[(s, rel, d)] = value
        self.adj.setdefault(s, set()).add(("r", s, rel, d))
        self.adj.setdefault(d, set()).add(("r", s, rel, d))
        self.touch(s, d)

    def entity(self, g: str) -> Entity:
        name, kind, _ = self.ent[g]
        members = self.members.get(g, ())
        rels = {(e[2], self.ent[e[1]][2] == g) for x in members for e in self.adj.get(x, ()) if e[0] == "r"
                and (self.ent[e[1]][2] == g) != (self.ent[e[3]][2] == g)}  # not within the group
        return build_entity(g, name, kind, [self.ent[x][0] for x in members if x != g], self.df(g), rels)
