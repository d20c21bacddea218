"""The lexical index in the engine (sparse vectors, `lexical="engine"`) against the in-process
BM25Index (`lexical="bm25"`), side by side in one run: ingest, RSS, lexical query latency.

Why: the embedded default keeps BM25Index unless the engine's index measures as good and as fast
(docs/decisions/0010-lexical-index-placement.md). Both stores are filled with the same synthetic memories
(`fused-memory bench`'s generator) through `MemoryStore.add`, with the hashing embedder (the lexical
arm does not read embeddings; MiniLM would only add the same minutes to both), in one namespace
beside `--others` memories of another namespace. Then the same queries go to both stores'
`lexical_search` (what the lexical arm calls), interleaved per query so both see the same machine.

* ingest_s: `add` of every memory plus the first lexical read (which folds BM25Index's buffer in);
* rss_growth_mb: process RSS after ingest minus before, for each store in turn (the second store's
  growth is measured on top of the first's: allocator reuse makes it a rough figure; run
  `--only engine` / `--only bm25` in separate processes for clean ones);
* p50/p99 of `lexical_search(namespace, query, 10)`; overlap@10 of the two rankings;
* after_write_ms: p50 of a query's first lexical read after a one-memory `add`, plus the
  planner's `type_counts` (which the engine's index reads from the engine again after a write).

`--backend qdrant-local` runs the engine's index through qdrant-client's local mode instead of
qdrant-edge (the server backend's code; brute force in Python, so keep `--n` small).

    PYTHONPATH=. python benchmarks/bench_lexical_engine.py --n 100000 [--others 0] [--queries 200]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
from typing import Any

from fused_memory.embeddings import HashingEmbedder
from fused_memory.evaluation.bench import rss_mb
from fused_memory.evaluation.metrics import percentile
from fused_memory.evaluation.synth import synth_memories, synth_queries
from fused_memory.store.memory_store import MemoryStore

__all__ = ["main"]

NS = "bench"


def _store(kind: str, backend: str, root: str) -> MemoryStore:
    emb = HashingEmbedder(dim=64)
    if backend == "qdrant-local" and kind == "engine":
        return MemoryStore.connect(qdrant_location=f"{root}/q", graph_path=None, embedder=emb, ner=False,
                                   lexical=kind, show_progress=False)
    return MemoryStore.embedded(root, embedder=emb, ner=False, lexical=kind, show_progress=False)


def _ingest(store: MemoryStore, memories: list[Any], others: list[Any]) -> tuple[float, float]:
    gc.collect()
    before = rss_mb()
    t0 = time.perf_counter()
    store.add(others)
    store.add(memories)
    store.lexical_search(NS, "warm", 1)  # a read-after-write pays BM25Index's fold; the engine has none
    took = time.perf_counter() - t0
    gc.collect()
    return took, rss_mb() - before


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="memories in the queried namespace")
    ap.add_argument("--others", type=int, default=0, help="memories in another namespace beside it")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--backend", choices=("embedded", "qdrant-local"), default="embedded")
    ap.add_argument("--only", choices=("engine", "bm25"), help="one index only (clean RSS)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    memories = synth_memories(args.n, seed=args.seed, namespace=NS)
    others = synth_memories(args.others, seed=args.seed + 1, namespace="others") if args.others else []
    queries = [q.text for q in synth_queries(memories, args.queries, seed=args.seed + 4)]
    kinds = [args.only] if args.only else ["engine", "bm25"]
    load = os.getloadavg()[0]
    print(f"n={args.n:,} (+{args.others:,} in another namespace), {len(queries)} queries, backend {args.backend}, "
          f"load {load:.1f}, cpus {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="bench-lex-") as tmp:
        stores: dict[str, MemoryStore] = {}
        for kind in kinds:
            stores[kind] = _store(kind, args.backend, f"{tmp}/{kind}").open()
            took, grew = _ingest(stores[kind], memories, others)
            print(f"{kind:7s} ingest {took:7.1f} s ({(args.n + args.others) / took:7.0f}/s)  RSS +{grew:7.1f} MB "
                  f"(now {rss_mb():.0f} MB)", flush=True)
        for store in stores.values():  # warm-up: lazy columns, caches
            for q in queries[:20]:
                store.lexical_search(NS, q, 10)
        times: dict[str, list[float]] = {k: [] for k in stores}
        tops: dict[str, list[list[str]]] = {k: [] for k in stores}
        for q in queries:
            for kind, store in stores.items():
                t0 = time.perf_counter()
                ranked = store.lexical_search(NS, q, 10)
                times[kind].append((time.perf_counter() - t0) * 1000)
                tops[kind].append([m for m, _ in ranked])
        for kind, ts in times.items():
            print(f"{kind:7s} lexical_search p50 {statistics.median(ts):7.2f} ms  p99 {percentile(ts, 0.99):7.2f} ms")
        for kind, store in stores.items():
            after: list[float] = []
            for i, q in enumerate(queries[:20]):
                store.add(memories[i].with_(id=f"new-{i}", text=f"{memories[i].text} again"))
                t0 = time.perf_counter()
                store.type_counts(NS)
                store.lexical_search(NS, q, 10)
                after.append((time.perf_counter() - t0) * 1000)
            print(f"{kind:7s} after a write: type_counts + lexical_search p50 {statistics.median(after):7.2f} ms  "
                  f"max {max(after):7.2f} ms")
        if len(stores) == 2:
            overlap = [len(set(a) & set(b)) / max(1, len(a)) for a, b in zip(tops["bm25"], tops["engine"], strict=True)]
            ratio = statistics.median(times["engine"]) / statistics.median(times["bm25"])
            print(f"overlap@10 engine vs bm25: {statistics.mean(overlap):.3f}  (p50 ratio engine/bm25 {ratio:.2f})")
        for store in stores.values():
            store.close()
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
