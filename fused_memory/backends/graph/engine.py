"""The entity graph in the vector engine: `GraphStore` over qdrant-client, beside the memories.

Why: `MemoryStore.connect()` serves several worker processes over one Qdrant server. A graph in
each process was blind to the others' relations and entities, lost `relate()` on restart, and made
every `open()` read every payload to rebuild it. Here the graph is as shared and as durable as the
memories, and `open()` reads nothing but the collection's existence.

Model: one sibling collection `<collection>__graph` (a 1-d placeholder vector, payload only), four
kinds of point told apart by the keyword field `k`, every one carrying its namespace `ns`:

* "memory": one per linked memory: `mid`, `ents` (the entity ids it was linked to, resolved to
  their group at link time; keyword-indexed), `seq` (link time in microseconds, range-indexed:
  "most recently linked first") and `type`;
* "entity": one per name: `id` (normalized), `name`, `ekind` (NER label), `canon` (its group's
  canonical id), `asserted` (named in `add_alias`) and `toks` (first and last name of a canonical,
  multi-token, person-like name: what "Sarah" resolves to);
* "relation": one per explicit relation: `src`, `rel`, `dst`, `rkind`, `conf`, `vf`, `vt`;
* "version": one per namespace, a random number rewritten whenever its entity list changes, so
  another worker's query matcher sees a new or deleted name on its next query.

Why a sibling collection rather than the memories' own points: the `GraphStore` contract links a
memory by id whether or not the vector store holds it yet (the store links after the vector
write, rolls back with `unlink`), entities and relations have no vector, and the memory
collection's counts, facets and namespace list must not see them. A deleted memory still leaves
every reader at once: `MemoryStore.delete` removes its "memory" point in the same call.

Mention counts and co-mention counts are not stored: the engine counts them from the "memory"
points (a facet over `ents`), so two workers writing at once can never make them drift, as the
embedded graph recomputes them on open for the same reason. Traversal is the shared
`traversal.traverse_source` over payload-filtered reads (`engine_walk`), so results equal the
embedded graph's. Writes are not transactions: a write of one worker that races another's on the
same name is last-writer-wins per point, and `link` re-creates an entity another worker's
collection removed under it (the race `gc` would otherwise lose a mention to).
"""

from __future__ import annotations

import random
import time
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from qdrant_client import models

from ...errors import QueryError
from ...results import Hit
from ...text import normalize_entity_id
from ...types import Entity, EntityMention, MemoryType, Relation
from .aliases import EntityPlan, NewEntity, build_entity, name_tokens, plan_entities
from .engine_points import (
    FACET_LIMIT,
    GRAPH_SUFFIX,
    EngineHost,
    GraphPoints,
    any_of,
    entity_payload,
    match,
    name_toks,
    point_id,
)
from .engine_walk import EngineWalk
from .gc import orphaned
from .traversal import traverse_source
from .values import check_name, check_namespace, check_relation, clean_mentions, epoch_ms, quantize_confidence

__all__ = ["EngineHost", "EngineGraphStore", "GRAPH_SUFFIX"]


