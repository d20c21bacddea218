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
from .traversal import HUB_MIN_DF, HUB_SHARE, EdgeView, GroupInfo, co_mention_confidence
from .values import CO_MENTION_REL, entity_key

if TYPE_CHECKING:
    from .engine_points import GraphPoints

__all__ = ["EngineWalk", "FACET_LIMIT", "COUNT_FACET_LIMIT"]

#: Neighbours one facet reads for a hub's co-mention edges (`EngineWalk._co_mentions`).
FACET_LIMIT = 1024
#: Names one facet counts for the groups of a hop level (`EngineWalk._df`).
COUNT_FACET_LIMIT = 4096


def _any(key: str, values: Collection[str]) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchAny(any=sorted(values)))


class EngineWalk:
    """`TraversalSource` for one traversal of one namespace, over the engine graph's points."""

    def __init__(self, store: GraphPoints, ns: str) -> None:
        self.store, self.ns = store, ns
        self.canon: dict[str, str] = {}             # entity id -> its group
        self.members: dict[str, list[str]] = {}     # group -> member ids
        self.info: dict[str, GroupInfo] = {}
        self._n: int | None = None                  # memories of the namespace

    def key(self, eid: str) -> str:
        return entity_key(self.ns, eid)

    def memory_count(self) -> int:
        if self._n is None:
            self._n = self.store.count(self.store.filter(self.ns, "memory"))
        return self._n

    def groups_of(self, entity_ids: Sequence[str]) -> dict[str, str]:
        missing = [i for i in entity_ids if i not in self.canon]
        self.canon.update({i: str(p["canon"]) for i, p in self.store.entity_points(self.ns, missing).items()})
        return {i: self.canon[i] for i in entity_ids if i in self.canon}

    def group_info(self, handles: Collection[str]) -> dict[str, GroupInfo]:
        fresh = [g for g in handles if g not in self.info]
        if fresh:
            groups = self.store.members(self.ns, fresh)
            for g, ps in groups.items():
                self.members[g] = [str(p["id"]) for p in ps]
                self.canon.update((i, g) for i in self.members[g])
            df = self._df([g for g in fresh if self.members.get(g)])
            for g, ps in groups.items():
                head = next((p for p in ps if p["id"] == g), None)
                if head is not None:
                    self.info[g] = GroupInfo(str(head["name"]), df.get(g, 0), self.key(g))
        return {g: self.info[g] for g in handles if g in self.info}

    def _df(self, groups: Sequence[str]) -> dict[str, int]:
        """Memories mentioning each group, summed over its members as the embedded graph sums them:
        one facet over the groups' memories (the engine counts). When their other names fill the
        facet, a member it left out is mentioned no more than the least it returned; that bound is
        used when it is no hub (`traversal.hub_damping` is then 1 whatever the exact count), and
        only otherwise is each left-out member counted on its own."""
        ids = {x for g in groups for x in self.members[g]}
        if not ids:
            return {}
        hits = self.store.facet(self.store.filter(self.ns, "memory", _any("ents", ids)), COUNT_FACET_LIMIT)
        counts = dict(hits)
        left = ids - counts.keys()
        if left and len(hits) >= COUNT_FACET_LIMIT:
            least = hits[-1][1]
            counts.update({x: least for x in left} if least <= self.hub_floor() else
                          self.store.mention_counts(self.ns, left))
        return {g: sum(counts.get(x, 0) for x in self.members[g]) for g in groups}

    def hub_floor(self) -> int:
        """The largest mention count that is no hub (`traversal.HUB_SHARE`, `HUB_MIN_DF`)."""
        if self._n is None:
            self._n = self.memory_count()
        return max(HUB_MIN_DF, int(HUB_SHARE * self._n))

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
            for x, y, n in self._co_mentions(handles, own):
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

    def _co_mentions(self, handles: Sequence[str], own: dict[str, str]) -> list[tuple[str, str, int]]:
        """(member, other entity, memories mentioning both) per co-mention of these groups. Groups
        below the hub threshold: one scroll of their memories' `ents`, counted per pair of entity
        ids, as the embedded graph counts. A hub's thousands of memories are not read: the engine
        counts its neighbours (one facet per hub, most co-mentioned first, at most FACET_LIMIT,
        counted per group). That ranks its edges as the embedded graph does while the hub has fewer
        than FACET_LIMIT neighbours; beyond, its EDGE_CAP edges are drawn from its FACET_LIMIT most
        co-mentioned neighbours, where the embedded graph breaks the ties of saturated confidences
        (`co_mention_confidence`) by key among all of them: a hub is damped to HUB_FLOOR, so the
        difference reaches only what is found through it."""
        floor = self.hub_floor()
        hubs = {g for g in handles if g in self.info and self.info[g].df > floor}
        small = {x: g for x, g in own.items() if g not in hubs}
        co: Counter[tuple[str, str]] = Counter()
        if small:
            for p in self.store.scroll(self.store.filter(self.ns, "memory", _any("ents", small)), ["ents"]):
                ents = set(p.get("ents") or ())
                for x in ents & small.keys():
                    co.update((x, y) for y in ents if y != x)
        for g in sorted(hubs):
            mine = set(self.members[g])
            flt = self.store.filter(self.ns, "memory", _any("ents", mine))
            co.update({(g, y): n for y, n in self.store.facet(flt, FACET_LIMIT) if y not in mine})
        return [(x, y, n) for (x, y), n in co.items()]

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
