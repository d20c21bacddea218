"""The engine's lexical index against BM25Index on a LoCoMo-format dataset, paired per question.

Why: `lexical="engine"` replaces rank-bm25's exact scores by Qdrant's (Lucene's IDF, a frozen avgdl),
and the design claims recall does not move. Two measurements:

* `--paired`: fused and lexical alone, R@5 and R@10, on the embedded store with each index (the
  engine index on qdrant-edge computes the same scores as on a server), with the 95% paired bootstrap
  interval of the difference and top-10 overlap, overall and per category (default MiniLM embedder);
* `--avgdl 16 24 ...`: lexical alone with the engine index at each frozen avgdl, beside BM25Index
  (hashing embedder: the lexical arm reads no embedding), to tell length normalization apart from
  the IDF formula.

    PYTHONPATH=. python benchmarks/eval_lexical_engine.py --memories M.jsonl --queries Q.jsonl --paired
    PYTHONPATH=. python benchmarks/eval_lexical_engine.py --memories M.jsonl --queries Q.jsonl --avgdl 16 24 36
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from fused_memory.backends.lexical.sparse import SparseBM25
from fused_memory.embeddings import HashingEmbedder
from fused_memory.evaluation import Evaluator, System, load_dataset
from fused_memory.evaluation.metrics import score_query
from fused_memory.evaluation.significance import bootstrap_ci

__all__ = ["main"]

LEXICAL = System("lexical", ("lexical",), False, "arm")


def paired(ds: object) -> dict[str, object]:
    per = {}
    for lexical in ("bm25", "engine"):
        with Evaluator(ds, lexical=lexical) as ev:  # type: ignore[arg-type]
            report = ev.evaluate([System("fused"), LEXICAL], keep_per_query=True)
        per[lexical] = {r.query.id: r for r in report.per_query}
    out: dict[str, object] = {}
    for system in ("fused", "lexical"):
        for k in (5, 10):
            diffs, cats, overlap = [], [], []
            for qid, a in per["bm25"].items():
                b = per["engine"][qid]
                ra = score_query(a.ranked[system], a.query.gold_ids, (k,), ())
                rb = score_query(b.ranked[system], b.query.gold_ids, (k,), ())
                if ra is None or rb is None:
                    continue
                diffs.append(rb[f"recall@{k}"] - ra[f"recall@{k}"])
                cats.append(a.query.category)
                top_a = a.ranked[system][:10]
                overlap.append(len(set(top_a) & set(b.ranked[system][:10])) / max(1, len(top_a)))
            d = np.asarray(diffs)
            lo, hi = bootstrap_ci(d)
            out[f"{system} R@{k}"] = {
                "engine_minus_bm25": round(float(d.mean()), 4), "ci95": [round(lo, 4), round(hi, 4)],
                "overlap@10": round(float(np.mean(overlap)), 3),
                "by_category": {c: round(float(d[[x == c for x in cats]].mean()), 4) for c in dict.fromkeys(cats)}}
            print(system, k, json.dumps(out[f"{system} R@{k}"]), flush=True)
    return out


def avgdl_sweep(ds: object, values: list[float]) -> dict[str, object]:
    out: dict[str, object] = {}
    for lexical, avgdl in [("bm25", None), *(("engine", v) for v in values)]:
        with Evaluator(ds, embedder=HashingEmbedder(dim=64), lexical=lexical) as ev:  # type: ignore[arg-type]
            if avgdl is not None:
                ev.store.lexical.encoder = SparseBM25(avgdl=avgdl)  # type: ignore[attr-defined]  # before the ingest
            report = ev.evaluate([LEXICAL])
        name = "bm25" if avgdl is None else f"engine avgdl={avgdl:g}"
        out[name] = dict(report.overall["lexical"])
        print(name, json.dumps(out[name]), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memories", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--paired", action="store_true")
    ap.add_argument("--avgdl", type=float, nargs="*", default=[])
    ap.add_argument("--json")
    args = ap.parse_args()
    ds = load_dataset(args.memories, args.queries)
    out = {"paired": paired(ds) if args.paired else None, "avgdl": avgdl_sweep(ds, args.avgdl) if args.avgdl else None}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