class EngineGraphStore(GraphPoints):
    """`GraphStore` in the Qdrant collection beside the memories (module docstring). The
    constructor does no I/O; `open` creates the graph collection and its payload indexes or finds
    them. Thread-safe: one lock orders this process's writes; reads go straight to the engine."""

    name = "engine"
    #: Other processes write the same graph (`GraphStore.remote`).
    remote = True
    #: Seconds the store may reuse an entity version read (`store.versions`): 0, since reading it
    #: is one point by id, and a new entity of another worker must be matched on the next query.
    version_ttl_s = 0.0

    def __init__(self, host: EngineHost, collection: str | None = None) -> None:
        super().__init__(host, collection)
        self._last_seq = 0

    # ------------------------------------------------------------------ writes
    def _next_seqs(self, n: int) -> list[float]:
        """Link times in microseconds, increasing within this process (a float holds them exactly)."""
        start = max(self._last_seq + 1, time.time_ns() // 1000)
        self._last_seq = start + n - 1
        return [float(start + i) for i in range(n)]

    def _bump(self, ns: str) -> None:
        self._upsert([(point_id("version", ns), {"k": "version", "ns": ns, "v": random.getrandbits(62)})])

    def _apply(self, ns: str, plan: EntityPlan, kinds: Mapping[str, str | None]) -> bool:
        """Write an alias plan: new entities, folded groups, kinds learnt. True when the entity list changed."""
        changed = bool(plan.created or plan.merges)
        if plan.created:  # a kind another mention of the batch gave is the new entity's own
            self._upsert([(point_id("entity", ns, e.id), entity_payload(ns, NewEntity(
                e.id, e.name, e.kind or kinds.get(e.id), e.canon))) for e in plan.created])
        for old, new in plan.merges:
            self._regroup(ns, [str(p["id"]) for p in self.members(ns, [old])[old]], new)
        created = {e.id for e in plan.created}
        learnt = {e: k for e, k in kinds.items() if k and e not in created}
        for eid, p in self.entity_points(ns, learnt).items():
            if p.get("ekind") is None:
                self._set([point_id("entity", ns, eid)], {"ekind": learnt[eid],
                                                      "toks": name_toks(eid, learnt[eid], str(p["canon"]))})
                changed = True
        return changed

    def _regroup(self, ns: str, ids: Sequence[str], into: str) -> None:
        """Move entities into the group of `into` (no longer canonical: no name tokens)."""
        self._set([point_id("entity", ns, i) for i in ids if i != into], {"canon": into, "toks": []})
        if into in ids:
            p = self.entity_points(ns, [into]).get(into)
            toks = name_toks(into, (p or {}).get("ekind"), into)
            self._set([point_id("entity", ns, into)], {"canon": into, "toks": toks})

    def link(self, namespace: str,
             items: Sequence[tuple[str, Sequence[EntityMention], MemoryType | None]]) -> None:
        ns = check_namespace(namespace)
        batch = {check_name(str(mid), "memory id", entity=False): (clean_mentions(ms), mtype)
                 for mid, ms, mtype in items}
        if not batch:
            return
        with self._lock:
            names = [n for ms, _t in batch.values() for n in ms]
            plan = plan_entities(_Catalog(self, ns), names)
            changed = self._apply(ns, plan, {eid: kind for eid, _n, kind in names if kind})
            before = self.retrieve([point_id("memory", ns, m) for m in batch])
            dropped = {e for p in before if p.get("ns") == ns for e in p.get("ents") or ()}
            points, targets = [], set()
            for (mid, (ms, mtype)), seq in zip(batch.items(), self._next_seqs(len(batch)), strict=True):
                ents = sorted({plan.resolved[eid] for eid, _n, _k in ms})
                targets.update(ents)
                tval = MemoryType(mtype).value if mtype is not None else None
                points.append((point_id("memory", ns, mid), {"k": "memory", "ns": ns, "mid": mid, "ents": ents,
                                                         "seq": seq, "type": tval}))
            self._upsert(points)
            # another worker may have collected a name between the plan and this write: bring it back
            lost = targets - self.entity_points(ns, targets).keys()
            if lost:
                shown = {eid: (name, kind) for eid, name, kind in names}
                self._upsert([(point_id("entity", ns, e), entity_payload(ns, NewEntity(
                    e, shown.get(e, (e, None))[0], shown.get(e, (e, None))[1], e))) for e in sorted(lost)])
                changed = True
            removed = self._collect(ns, dropped - targets)
            if changed or removed:
                self._bump(ns)

    def unlink(self, namespace: str, memory_ids: Sequence[str]) -> None:
        ns = check_namespace(namespace)
        ids = [str(m) for m in dict.fromkeys(memory_ids)]
        if not ids:
            return
        with self._lock:
            found = [p for p in self.retrieve([point_id("memory", ns, m) for m in ids]) if p.get("ns") == ns]
            if not found:
                return
            self._delete([point_id("memory", ns, str(p["mid"])) for p in found])
            if self._collect(ns, {e for p in found for e in p.get("ents") or ()}):
                self._bump(ns)

    def _collect(self, ns: str, entity_ids: Collection[str]) -> int:
        """Delete the orphaned groups among those of `entity_ids` (`gc`); returns how many entities went."""
        if not entity_ids:
            return 0
        groups = {str(p["canon"]) for p in self.entity_points(ns, entity_ids).values()}
        members = self.members(ns, groups)
        everyone = {str(p["id"]) for ps in members.values() for p in ps}
        mentioned = {i for i, n in self.mention_counts(ns, everyone).items() if n > 0}
        related = {str(p[end]) for p in self.scroll(self.filter(
            ns, "relation", should=[any_of("src", everyone), any_of("dst", everyone)]), ["src", "dst"])
            for end in ("src", "dst")} if everyone else set()
        gone: list[str] = []
        for g in sorted(groups):
            ps = members.get(g, [])
            ids = [str(p["id"]) for p in ps]
            kind = next((p.get("ekind") for p in ps if p["id"] == g), None)
            used = not mentioned.isdisjoint(ids) or not related.isdisjoint(ids)
            if ids and orphaned(g, kind, ids, used=used, asserted=any(p.get("asserted") for p in ps)):
                gone += ids
        self._delete([point_id("entity", ns, i) for i in gone])
        return len(gone)

    def collect_orphans(self, namespace: str) -> int:
        """Delete every entity group of `namespace` that `gc` would collect; returns how many went."""
        ns = check_namespace(namespace)
        with self._lock:
            ids = [str(p["id"]) for p in self.scroll(self.filter(ns, "entity"), ["id"])]
            n = self._collect(ns, ids)
            if n:
                self._bump(ns)
            return n

    def relate(self, namespace: str, relation: Relation) -> None:
        ns = check_namespace(namespace)
        src, dst, label = check_relation(relation)
        with self._lock:
            r = relation
            plan = plan_entities(_Catalog(self, ns), [(src, " ".join(r.src.split()), None),
                                                      (dst, " ".join(r.dst.split()), None)])
            self._apply(ns, plan, {})
            s, d = plan.resolved[src], plan.resolved[dst]
            self._upsert([(point_id("relation", ns, s, label, d), {
                "k": "relation", "ns": ns, "src": s, "rel": label, "dst": d, "rkind": r.kind,
                "conf": quantize_confidence(r.confidence), "vf": epoch_ms(r.valid_from), "vt": epoch_ms(r.valid_to)})])
            self._bump(ns)  # an entity with a relation is one the query matcher plans for

    def add_alias(self, namespace: str, entity: str, alias: str) -> None:
        ns = check_namespace(namespace)
        eid = normalize_entity_id(check_name(entity, "entity name"))
        aid = normalize_entity_id(check_name(alias, "alias"))
        if not eid or not aid:
            raise QueryError(f"entity and alias must be non-empty names: {entity!r}, {alias!r}")
        with self._lock:
            plan = plan_entities(_Catalog(self, ns), [(eid, " ".join(entity.split()), None)])
            self._apply(ns, plan, {})
            target = plan.resolved[eid]
            have = self.entity_points(ns, [aid]).get(aid)
            if have is None:
                self._apply(ns, EntityPlan({}, (NewEntity(aid, " ".join(alias.split()), None, target),), ()), {})
            elif str(have["canon"]) != target:
                left = str(have["canon"])
                moving = [str(p["id"]) for p in self.members(ns, [aid])[aid]] if left == aid else [aid]
                self._regroup(ns, moving, target)
                self._collect(ns, [left])
            self._set([point_id("entity", ns, x) for x in (eid, aid)], {"asserted": True})
            self._bump(ns)

    # ------------------------------------------------------------------ reads
    def _entities(self, ns: str, groups: Sequence[str]) -> list[Entity]:
        """The public view of these groups, in this order (canonical entities that exist)."""
        members = self.members(ns, groups)
        everyone = {str(p["id"]) for ps in members.values() for p in ps}
        df = self.mention_counts(ns, everyone, limit=max(FACET_LIMIT, 2 * len(everyone) + 1))
        canon = {str(p["id"]): str(p["canon"]) for ps in members.values() for p in ps}
        rels: dict[str, set[tuple[str, bool]]] = {}
        if everyone:
            for p in self.scroll(self.filter(ns, "relation", should=[any_of("src", everyone), any_of("dst", everyone)]),
                                 ["src", "rel", "dst"]):
                s, d = canon.get(str(p["src"])), canon.get(str(p["dst"]))
                if s != d:
                    for g, fwd in ((s, True), (d, False)):
                        if g is not None:
                            rels.setdefault(g, set()).add((str(p["rel"]), fwd))
        out = []
        for g in groups:
            ps = members.get(g, [])
            head = next((p for p in ps if p["id"] == g), None)
            if head is not None:
                out.append(build_entity(g, str(head["name"]), head.get("ekind"),
                                        [str(p["name"]) for p in ps if p["id"] != g],
                                        sum(df.get(str(p["id"]), 0) for p in ps), rels.get(g, ())))
        return out

    def entities(self, namespace: str) -> list[Entity]:
        ns = check_namespace(namespace)
        groups = sorted({str(p["canon"]) for p in self.scroll(self.filter(ns, "entity"), ["canon"])})
        return self._entities(ns, groups)  # (its facet asks for every name, so it never falls back per name)

    def resolve(self, namespace: str, name: str) -> list[Entity]:
        ns = check_namespace(namespace)
        eid = normalize_entity_id(name)
        if not eid:
            return []
        p = self.entity_points(ns, [eid]).get(eid)
        found = [str(p["canon"])] if p is not None else []
        if len(name_tokens(eid)) == 1:
            found += [c for c in self.person_tokens_in(ns, [eid]).get(eid, ()) if c not in found]
        return self._entities(ns, found) if found else []

    def mentions_of(self, namespace: str, memory_id: str) -> list[str]:
        ns = check_namespace(namespace)
        found = [p for p in self.retrieve([point_id("memory", ns, str(memory_id))]) if p.get("ns") == ns]
        return sorted(found[0].get("ents") or ()) if found else []

    def entity_version(self, namespace: str) -> int:
        ns = check_namespace(namespace)
        found = [p for p in self.retrieve([point_id("version", ns)]) if p.get("ns") == ns]
        return int(found[0].get("v") or 0) if found else 0

    def linked(self, namespace: str, memory_ids: Sequence[str]) -> set[str]:
        """Which of these memories are linked (`store.upgrade` brings in the others)."""
        ns = check_namespace(namespace)
        return {str(p["mid"]) for p in self.retrieve([point_id("memory", ns, str(m)) for m in memory_ids])
                if p.get("ns") == ns}

    def stats(self, namespace: str | None = None) -> Mapping[str, int]:
        ns_cond = [match("ns", check_namespace(namespace))] if namespace is not None else []

        def where(kind: str) -> models.Filter:
            return models.Filter(must=[*ns_cond, match("k", kind)])

        mentions, pairs = 0, set[tuple[str, str, str]]()
        for p in self.scroll(where("memory"), ["ns", "ents"]):
            ents = sorted(p.get("ents") or ())
            mentions += len(ents)
            pairs.update((p["ns"], a, b) for i, a in enumerate(ents) for b in ents[i + 1:])
        return {"entities": self.count(where("entity")), "memories": self.count(where("memory")),
                "mentions": mentions, "relations": self.count(where("relation")), "co_mentions": len(pairs)}

    def traverse(self, namespace: str, seeds: Sequence[tuple[str, float]], max_hops: int, limit: int,
                 now: datetime, *, multi_hop_factor: float = 1.0,
                 types: frozenset[MemoryType] | None = None,
                 asked: Sequence[tuple[str, str, bool]] = ()) -> list[Hit]:
        ns = check_namespace(namespace)
        found = traverse_source(EngineWalk(self, ns), seeds, max_hops, limit, now, multi_hop_factor, types, asked)
        return [Hit(mid, score, detail) for mid, score, detail in found]


class _Catalog:
    """`aliases.CatalogView` over the engine, for one namespace."""

    def __init__(self, store: EngineGraphStore, ns: str) -> None:
        self.store, self.ns = store, ns

    def lookup(self, ids: Collection[str]) -> dict[str, tuple[str, str | None]]:
        return self.store.lookup_in(self.ns, ids)

    def person_tokens(self, tokens: Collection[str]) -> dict[str, list[str]]:
        return self.store.person_tokens_in(self.ns, tokens)
