"""The Cypher statements behind `cypher`'s data model (its docstring describes the model).

Split from `cypher.py` because it is a separate concern: that module decides which statements
run, in which order and with which parameters; this one is only their text, each next to the server
quirk it works around. All of it is the Cypher subset Neo4j 5 and FalkorDB 4 both run; what differs
between them is in `dialect`.
"""

from __future__ import annotations

from .traversal import MENTION_CAP

__all__ = ["RECENT_CAP", "INDEXES", "Q_CANON", "Q_TOKENS", "Q_NEW_ENT", "Q_KIND", "Q_FOLD", "Q_MOVE", "Q_OLD",
           "Q_DEL_MEM", "Q_NEW_MEM", "Q_MENTION", "Q_CO", "Q_CO_DEL", "Q_DF", "Q_GDF", "Q_REL", "Q_BUMP", "Q_VERSION",
           "Q_MEMCOUNT", "Q_COUNT", "Q_GROUPS", "Q_INFO", "Q_MEMBERS", "Q_GROUP_RELS", "Q_ALL_RELS", "Q_EDGES",
           "Q_REL_EDGES", "Q_MEMS", "Q_RECENT_ADD", "Q_RECENT_FIX", "Q_MEMS_RECENT", "Q_MENTIONS_OF", "Q_ASSERT",
           "Q_GC_SWEEP", "Q_GC", "Q_LOCK", "Q_ENTITY_KEYS", "APPEND", "UNPEND", "STATS"]

RECENT_CAP = MENTION_CAP
# No index on Entity.ns / Memory.ns: given one, FalkorDB's planner scans the whole namespace instead
# of the key index. Keys embed the namespace; `ns` stays in every WHERE as a second guard.
INDEXES = (("Entity", "key"), ("Entity", "canon"), ("Entity", "ftk"), ("Entity", "ltk"), ("Memory", "key"),
            ("GraphMeta", "ns"))
_E = "MATCH (e:Entity) WHERE e.ns = $ns AND "
Q_CANON = _E + "e.key IN $keys RETURN e.key AS key, e.id AS id, e.kind AS kind"
Q_TOKENS = tuple(_E + f"e.{f} IN $keys AND e.canon = e.key AND (e.kind IS NULL OR toUpper(e.kind) IN $pk) "
                 f"RETURN e.{f} AS t, e.id AS id" for f in ("ftk", "ltk"))
Q_NEW_ENT = ("UNWIND $rows AS r MERGE (e:Entity {ns: $ns, key: r.key}) ON CREATE SET e.id = r.id, e.name = r.name, "
             "e.kind = r.kind, e.canon = r.canon, e.ftk = r.ftk, e.ltk = r.ltk, e.df = 0, e.gdf = 0, e.pend = r.pend")
Q_KIND = "UNWIND $rows AS r " + _E + "e.key = r.key AND e.kind IS NULL SET e.kind = r.kind"
Q_FOLD = "UNWIND $rows AS r " + _E + "e.canon = r.old SET e.canon = r.new"
Q_MOVE = "UNWIND $rows AS r " + _E + "e.key = r.old SET e.canon = r.new"
# Reads return one list element per record, never a collected list of user strings or of unbounded
# length: FalkorDB's Bolt listener hangs the connection on a record over 64 KB (one Bolt chunk), which
# 200 memory ids of 1 KB, or 50 long relation labels, would reach.
Q_OLD = ("MATCH (m:Memory) WHERE m.ns = $ns AND m.key IN $keys OPTIONAL MATCH (m)-[:MENTIONS]->(e:Entity) "
         "RETURN m.key AS m, e.key AS e")
Q_DEL_MEM = "MATCH (m:Memory) WHERE m.ns = $ns AND m.key IN $keys DETACH DELETE m"
Q_NEW_MEM = ("UNWIND $rows AS r CREATE (:Memory {ns: $ns, key: r.key, mid: r.mid, seq: r.seq, type: r.type, "
             "pend: r.pend})")
