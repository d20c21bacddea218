"""How many cores one qdrant-edge search uses, and what slows it: why fan-out stays above 1.2x on 2 cores.

Why: the ensemble runs BM25 and the graph beside the vector arms' engine batch. If a search kept to
one core, the other core would absorb them and the ensemble would cost about what dense alone
costs. This measures, on one store and side by side in one run:

* a lone search: wall and process CPU time (CPU / wall > 1 means the engine searches its segments
  in parallel, so the arm alone already uses more than one core);
* the same searches with a busy Python thread beside them (what BM25 and the graph are), and with a
  busy numpy thread that releases the GIL (pure CPU competition);
* `hnsw_ef` 100 (the engine default, = ef_construct) / 64 / 50 and payload on / off: how much of a
  search each knob would save, with recall@10 against an exact search;
* the stored vectors returned with the hits and read into Python (what the dense arm would hand the
  steps after fusion), against reading 25 of them afterwards (`MemoryStore.stored_vectors`, what
  collapse and MMR read on about half the queries): docs/decisions/0042-vectors-read-after-fusion.md.

    python benchmarks/bench_search_cores.py --n 20000            # builds a synthetic store (minutes)
    python benchmarks/bench_search_cores.py --store /path/to/store --namespace bench

`--store` takes a store written by `MemoryStore.embedded` (e.g. a kept bench or eval store); it is
opened read-only in spirit (nothing is written). Queries are the bench's synthetic mix, embedded once
up front so only the engine is timed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import qdrant_edge as qe

from fused_memory.backends.protocols import VectorFilter
from fused_memory.backends.vector.common import filter_conditions
from fused_memory.backends.vector.edge import _edge_filter
from fused_memory.embeddings import default_embedder
from fused_memory.evaluation.synth import synth_memories, synth_queries
from fused_memory.store.memory_store import MemoryStore

__all__ = ["main"]


@contextmanager
def _beside(work: Callable[[], None] | None) -> Iterator[None]:
    """Run `work` in a loop on another thread for the duration of the block."""
    if work is None:
        yield
        return
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            work()

    th = threading.Thread(target=loop, daemon=True)
    th.start()
    try:
        yield
    finally:
        stop.set()
        th.join()


def _python_work() -> None:
    sum(i * i for i in range(2000))  # holds the GIL, like BM25's Python and the graph walk


_MATRIX = np.random.default_rng(0).random((600, 600))


def _numpy_work() -> None:
    _MATRIX @ _MATRIX  # releases the GIL: CPU competition only


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", help="an existing embedded store directory (default: build one)")
    ap.add_argument("--namespace", default="bench")
    ap.add_argument("--n", type=int, default=20_000, help="memories to build when --store is not given")
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args(argv)

    emb = default_embedder()
    tmp = None if args.store else tempfile.TemporaryDirectory(prefix="bench-search-cores-")
    path = args.store or tmp.name  # type: ignore[union-attr]
    store = MemoryStore.embedded(path, embedder=emb, show_progress=False)
    with store:
        if tmp is not None:
            print(f"building {args.n} synthetic memories (default embedder) ...", flush=True)
            store.add(synth_memories(args.n, seed=7, namespace=args.namespace), show_progress=False)
        memories = synth_memories(max(2_000, args.queries), seed=7, namespace=args.namespace)
        vectors = [list(emb.embed_query(q.text)) for q in synth_queries(memories, args.queries, seed=11)]
        shard: Any = store.vectors._require()  # the engine itself: only the search is timed
        flt = _edge_filter(filter_conditions(VectorFilter(args.namespace)))
        print(f"store: {store.vectors.index_status()}, {len(vectors)} queries, cpus: {os.cpu_count()}")

        def search(v: list[float], params: Any = None, payload: bool = True, vector: bool = False) -> list[Any]:
            req = qe.QueryRequest(limit=50, query=qe.Query.Nearest(v), filter=flt, with_payload=payload,
                                  params=params, with_vector=vector)
            points = shard.query_batch(qe.QueryBatchRequest([req]))[0]
            if vector:
                [p.vector for p in points]  # noqa: B018 - read into Python, as a hit would carry it
            return points

        def timed(params: Any = None, payload: bool = True,
                  vector: bool = False) -> tuple[float, float, list[list[Any]]]:
            search(vectors[0], params, payload, vector)
            walls, cpus, got = [], [], []
            for v in vectors:
                c0, t0 = time.process_time(), time.perf_counter()
                got.append([p.id for p in search(v, params, payload, vector)])
                walls.append((time.perf_counter() - t0) * 1000)
                cpus.append((time.process_time() - c0) * 1000)
            return statistics.median(walls), statistics.median(cpus), got

        exact = timed(qe.SearchParams(exact=True))[2]

        def recall(got: list[list[Any]]) -> float:
            return statistics.mean(len(set(g[:10]) & set(e[:10])) / max(1, len(e[:10]))
                                   for g, e in zip(got, exact, strict=True))

        rows: list[tuple[str, float, float, float]] = []
        for label, work in (("alone (engine defaults: ef 100, payload)", None),
                            ("beside a busy Python thread", _python_work),
                            ("beside a busy numpy thread (GIL released)", _numpy_work)):
            with _beside(work):
                wall, cpu, got = timed()
            # process CPU time would count the busy thread too: only the lone search's is meaningful
            rows.append((label, wall, cpu if work is None else float("nan"), recall(got)))
        for label, params, payload in (("hnsw_ef 64", qe.SearchParams(hnsw_ef=64), True),
                                       ("hnsw_ef 50", qe.SearchParams(hnsw_ef=50), True),
                                       ("no payload", None, False)):
            wall, cpu, got = timed(params, payload)
            rows.append((label, wall, cpu, recall(got)))
        wall, cpu, got = timed(vector=True)
        rows.append(("the hits' vectors too, read into Python", wall, cpu, recall(got)))
        ids = [[str(p.payload["memory_id"]) for p in search(v)[:25]] for v in vectors]
        walls, cpus = [], []
        for few in ids:
            c0, t0 = time.process_time(), time.perf_counter()
            store.stored_vectors(args.namespace, few)
            walls.append((time.perf_counter() - t0) * 1000)
            cpus.append((time.process_time() - c0) * 1000)
        rows.append(("reading 25 stored vectors afterwards (not a search)", statistics.median(walls),
                     statistics.median(cpus), float("nan")))

        print(f"\n| search (limit 50, median over {len(vectors)}) | wall ms | CPU ms | CPU / wall "
              "| recall@10 vs exact |")
        print("|---|---:|---:|---:|---:|")
        for label, wall, cpu, rec in rows:
            cpu_cells = "- | -" if cpu != cpu else f"{cpu:.2f} | {cpu / wall:.2f}"
            print(f"| {label} | {wall:.2f} | {cpu_cells} | {'-' if rec != rec else f'{rec:.3f}'} |")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
