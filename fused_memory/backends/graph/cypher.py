"""`GraphStore` over Cypher and the official `neo4j` driver: Neo4j 5, or FalkorDB's Bolt listener.

Model: (:Entity {ns, key, id, name, kind, canon, ftk, ltk, df, gdf, recent, asserted}), (:Memory {ns, key,
mid, seq, type}), (:Memory)-[:MENTIONS]->(:Entity), (:Entity)-[:REL {rk, rel, kind, conf, vf, vt}]->(:Entity),
(:Entity)-[:CO {count, conf}]->(:Entity) (start key < end key), (:GraphMeta {ns, version, memories}).
`canon` is the key of the entity's group (aliases point at their canonical entity), `df`/`gdf` count
mentions of the node / group, `ftk`/`ltk` key its first and last name tokens for alias resolution,
`asserted` marks a name given to `add_alias`. A group nothing mentions, relates or asserts any more
is deleted by the write that left it so (`gc`).
Every match is on fixed-size hashed keys (`values.entity_key` & co), every value is a
parameter, labels and relationship types are fixed strings, and every statement filters on `ns`.
Times are integer epoch milliseconds. Traversal runs the shared algorithm in `traversal` with
one edge query per hop level, so results equal the embedded store's. The statement text lives in
`queries`; this module runs it (as `cq.Q_...`).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from itertools import combinations
from typing import Any

from ...errors import ConfigurationError, QueryError
from ...results import Hit
from ...text import normalize_entity_id
from ...types import Entity, EntityMention, MemoryType, Relation
from . import queries as cq
from .aliases import EntityPlan, NewEntity, build_entity, name_parts, name_tokens, plan_entities
from .cypher_gc import collect_keys, lock, retry, sweep_keys
from .dialect import Bolt, Dialect, Work
from .traversal import CO_CONF_TABLE, CO_MENTION_SATURATION, EdgeView, GroupInfo, traverse_source
from .values import (
    CO_MENTION_REL,
    check_name,
    check_namespace,
    check_relation,
    clean_mentions,
    entity_key,
    epoch_ms,
    memory_key,
    quantize_confidence,
    rel_key,
    token_key,
)

__all__ = ["CypherGraphStore"]


class _Catalog:
    """`CatalogView` and `TraversalSource` over one unit of work; group handles are entity keys."""

    def __init__(self, w: Work, ns: str) -> None:
        self.w, self.ns = w, ns

    def lookup(self, ids: Collection[str]) -> dict[str, tuple[str, str | None]]:
        groups = self.groups_of(list(ids))  # two indexed reads: a join here makes FalkorDB scan
        rows = self.w.batch(cq.Q_CANON, "keys", sorted(set(groups.values())), ns=self.ns)
        canon = {r["key"]: (r["id"], r["kind"]) for r in rows}
        return {i: canon[g] for i, g in groups.items() if g in canon}

    def person_tokens(self, tokens: Collection[str]) -> dict[str, list[str]]:
        keys = {token_key(self.ns, t): t for t in tokens}
        out: dict[str, set[str]] = {}
        for q in cq.Q_TOKENS:
            for r in self.w.batch(q, "keys", sorted(keys), ns=self.ns, pk=["PERSON", "PER"]):
                out.setdefault(keys[r["t"]], set()).add(r["id"])
        return {t: sorted(v) for t, v in out.items()}

    def memory_count(self) -> int:
        rows = self.w.run(cq.Q_COUNT, ns=self.ns)
        return int(rows[0]["n"] or 0) if rows else 0

    def groups_of(self, entity_ids: Sequence[str]) -> dict[str, str]:
        keys = {entity_key(self.ns, i): i for i in entity_ids}
        return {keys[r["key"]]: r["canon"] for r in self.w.batch(cq.Q_GROUPS, "keys", sorted(keys), ns=self.ns)}

    def group_info(self, handles: Collection[str]) -> dict[str, GroupInfo]:
        rows = self.w.batch(cq.Q_INFO, "keys", sorted(handles), ns=self.ns)
        return {r["key"]: GroupInfo(r["name"], int(r["df"] or 0), r["key"]) for r in rows}

    def edges(self, handles: Sequence[str], cap: int) -> dict[str, list[EdgeView]]:
        return self._edges(self.w.batch(cq.Q_EDGES, "keys", list(handles), ns=self.ns, co=CO_MENTION_REL, cap=cap))

    def relation_edges(self, handles: Sequence[str], rels: Sequence[str], cap: int) -> dict[str, list[EdgeView]]:
        return self._edges(self.w.batch(cq.Q_REL_EDGES, "keys", list(handles), ns=self.ns, co=CO_MENTION_REL,
                                        cap=cap, rels=list(rels)))

    @staticmethod
    def _edges(rows: Any) -> dict[str, list[EdgeView]]:
        out: dict[str, list[EdgeView]] = {}
        for r in rows:
            dst, rel, kind, conf, vt, fwd = r["x"]
            out.setdefault(r["src"], []).append(EdgeView(r["src"], dst, rel, kind, float(conf), vt, bool(fwd)))
        return out

    def memories(self, handles: Sequence[str], cap: int,
                 types: frozenset[MemoryType] | None) -> dict[str, list[str]]:
        if types is None and cap <= cq.RECENT_CAP:
            rows = self.w.batch(cq.Q_MEMS_RECENT, "keys", list(handles), ns=self.ns, cap=cap)
        else:
            q = cq.Q_MEMS.format(cond="WHERE m.type IN $types " if types is not None else "")
            extra = {"types": sorted(t.value for t in types)} if types is not None else {}
            rows = self.w.batch(q, "keys", list(handles), ns=self.ns, cap=cap, **extra)
        out: dict[str, dict[str, None]] = {}
        for r in rows:
            out.setdefault(r["g"], {})[r["mid"]] = None
        return {g: list(ms)[:cap] for g, ms in out.items()}


class CypherGraphStore:
    """`GraphStore` on a Bolt server. `dialect` is "neo4j", "falkordb" or None (detected on open);
    `timeout_s` bounds connecting, so a dead server fails fast with `BackendUnavailable`."""

    name = "cypher"
    #: Reads go over the network and can hang (the driver has no read timeout): the ensemble bounds
    #: its planning-time entity lookup by the graph arm's timeout (`fused_memory.ensemble.lookup`).
    remote = True

    def __init__(self, uri: str | None = None, auth: tuple[str, str] | None = None, database: str | None = None,
                 dialect: str | None = None, *, timeout_s: float = 2.0, driver: Any = None) -> None:
        if (uri is None) == (driver is None):
            raise ConfigurationError("CypherGraphStore needs exactly one of uri (a Bolt URI) or driver (a neo4j "
                                     "Driver you configured; it is used as it is and never closed here)")
        label = uri if uri is not None else "the given neo4j driver"
        self.uri, self.database = label, database
        self._bolt = Bolt(label, auth, database, dialect, timeout_s, driver=driver)
        self._wlock = threading.RLock()
        self._seq = 0

    @property
    def dialect(self) -> Dialect:
        return self._bolt.dialect

    def open(self) -> None:
        self._bolt.open(cq.INDEXES)

    def close(self) -> None:
        self._bolt.close()

    def _work(self, write: bool = False) -> AbstractContextManager[Work]:
        return self._bolt.work(write)

    @contextmanager
    def _writing(self, ns: str) -> Iterator[Work]:
        """A write to namespace `ns`: this store's writers one at a time, and on Neo4j the
        namespace's lock taken first (`cypher_gc.lock`)."""
        with self._wlock, self._work(write=True) as w:
            lock(w, ns)
            yield w

    def _next_seq(self, n: int) -> int:
        """First of `n` increasing link sequence numbers (microseconds, so later writers from other
        processes still sort after earlier ones)."""
        self._seq = max(self._seq + 1, time.time_ns() // 1000)
        first, self._seq = self._seq, self._seq + n
        return first

    # ------------------------------------------------------------------ writes
    def _apply(self, w: Work, ns: str, plan: EntityPlan, kinds: Mapping[str, str | None]) -> set[str]:
        """Write a plan; returns the entity keys whose counts must be recomputed."""
        rows = []
        for e in plan.created:
            key, parts = entity_key(ns, e.id), name_parts(e.id)
            rows.append({"key": key, "id": w.text("Entity", "id", e.id, key=key),
                         "name": w.text("Entity", "name", e.name, key=key), "kind": e.kind,
                         "canon": entity_key(ns, e.canon), "ftk": token_key(ns, parts[0]) if parts else None,
                         "ltk": token_key(ns, parts[-1]) if parts else None})
        for r in rows:
            r["pend"] = w.pend if w.is_long(key=str(r["key"])) else None
        w.batch(cq.Q_NEW_ENT, "rows", rows, ns=ns)
        w.flush(ns, cq.APPEND, cq.UNPEND)
        fold = [{"old": entity_key(ns, a), "new": entity_key(ns, b)} for a, b in plan.merges]
        w.batch(cq.Q_FOLD, "rows", fold, ns=ns)
        kind_rows = [{"key": entity_key(ns, i), "kind": k} for i, k in kinds.items() if k]
        w.batch(cq.Q_KIND, "rows", kind_rows, ns=ns)
        if plan.created or fold or kind_rows:
            w.run(cq.Q_BUMP, ns=ns)
        return {str(r["key"]) for r in rows} | {x[k] for x in fold for k in ("old", "new")}

    def _recount(self, w: Work, ns: str, keys: set[str]) -> None:
        w.batch(cq.Q_DF, "keys", sorted(keys), ns=ns)
        w.batch(cq.Q_GDF, "keys", sorted(keys), ns=ns)

    @staticmethod
    def _pairs(targets: Sequence[str]) -> list[tuple[str, str]]:
        return [(a, b) if a < b else (b, a) for a, b in combinations(sorted(set(targets)), 2)]

    def _drop(self, w: Work, ns: str, mkeys: Sequence[str], co: Counter[tuple[str, str]]) -> tuple[set[str], int]:
        """Delete memories; returns the entity keys they mentioned and how many existed."""
        old: dict[str, list[str]] = {}
        for r in w.batch(cq.Q_OLD, "keys", list(mkeys), ns=ns):
            old.setdefault(r["m"], []).extend([r["e"]] if r["e"] is not None else [])
        touched = {e for es in old.values() for e in es}
        for es in old.values():
            for p in self._pairs(es):
                co[p] -= 1
        w.batch(cq.Q_DEL_MEM, "keys", list(mkeys), ns=ns)
        return touched, len(old)

    def _write_co(self, w: Work, ns: str, co: Counter[tuple[str, str]]) -> None:
        rows: list[dict[str, Any]] = [{"a": a, "b": b, "d": d} for (a, b), d in sorted(co.items()) if d]
        w.batch(cq.Q_CO, "rows", rows, ns=ns, tbl=list(CO_CONF_TABLE), sat=CO_MENTION_SATURATION)
        w.batch(cq.Q_CO_DEL, "rows", [r for r in rows if r["d"] < 0], ns=ns)

    @staticmethod
    def _add_recent(w: Work, ns: str, mention_rows: list[dict[str, str]], per_row: int = 40) -> None:
        """Prepend new memory keys to each entity's `recent`, oldest slice first, one row per entity
        per statement, at most `per_row` keys a row (a row must fit FalkorDB's payload limit)."""
        newest: dict[str, list[str]] = {}
        for row in reversed(mention_rows):  # rows are in link order: reversed is newest first
            newest.setdefault(row["e"], []).append(row["m"])
        slices = {k: [v[i:i + per_row] for i in range(0, min(len(v), cq.RECENT_CAP), per_row)][::-1]
                  for k, v in newest.items()}
        for r in range(max((len(x) for x in slices.values()), default=0)):
            rows = [{"key": k, "mks": x[r]} for k, x in sorted(slices.items()) if r < len(x)]
            w.batch(cq.Q_RECENT_ADD, "rows", rows, ns=ns, cap=cq.RECENT_CAP)

    def link(self, namespace: str,
             items: Sequence[tuple[str, Sequence[EntityMention], MemoryType | None]]) -> None:
        ns = _check_ns(namespace)
        batch = {check_name(str(mid), "memory id", entity=False): (clean_mentions(ms), mtype)
                 for mid, ms, mtype in items}
        if not batch:
            return
        retry(lambda: self._link(ns, batch), "link")

    def _link(self, ns: str, batch: Mapping[str, tuple[list[tuple[str, str, str | None]], MemoryType | None]]) -> bool:
        """One attempt at `link`; False when an entity it planned was deleted before its mention was
        written (another writer's collection: the upsert is then run again, re-creating it)."""
        with self._writing(ns) as w:
            names = [n for ms, _t in batch.values() for n in ms]
            plan = plan_entities(_Catalog(w, ns), names)
            touched = self._apply(w, ns, plan, {eid: kind for eid, _n, kind in names if kind})
            co: Counter[tuple[str, str]] = Counter()
            dropped, existed = self._drop(w, ns, [memory_key(ns, m) for m in batch], co)
            touched |= dropped
            w.run(cq.Q_MEMCOUNT, ns=ns, d=len(batch) - existed)
            seq = self._next_seq(len(batch))
            mem_rows: list[dict[str, Any]] = []
            mention_rows: list[dict[str, str]] = []
            for i, (mid, (ms, mtype)) in enumerate(batch.items()):
                mk = memory_key(ns, mid)
                targets = sorted({entity_key(ns, plan.resolved[eid]) for eid, _n, _k in ms})
                mem_rows.append({"key": mk, "mid": w.text("Memory", "mid", mid, key=mk), "seq": seq + i,
                                 "type": MemoryType(mtype).value if mtype is not None else None})
                mention_rows += [{"m": mk, "e": t} for t in targets]
                touched.update(targets)
                for p in self._pairs(targets):
                    co[p] += 1
            for r in mem_rows:
                r["pend"] = w.pend if w.is_long(key=r["key"]) else None
            w.batch(cq.Q_NEW_MEM, "rows", mem_rows, ns=ns)
            w.flush(ns, cq.APPEND, cq.UNPEND)
            written = sum(int(r["n"]) for r in w.batch(cq.Q_MENTION, "rows", mention_rows, ns=ns))
            self._add_recent(w, ns, mention_rows)
            w.batch(cq.Q_RECENT_FIX, "keys", sorted(dropped), ns=ns, cap=cq.RECENT_CAP)
            self._write_co(w, ns, co)
            self._recount(w, ns, touched)
            collect_keys(w, ns, dropped)  # names the re-linked memories no longer mention
            return written == len(mention_rows)

    def unlink(self, namespace: str, memory_ids: Sequence[str]) -> None:
        ns = _check_ns(namespace)
        mkeys = [memory_key(ns, str(m)) for m in dict.fromkeys(memory_ids)]
        if not mkeys:
            return
        with self._writing(ns) as w:
            co: Counter[tuple[str, str]] = Counter()
            touched, existed = self._drop(w, ns, mkeys, co)
            if existed:
                w.run(cq.Q_MEMCOUNT, ns=ns, d=-existed)
            w.batch(cq.Q_RECENT_FIX, "keys", sorted(touched), ns=ns, cap=cq.RECENT_CAP)
            self._write_co(w, ns, co)
            self._recount(w, ns, touched)
            collect_keys(w, ns, touched)

    def collect_orphans(self, namespace: str) -> int:
        """Delete every entity group of `namespace` that `gc` would collect; returns how many
        entities went. `unlink` does this for the entities it touches; this one-off sweep is for
        graphs written before it did (open does not run it: it scans the namespace's entities).
        Optional beside `GraphStore`, like the embedded store's, which also runs on open."""
        ns = _check_ns(namespace)
        with self._writing(ns) as w:
            # counts first: an unlink cut off after its memories went (FalkorDB has no rollback)
            # left them stale, and a stale count keeps a name the sweep would otherwise find
            self._recount(w, ns, {r["key"] for r in w.run(cq.Q_ENTITY_KEYS, ns=ns)})
            return collect_keys(w, ns, sweep_keys(w, ns))

    def relate(self, namespace: str, relation: Relation) -> None:
        ns = _check_ns(namespace)
        src, dst, label = check_relation(relation)
        names = [(src, " ".join(relation.src.split()), None), (dst, " ".join(relation.dst.split()), None)]
        retry(lambda: self._relate(ns, relation, names, src, dst, label), "relate")

    def _relate(self, ns: str, relation: Relation, names: list[tuple[str, str, None]], src: str, dst: str,
                label: str) -> bool:
        """One attempt at `relate`; False when an end was deleted before the edge was written."""
        with self._writing(ns) as w:
            plan = plan_entities(_Catalog(w, ns), names)
            self._recount(w, ns, self._apply(w, ns, plan, {}))
            rk, a, b = rel_key(label), entity_key(ns, plan.resolved[src]), entity_key(ns, plan.resolved[dst])
            rel = w.text("REL", "rel", label, key=rk, a=a, b=b)
            pend = w.pend if w.is_long(key=rk, a=a, b=b) else None
            done = w.run(cq.Q_REL, ns=ns, a=a, b=b, rk=rk, rel=rel, pend=pend,
                         kind=relation.kind, conf=quantize_confidence(relation.confidence),
                         vf=epoch_ms(relation.valid_from), vt=epoch_ms(relation.valid_to))
            w.flush(ns, cq.APPEND, cq.UNPEND)
            return bool(done) and int(done[0]["n"]) > 0

    def add_alias(self, namespace: str, entity: str, alias: str) -> None:
        ns = _check_ns(namespace)
        eid = normalize_entity_id(check_name(entity, "entity name"))
        aid = normalize_entity_id(check_name(alias, "alias"))
        if not eid or not aid:
            raise QueryError(f"entity and alias must be non-empty names: {entity!r}, {alias!r}")
        with self._writing(ns) as w:
            cat = _Catalog(w, ns)
            plan = plan_entities(cat, [(eid, " ".join(entity.split()), None)])
            touched = self._apply(w, ns, plan, {})
            target = plan.resolved[eid]
            known = cat.lookup([aid]).get(aid)
            if known is None:
                touched |= self._apply(w, ns, EntityPlan({}, (NewEntity(aid, " ".join(alias.split()), None, target),),
                                                         ()), {})
            elif known[0] != target:
                q = cq.Q_FOLD if known[0] == aid else cq.Q_MOVE
                w.run(q, ns=ns, rows=[{"old": entity_key(ns, aid), "new": entity_key(ns, target)}])
                w.run(cq.Q_BUMP, ns=ns)
                touched |= {entity_key(ns, aid), entity_key(ns, known[0]), entity_key(ns, target)}
            self._recount(w, ns, touched)
            w.run(cq.Q_ASSERT, ns=ns, keys=[entity_key(ns, eid), entity_key(ns, aid)])  # kept by `gc`
            if known is not None and known[0] != target:  # the group the alias left may have nothing left
                collect_keys(w, ns, [entity_key(ns, known[0])])

    # ------------------------------------------------------------------ reads
    def _groups(self, w: Work, ns: str, canon_keys: Sequence[str] | None) -> list[Entity]:
        rels: dict[str, set[tuple[str, bool]]] = {}
        if canon_keys is None:
            rows = w.run(cq.Q_MEMBERS.format(cond="true"), ns=ns)
            for r in w.run(cq.Q_ALL_RELS, ns=ns):  # each edge once: its source forwards, its target backwards
                rels.setdefault(r["canon"], set()).add((r["rel"], True))
                rels.setdefault(r["other"], set()).add((r["rel"], False))
        else:
            rows = w.batch(cq.Q_MEMBERS.format(cond="e.canon IN $keys"), "keys", list(canon_keys), ns=ns)
            for r in w.batch(cq.Q_GROUP_RELS, "keys", list(canon_keys), ns=ns):
                rels.setdefault(r["canon"], set()).add((r["rel"], bool(r["fwd"])))
        heads = {r["key"]: r for r in rows if r["key"] == r["canon"]}
        members: dict[str, list[str]] = {}
        for r in rows:
            if r["key"] != r["canon"]:
                members.setdefault(r["canon"], []).append(r["name"])
        out = [build_entity(h["id"], h["name"], h["kind"], members.get(k, []), int(h["df"] or 0),
                            rels.get(k, ())) for k, h in heads.items()]
        return sorted(out, key=lambda e: e.id)

    def entities(self, namespace: str) -> list[Entity]:
        ns = _check_ns(namespace)
        with self._work() as w:
            return self._groups(w, ns, None)

    def resolve(self, namespace: str, name: str) -> list[Entity]:
        ns = _check_ns(namespace)
        eid = normalize_entity_id(name)
        if not eid:
            return []
        with self._work() as w:
            cat = _Catalog(w, ns)
            own = cat.lookup([eid]).get(eid)
            ids = [own[0]] if own else []
            if len(name_tokens(eid)) == 1:
                ids += [c for c in cat.person_tokens([eid]).get(eid, []) if c not in ids]
            found = {e.id: e for e in self._groups(w, ns, [entity_key(ns, i) for i in ids])}
        return [found[i] for i in ids if i in found]

    def mentions_of(self, namespace: str, memory_id: str) -> list[str]:
        ns = _check_ns(namespace)
        with self._work() as w:
            return sorted(r["id"] for r in w.run(cq.Q_MENTIONS_OF, ns=ns, key=memory_key(ns, str(memory_id))))

    def entity_version(self, namespace: str) -> int:
        ns = _check_ns(namespace)
        with self._work() as w:
            rows = w.run(cq.Q_VERSION, ns=ns)
        return int(rows[0]["v"]) if rows and rows[0]["v"] is not None else 0

    def stats(self, namespace: str | None = None) -> Mapping[str, int]:
        params = {} if namespace is None else {"ns": _check_ns(namespace)}
        where = "" if namespace is None else "WHERE x.ns = $ns"
        with self._work() as w:
            return {k: int(w.run(q.format(w=where), **params)[0]["n"]) for k, q in cq.STATS.items()}

    def traverse(self, namespace: str, seeds: Sequence[tuple[str, float]], max_hops: int, limit: int,
                 now: datetime, *, multi_hop_factor: float = 1.0,
                 types: frozenset[MemoryType] | None = None,
                 asked: Sequence[tuple[str, str, bool]] = ()) -> list[Hit]:
        ns = _check_ns(namespace)
        if limit <= 0 or not seeds:
            return []
        with self._work() as w:
            found = traverse_source(_Catalog(w, ns), seeds, max_hops, limit, now, multi_hop_factor, types, asked)
        return [Hit(mid, score, detail) for mid, score, detail in found]


def _check_ns(namespace: str) -> str:
    return check_namespace(namespace)
