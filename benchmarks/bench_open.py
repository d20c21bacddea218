"""`open()` of a server-backed store against the size of the collection: 10k vs 200k memories in
other namespaces, with the process RSS.

Why: with the lexical index in the process (`lexical="bm25"`), every worker's `open()` scrolls
every payload of every tenant to rebuild BM25; with the index in the
engine (`lexical="engine"`) and a graph that does not reconcile (a Bolt graph; here none), `open()`
reads no memory at all. Each configuration runs in a fresh child process: the child fills a
qdrant-client local-mode collection (standing in for the server, which a real deployment has
already filled) with `--sizes` memories in 20 other namespaces plus 100 in the worker's own, then
times `MemoryStore(...).open()` and the first lexical query, and reads RSS before and after.

Local mode keeps the whole collection in the process, so "RSS before open" includes the collection
itself; the growth during `open()` is what the store adds (RSS growth is blurred by the allocator
reusing memory the fill freed, so `held_mb` also counts what a second `open()` of the same store
keeps allocated after its first lexical query, with tracemalloc). Against a server, the collection
is the server's and the RSS before open is the client's alone.

    PYTHONPATH=. python benchmarks/bench_open.py [--sizes 10000,200000] [--modes engine,bm25,engine+graph]
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
import tracemalloc

__all__ = ["main", "child"]

MODES = {
    "engine": "lexical in the engine, no graph to reconcile (a server deployment with a Bolt graph)",
    "bm25": "lexical in the process (connect() before): BM25 rebuilt from every payload",
    "engine+graph": "lexical in the engine, embedded in-memory graph (reconciled from every payload)",
}


def child(size: int, mode: str) -> dict[str, float]:
    from qdrant_client import QdrantClient

    from fused_memory.backends.codec import to_payload
    from fused_memory.backends.graph.embedded import EmbeddedGraphStore
    from fused_memory.backends.lexical.bm25 import BM25Index
    from fused_memory.backends.lexical.engine import EngineLexicalIndex
    from fused_memory.backends.lexical.sparse import SparseBM25
    from fused_memory.backends.protocols import VectorRecord
    from fused_memory.backends.vector.server import QdrantClientBackend
    from fused_memory.embeddings import HashingEmbedder
    from fused_memory.evaluation.bench import rss_mb
    from fused_memory.evaluation.synth import synth_memories
    from fused_memory.store.ingest import answer_tags, lexical_doc
    from fused_memory.store.memory_store import MemoryStore

    emb = HashingEmbedder(dim=64)
    client = QdrantClient(location=":memory:")
    engine = mode.startswith("engine")
    # fill the "server": the worker's own 100 memories and `size` in 20 other namespaces, written as the
    # store writes them (payload, and the sparse vector when the index is in the engine)
    with MemoryStore(QdrantClientBackend(client=client, sparse=engine), BM25Index(), emb) as filler:
        pass  # creates the collection and its meta
    writer = QdrantClientBackend(client=client, sparse=engine)
    writer.open(64)
    enc = SparseBM25()
    pool = synth_memories(size + 100, seed=5, namespace="x")
    for start in range(0, len(pool), 2000):
        part = pool[start:start + 2000]
        vecs = emb.embed_documents([m.text for m in part])
        recs = []
        for i, (m, v) in enumerate(zip(part, vecs, strict=True)):
            ns = "mine" if start + i < 100 else f"tenant-{(start + i) % 20}"
            m = m.with_(namespace=ns)
            recs.append(VectorRecord(m.id, ns, tuple(float(x) for x in v), to_payload(m, None, answer_tags(m.text)),
                                     enc.encode(lexical_doc(m)) if engine else None))
        writer.upsert(recs)
    del pool, recs, filler
    gc.collect()
    before = rss_mb()
    t0 = time.perf_counter()
    vectors = QdrantClientBackend(client=client, sparse=engine)
    lexical = EngineLexicalIndex(vectors) if engine else BM25Index()
    graph = EmbeddedGraphStore(None) if mode == "engine+graph" else None
    store = MemoryStore(vectors, lexical, emb, graph=graph).open()
    open_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    hits = store.lexical_search("mine", "meeting notes", 10)
    first_s = time.perf_counter() - t1
    gc.collect()
    after = rss_mb()
    store.close()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    vectors = QdrantClientBackend(client=client, sparse=engine)
    again = MemoryStore(vectors, EngineLexicalIndex(vectors) if engine else BM25Index(), emb,
                        graph=EmbeddedGraphStore(None) if mode == "engine+graph" else None).open()
    again.lexical_search("mine", "meeting notes", 10)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    again.close()
    return {"open_s": round(open_s, 4), "first_query_s": round(first_s, 4), "rss_before_open_mb": round(before, 1),
            "rss_after_open_mb": round(after, 1), "rss_growth_mb": round(after - before, 1),
            "held_mb": round(held / 2 ** 20, 1), "hits": len(hits)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,200000")
    ap.add_argument("--modes", default="engine,bm25,engine+graph")
    ap.add_argument("--json")
    args = ap.parse_args()
    out: dict[str, dict[str, dict[str, float]]] = {}
    for mode in args.modes.split(","):
        print(f"{mode}: {MODES[mode]}")
        for size in (int(s) for s in args.sizes.split(",")):
            run = subprocess.run([sys.executable, __file__, "--child", str(size), mode], capture_output=True,
                                 text=True, check=True)
            row = json.loads(run.stdout.strip().splitlines()[-1])
            out.setdefault(mode, {})[str(size)] = row
            print(f"  {size:>8,} other memories: open {row['open_s']:8.3f} s, first lexical query "
                  f"{row['first_query_s']:7.3f} s, RSS {row['rss_before_open_mb']:7.1f} -> "
                  f"{row['rss_after_open_mb']:7.1f} MB (+{row['rss_growth_mb']:.1f}), "
                  f"held {row['held_mb']:.1f} MB", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(int(sys.argv[2]), sys.argv[3])))
    else:
        main()
