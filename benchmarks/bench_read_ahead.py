"""The ensemble against dense alone at a kept bench store, with and without reading ahead, and
with the learned order: ratios measured side by side in one process.

Why: the targets of the speed work are ratios to dense alone (p50 <= 1.15x and p99 <= 1.25x on the
queries that embed, dense + lexical <= 1.10x at p50), and whether BM25's read-ahead while the query
is embedded (`ensemble/slack.py`) pays for itself, and what the learned order adds on top, are
differences of a few tenths of a millisecond, smaller than what two runs minutes apart differ by
on a shared host. So every query runs as dense alone (`retrieve(arms=["dense"])`), the ensemble
with the read-ahead off ("no read-ahead"), the ensemble as shipped ("shipped") and the ensemble
with `FusionConfig(order="learned")` ("learned"), in a rotating order, the query-embedding cache
cleared before each call. Reported: p50 and p99 against dense alone over all queries, over those
the ensemble embeds for, and per plan; CPU time per call (every thread of the process); and how
many top 10s are the same with and without the read-ahead (all of them: it moves no ranking).

    fused-memory bench --n 100000 --store /tmp/kept          # builds and keeps the store (once)
    python benchmarks/bench_read_ahead.py --store /tmp/kept/n100000-seed7-bm25 --n 100000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", required=True, help="a kept bench store (fused-memory bench --store)")
    ap.add_argument("--n", type=int, required=True, help="the bench size the store holds")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)

    from fused_memory.config import FusionConfig
    from fused_memory.embeddings import default_embedder
    from fused_memory.ensemble import EnsembleMemory, engine
    from fused_memory.evaluation.bench import plan_label
    from fused_memory.evaluation.metrics import percentile
    from fused_memory.evaluation.synth import SYNTH_NOW, synth_memories, synth_queries
    from fused_memory.results import ARMS
    from fused_memory.store.memory_store import MemoryStore

    ns = "bench"
    memories = synth_memories(args.n, seed=args.seed, namespace=ns)
    queries = synth_queries(memories, args.queries, seed=args.seed + 4)
    del memories
    shipped_read_ahead = engine.read_ahead

    def no_read_ahead(store: Any, namespace: str, hits: Any, slack: Any) -> Any:
        return hits

    store = MemoryStore.embedded(args.store, embedder=default_embedder(), show_progress=False)
    who = ("dense", "no read-ahead", "shipped", "learned")
    wall: dict[str, list[float]] = {w: [] for w in who}
    cpu: dict[str, list[float]] = {w: [] for w in who}
    plans: dict[str, list[int]] = {}
    embedded: list[int] = []
    same = 0
    timeouts = {a: 60.0 for a in ARMS}  # a loaded host times nothing out
    with store:
        if store.count(ns) != args.n:
            raise SystemExit(f"{args.store} holds {store.count(ns)} bench memories, not {args.n}")
        rrf = EnsembleMemory(store, FusionConfig(timeouts_s=timeouts))
        learned = EnsembleMemory(store, FusionConfig(timeouts_s=timeouts, order="learned"))
        cache = store.embedder.cache
        try:
            for q in queries[:10]:  # warm-up
                for ens in (rrf, learned):
                    ens.retrieve(q.text, namespace=ns, k=10, now=SYNTH_NOW)
            for i, q in enumerate(queries):
                got: dict[str, Any] = {}
                for w in who[i % len(who):] + who[:i % len(who)]:
                    engine.read_ahead = no_read_ahead if w == "no read-ahead" else shipped_read_ahead
                    cache.clear()
                    c0, t0 = time.process_time(), time.perf_counter()
                    got[w] = (learned if w == "learned" else rrf).retrieve(
                        q.text, namespace=ns, k=10, now=SYNTH_NOW, arms=["dense"] if w == "dense" else None)
                    wall[w].append((time.perf_counter() - t0) * 1000)
                    cpu[w].append((time.process_time() - c0) * 1000)
                same += [h.memory.id for h in got["no read-ahead"].hits] == [h.memory.id for h in got["shipped"].hits]
                if got["shipped"].plan.shortcut is None:
                    embedded.append(i)
                plans.setdefault(plan_label(got["shipped"]), []).append(i)
        finally:
            engine.read_ahead = shipped_read_ahead
            rrf.close()
            learned.close()

    def rows(idx: list[int]) -> dict[str, Any]:
        d = [wall["dense"][i] for i in idx]
        out: dict[str, Any] = {"n": len(idx), "dense_p50_ms": round(statistics.median(d), 2),
                               "dense_p99_ms": round(percentile(d, 0.99), 2)}
        for w in who[1:]:
            e = [wall[w][i] for i in idx]
            out[w] = {"p50_vs_dense": round(statistics.median(e) / statistics.median(d), 3),
                      "p99_vs_dense": round(percentile(e, 0.99) / percentile(d, 0.99), 3),
                      "cpu_ms_p50": round(statistics.median([cpu[w][i] for i in idx]), 2)}
        out["dense_cpu_ms_p50"] = round(statistics.median([cpu["dense"][i] for i in idx]), 2)
        return out

    report = {"n": args.n, "loadavg_1m": round(os.getloadavg()[0], 2), "same_top10": f"{same}/{len(queries)}",
              "all": rows(list(range(len(queries)))), "embedding_plans": rows(embedded),
              "by_plan": {label: rows(idx) for label, idx in sorted(plans.items(), key=lambda kv: -len(kv[1]))}}
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
