"""The stage after fusion on the synthetic churn set (`fused_memory.evaluation.churn`): recency,
supersession and collapse each on and off, side by side on one ingest.

    python benchmarks/bench_after_fusion.py [--n 2000] [--slots 100] [--facts 100] [--json out.json]

Reports, per configuration:
* current-value questions ("Where does Sarah Chen live now?"): the share whose newest version ranks
  first (all, facts with a predicate, facts without), and in the top 3;
* repeated saves ("What does Sarah Chen like to drink?"): the share of questions whose top 5 holds
  5 distinct facts (the copies of one fact count once), and the mean number of distinct facts;
* the query latency p50 (ms) of the configuration and of its stage after fusion alone (`after_ms`:
  recency, supersession, collapse with its read of stored vectors, MMR), measured in the same run as
  the others (the configurations take turns query by query, so machine load falls on all alike).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any

from fused_memory import EnsembleMemory, FusionConfig, MemoryStore
from fused_memory.evaluation import ChurnQuery, ChurnSet, churn_set

__all__ = ["CONFIGS", "main", "measure"]

_OFF = {"recency_weight": 0.0, "current_state_recency": 0.0, "supersede": False, "collapse": False}

#: name -> FusionConfig changes from the shipped defaults.
CONFIGS: dict[str, dict[str, Any]] = {
    "all off": _OFF,
    "recency only": {**_OFF, "current_state_recency": FusionConfig().current_state_recency},
    "supersede only": {**_OFF, "supersede": True},
    "collapse only": {**_OFF, "collapse": True},
    "collapse, text only": {**_OFF, "collapse": True, "duplicate_cosine": None},
    "defaults": {},
    "defaults + MMR 0.78": {"mmr_lambda": 0.78},
}


def _distinct(ranked: Sequence[str], groups: Mapping[str, int]) -> int:
    """Distinct facts in `ranked`: the copies of one repeated fact count once."""
    return len({groups.get(mid, -i - 1) for i, mid in enumerate(ranked)})


def measure(store: MemoryStore, data: ChurnSet, configs: Mapping[str, Mapping[str, Any]],
            optimizer: bool = True) -> dict[str, dict[str, float]]:
    """Every configuration's numbers (see the module docstring) on one ingested store."""
    ensembles = {name: EnsembleMemory(store, FusionConfig(**changes), optimizer=optimizer)
                 for name, changes in configs.items()}
    groups = {mid: i for i, q in enumerate(data.queries) if q.kind == "repeated" for mid in q.group}
    rows: dict[str, dict[str, list[float]]] = {name: {} for name in configs}
    try:
        warm = next(iter(ensembles.values()))
        for q in data.queries:
            warm.retrieve(q.text, namespace=data.namespace, k=10, now=data.now)  # the query embedding, cached
            for name, ens in ensembles.items():
                t0 = time.perf_counter()
                result = ens.retrieve(q.text, namespace=data.namespace, k=10, now=data.now)
                row = rows[name]
                row.setdefault("ms", []).append((time.perf_counter() - t0) * 1000)
                row.setdefault("after_ms", []).append(result.timings_ms.get("after", 0.0))
                ids = result.ids()
                _score(q, ids, groups, row)
    finally:
        for ens in ensembles.values():
            ens.close()
    return {name: {key: round(statistics.median(v) if key.endswith("ms") else statistics.fmean(v), 4)
                   for key, v in sorted(row.items())} for name, row in rows.items()}


def _score(q: ChurnQuery, ids: list[str], groups: Mapping[str, int], row: dict[str, list[float]]) -> None:
    if q.kind == "current":
        first = float(bool(ids) and ids[0] == q.expected)
        row.setdefault("newest_first", []).append(first)
        row.setdefault("newest_first_keyed" if q.keyed else "newest_first_unkeyed", []).append(first)
        row.setdefault("newest_top3", []).append(float(q.expected in ids[:3]))
    else:
        distinct = _distinct(ids[:5], groups)
        row.setdefault("distinct_top5", []).append(float(distinct))
        row.setdefault("five_distinct_top5", []).append(float(distinct == 5))


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="background memories (default 2000)")
    ap.add_argument("--slots", type=int, default=100, help="changing facts (default 100)")
    ap.add_argument("--facts", type=int, default=100, help="facts saved repeatedly (default 100)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    data = churn_set(args.n, args.slots, args.facts, seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="fused-memory-churn-") as tmp, MemoryStore.embedded(tmp) as store:
        t0 = time.perf_counter()
        store.add(list(data.memories), show_progress=False)
        print(f"ingested {len(data.memories)} memories in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        results = measure(store, data, CONFIGS)
    keys = ("newest_first", "newest_first_keyed", "newest_first_unkeyed", "newest_top3", "five_distinct_top5",
            "distinct_top5", "ms", "after_ms")
    print(f"{'config':<20}" + "".join(f"{k:>21}" for k in keys))
    for name, row in results.items():
        print(f"{name:<20}" + "".join(f"{row.get(k, float('nan')):>21.3f}" for k in keys))
    out = {"args": vars(args), "results": results}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
    return out


if __name__ == "__main__":
    main()
