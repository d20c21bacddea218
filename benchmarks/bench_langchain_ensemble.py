"""Our `EnsembleMemoryRetriever.invoke` vs LangChain's `EnsembleRetriever` over the same five arms.

    python benchmarks/bench_langchain_ensemble.py [--limit N] [--json out.json]

What is compared, on the public LoCoMo split (`fused_memory.evaluation.data`; namespace = conversation_id,
each query asked at its own `now`, zone-less times read as UTC):

* ours:   `EnsembleMemoryRetriever(...).invoke(q)`: the core plans once, runs the planned arms in
          parallel (the Qdrant-backed ones as one engine batch), fuses by score-weighted RRF.
* theirs: langchain-classic's `EnsembleRetriever(retrievers=[our five single-arm LangChain
          retrievers], weights=[1]*5, c=60, id_key="memory_id")`: what a LangChain user composes
          by hand. It invokes the five retrievers one after another and fuses their Documents with
          plain weighted RRF (ranks only). Each arm fetches `--depth` candidates, the same depth our
          ensemble gives every arm, so both fuse from equally deep lists.

Reported: total wall time of sync `invoke` over every query with gold ids (after a warm-up; the
query-embedding cache cleared before every call; the two systems alternate going first), the ratio
theirs / ours, per-query p50, and R@10 overall and per category for both.

langchain-classic is a benchmark-only tool, never a dependency of fused-memory: install it with
`pip install langchain-classic`; without it this script says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

#: docs/results.md: the split sits at ../shared/bench/locomo/public relative to the repository.
DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "public"

__all__ = ["main", "run"]


def _data_dir(given: str | None) -> Path:
    candidate = Path(given) if given else DATA
    if (candidate / "memories.jsonl").exists() and (candidate / "queries.jsonl").exists():
        return candidate
    raise SystemExit(f"LoCoMo public split not found in {candidate} (use --data DIR)")


def _timed(fn: Callable[[], list[Any]], store: Any) -> tuple[float, list[str]]:
    """Wall time of one call, from a cold query-embedding cache: otherwise whichever system runs
    second would get the first one's query vector for free."""
    cache = getattr(store.embedder, "cache", None)
    if cache is not None:
        cache.clear()
    t0 = time.perf_counter()
    docs = fn()
    return time.perf_counter() - t0, [d.metadata["memory_id"] for d in docs]