# Both return what they wrote: an entity another writer's collection deleted since this write planned
# it matches nothing, and the write is retried (`CypherGraphStore.link` / `relate`).
Q_MENTION = ("UNWIND $rows AS r MATCH (m:Memory) WHERE m.ns = $ns AND m.key = r.m "
             "MATCH (e:Entity) WHERE e.ns = $ns AND e.key = r.e CREATE (m)-[:MENTIONS]->(e) RETURN count(*) AS n")
Q_CO = ("UNWIND $rows AS r MATCH (a:Entity) WHERE a.ns = $ns AND a.key = r.a "
        "MATCH (b:Entity) WHERE b.ns = $ns AND b.key = r.b MERGE (a)-[c:CO]->(b) "
        "WITH c, coalesce(c.count, 0) + r.d AS n "
        "SET c.ns = $ns, c.count = n, c.conf = $tbl[CASE WHEN n > $sat THEN $sat WHEN n < 0 THEN 0 ELSE n END]")
# Separate statement: FalkorDB drops a SET's effect on rows that a later WHERE filters out.
Q_CO_DEL = ("UNWIND $rows AS r MATCH (a:Entity)-[c:CO]->(b:Entity) WHERE a.ns = $ns AND a.key = r.a AND b.ns = $ns "
            "AND b.key = r.b AND c.count <= 0 DELETE c")
Q_DF = (_E + "e.key IN $keys OPTIONAL MATCH (m:Memory)-[:MENTIONS]->(e) WITH e, count(m) AS n SET e.df = n")
Q_GDF = ("MATCH (x:Entity) WHERE x.ns = $ns AND x.key IN $keys WITH DISTINCT x.canon AS c "
         "MATCH (e:Entity) WHERE e.ns = $ns AND e.canon = c WITH c, sum(e.df) AS n "
         "MATCH (g:Entity) WHERE g.ns = $ns AND g.key = c SET g.gdf = n")
Q_REL = ("MATCH (a:Entity) WHERE a.ns = $ns AND a.key = $a MATCH (b:Entity) WHERE b.ns = $ns AND b.key = $b "
         "MERGE (a)-[r:REL {rk: $rk}]->(b) ON CREATE SET r.ns = $ns, r.rel = $rel, r.pend = $pend "
         "SET r.kind = $kind, r.conf = $conf, r.vf = $vf, r.vt = $vt RETURN count(*) AS n")
# First statement of a write transaction where the server has them (Neo4j): takes the namespace's
# GraphMeta lock until commit, so a collection cannot delete an entity another writer is linking.
Q_LOCK = "MERGE (v:GraphMeta {ns: $ns}) SET v.writes = coalesce(v.writes, 0) + 1"
Q_BUMP = "MERGE (v:GraphMeta {ns: $ns}) WITH v, coalesce(v.version, 0) + 1 AS n SET v.version = n"
Q_VERSION = "MATCH (v:GraphMeta) WHERE v.ns = $ns RETURN v.version AS v"
Q_MEMCOUNT = "MERGE (v:GraphMeta {ns: $ns}) WITH v, coalesce(v.memories, 0) + $d AS n SET v.memories = n"
Q_COUNT = "MATCH (v:GraphMeta) WHERE v.ns = $ns RETURN v.memories AS n"
Q_GROUPS = _E + "e.key IN $keys RETURN e.key AS key, e.canon AS canon"
Q_INFO = _E + "e.key IN $keys RETURN e.key AS key, e.name AS name, e.gdf AS df"
Q_MEMBERS = _E + "{cond} RETURN e.key AS key, e.id AS id, e.name AS name, e.kind AS kind, e.canon AS canon, e.gdf AS df"
# The names of the explicit relations each group has with another group, either way (Entity.relations):
# of some groups (undirected, from their keys), or of the whole namespace (each edge once, both ends
# credited by the caller: a third of the undirected match's time on FalkorDB).
Q_GROUP_RELS = ("MATCH (e:Entity)-[r:REL]-(b:Entity) WHERE e.ns = $ns AND e.canon IN $keys AND b.ns = $ns "
                "AND b.canon <> e.canon RETURN DISTINCT e.canon AS canon, r.rel AS rel, startNode(r) = e AS fwd")
