"""qdrant-edge query latency under brute force, under the index-build policy of `QdrantEdgeBackend`, and
after one big build.

Why: the embedded backend answers from brute force until `optimize()` builds HNSW, and that build
holds the GIL (it stalls every thread of the process). The policy in backends/vector/edge.py builds
one HNSW segment per `index_after` (20k) unindexed points on the write path. This checks what that
buys and costs on 384-d random unit vectors in one namespace:

* "brute force": every point unindexed (auto_optimize=False), what a store below 20k always is;
* "policy": the same points written through the default policy (chunked builds while ingesting);
  the slowest upsert call is the pause a writer sees when a build fires;
* "one-shot": one optimize() over everything (what merging into one segment would cost), timed,
  with a reader thread probing whether queries run during the build.

Filters: namespace only; + type = event (a quarter of the points); + event_at in a window
holding a tenth of them. Random vectors are HNSW's worst case for recall (no cluster structure),
so recall@10 against exact search is printed too; on clustered data it measured 1.000.

    /tmp/venv/bin/python benchmarks/bench_vector_backends.py [--sizes 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import numpy as np
import qdrant_edge as qe

from fused_memory.backends.protocols import VectorFilter, VectorQuery, VectorRecord
from fused_memory.backends.vector.edge import DEFAULT_INDEX_AFTER, QdrantEdgeBackend
from fused_memory.types import MemoryType, TimeWindow

__all__ = ["Row", "main"]

DIM = 384
NS = "bench"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
TYPES = ("fact", "preference", "event", "entity")
SPAN = timedelta(days=365)


@dataclass(frozen=True)
class Row:
    size: int
    phase: str
    segments: int
    indexed: int
    filter: str
    p50_ms: float
    p99_ms: float
    recall: float | None


def unit_vectors(n: int, rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def records(vectors: np.ndarray) -> list[VectorRecord]:
    n = len(vectors)
    out = []
    for i, v in enumerate(vectors):
        when = T0 + SPAN * (i / n)
        out.append(VectorRecord(f"m{i}", NS, tuple(v.tolist()), {
            "memory_id": f"m{i}", "namespace": NS, "text": f"memory {i}", "type": TYPES[i % 4],
            "event_at": when.timestamp(), "created_at": when.timestamp()}))
    return out


def filters() -> dict[str, VectorFilter]:
    window = TimeWindow(T0 + SPAN * 0.45, T0 + SPAN * 0.55)
    return {"namespace": VectorFilter(NS), "+type=event": VectorFilter(NS, types=frozenset({MemoryType.EVENT})),
            "+event_at window": VectorFilter(NS, event_window=window)}


def ingest(backend: QdrantEdgeBackend, recs: Sequence[VectorRecord], batch: int = 1000) -> tuple[float, float]:
    """Write in store-sized batches; returns (total seconds, slowest single upsert call)."""
    worst = 0.0
    t0 = time.perf_counter()
    for i in range(0, len(recs), batch):
        t = time.perf_counter()
        backend.upsert(recs[i:i + batch])
        worst = max(worst, time.perf_counter() - t)
    return time.perf_counter() - t0, worst


def exact_ids(path: str, queries: np.ndarray, flt: VectorFilter) -> list[set[str]]:
    """Ground truth through the engine's exact search on the same shard files."""
    shard = qe.EdgeShard.load(path)
    try:
        must = [qe.FieldCondition("namespace", match=qe.MatchValue(NS))]
        if flt.types:
            must.append(qe.FieldCondition("type", match=qe.MatchAny([t.value for t in flt.types])))
        if flt.event_window:
            must.append(qe.FieldCondition("event_at", range=qe.RangeFloat(
                gte=flt.event_window.start.timestamp(), lte=flt.event_window.end.timestamp())))
        reqs = [qe.QueryRequest(limit=10, query=qe.Query.Nearest(v.tolist()), filter=qe.Filter(must=must),
                                params=qe.SearchParams(exact=True), with_payload=True) for v in queries]
        return [{p.payload["memory_id"] for p in r} for r in shard.query_batch(qe.QueryBatchRequest(reqs))]
    finally:
        shard.close()


def measure(backend: QdrantEdgeBackend, size: int, phase: str, queries: np.ndarray,
            truth: dict[str, list[set[str]]] | None) -> list[Row]:
    st = backend.index_status()
    rows = []
    for name, flt in filters().items():
        for v in queries[:10]:  # warm caches
            backend.query_batch([VectorQuery(tuple(v.tolist()), flt, 10)])
        lat, got = [], []
        for v in queries:
            t = time.perf_counter()
            res = backend.query_batch([VectorQuery(tuple(v.tolist()), flt, 10)])[0]
            lat.append((time.perf_counter() - t) * 1000)
            got.append({h.payload["memory_id"] for h in res})
        recall = None
        if truth is not None:
            recall = float(np.mean([len(a & b) / max(1, len(b)) for a, b in zip(got, truth[name], strict=True)]))
        rows.append(Row(size, phase, st.segments, st.indexed, name, float(np.percentile(lat, 50)),
                        float(np.percentile(lat, 99)), recall))
    # the ensemble sends its Qdrant arms (dense, type, temporal) as one batch: is that cheaper?
    for label, batched in (("3 filters, 1 batch", True), ("3 filters, 3 calls", False)):
        lat = []
        for v in queries:
            qs = [VectorQuery(tuple(v.tolist()), flt, 10) for flt in filters().values()]
            t = time.perf_counter()
            if batched:
                backend.query_batch(qs)
            else:
                for one in qs:
                    backend.query_batch([one])
            lat.append((time.perf_counter() - t) * 1000)
        rows.append(Row(size, phase, st.segments, st.indexed, label, float(np.percentile(lat, 50)),
                        float(np.percentile(lat, 99)), None))
    return rows


