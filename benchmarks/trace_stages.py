"""Where a query's time goes: each stage's own timer (`Retrieval.timings_ms`) for the ensemble and
for dense alone, on the bench's queries that embed, over a store the default bench kept.

Why a trace and not the bench's ratios alone: a ratio says how far the ensemble is from dense
alone, the stages say which part of the query the difference is in (the vector task, BM25 beside
it, hydration and the stage after fusion, the learned order). The ensemble and dense alone run in
turn per query, which first alternating, with the query-embedding cache cleared before each call,
as the bench times them.

    fused-memory bench --n 100000 --store DIR          # builds and keeps the store once
    python benchmarks/trace_stages.py --store DIR/n100000-seed7-bm25
"""

from __future__ import annotations

import argparse
import statistics
import time

from fused_memory import EnsembleMemory, MemoryStore
from fused_memory.evaluation.bench import _clear_query_cache
from fused_memory.evaluation.synth import SYNTH_NOW, synth_memories, synth_queries

NS = "bench"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True, help="a store the default bench kept (--store)")
    ap.add_argument("--n", type=int, default=100_000, help="how many memories the bench built it with")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    store = MemoryStore.embedded(args.store, show_progress=False)
    ens = EnsembleMemory(store)
    queries = synth_queries(synth_memories(args.n, seed=args.seed), args.queries, seed=args.seed + 4)  # as `bench`
    for q in queries[:10]:  # warm-up, as the bench does
        ens.retrieve(q.text, namespace=NS, k=10, now=SYNTH_NOW)
    stages: dict[str, dict[str, list[float]]] = {"ensemble": {}, "dense": {}}
    walls: dict[str, list[float]] = {"ensemble": [], "dense": []}
    for i, q in enumerate(queries):
        timed = {}
        for who in (("dense", "ensemble") if i % 2 else ("ensemble", "dense")):
            _clear_query_cache(store)
            t0 = time.perf_counter()
            r = ens.retrieve(q.text, namespace=NS, k=10, now=SYNTH_NOW, arms=["dense"] if who == "dense" else None)
            timed[who] = ((time.perf_counter() - t0) * 1000, r)
        if timed["ensemble"][1].plan.shortcut is not None:
            continue  # a plan without the query embedding: not what dense alone is compared on
        for who, (wall, r) in timed.items():
            walls[who].append(wall)
            for stage, ms in r.timings_ms.items():
                stages[who].setdefault(stage, []).append(float(ms))
    ens.close()
    store.close()
    e, d = statistics.median(walls["ensemble"]), statistics.median(walls["dense"])
    print(f"{len(walls['ensemble'])} queries that embed: wall p50 ensemble {e:.2f} ms, dense alone {d:.2f} ms, "
          f"{e / d:.2f}x")
    print(f"{'stage':24s} {'ensemble':>9s} {'dense':>9s}  (medians, ms; queries that ran the stage)")
    for stage in sorted(set(stages["ensemble"]) | set(stages["dense"])):
        row = [stages[who].get(stage, []) for who in ("ensemble", "dense")]
        cells = [f"{statistics.median(v):9.2f}" if v else f"{'-':>9s}" for v in row]
        print(f"{stage:24s} {cells[0]} {cells[1]}  ({len(row[0])} / {len(row[1])})")


if __name__ == "__main__":
    main()
