"""The engine graph (`backends.graph.engine`, connect()'s graph) beside the embedded graph.

    PYTHONPATH=. python benchmarks/bench_engine_graph.py latency [--sizes 10000 100000] [--queries 50]
    PYTHONPATH=. python benchmarks/bench_engine_graph.py open [--sizes 2000,200000]
    PYTHONPATH=. python benchmarks/bench_engine_graph.py calls [--sizes 2000] [--queries 150]

`latency`: the graph arm (`GraphRetriever.search`, max_hops 2, k 50) over `bench_graph`'s corpus
(Zipfian mentions, a user in every memory, two speakers in half: hubs; explicit relations), the
same corpus and queries in the embedded graph and in the engine graph, side by side in one
process; with the engine calls per query (counted on the real client) and a check that both
return the same ranking. The engine is qdrant-client's local mode: pure Python, every filter a
scan of the whole collection (payload indexes have no effect there), so its latencies are an upper
bound that grows with the collection; a Qdrant server answers the same calls from its indexes.

`open`: a connect() store opened over a collection holding `--sizes` memories (and their graph
points) in 20 other namespaces beside its own 100: `open()` time, the first dense-only and the
first graph-only query, and the engine calls each made. Each size in a fresh child process.

`calls`: a connect() store of `--sizes` synthetic memories (`evaluation.synth`, the bench's corpus
and its mixed and simple queries): the engine calls per query grouped by the plan the ensemble
ran (`evaluation.bench.plan_label`), with latency p50 / p99 (local mode: see above).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_graph import NOW, NS, _cumulative, _zipf_weights, build_corpus, ingest  # noqa: E402

__all__ = ["main", "CallCounter"]


class CallCounter:
    """Counts a real QdrantClient's calls (wrapping its methods on the instance)."""

    METHODS = ("scroll", "count", "retrieve", "facet", "query_batch_points", "query_points", "upsert",
               "set_payload", "delete", "collection_exists", "get_collection")

    def __init__(self, client: Any) -> None:
        self.calls: Counter[str] = Counter()
        for name in self.METHODS:
            setattr(client, name, self._wrap(name, getattr(client, name)))

    def _wrap(self, name: str, method: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return method(*args, **kwargs)
        return call

    def total(self) -> int:
        return sum(self.calls.values())


def _requests(entities: int, queries: int, hops: int, k: int = 50, seed: int = 11) -> list[Any]:
    from fused_memory.results import EntityCandidate, EntityRef, ParsedQuery
    from fused_memory.retrievers.base import ArmRequest

    rng = random.Random(seed)
    cum = list(_cumulative(_zipf_weights(entities)))
    reqs = []
    for _ in range(queries):
        ids = rng.choices(range(entities), cum_weights=cum, k=rng.choice((1, 1, 2)))
        refs = tuple(EntityRef(f"Ent{j:05d}", (EntityCandidate(f"ent{j:05d}", f"Ent{j:05d}", 1.0),)) for j in ids)
        reqs.append(ArmRequest(ParsedQuery(text="q", now=NOW, entity_refs=refs), NS, k, max_hops=hops))
    return reqs


def _pct(lat: list[float], q: float) -> float:
    lat = sorted(lat)
    return lat[int(q * (len(lat) - 1))]


def latency(size: int, entities: int, queries: int, hops: int) -> dict[str, Any]:
    from qdrant_client import QdrantClient

    from fused_memory.backends.graph.embedded import EmbeddedGraphStore
    from fused_memory.backends.graph.engine import EngineGraphStore
    from fused_memory.backends.vector.server import QdrantClientBackend
    from fused_memory.retrievers.graph import GraphRetriever

    items, rels = build_corpus(size, entities)
    reqs = _requests(entities, queries, hops)
    row: dict[str, Any] = {"memories": size, "queries": queries, "hops": hops}
    with tempfile.TemporaryDirectory() as tmp:
        embedded = EmbeddedGraphStore(str(Path(tmp) / "graph"))
        embedded.open()
        row["embedded_ingest_s"] = ingest(embedded, items, rels)
        client = QdrantClient(location=":memory:")
        engine = EngineGraphStore(QdrantClientBackend(client=client))
        engine.open()
        row["engine_ingest_s"] = ingest(engine, items, rels)
        counter = CallCounter(client)
        same = 0
        for name, g in (("embedded", embedded), ("engine", engine)):
            arm, lat, calls, ranked = GraphRetriever(g), [], [], []
            for r in reqs:
                before = counter.total()
                t = time.perf_counter()
                ranked.append([(h.memory_id, round(h.score, 9)) for h in arm.search(r)])
                lat.append((time.perf_counter() - t) * 1000)
                calls.append(counter.total() - before)
            row[f"{name}_p50_ms"], row[f"{name}_p99_ms"] = statistics.median(lat), _pct(lat, 0.99)
            if name == "engine":
                row["engine_calls_p50"], row["engine_calls_max"] = statistics.median(calls), max(calls)
                row["engine_calls_by_method"] = dict(counter.calls)
                same = sum(a == b for a, b in zip(ranked, row.pop("_embedded_ranked"), strict=True))
            else:
                row["_embedded_ranked"] = ranked
        row["same_ranking"] = f"{same}/{len(reqs)}"
        embedded.close()
        client.close()
    return row


def open_child(size: int) -> dict[str, Any]:
    """A connect() store over a collection with `size` memories in other namespaces."""
    from qdrant_client import QdrantClient

    from fused_memory import EnsembleMemory, Memory, MemoryStore
    from fused_memory.backends.codec import to_payload
    from fused_memory.backends.graph.aliases import NewEntity
    from fused_memory.backends.graph.engine_points import entity_payload, point_id
    from fused_memory.backends.lexical.sparse import SparseBM25
    from fused_memory.backends.protocols import VectorRecord
    from fused_memory.backends.vector.server import QdrantClientBackend
    from fused_memory.config import FusionConfig
    from fused_memory.embeddings import HashingEmbedder
    from fused_memory.evaluation.synth import synth_memories
    from fused_memory.results import ARMS
    from fused_memory.store.ingest import answer_tags, lexical_doc
    from fused_memory.text import normalize_entity_id

    emb = HashingEmbedder(dim=64)
    client = QdrantClient(location=":memory:")
    with MemoryStore.connect(qdrant_client=client, embedder=emb, ner=False) as seed:
        seed.add([Memory(text=f"Sarah Chen note {i}: the Kestrel launch", namespace="mine", id=f"m{i}",
                         entities=("Sarah Chen", "Kestrel")) for i in range(100)])
    # the other tenants, written in the shapes the store writes (memories, their sparse vectors, graph points)
    writer = QdrantClientBackend(client=client, sparse=True)
    writer.open(64)
    graph_collection = "fused_memory__graph"
    enc = SparseBM25()
    pool = synth_memories(size, seed=5, namespace="x")
    seq = 0
    for start in range(0, len(pool), 2000):
        part = pool[start:start + 2000]
        vecs = emb.embed_documents([m.text for m in part])
        recs, points = [], []
        for i, (m, v) in enumerate(zip(part, vecs, strict=True)):
            ns = f"tenant-{(start + i) % 20}"
            m = m.with_(namespace=ns)
            recs.append(VectorRecord(m.id, ns, tuple(float(x) for x in v), to_payload(m, None, answer_tags(m.text)),
                                     enc.encode(lexical_doc(m))))
            ents = sorted({normalize_entity_id(e) for e in m.entities} - {""})
            seq += 1
            points.append((point_id("memory", ns, m.id), {"k": "memory", "ns": ns, "mid": m.id, "ents": ents,
                                                      "seq": float(seq), "type": None}))
            points += [(point_id("entity", ns, e), entity_payload(ns, NewEntity(e, e, None, e))) for e in ents]
        writer.upsert(recs)
        from qdrant_client import models
        client.upsert(graph_collection, wait=True, points=[models.PointStruct(id=p, vector=[1.0], payload=pl)
                                                           for p, pl in dict(points).items()])
    counter = CallCounter(client)
    t0 = time.perf_counter()
    store = MemoryStore.connect(qdrant_client=client, embedder=emb, ner=False).open()
    row: dict[str, Any] = {"open_s": time.perf_counter() - t0, "open_calls": counter.total()}
    ens = EnsembleMemory(store, FusionConfig(timeouts_s={a: 600.0 for a in ARMS}))
    for name, query, arms in (("dense", "the Kestrel launch", ["dense"]), ("graph", "Sarah Chen", ["graph"])):
        before = counter.total()
        t = time.perf_counter()
        hits = ens.retrieve(query, namespace="mine", arms=arms, now=NOW).ids()
        row[f"first_{name}_s"] = time.perf_counter() - t
        row[f"first_{name}_calls"] = counter.total() - before
        row[f"{name}_hits"] = len(hits)
    ens.close()
    store.close()
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}