Q_ALL_RELS = ("MATCH (e:Entity)-[r:REL]->(b:Entity) WHERE e.ns = $ns AND b.canon <> e.canon "
              "RETURN DISTINCT e.canon AS canon, b.canon AS other, r.rel AS rel")
_EDGES = ("MATCH (a:Entity)-[r:{types}]-(b:Entity) WHERE a.ns = $ns AND a.canon IN $keys AND b.ns = $ns{cond} "
          "WITH a.canon AS src, b.canon AS dst, r, startNode(r) = a AS fwd WHERE dst <> src "
          "WITH src, dst, fwd, coalesce(r.rel, $co) AS rel, coalesce(r.kind, 'semantic') AS kind, r.conf AS conf, "
          "r.vt AS vt ORDER BY conf DESC, dst, rel, fwd DESC "
          "WITH src, collect([dst, rel, kind, conf, vt, fwd])[..$cap] AS es UNWIND es AS x RETURN src, x")
Q_EDGES = _EDGES.format(types="REL|CO", cond="")
# The edges of the relations a query asks (TraversalSource.relation_edges); $rels is a parameter.
Q_REL_EDGES = _EDGES.format(types="REL", cond=" AND r.rel IN $rels")
# Per-group top-k in a subquery: half the server time of sorting and collecting every mention.
Q_MEMS = ("MATCH (e:Entity) WHERE e.ns = $ns AND e.canon IN $keys CALL {{ WITH e MATCH (m:Memory)-[:MENTIONS]->(e) "
          "{cond}RETURN m ORDER BY m.seq DESC LIMIT $cap }} WITH e.canon AS g, m ORDER BY m.seq DESC "
          "WITH g, collect(m.mid)[..$cap] AS ms UNWIND ms AS mid RETURN g, mid")
# Each entity keeps `recent`: the keys of its MENTION_CAP most recently linked memories, newest first,
# so reading a popular entity's memories costs O(cap), not a sort of all its mentions. Prepended on
# link (one row per entity: FalkorDB would lose all but one update of a node within a statement),
# rebuilt from the edges for entities that lost mentions; reads re-check the MENTIONS edge, so a key
# left behind (an entity that lost its last mention) matches nothing.
Q_RECENT_ADD = ("UNWIND $rows AS r " + _E + "e.key = r.key "
                "SET e.recent = (r.mks + coalesce(e.recent, []))[..$cap]")
Q_RECENT_FIX = (_E + "e.key IN $keys CALL { WITH e MATCH (m:Memory)-[:MENTIONS]->(e) RETURN m "
                "ORDER BY m.seq DESC LIMIT $cap } WITH e, m ORDER BY m.seq DESC WITH e, collect(m.key) AS ks "
                "SET e.recent = ks")
# Index lookup first, then the edge as a predicate: as a MATCH, FalkorDB expands every mention of e.
Q_MEMS_RECENT = (_E + "e.canon IN $keys UNWIND coalesce(e.recent, []) AS k MATCH (m:Memory) WHERE m.key = k "
                 "WITH e, m WHERE m.ns = $ns AND (m)-[:MENTIONS]->(e) WITH e.canon AS g, m ORDER BY m.seq DESC "
                 "WITH g, collect(m.mid)[..$cap] AS ms UNWIND ms AS mid RETURN g, mid")
Q_MENTIONS_OF = ("MATCH (m:Memory)-[:MENTIONS]->(e:Entity) WHERE m.ns = $ns AND m.key = $key AND e.ns = $ns "
                 "RETURN e.id AS id")
