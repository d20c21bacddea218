"""What both graph backends share: ids, keys, the scoring formula, hub damping and alias rules.

The embedded store and the Cypher store differ only in where adjacency lives. Scoring, damping,
caps, tie-breaks, alias resolution and the traversal itself are written once here, over two small
read interfaces (`CatalogView`, `TraversalSource`), so the two backends return identical results by
construction; the contract suite checks it. Keys and input checks live in `values`, alias rules in
`aliases`.

Scoring (docs/design.md, "The graph"): a memory reached from seed `s` through entities e0=s..eh scores

    seed_weight * HOP_SCORES[h] * prod(edge factors) * prod(hub damping of e0..eh) * (0.8 if h else 1)

where an edge factor is confidence * kind prior (structural 1.0, semantic 0.9, lifecycle 1.0) *
freshness (0.3 for a lifecycle edge whose valid_to is before `now`). We take the *product* of edge
confidences, not the minimum: a chain of two 0.9 links is weaker evidence than one, and the product
keeps every score in [0, 1]. Relations are followed in both directions ("Tom -reports_to-> Sarah"
also leads from Sarah to Tom). A memory reached by several paths keeps its best.

Asked relations: when the plan says the query asks a relation of a seed ("who reports to Sarah?"
asks Sarah's `reports_to` edges backwards, `query.relations`) and the seed has such edges, the answer
is at the other end of those edges, not the seed. The walk is re-rooted there: each such neighbour
starts at hop 0 with the seed's product times the edge factor, and the seed itself is demoted by
one hop score (HOP_SCORES[1]), as it is one relation away from the answer. Hop levels then count
from the answer; the pruning bound is unchanged because it only assumes scores fall with depth.
The seeds' edges of the asked relations are read by name (`TraversalSource.relation_edges`), not
from the EDGE_CAP best of all their edges, so a hub's many other edges cannot hide them.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from ...text import normalize_entity_id
from ...types import MemoryType
from ...validation import require_aware
from .values import (
    CO_MENTION_REL,
    epoch_ms,
)

__all__ = [
    "HOP_SCORES", "MAX_HOPS", "KIND_PRIORS", "EXPIRED_FRESHNESS", "CO_MENTION_CAP", "CO_MENTION_SATURATION",
    "CO_CONF_TABLE", "HUB_MIN_DF", "HUB_SHARE", "HUB_FLOOR", "MENTION_CAP", "EDGE_CAP", "FRONTIER_CAP",
    "ANSWER_SPREAD", "co_mention_confidence", "hub_damping", "edge_factor", "render_step", "GroupInfo", "EdgeView",
    "TraversalSource", "traverse_source",
]

#: Hop score by hop count: a memory naming the seed itself is the strongest evidence.
HOP_SCORES: tuple[float, ...] = (1.0, 0.6, 0.35, 0.15)
MAX_HOPS = len(HOP_SCORES) - 1
#: Type prior per relation kind; co-mention edges are semantic.
KIND_PRIORS: Mapping[str, float] = {"structural": 1.0, "semantic": 0.9, "lifecycle": 1.0}
#: Freshness of a lifecycle edge whose valid_to has passed ("used to work at Acme").
EXPIRED_FRESHNESS = 0.3
#: Co-mention confidence is 1 - 0.5**count (0.5, 0.75, 0.875, 0.9375 ...) capped at 0.95: two names
#: in one memory are a hint, in five they are a relationship. Capped below 1 so an explicit
#: structural relation (confidence 1.0) always outranks mere co-occurrence.
CO_MENTION_CAP = 0.95
CO_MENTION_SATURATION = 5  # the first count at which the cap is reached
#: Hub damping: an entity mentioned by more than HUB_SHARE of a namespace's memories (and by more
#: than HUB_MIN_DF, so small namespaces are left alone) is a hub (the user, a speaker present in every
#: turn). Its factor falls from 1 at that share to HUB_FLOOR when it is in every memory:
#: max(HUB_FLOOR, log(N/df) / log(1/HUB_SHARE)), an IDF rescaled so non-hubs are untouched.
HUB_MIN_DF = 10
HUB_SHARE = 0.05
HUB_FLOOR = 0.1
#: Fan-out caps: memories taken per entity group (most recently linked first), relation edges
#: followed per entity group (highest stored confidence first), entities expanded per hop level.
MENTION_CAP = 200
EDGE_CAP = 50
FRONTIER_CAP = 64
#: The memories of one answer of an asked relation score x ANSWER_SPREAD per place after its most
#: recent (0.9: 1, 0.9, 0.81 ...), so "who reports to Sarah?" lists each report's latest memory
#: before a second memory of the first: an answer is a set of entities, not of one entity's memories.
ANSWER_SPREAD = 0.9


def co_mention_confidence(count: int) -> float:
    """1 - 0.5**count, capped at CO_MENTION_CAP; 0 for no co-mentions."""
    return 0.0 if count <= 0 else min(CO_MENTION_CAP, 1.0 - 0.5 ** count)


#: co_mention_confidence by count 0..SATURATION (a table the Cypher backend indexes server-side).
CO_CONF_TABLE: tuple[float, ...] = tuple(co_mention_confidence(i) for i in range(CO_MENTION_SATURATION + 1))


def hub_damping(df: int, n: int) -> float:
    """See HUB_SHARE: 1.0 for ordinary entities, down to HUB_FLOOR for one in every memory."""
    if df <= HUB_MIN_DF or n <= 0 or df <= HUB_SHARE * n:
        return 1.0
    return max(HUB_FLOOR, min(1.0, math.log(n / df) / math.log(1.0 / HUB_SHARE)))


# ------------------------------------------------------------------------ traversal
@dataclass(frozen=True)
class GroupInfo:
    """A canonical entity as traversal sees it: display name, memories mentioning its group, and a
    stable tie-break key (the hashed entity key, identical on both backends)."""

    name: str
    df: int
    order: str


@dataclass(frozen=True)
class EdgeView:
    """One relation or co-mention edge leaving group `src` for group `dst`."""

    src: str
    dst: str
    rel: str
    kind: str
    conf: float
    valid_to_ms: int | None
    forward: bool  # src is the relation's source (meaningless for co-mentions)


class TraversalSource(Protocol):
    """The reads a traversal makes; group handles are opaque (ids or keys)."""

    def memory_count(self) -> int: ...
    def groups_of(self, entity_ids: Sequence[str]) -> dict[str, str]: ...
    def group_info(self, handles: Collection[str]) -> dict[str, GroupInfo]: ...
    def edges(self, handles: Sequence[str], cap: int) -> dict[str, list[EdgeView]]:
        """Per group, at most `cap` edges ordered by (-conf, dst order key, rel, not forward)."""
        ...
    def relation_edges(self, handles: Sequence[str], rels: Sequence[str], cap: int) -> dict[str, list[EdgeView]]:
        """As `edges`, but only explicit relations named in `rels` (no co-mentions)."""
        ...
    def memories(self, handles: Sequence[str], cap: int,
                 types: frozenset[MemoryType] | None) -> dict[str, list[str]]:
        """Per group, at most `cap` memory ids, most recently linked first."""
        ...


def edge_factor(e: EdgeView, now_ms: int) -> float:
    fresh = EXPIRED_FRESHNESS if e.kind == "lifecycle" and e.valid_to_ms is not None and e.valid_to_ms < now_ms \
        else 1.0
    return e.conf * KIND_PRIORS.get(e.kind, 0.9) * fresh


def render_step(e: EdgeView) -> str:
    if e.rel == CO_MENTION_REL:
        return f"-{CO_MENTION_REL}-"
    return f"-{e.rel}->" if e.forward else f"<-{e.rel}-"


#: A walk's state at one hop level: (product, parent state | None, edge | None, tie-break key). Plain
#: tuples because a traversal makes hundreds. Equal products go to the smaller tie key
#: (parent order key, rel, backward) so both backends pick the same path.
_State = tuple


def _detail(st: _State, hop: int, info: Mapping[str, GroupInfo], demoted: Collection[str] = ()) -> str:
    """The walk from its seed, as every explanation shows it: "Sarah Chen <-reports_to- Tom Becker,
    1 hop, asked relation" (a memory reached through Tom's edge to Sarah reads as a keyword false
    positive without it); "names Sarah Chen" for a memory of the seed itself. Hops count the edges
    walked; a walk with more steps than its hop level began with a re-rooting step (`_reroot`); one
    from a seed `_reroot` put one hop behind its answers says so, as its score does."""
    steps: list[str] = []
    while st[2] is not None:
        steps.append(f"{render_step(st[2])} {info[st[2].dst].name}")
        st = st[1]
    mark = ", asked relation" if len(steps) > hop else ", one hop behind the asked relation" \
        if st[3][1] in demoted else ""
    seed = info[st[3][1]].name
    if not steps:
        return f"names {seed}{mark}"
    return f"{' '.join([seed, *reversed(steps)])}, {len(steps)} hop{'s' if len(steps) > 1 else ''}{mark}"


def traverse_source(src: TraversalSource, seeds: Sequence[tuple[str, float]], max_hops: int, limit: int,
                    now: datetime, multi_hop_factor: float = 1.0,
                    types: frozenset[MemoryType] | None = None,
                    asked: Sequence[tuple[str, str, bool]] = ()) -> list[tuple[str, float, str]]:
    """Best (memory id, score, detail) per memory, best first (ties by memory id), at most `limit`.

    Level-synchronous: one `edges` read per hop level (one round trip on a server), best product per
    (level, group). Each level's groups are read best first until `limit` memories are held; the
    limit-th score held is then a floor: walks below it are not kept, and once it beats what any
    deeper hop could reach (hop score x best product so far) deeper levels are never read. The
    pruning only skips work whose memories could not enter the top `limit`; ties are kept.
    `asked`: (entity id, relation, forward) the plan says the query asks (module docstring)."""
    now_ms = epoch_ms(require_aware(now, "now"))
    if limit <= 0 or not seeds or now_ms is None:
        return []
    max_hops = max(0, min(MAX_HOPS, int(max_hops)))
    weights: dict[str, float] = {}
    for eid, w in seeds:
        nid, w = normalize_entity_id(eid), float(w)
        w = min(1.0, max(0.0, w)) if math.isfinite(w) else 0.0
        if nid and w > 0:
            weights[nid] = max(weights.get(nid, 0.0), w)
    n = src.memory_count() if weights else 0
    if n <= 0:
        return []
    seed_w: dict[str, float] = {}
    group_of = src.groups_of(sorted(weights))
    for eid, g in group_of.items():
        seed_w[g] = max(seed_w.get(g, 0.0), weights[eid])
    info = dict(src.group_info(list(seed_w)))
    frontier = {g: (w * hub_damping(info[g].df, n), None, None, ("", g)) for g, w in seed_w.items() if g in info}
    wanted: dict[str, set[tuple[str, bool]]] = {}
    for eid, rel, forward in asked:
        group = group_of.get(normalize_entity_id(eid))
        if group is not None and group in frontier:
            wanted.setdefault(group, set()).add((str(rel), bool(forward)))
    demoted: set[str] = set()
    if wanted:
        frontier, demoted = _reroot(src, frontier, wanted, info, n, now_ms)
    best: dict[str, tuple[float, int, _State]] = {}
    kth = 0.0  # the limit-th best score held so far: it only rises, so it is a floor for what is left
    for hop in range(max_hops + 1):
        factor = HOP_SCORES[hop] * (multi_hop_factor if hop else 1.0)
        if hop and factor <= 0:
            break  # nothing deeper can score
        if hop:
            frontier = _expand(src, frontier, info, n, now_ms, kth, factor)
        cands = sorted(((factor * st[0], hop, info[g].order, g, st) for g, st in frontier.items()
                        if st[0] > 0 and factor * st[0] >= kth), key=lambda c: (-c[0], c[1], c[2]))
        kth = _gather(src, cands, info, limit, types, best, kth)
        bound = HOP_SCORES[hop + 1] * max(multi_hop_factor, 0.0) * max((st[0] for st in frontier.values()),
                                                                      default=0.0) if hop < max_hops else 0.0
        if len(best) >= limit and kth > bound:
            break  # no deeper walk can reach the top `limit`
    ranked = heapq.nsmallest(limit, [(-v[0], mid) for mid, v in best.items()])
    return [(mid, min(1.0, max(0.0, -s)), _detail(best[mid][2], best[mid][1], info, demoted))
            for s, mid in ranked]


def _reroot(src: TraversalSource, seeds: dict[str, _State], wanted: Mapping[str, set[tuple[str, bool]]],
            info: dict[str, GroupInfo], n: int, now_ms: int) -> tuple[dict[str, _State], set[str]]:
    """The hop-0 frontier for a query that asks a relation of some seeds (module docstring): the
    ends of their asked edges as answers, those seeds one hop behind, the other seeds as they were;
    and the seeds put behind."""
    rels = sorted({rel for asks in wanted.values() for rel, _ in asks})
    edges = src.relation_edges(sorted(wanted, key=lambda g: info[g].order), rels, EDGE_CAP)
    hits = [(g, e) for g in wanted for e in edges.get(g, ()) if e.dst != g and (e.rel, e.forward) in wanted[g]]
    if not hits:
        return seeds, set()
    fresh = {e.dst for _, e in hits} - info.keys()
    if fresh:
        info.update(src.group_info(sorted(fresh)))
    asked_from = {g for g, _ in hits}
    out = {g: (st[0] * HOP_SCORES[1], *st[1:]) if g in asked_from else st for g, st in seeds.items()}
    for g, e in hits:
        gi = info.get(e.dst)
        if gi is not None:
            _offer(out, e.dst, seeds[g][0] * edge_factor(e, now_ms) * hub_damping(gi.df, n), seeds[g], e,
                   (info[g].order, e.rel, not e.forward))
    return out, asked_from


def _offer(states: dict[str, _State], g: str, p: float, parent: _State, e: EdgeView, tie: tuple) -> None:
    """Keep the better walk into group `g`: the higher product, then the smaller tie key."""
    cur = states.get(g)
    if cur is None or p > cur[0] or (p == cur[0] and cur[2] is not None and tie < cur[3]):
        states[g] = (p, parent, e, tie)


def _expand(src: TraversalSource, frontier: Mapping[str, _State], info: dict[str, GroupInfo], n: int,
            now_ms: int, kth: float, factor: float) -> dict[str, _State]:
    """The next hop level: best walk per group, from the FRONTIER_CAP best groups of this level.
    A walk whose score at this hop (`factor` x product) falls below `kth` could not reach the top
    `limit` here or deeper, so it is not kept (edges come best confidence first: the rest are
    skipped). Compared as `factor * p < kth`, exactly as candidates are, so a tie is kept (dividing
    kth by factor rounded up and dropped walks that tie the limit-th score: found by fuzzing)."""
    top = sorted(frontier, key=lambda g: (-frontier[g][0], info[g].order))[:FRONTIER_CAP]
    top = [g for g in top if factor * frontier[g][0] >= kth]  # no edge can lift a walk: skip hubs' fan-out reads
    edges = src.edges(top, EDGE_CAP) if top else {}
    fresh = {e.dst for g, es in edges.items() for e in es if factor * frontier[g][0] * e.conf >= kth} - info.keys()
    if fresh:
        info.update(src.group_info(sorted(fresh)))
    nxt: dict[str, _State] = {}
    for g in top:
        st = frontier[g]
        base = st[0]
        for e in edges.get(g, ()):
            if factor * base * e.conf < kth:
                break
            gi = info.get(e.dst)
            if gi is None or e.dst == g:
                continue
            p = base * edge_factor(e, now_ms) * hub_damping(gi.df, n)
            if p <= 0.0 or factor * p < kth:
                continue
            _offer(nxt, e.dst, p, st, e, (info[g].order, e.rel, not e.forward))
    return nxt


def _gather(src: TraversalSource, cands: list, info: Mapping[str, GroupInfo], limit: int,
            types: frozenset[MemoryType] | None, best: dict[str, tuple[float, int, _State]], kth: float) -> float:
    """Read the memories of `cands` (sorted best first) until `limit` are held and the next group
    cannot beat the limit-th (a group that ties it is still read: it may hold smaller memory ids).
    A memory keeps its best score. Returns the new limit-th score (0 while fewer are held). A
    group's memories score at most the group's score, so the bounds above still hold."""
    i = 0
    while i < len(cands) and not (len(best) >= limit and cands[i][0] < kth):
        batch: list[Any] = []
        expect, need = 0, max(1, limit - len(best))
        while i < len(cands) and (not batch or expect < need or (len(best) >= limit and cands[i][0] >= kth)):
            batch.append(cands[i])
            expect += min(info[cands[i][3]].df, MENTION_CAP)
            i += 1
        mems = src.memories(list(dict.fromkeys(c[3] for c in batch)), MENTION_CAP, types)
        for top, h, _order, g, st in batch:
            spread = ANSWER_SPREAD if h == 0 and st[2] is not None else 1.0  # an answer (`_reroot`)
            for j, mid in enumerate(mems.get(g, ())):
                score = top * spread ** j
                cur = best.get(mid)
                if cur is None or score > cur[0]:
                    best[mid] = (score, h, st)
        if len(best) >= limit:
            kth = heapq.nlargest(limit, [v[0] for v in best.values()])[-1]
    return kth
