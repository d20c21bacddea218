"""The ensemble's fixed costs on this code against an earlier commit's, side by side in one process.

Why: on a shared 2-core host two bench runs minutes apart see different loads, so their ratios
cannot be compared. This opens one kept bench store and, for every query, runs dense alone, the
ensemble with the earlier commit's BM25 pruner and scorer, collapse and fusion, and the ensemble
with this code's, in a rotating order, the query-embedding cache cleared before each call. It
reports, over all queries, over those the ensemble embeds for and per plan: p50 and p99 against
dense alone (wall), the process CPU time per call (less sensitive to the host's load than wall
time), the ensemble's stage timings, and how many top 10s are identical (all of them: the
changes do not move a ranking).

    git archive <commit> fused_memory | tar -x -C /tmp/old
    fused-memory bench --n 10000 --store /tmp/kept            # builds and keeps the store (once)
    python benchmarks/bench_fixed_costs.py --old /tmp/old --store /tmp/kept/n10000-seed7-bm25 --n 10000

What is swapped for "old": `backends/lexical/topk.Pruner`, the BM25 scorer's term frequencies
(rank-bm25's dict lookups), `ensemble/duplicates.collapse` and `ensemble/fusion.fuse`; every other
step is the same code. Arm timeouts are raised to 60 s so a loaded host times nothing out.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _old_modules(old: Path) -> dict[str, Any]:
    """The earlier tree's modules, imported as a package of another name beside this one."""
    root = Path(tempfile.mkdtemp(prefix="fused-memory-old-"))
    shutil.copytree(old / "fused_memory", root / "fused_memory_old")
    sys.path.insert(0, str(root))
    names = {"dup": "ensemble.duplicates", "fusion": "ensemble.fusion", "topk": "backends.lexical.topk"}
    return {k: importlib.import_module(f"fused_memory_old.{v}") for k, v in names.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", required=True, type=Path, help="an earlier tree holding fused_memory/ (git archive)")
    ap.add_argument("--store", required=True, help="a kept bench store (fused-memory bench --store)")
    ap.add_argument("--n", type=int, required=True, help="the bench size the store holds")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)

    from fused_memory.backends.lexical import bm25
    from fused_memory.config import FusionConfig
    from fused_memory.embeddings import default_embedder
    from fused_memory.ensemble import EnsembleMemory
    from fused_memory.ensemble import after_fusion as af
    from fused_memory.evaluation.bench import plan_label
    from fused_memory.evaluation.metrics import percentile
    from fused_memory.evaluation.synth import SYNTH_NOW, synth_memories, synth_queries
    from fused_memory.results import ARMS
    from fused_memory.store.memory_store import MemoryStore

    old = _old_modules(args.old)
    new_scorer, new_collapse, new_fuse, new_pruner = bm25.BM25Index._scorer, af.collapse, af.fuse, bm25.Pruner

    def old_scorer(self: Any, shard: Any, present: list[str]) -> Any:
        scorer = new_scorer(self, shard, present)
        scorer.tf_of = None  # rank-bm25's own get_batch_scores
        return scorer

    def use(earlier: bool) -> None:
        bm25.BM25Index._scorer = old_scorer if earlier else new_scorer  # type: ignore[method-assign]
        af.collapse = old["dup"].collapse if earlier else new_collapse
        af.fuse = old["fusion"].fuse if earlier else new_fuse
        bm25.Pruner = old["topk"].Pruner if earlier else new_pruner

    ns = "bench"
    memories = synth_memories(args.n, seed=args.seed, namespace=ns)
    queries = synth_queries(memories, args.queries, seed=args.seed + 4)
    store = MemoryStore.embedded(args.store, embedder=default_embedder(), show_progress=False)
    wall: dict[str, list[float]] = {"dense": [], "old": [], "new": []}
    cpu: dict[str, list[float]] = {"dense": [], "old": [], "new": []}
    stages: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    plans: dict[str, list[int]] = {}
    embedded: list[int] = []
    same = 0
    orders = [("dense", "old", "new"), ("old", "new", "dense"), ("new", "dense", "old"),
              ("dense", "new", "old"), ("new", "old", "dense"), ("old", "dense", "new")]
    with store:
        if store.count(ns) != args.n:
            raise SystemExit(f"{args.store} holds {store.count(ns)} bench memories, not {args.n}")
        ens = EnsembleMemory(store, FusionConfig(timeouts_s={a: 60.0 for a in ARMS}))
        cache = store.embedder.cache
        try:
            for q in queries[:10]:  # warm-up, both code paths
                for earlier in (True, False):
                    use(earlier)
                    ens.retrieve(q.text, namespace=ns, k=10, now=SYNTH_NOW)
            for i, q in enumerate(queries):
                got: dict[str, Any] = {}
                for who in orders[i % len(orders)]:
                    use(who == "old")
                    cache.clear()
                    c0, t0 = time.process_time(), time.perf_counter()
                    got[who] = ens.retrieve(q.text, namespace=ns, k=10, now=SYNTH_NOW,
                                            arms=["dense"] if who == "dense" else None)
                    wall[who].append((time.perf_counter() - t0) * 1000)
                    cpu[who].append((time.process_time() - c0) * 1000)
                same += [h.memory.id for h in got["old"].hits] == [h.memory.id for h in got["new"].hits]
                if got["new"].plan.shortcut is None:
                    embedded.append(i)
                plans.setdefault(plan_label(got["new"]), []).append(i)
                for who in ("old", "new"):
                    for stage, ms in got[who].timings_ms.items():
                        stages[who].setdefault(stage, []).append(float(ms))
        finally:
            use(False)
            ens.close()

    def rows(idx: list[int]) -> dict[str, Any]:
        if not idx:
            return {"n": 0}
        d = [wall["dense"][i] for i in idx]
        out: dict[str, Any] = {"n": len(idx), "dense_p50_ms": round(statistics.median(d), 2),
                               "cpu_p50_ms": {w: round(statistics.median([cpu[w][i] for i in idx]), 2) for w in cpu}}
        for who in ("old", "new"):
            e = [wall[who][i] for i in idx]
            out[who] = {"p50_vs_dense": round(statistics.median(e) / statistics.median(d), 3),
                        "p99_vs_dense": round(percentile(e, 0.99) / percentile(d, 0.99), 3),
                        "p50_ms": round(statistics.median(e), 2)}
        return out

    report = {"n": args.n, "loadavg_1m": round(os.getloadavg()[0], 1), "identical_top10": f"{same}/{len(queries)}",
              "all": rows(list(range(len(queries)))), "embedding_plans": rows(embedded),
              "by_plan": {label: rows(idx) for label, idx in sorted(plans.items(), key=lambda kv: -len(kv[1]))},
              "stages_p50_ms": {w: {s: round(statistics.median(v), 3) for s, v in st.items()}
                                for w, st in stages.items()}}
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