# Garbage collection (`gc`, `cypher_gc`). Names given to add_alias are marked `asserted`: user facts it keeps.
Q_ASSERT = _E + "e.key IN $keys SET e.asserted = true"
Q_GC_SWEEP = _E + "e.canon = e.key AND coalesce(e.gdf, 0) = 0 RETURN e.key AS key"
Q_ENTITY_KEYS = _E + "true RETURN e.key AS key"
# Deletes the groups of $keys whole when nothing keeps them: the group is unmentioned (gdf 0, recounted
# just before) and no member has a mention or a relation (re-checked on the edges: a stale count
# must not lose a referenced entity), an asserted name, or a shape the alias rules could not derive
# (`gc.derived`, here over the canonical's split id and kind; `ftk` is set iff it has name parts). One
# statement and one aggregate row per batch, because FalkorDB's Bolt listener is slow per record.
# DETACH also drops any co-mention edge a lost update left behind.
Q_GC = ("MATCH (x:Entity) WHERE x.ns = $ns AND x.key IN $keys WITH DISTINCT x.canon AS c "
        "MATCH (g:Entity) WHERE g.ns = $ns AND g.key = c AND coalesce(g.gdf, 0) = 0 "
        "MATCH (e:Entity) WHERE e.ns = $ns AND e.canon = c OPTIONAL MATCH (e)-[r:REL|MENTIONS]-() "
        "WITH g, e, count(r) AS used WITH g, e, used + CASE WHEN e.asserted THEN 1 ELSE 0 END + "
        "CASE WHEN e.key = g.key OR (g.ftk IS NOT NULL AND (g.kind IS NULL OR toUpper(g.kind) IN ['PERSON', 'PER']) "
        "AND e.id IN [head(split(g.id, ' ')), last(split(g.id, ' '))]) THEN 0 ELSE 1 END AS keep "
        "WITH g, collect(e) AS es, sum(keep) AS keep WHERE keep = 0 "
        "UNWIND es AS x DETACH DELETE x RETURN count(*) AS n")
APPEND = {  # (label, property) -> statement appending one piece of a long string (FalkorDB only)
    ("Entity", "id"): _E + "e.key = $key AND e.pend = $pend SET e.id = e.id + $piece",
    ("Entity", "name"): _E + "e.key = $key AND e.pend = $pend SET e.name = e.name + $piece",
    ("Memory", "mid"): ("MATCH (m:Memory) WHERE m.ns = $ns AND m.key = $key AND m.pend = $pend "
                        "SET m.mid = m.mid + $piece"),
    ("REL", "rel"): ("MATCH (a:Entity)-[r:REL]->(b:Entity) WHERE a.ns = $ns AND a.key = $a AND b.key = $b "
                     "AND r.rk = $key AND r.pend = $pend SET r.rel = r.rel + $piece"),
}
UNPEND = {"Entity": _E + "e.key = $key AND e.pend = $pend SET e.pend = null",
           "Memory": "MATCH (m:Memory) WHERE m.ns = $ns AND m.key = $key AND m.pend = $pend SET m.pend = null",
           "REL": ("MATCH (a:Entity)-[r:REL]->(b:Entity) WHERE a.ns = $ns AND a.key = $a AND b.key = $b "
                   "AND r.rk = $key AND r.pend = $pend SET r.pend = null")}
# Edges are counted through a bound variable: FalkorDB counts an anonymous pattern once per node pair,
# so two REL edges between the same entities would count as one.
STATS = {"entities": "MATCH (x:Entity) {w} RETURN count(x) AS n",
          "memories": "MATCH (x:Memory) {w} RETURN count(x) AS n",
          "mentions": "MATCH (x:Memory)-[r:MENTIONS]->(:Entity) {w} RETURN count(r) AS n",
          "relations": "MATCH (x:Entity)-[r:REL]->(:Entity) {w} RETURN count(r) AS n",
          "co_mentions": "MATCH (x:Entity)-[r:CO]->(:Entity) {w} RETURN count(r) AS n"}
