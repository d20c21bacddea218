"""Where an embedded store's memory goes: the process's RSS after `open()` and after some queries,
and the Python heap by part of the package (tracemalloc, grouped by the file that allocated), over a
store the scale bench kept.

Why by file: the parts that could live on disk instead (the BM25 postings, the graph, the entity
matcher, the payloads a query decodes) are each allocated by their own module, so the heap grouped
by module says which one holds what. What tracemalloc does not see is the engine's own memory (the
vectors, the HNSW graphs and the payload indexes qdrant-edge keeps): that is RSS minus the heap.

    fused-memory bench --n 1000000 --embedder hashing --namespaces 20 --store DIR
    python benchmarks/rss_parts.py --store DIR/n1000000-seed7-bm25-hashing-ns20-noner
"""

from __future__ import annotations

import argparse
import gc
import json
import tracemalloc
from collections import defaultdict

from fused_memory import EnsembleMemory, MemoryStore
from fused_memory.embeddings import HashingEmbedder
from fused_memory.evaluation.synth import SYNTH_NOW, synth_memories, synth_queries

#: The parts, in the order a file is matched against them (first match wins).
PARTS = (("backends/lexical/", "BM25 postings and log"), ("backends/graph/", "graph"),
         ("query/entities", "entity matcher"), ("backends/vector/", "vector backend (Python side)"),
         ("backends/codec", "decoded payloads"), ("backends/wording", "wordings table"),
         ("ensemble/", "ensemble"), ("store/", "store"), ("query/", "query parsing"),
         ("fused_memory/", "other fused_memory"), ("site-packages/", "libraries"))


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0


def _by_part(snapshot: tracemalloc.Snapshot) -> dict[str, float]:
    out: dict[str, int] = defaultdict(int)
    for stat in snapshot.statistics("filename"):
        name = stat.traceback[0].filename
        part = next((label for key, label in PARTS if key in name), "interpreter and standard library")
        out[part] += stat.size
    return {k: round(v / 2**20, 1) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True, help="a store the scale bench kept (hashing embedder, no NER)")
    ap.add_argument("--namespace", default="bench", help="the namespace to query (the scale bench's)")
    ap.add_argument("--queries", type=int, default=60)
    args = ap.parse_args()
    emb = HashingEmbedder(384)
    emb.embed_query("warm up")
    gc.collect()
    before = _rss_mb()
    tracemalloc.start(1)
    store = MemoryStore.embedded(args.store, embedder=emb, ner=False, show_progress=False)
    store.open()
    gc.collect()
    opened, after_open = tracemalloc.take_snapshot(), _rss_mb()
    ens = EnsembleMemory(store)
    for q in synth_queries(synth_memories(2000), args.queries):  # the bench's kinds of question
        ens.retrieve(q.text, namespace=args.namespace, k=10, now=SYNTH_NOW)
    gc.collect()
    queried, after_queries = tracemalloc.take_snapshot(), _rss_mb()
    ens.close()
    store.close()
    heap = {"after open": opened, "after the queries": queried}
    rss = {"after open": after_open, "after the queries": after_queries}
    print(json.dumps({
        "rss_before_open_mb": round(before, 1),
        **{f"rss_{k.replace(' ', '_')}_mb": round(v, 1) for k, v in rss.items()},
        **{f"python_heap_{k.replace(' ', '_')}_mb": round(sum(s.size for s in snap.statistics("filename")) / 2**20, 1)
           for k, snap in heap.items()},
        **{f"heap_by_part_{k.replace(' ', '_')}_mb": _by_part(snap) for k, snap in heap.items()},
    }, indent=1))


if __name__ == "__main__":
    main()