def probe_build(backend: QdrantEdgeBackend, query: np.ndarray) -> tuple[float, float, int, float]:
    """optimize() while a reader thread queries every 5 ms. Returns (wall s, CPU s, queries the
    reader completed inside the build window, longest gap in ms between two of its queries). If the
    engine let go of the GIL the reader would keep a ~5 ms rhythm; a gap as long as the build means
    every query waited for it."""
    stop = threading.Event()
    stamps: list[float] = []
    q = VectorQuery(tuple(query.tolist()), VectorFilter(NS), 10)

    def reader() -> None:
        while not stop.is_set():
            backend.query_batch([q])
            stamps.append(time.perf_counter())
            time.sleep(0.005)

    th = threading.Thread(target=reader)
    th.start()
    time.sleep(0.1)
    cpu0, t0 = time.process_time(), time.perf_counter()
    backend.optimize()
    t1 = time.perf_counter()
    wall, cpu = t1 - t0, time.process_time() - cpu0
    time.sleep(0.1)
    stop.set()
    th.join()
    inside = sum(1 for t in stamps if t0 < t < t1)
    around = [t for t in stamps if t < t0][-1:] + [t for t in stamps if t >= t0]
    gap = max((b - a for a, b in zip(around, around[1:], strict=False)), default=0.0)
    return wall, cpu, inside, gap * 1000


def run_size(size: int, n_queries: int, root: str, notes: list[str]) -> list[Row]:
    rng = np.random.default_rng(size)
    recs = records(unit_vectors(size, rng))
    queries = unit_vectors(n_queries, rng)
    rows: list[Row] = []

    brute = QdrantEdgeBackend(os.path.join(root, f"brute-{size}"), auto_optimize=False)
    brute.open(DIM)
    secs, _ = ingest(brute, recs)
    notes.append(f"{size}: ingest {secs:.1f} s without builds ({size / secs:,.0f} points/s)")
    brute.close()
    shard = os.path.join(root, f"brute-{size}", "shard")
    truth = {name: exact_ids(shard, queries, flt) for name, flt in filters().items()}
    brute.open(DIM)
    rows += measure(brute, size, "brute force", queries, truth)
    if size > DEFAULT_INDEX_AFTER:
        policy = QdrantEdgeBackend(os.path.join(root, f"policy-{size}"))
        policy.open(DIM)
        cpu0 = time.process_time()
        secs, worst = ingest(policy, recs)
        notes.append(f"{size}: ingest with policy {secs:.1f} s wall / {time.process_time() - cpu0:.1f} s CPU, "
                     f"slowest upsert (the build pause) {worst:.1f} s")
        rows += measure(policy, size, f"policy ({DEFAULT_INDEX_AFTER // 1000}k chunks)", queries, truth)
        policy.close()
    # one-shot: everything in one build. Below the threshold the default policy never builds, so
    # force it with a tiny index_after to show what HNSW would (not) buy at this size.
    brute.close()
    one = QdrantEdgeBackend(os.path.join(root, f"brute-{size}"), index_after=1000)
    one.open(DIM)
    wall, cpu, answered, gap = probe_build(one, queries[0])
    notes.append(f"{size}: one-shot optimize {wall:.1f} s wall / {cpu:.1f} s CPU; a reader thread querying "
                 f"every 5 ms completed {answered} queries during it (longest gap {gap:,.0f} ms)")
    rows += measure(one, size, "one-shot HNSW", queries, truth)
    one.close()
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args(argv)
    root = tempfile.mkdtemp(prefix="bench-vectors-")
    notes: list[str] = [f"{os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.1f}"]
    rows: list[Row] = []
    try:
        for size in args.sizes:
            rows += run_size(size, args.queries, root, notes)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    notes.append(f"load average at end {os.getloadavg()[0]:.1f}")
    print(f"\n{'points':>8} {'phase':<20} {'segs':>4} {'indexed':>8} {'filter':<18} "
          f"{'p50 ms':>7} {'p99 ms':>7} {'recall@10':>9}")
    for r in rows:
        rec = f"{r.recall:.3f}" if r.recall is not None else "-"
        print(f"{r.size:>8} {r.phase:<20} {r.segments:>4} {r.indexed:>8} {r.filter:<18} "
              f"{r.p50_ms:>7.2f} {r.p99_ms:>7.2f} {rec:>9}")
    print()
    for n in notes:
        print("-", n)


if __name__ == "__main__":
    main()
