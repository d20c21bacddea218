"""Benchmark the default MiniLM embedder: load time, single-query latency, batch throughput.

Why: the query embedding sits on every retrieval's critical path and batch throughput bounds ingest, and
the right onnxruntime thread count depends on the machine. Run it to (re)choose `DEFAULT_THREADS`:

    python benchmarks/bench_embedder.py                       # threads 1 and 2, LoCoMo texts if present
    python benchmarks/bench_embedder.py --threads 1 2 4 --docs 2000 --queries 300 --json out.json
    python benchmarks/bench_embedder.py --threads 1 --activations int8 float   # int8 kernels vs float graph

Texts: LoCoMo turns from ../shared/bench/locomo/public/memories.jsonl when available (realistic lengths),
else synthetic sentences. Queries are distinct and the query cache is disabled, so latency is the
model's, not the LRU's; "short query" is a query's first 8 words, the length of a typical agent query.
"2 callers" runs two callers at once, as two concurrent retrievals would.
Docs per CPU-second is reported too: on a shared machine it is steadier than wall-clock docs/s.
With both activation modes, the cosine between their vectors of the same docs is printed as well.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from fused_memory.embeddings import MiniLMEmbedder

__all__ = ["load_texts", "bench", "main"]

_LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "public"


def load_texts(n: int) -> list[str]:
    """Up to `n` realistic memory texts (LoCoMo turns), padded with synthetic ones if needed."""
    texts: list[str] = []
    path = _LOCOMO / "memories.jsonl"
    if path.is_file():
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if len(texts) >= n:
                    break
                text = json.loads(line).get("text")
                if isinstance(text, str) and text.strip():
                    texts.append(text)
    i = 0
    while len(texts) < n:
        texts.append(f"Memory number {i}: the user mentioned project {i % 97} and a meeting on day {i % 28}.")
        i += 1
    return texts


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _latencies(emb: MiniLMEmbedder, queries: Sequence[str]) -> list[float]:
    lat: list[float] = []
    for q in queries:
        t = time.perf_counter()
        emb.embed_query(q)
        lat.append((time.perf_counter() - t) * 1000)
    return lat


def bench(threads: int, docs: list[str], queries: list[str], batch_size: int = 32,
          activations: str = "int8") -> dict[str, Any]:
    """Measure one configuration; returns milliseconds and docs/s."""
    emb = MiniLMEmbedder(intra_op_threads=threads, batch_size=batch_size, query_cache_size=0,
                         int8_activations=activations == "int8")
    t0 = time.perf_counter()
    emb.load()
    load_s = time.perf_counter() - t0
    emb.embed_documents(docs[:64])  # warm-up: first runs allocate arenas
    for q in queries[:10]:
        emb.embed_query(q)

    lat = _latencies(emb, queries)
    short = _latencies(emb, [" ".join(q.split()[:8]) for q in queries])

    t, cpu = time.perf_counter(), time.process_time()
    vectors = emb.embed_documents(docs)
    serial_s, serial_cpu = time.perf_counter() - t, time.process_time() - cpu

    half = len(docs) // 2
    with ThreadPoolExecutor(2) as pool:
        t = time.perf_counter()
        list(pool.map(emb.embed_documents, [docs[:half], docs[half:]]))
        parallel_s = time.perf_counter() - t

    par_lat: list[float] = []

    def timed(q: str) -> None:
        t1 = time.perf_counter()
        emb.embed_query(q)
        par_lat.append((time.perf_counter() - t1) * 1000)

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(timed, queries))

    return {
        "threads": threads, "batch_size": batch_size, "activations": emb.activations, "load_s": round(load_s, 3),
        "query_p50_ms": round(statistics.median(lat), 2), "query_p95_ms": round(_percentile(lat, 0.95), 2),
        "short_query_p50_ms": round(statistics.median(short), 2),
        "query_p50_ms_2_callers": round(statistics.median(par_lat), 2),
        "docs_per_s": round(len(docs) / serial_s, 1),
        "docs_per_cpu_s": round(len(docs) / serial_cpu, 1),
        "docs_per_s_2_callers": round(len(docs) / parallel_s, 1),
        "n_docs": len(docs), "n_queries": len(queries), "vectors": vectors,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--activations", nargs="+", choices=["int8", "float"], default=["int8"],
                    help="int8 kernels (the default embedder) and / or the float graph as shipped")
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)

    texts = load_texts(args.docs + args.queries)
    docs, queries = texts[:args.docs], texts[args.docs:]
    mean_chars = sum(map(len, docs)) / max(1, len(docs))
    print(f"{len(docs)} docs (mean {mean_chars:.0f} chars), {len(queries)} queries")
    results = []
    for threads in args.threads:
        for mode in args.activations:
            r = bench(threads, docs, queries, args.batch_size, mode)
            results.append(r)
            print(f"threads={threads} activations={r['activations']}: load {r['load_s']}s | query p50 "
                  f"{r['query_p50_ms']} ms p95 {r['query_p95_ms']} ms (2 callers: p50 "
                  f"{r['query_p50_ms_2_callers']} ms), short query p50 {r['short_query_p50_ms']} ms | "
                  f"{r['docs_per_s']} docs/s, {r['docs_per_cpu_s']} per CPU-s "
                  f"(2 callers: {r['docs_per_s_2_callers']} docs/s)")
    by_mode = {r["activations"]: r.pop("vectors") for r in results}
    if {"int8", "float"} <= set(by_mode):
        cos = np.sum(by_mode["int8"] * by_mode["float"], axis=1)
        print(f"cosine int8 vs float over {len(cos)} docs: min {cos.min():.5f}, mean {cos.mean():.5f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
