"""The learned order against RRF on the sets it was not trained on: the synthetic bench queries
(`evaluation.synth`) and the churn set (`evaluation.churn`), side by side on one ingest each.

    python benchmarks/learned_order_synthetic.py [--n 5000] [--queries 300] [--json out.json]

Per set and order: the share of questions with an answer in the top 10 (synth: any memory of
`SynthQuery.answers()`; churn: the newest version of a changing fact, any copy of a repeated one),
the share with it first, and what the learned order itself took per query (`timings_ms["learned"]`).
The two orders take turns query by query, so machine load falls on both alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile

from fused_memory import EnsembleMemory, FusionConfig, MemoryStore
from fused_memory.evaluation import churn_set
from fused_memory.evaluation.synth import SYNTH_NOW, shape_queries, synth_memories, synth_queries

ORDERS = ("rrf", "learned")


def _run(store, queries, namespace, now, kinds=None) -> dict:
    ensembles = {o: EnsembleMemory(store, FusionConfig(order=o)) for o in ORDERS}
    rows = {o: {"top10": [], "first": [], "learned_ms": [], "total_ms": []} for o in ORDERS}
    by_kind: dict = {}
    for n, (text, answers) in enumerate(queries):
        for o in ORDERS:
            r = ensembles[o].retrieve(text, namespace=namespace, now=now, k=10)
            ids = [h.memory.id for h in r.hits]
            rows[o]["top10"].append(float(bool(answers & set(ids))))
            rows[o]["first"].append(float(bool(ids) and ids[0] in answers))
            if kinds is not None:
                cell = by_kind.setdefault(kinds[n], {}).setdefault(o, [0, 0, 0])
                cell[0] += 1
                cell[1] += int(bool(answers & set(ids)))
                cell[2] += int(bool(ids) and ids[0] in answers)
            rows[o]["total_ms"].append(r.timings_ms["total"])
            if "learned" in r.timings_ms:
                rows[o]["learned_ms"].append(r.timings_ms["learned"])
    for e in ensembles.values():
        e.close()
    out = {o: {"n": len(v["top10"]), "top10": round(statistics.fmean(v["top10"]), 4),
                "first": round(statistics.fmean(v["first"]), 4),
                "total_p50_ms": round(statistics.median(v["total_ms"]), 3),
                "learned_p50_ms": round(statistics.median(v["learned_ms"]), 3) if v["learned_ms"] else None}
            for o, v in rows.items()}
    if kinds is not None:  # per kind: [questions, answer in the top 10, answer first]
        out["by_kind"] = by_kind
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--json")
    args = ap.parse_args()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore.embedded(f"{tmp}/synth").open()
        memories = synth_memories(args.n, namespace="bench")
        store.add(memories, show_progress=False)
        qs = [*synth_queries(memories, args.queries), *shape_queries(memories, args.queries // 3)]
        asked = [(q.text, set(q.answers())) for q in qs if q.answers()]
        out["synth"] = _run(store, asked, "bench", SYNTH_NOW, [q.kind for q in qs if q.answers()])
        store.close()
        data = churn_set()
        store = MemoryStore.embedded(f"{tmp}/churn").open()
        store.add(list(data.memories), show_progress=False)
        asked = [(q.text, {q.expected} if q.kind == "current" else set(q.group)) for q in data.queries]
        out["churn"] = _run(store, asked, data.namespace, data.now, [q.kind for q in data.queries])
        store.close()
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