def calls(size: int, queries: int) -> list[dict[str, Any]]:
    from qdrant_client import QdrantClient

    from fused_memory import EnsembleMemory, MemoryStore
    from fused_memory.config import FusionConfig
    from fused_memory.embeddings import HashingEmbedder
    from fused_memory.evaluation.bench import plan_label
    from fused_memory.evaluation.synth import SYNTH_NOW, simple_queries, synth_memories, synth_queries
    from fused_memory.results import ARMS

    client = QdrantClient(location=":memory:")
    store = MemoryStore.connect(qdrant_client=client, embedder=HashingEmbedder(dim=64), ner=False).open()
    mems = synth_memories(size, namespace="bench")
    store.add(mems)
    qs = synth_queries(mems, queries) + simple_queries(mems, queries // 2)
    counter = CallCounter(client)
    ens = EnsembleMemory(store, FusionConfig(timeouts_s={a: 600.0 for a in ARMS}))  # local mode is slow: no timeouts
    by_plan: dict[str, list[tuple[int, float]]] = {}
    for q in qs:
        before = counter.total()
        t = time.perf_counter()
        result = ens.retrieve(q.text, namespace="bench", now=SYNTH_NOW)
        ms = (time.perf_counter() - t) * 1000
        by_plan.setdefault(plan_label(result), []).append((counter.total() - before, ms))
    ens.close()
    store.close()
    client.close()
    rows = []
    for plan, xs in sorted(by_plan.items(), key=lambda kv: -len(kv[1])):
        n = [c for c, _ in xs]
        lat = [m for _, m in xs]
        rows.append({"memories": size, "plan": plan, "queries": len(xs), "calls_p50": statistics.median(n),
                     "calls_max": max(n), "p50_ms": round(statistics.median(lat), 1),
                     "p99_ms": round(_pct(lat, 0.99), 1)})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("latency", "open", "calls"))
    ap.add_argument("--sizes", default=None)
    ap.add_argument("--entities", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--hops", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    rows = []
    if args.what == "latency":
        for n in (int(s) for s in (args.sizes or "10000,100000").split(",")):
            rows.append(latency(n, args.entities, args.queries, args.hops))
            print(json.dumps(rows[-1]), flush=True)
    elif args.what == "calls":
        for n in (int(s) for s in (args.sizes or "2000").split(",")):
            for row in calls(n, args.queries):
                rows.append(row)
                print(json.dumps(row), flush=True)
    else:
        for n in (int(s) for s in (args.sizes or "2000,200000").split(",")):
            run = subprocess.run([sys.executable, __file__, "--child", str(n)], capture_output=True, text=True,
                                 check=True)
            rows.append({"other_memories": n, **json.loads(run.stdout.strip().splitlines()[-1])})
            print(json.dumps(rows[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(open_child(int(sys.argv[2]))))
    else:
        raise SystemExit(main())