def run(data_dir: Path, *, limit: int | None = None, depth: int = 50, warmup: int = 5,
        progress: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> dict[str, Any]:
    """Ingest the split once, answer every query both ways, return the numbers."""
    from langchain_classic.retrievers import EnsembleRetriever

    from fused_memory.ensemble import EnsembleMemory
    from fused_memory.evaluation.data import load_dataset
    from fused_memory.evaluation.metrics import recall_at_k
    from fused_memory.evaluation.runner import Evaluator
    from langchain_fused_memory import (
        BM25MemoryRetriever,
        DenseMemoryRetriever,
        EnsembleMemoryRetriever,
        GraphMemoryRetriever,
        TemporalMemoryRetriever,
        TypeFilterMemoryRetriever,
    )

    dataset = load_dataset(data_dir / "memories.jsonl", data_dir / "queries.jsonl")
    queries = [q for q in dataset.queries if q.gold_ids]
    if limit is not None:
        queries = queries[:limit]
    with Evaluator(dataset, progress=progress) as ev:
        ingest_s = ev.ingest()
        progress(f"ingested {len(dataset.memories)} memories in {ingest_s:.1f}s; {len(queries)} queries")
        ensemble = EnsembleMemory(ev.store)
        ours = EnsembleMemoryRetriever(ensemble=ensemble, k=10)
        # What a single-arm retriever builds from a store (optimizer off: each arm runs whenever it
        # can), shared by the five so the baseline does not pay for five thread pools.
        per_arm = EnsembleMemory(ev.store, optimizer=False)
        arm_classes = (DenseMemoryRetriever, BM25MemoryRetriever, GraphMemoryRetriever,
                       TemporalMemoryRetriever, TypeFilterMemoryRetriever)
        theirs_cache: dict[tuple[str, datetime | None], Any] = {}

        def theirs_for(namespace: str, now: datetime | None) -> Any:
            # EnsembleRetriever passes no per-call kwargs to its retrievers: bind them at construction.
            key = (namespace, now)
            if key not in theirs_cache:
                arms = [cls(ensemble=per_arm, namespace=namespace, now=now, k=depth) for cls in arm_classes]
                theirs_cache[key] = EnsembleRetriever(retrievers=arms, weights=[1.0] * len(arms), c=60,
                                                      id_key="memory_id")
            return theirs_cache[key]

        for q in queries[:warmup]:  # load the model, build BM25 and entity matchers, warm caches
            ours.invoke(q.question, namespace=q.conversation_id, now=q.now)
            theirs_for(q.conversation_id, q.now).invoke(q.question)

        rows: list[dict[str, Any]] = []
        for i, q in enumerate(queries, 1):
            run_ours = lambda q=q: ours.invoke(q.question, namespace=q.conversation_id, now=q.now)  # noqa: E731
            run_theirs = lambda q=q: theirs_for(q.conversation_id, q.now).invoke(q.question)  # noqa: E731
            if i % 2:  # alternate which goes first, so neither always meets warmer CPU caches
                (t_ours, ids_ours), (t_theirs, ids_theirs) = _timed(run_ours, ev.store), _timed(run_theirs, ev.store)
            else:
                (t_theirs, ids_theirs), (t_ours, ids_ours) = _timed(run_theirs, ev.store), _timed(run_ours, ev.store)
            rows.append({"category": q.category, "t_ours": t_ours, "t_theirs": t_theirs,
                         "r_ours": recall_at_k(ids_ours, q.gold_ids, 10),
                         "r_theirs": recall_at_k(ids_theirs[:10], q.gold_ids, 10)})
            if i % 200 == 0:
                progress(f"{i}/{len(queries)} queries")
        ensemble.close()
        per_arm.close()

    def mean(key: str, subset: Sequence[dict[str, Any]]) -> float:
        return round(statistics.fmean(r[key] for r in subset), 4)

    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_cat[r["category"]].append(r)
    total_ours = sum(r["t_ours"] for r in rows)
    total_theirs = sum(r["t_theirs"] for r in rows)
    return {
        "dataset": str(data_dir), "queries": len(rows), "arm_depth": depth,
        "wall_s": {"ours": round(total_ours, 3), "theirs": round(total_theirs, 3)},
        "speedup_theirs_over_ours": round(total_theirs / total_ours, 2),
        "p50_ms": {"ours": round(statistics.median(r["t_ours"] for r in rows) * 1000, 2),
                   "theirs": round(statistics.median(r["t_theirs"] for r in rows) * 1000, 2)},
        "recall@10": {"ours": mean("r_ours", rows), "theirs": mean("r_theirs", rows)},
        "recall@10_by_category": {c: {"n": len(rs), "ours": mean("r_ours", rs), "theirs": mean("r_theirs", rs)}
                                  for c, rs in sorted(by_cat.items())},
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="directory holding memories.jsonl and queries.jsonl")
    parser.add_argument("--limit", type=int, help="only the first N queries with gold ids")
    parser.add_argument("--depth", type=int, default=50, help="candidates each arm returns to EnsembleRetriever")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    try:
        import langchain_classic.retrievers  # noqa: F401
    except ImportError:
        print("SKIPPED: langchain-classic is not installed. It is a benchmark-only comparison target, never a "
              "fused-memory dependency; run `pip install langchain-classic` to compare against its "
              "EnsembleRetriever.")
        return 0
    result = run(_data_dir(args.data), limit=args.limit, depth=args.depth)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    w = result["wall_s"]
    r = result["recall@10"]
    print(f"\nEnsembleMemoryRetriever.invoke: {w['ours']:.2f}s, R@10 {r['ours']:.3f} | "
          f"EnsembleRetriever over the five arms: {w['theirs']:.2f}s, R@10 {r['theirs']:.3f} | "
          f"ours is {result['speedup_theirs_over_ours']:.2f}x faster", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
