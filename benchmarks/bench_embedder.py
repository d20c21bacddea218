"""Benchmark the default MiniLM embedder: load time, single-query latency, batch throughput.

Why: the query embedding sits on every retrieval's critical path and batch throughput bounds ingest, and
the right onnxruntime thread count depends on the machine. Run it to (re)choose `DEFAULT_THREADS`:

    python benchmarks/bench_embedder.py                       # threads 1 and 2, LoCoMo texts if present
    python benchmarks/bench_embedder.py --threads 1 2 4 --docs 2000 --queries 300 --json out.json

Texts: LoCoMo turns from ../shared/bench/locomo/public/memories.jsonl when available (realistic lengths),
else synthetic sentences. Queries are distinct and the query cache is disabled, so latency is the
model's, not the LRU's. "2 callers" runs two callers at once, as two concurrent retrievals would.
Docs per CPU-second is reported too: on a shared machine it is steadier than wall-clock docs/s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

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


def bench(threads: int, docs: list[str], queries: list[str], batch_size: int = 32) -> dict[str, Any]:
    """Measure one configuration; returns milliseconds and docs/s."""
    emb = MiniLMEmbedder(intra_op_threads=threads, batch_size=batch_size, query_cache_size=0)
    t0 = time.perf_counter()
    emb.load()
    load_s = time.perf_counter() - t0
    emb.embed_documents(docs[:64])  # warm-up: first runs allocate arenas
    for q in queries[:10]:
        emb.embed_query(q)

    lat: list[float] = []
    for q in queries:
        t = time.perf_counter()
        emb.embed_query(q)
        lat.append((time.perf_counter() - t) * 1000)

    t, cpu = time.perf_counter(), time.process_time()
    emb.embed_documents(docs)
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
        "threads": threads, "batch_size": batch_size, "load_s": round(load_s, 3),
        "query_p50_ms": round(statistics.median(lat), 2), "query_p95_ms": round(_percentile(lat, 0.95), 2),
        "query_p50_ms_2_callers": round(statistics.median(par_lat), 2),
        "docs_per_s": round(len(docs) / serial_s, 1),
        "docs_per_cpu_s": round(len(docs) / serial_cpu, 1),
        "docs_per_s_2_callers": round(len(docs) / parallel_s, 1),
        "n_docs": len(docs), "n_queries": len(queries),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--batch-size", type=int, default=32)
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
        r = bench(threads, docs, queries, args.batch_size)
        results.append(r)
        print(f"threads={threads}: load {r['load_s']}s | query p50 {r['query_p50_ms']} ms "
              f"p95 {r['query_p95_ms']} ms (2 callers: p50 {r['query_p50_ms_2_callers']} ms) | "
              f"{r['docs_per_s']} docs/s, {r['docs_per_cpu_s']} per CPU-s (2 callers: {r['docs_per_s_2_callers']} docs/s)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
