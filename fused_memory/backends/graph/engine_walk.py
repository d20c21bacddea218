"""The reads one traversal of the engine graph makes (`traversal.TraversalSource`), as
payload-filtered engine calls, batched per hop level.

Split from `engine.py` because it is a separate concern: that module owns the points and the
`GraphStore` API; this one only answers the walk's questions for one namespace, remembering what it
has read (a group's members, an entity's group) for the rest of the walk. Per hop level: one
scroll of the relations touching the frontier, one of the memories mentioning it (co-mention
counts are counted here from their `ents`), one read of the other ends' groups, and for the
groups worth reading, one `query_batch_points` with one ordered request per group (most recently
linked first). Group handles are canonical entity ids.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from qdrant_client import models

from ...types import MemoryType
from .traversal import EdgeView, GroupInfo, co_mention_confidence
from .values import CO_MENTION_REL, entity_key

if TYPE_CHECKING:
    from .engine import EngineGraphStore

__all__ = ["EngineWalk"]


def _any(key: str, values: Collection[str]) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchAny(any=sorted(values)))


class EngineWalk:
    """`TraversalSource` for one traversal of one namespace of an `EngineGraphStore`."""

    def __init__(self, store: EngineGraphStore, ns: str) -> None:
        self.store, self.ns = store, ns
        self.canon: dict[str, str] = {}             # entity id -> its group
        self.members: dict[str, list[str]] = {}     # group -> member ids
        self.info: dict[str, GroupInfo] = {}

    def key(self, eid: str) -> str:
        return entity_key(self.ns, eid)

    def memory_count(self) -> int:
        return self.store.count(self.store.filter(self.ns, "memory"))

    def groups_of(self, entity_ids: Sequence[str]) -> dict[str, str]:
        missing = [i for i in entity_ids if i not in self.canon]
        self.canon.update({i: str(p["canon"]) for i, p in self.store.entity_points(self.ns, missing).items()})
        return {i: self.canon[i] for i in entity_ids if i in self.canon}

    def group_info(self, handles: Collection[str]) -> dict[str, GroupInfo]:
        fresh = [g for g in handles if g not in self.info]
        if fresh:
            groups = self.store.members(self.ns, fresh)
            df = self.store.mention_counts(self.ns, {str(p["id"]) for ps in groups.values() for p in ps})
            for g, ps in groups.items():
                ids = [str(p["id"]) for p in ps]
                self.members[g] = ids
                self.canon.update((i, g) for i in ids)
                head = next((p for p in ps if p["id"] == g), None)
                if head is not None:
                    self.info[g] = GroupInfo(str(head["name"]), sum(df.get(i, 0) for i in ids), self.key(g))
        return {g: self.info[g] for g in handles if g in self.info}

    def _member_ids(self, handles: Sequence[str]) -> dict[str, str]:
        """member id -> group, for groups whose members are known (`group_info` ran for them)."""
        self.group_info([g for g in handles if g not in self.members])
        return {x: g for g in handles for x in self.members.get(g, ())}

    def edges(self, handles: Sequence[str], cap: int) -> dict[str, list[EdgeView]]:
        return self._edges(handles, cap, None)

    def relation_edges(self, handles: Sequence[str], rels: Sequence[str], cap: int) -> dict[str, list[EdgeView]]:
        return self._edges(handles, cap, frozenset(rels))

    def _edges(self, handles: Sequence[str], cap: int, rels: frozenset[str] | None) -> dict[str, list[EdgeView]]:
        """Per group its `cap` best edges, ranked as the embedded graph ranks them (-conf, the other
        end's key, rel, backward); co-mentions counted per pair of entity ids, as it counts them."""
        own = self._member_ids(handles)
        out: dict[str, list[EdgeView]] = {g: [] for g in handles}
        if not own:
            return out
        found: list[tuple[str, str, str, str, float, int | None, bool]] = []  # (group, x, other, rel, conf, vt, fwd)
        kinds: dict[int, str] = {}
        conds: list[models.Condition] = [_any("rel", rels)] if rels is not None else []
        flt = self.store.filter(self.ns, "relation", *conds, should=[_any("src", own), _any("dst", own)])
        for p in self.store.scroll(flt, ["src", "rel", "dst", "rkind", "conf", "vt"]):
            s, d = str(p["src"]), str(p["dst"])
            for x, other, fwd in ((s, d, True), (d, s, False)):
                if x in own:
                    kinds[len(found)] = str(p["rkind"])
                    found.append((own[x], x, other, str(p["rel"]), float(p["conf"]), p.get("vt"), fwd))
        if rels is None:
            co: Counter[tuple[str, str]] = Counter()
            for p in self.store.scroll(self.store.filter(self.ns, "memory", _any("ents", own)), ["ents"]):
                ents = set(p.get("ents") or ())
                for x in ents & own.keys():
                    co.update((x, y) for y in ents if y != x)
            for (x, y), n in co.items():
                found.append((own[x], x, y, CO_MENTION_REL, co_mention_confidence(n), None, self.key(x) < self.key(y)))
        self.groups_of(sorted({f[2] for f in found}))
        ranked: dict[str, list[tuple[float, str, str, bool, int]]] = {}
        for i, (g, _x, other, rel, conf, _vt, fwd) in enumerate(found):
            dst = self.canon.get(other)
            if dst is not None and dst != g:
                ranked.setdefault(g, []).append((-conf, self.key(dst), rel, not fwd, i))
        for g, rows in ranked.items():
            for nconf, _k, rel, nfwd, i in heapq.nsmallest(cap, rows):
                f = found[i]
                kind = kinds.get(i, "semantic")
                out[g].append(EdgeView(g, self.canon[f[2]], rel, kind, -nconf, f[5], not nfwd))
        return out

    def memories(self, handles: Sequence[str], cap: int,
                 types: frozenset[MemoryType] | None) -> dict[str, list[str]]:
        own = self._member_ids(handles)
        groups = [g for g in handles if self.members.get(g)]
        extra: list[models.Condition] = [] if types is None else [_any("type", {t.value for t in types})]
        order = models.OrderByQuery(order_by=models.OrderBy(key="seq", direction=models.Direction.DESC))
        requests = [models.QueryRequest(
            query=order, filter=self.store.filter(self.ns, "memory", _any("ents", [x for x in own if own[x] == g]),
                                                  *extra),
            limit=cap, with_payload=["mid"]) for g in groups]
        answers: Any = self.store.query_batch(requests) if requests and (types is None or types) else []
        out: dict[str, list[str]] = {g: [] for g in handles}
        for g, answer in zip(groups, answers, strict=False):
            out[g] = [str((p.payload or {})["mid"]) for p in answer.points]
        return out
