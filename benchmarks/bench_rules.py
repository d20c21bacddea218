"""What each optimizer rule is worth: the ensemble with one rule left out, against the shipped one.

Every rule must earn its place: quality (public LoCoMo Recall@5 / @10, overall and per category) or
latency (the synthetic bench's queries). For each rule of stage 2 (`query.RULE_NAMES`) and stage 2b
(`query.store_rules.STORE_RULE_NAMES`) this runs the ensemble with that rule off
(`EnsembleMemory(rules_off=[rule])`), and the optimizer off, beside the shipped ensemble:

* quality: one ingest of the dataset (`Evaluator`), every variant answering every question; the
  difference shipped - variant per question, with its 95% paired bootstrap interval
  (`significance.bootstrap_ci`: questions resampled, both systems together, so what they share
  cancels). A difference whose interval holds 0 is noise at this sample size;
* latency: on a synthetic bench store, the bench's mixed queries and its simple mix (a time, an
  identifier or a name alone), and on `--timed` of the dataset's questions in its own store (where
  the rules that read store statistics fire: every LoCoMo turn is an event), shipped and variant in
  turn per query (which first alternates), query-embedding cache cleared before each: p50 and p99
  of variant / shipped (> 1: the rule saves time).

    python benchmarks/bench_rules.py --memories M.jsonl --queries Q.jsonl --n 10000 --json rules.json
    python benchmarks/bench_rules.py ... --store /tmp/bench10k    # a kept bench store (see --keep)
    python benchmarks/bench_rules.py ... --rules time_shortcut,name_shortcut --no-latency
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from fused_memory.ensemble import EnsembleMemory
from fused_memory.evaluation.data import load_dataset
from fused_memory.evaluation.metrics import percentile, score_query
from fused_memory.evaluation.runner import Evaluator, System
from fused_memory.evaluation.significance import bootstrap_ci
from fused_memory.evaluation.synth import SYNTH_NOW, shape_queries, synth_memories, synth_queries
from fused_memory.query import RULE_NAMES
from fused_memory.query.store_rules import STORE_RULE_NAMES
from fused_memory.store.memory_store import MemoryStore

__all__ = ["main", "quality", "latency"]

_NS = "bench"


def quality(memories: str, queries: str, rules: Sequence[str], timed: int = 0) -> dict[str, Any]:
    """Recall@5 / @10 per variant, overall and by category, with the shipped - variant difference
    and its paired bootstrap interval; with `timed`, also the latency ratios on that many of the
    dataset's questions, in its own store (the rules that read store statistics fire there)."""
    dataset = load_dataset(memories, queries)
    systems = [System("shipped"), *(System(f"without {r}", rules_off=(r,)) for r in rules),
               System("optimizer off", optimizer=False, kind="ablation")]
    with Evaluator(dataset, progress=lambda m: print(m, file=sys.stderr)) as ev:
        report = ev.evaluate(systems, ks=(5, 10), keep_per_query=True)
        scored = [q for q in dataset.queries if q.gold_ids]
        asked = scored[::max(1, len(scored) // timed)][:timed] if timed else []  # spread over every conversation
        lat = latency(ev.store, rules, [(q.conversation_id, q.question, q.now or dataset.latest_time(q.conversation_id))
                                        for q in asked]) if asked else None
    rows: dict[str, dict[str, list[tuple[str, float, float]]]] = {}
    for qr in report.per_query:
        for s in systems:
            scored = score_query(qr.ranked[s.name], qr.query.gold_ids, (5, 10), (10,))
            if scored is not None:
                rows.setdefault(s.name, {}).setdefault(qr.query.category, []).append(
                    (qr.query.id, scored["recall@5"], scored["recall@10"]))
    out: dict[str, Any] = {"n_queries": report.n_queries, "by_category_n": dict(report.n_by_category),
                           "overall": {s: dict(m) for s, m in report.overall.items()},
                           "by_category": {c: {s: dict(m) for s, m in v.items()}
                                           for c, v in report.by_category.items()},
                           "differences": {}}
    base = rows["shipped"]
    for s in systems[1:]:
        diffs: dict[str, Any] = {}
        for scope in ("overall", *base):
            cats = list(base) if scope == "overall" else [scope]
            a = [x for c in cats for x in base[c]]
            b = [x for c in cats for x in rows[s.name][c]]
            entry: dict[str, Any] = {}
            for i, metric in ((1, "recall@5"), (2, "recall@10")):
                d = [x[i] - y[i] for x, y in zip(a, b, strict=True)]
                lo, hi = bootstrap_ci(d)
                entry[metric] = {"shipped_minus_variant": round(statistics.fmean(d), 4),
                                 "ci95": [round(lo, 4), round(hi, 4)], "changed": sum(1 for v in d if v)}
            diffs[scope] = entry
        out["differences"][s.name] = diffs
    if lat is not None:
        out["latency"] = lat
    return out


def _store(n: int, path: str | None) -> tuple[MemoryStore, Any]:
    if path:
        return MemoryStore.embedded(path, show_progress=False).open(), None
    tmp = tempfile.TemporaryDirectory(prefix="fused-memory-rules-")
    store = MemoryStore.embedded(tmp.name, show_progress=False).open()
    store.add(synth_memories(n, seed=7, namespace=_NS), show_progress=False)
    return store, tmp


def bench_queries(store: MemoryStore, n_queries: int = 200) -> list[tuple[str, str, Any]]:
    """The bench's mixed queries and its simple mix (a time, an identifier or a name alone)."""
    memories = synth_memories(store.count(_NS), seed=7, namespace=_NS)
    texts = [q.text for q in synth_queries(memories, n_queries, seed=11)]
    texts += [q.text for q in shape_queries(memories, n_queries // 2, seed=17)]
    return [(_NS, t, SYNTH_NOW) for t in texts]


def _median_ratio(s: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.median(v, axis=-1) / np.median(s, axis=-1)


def _counting(store: MemoryStore, work: dict[str, int]) -> None:
    """Count the query embeddings and engine searches the store is asked for (into `work`): the
    work a rule saves, which a loaded machine's timings can hide."""
    embed, search = store.embed_query, store.vector_search

    def embed_query(text: Any) -> Any:
        work["embeddings"] += 1
        return embed(text)

    def vector_search(queries: Any) -> Any:
        work["searches"] += len(queries)
        return search(queries)

    store.embed_query, store.vector_search = embed_query, vector_search  # type: ignore[method-assign]


def latency(store: MemoryStore, rules: Sequence[str], queries: Sequence[tuple[str, str, Any]]) -> dict[str, Any]:
    """p50 and p99 of variant / shipped over `queries` (namespace, text, now), A/B per query, the
    p50 ratio's 95% paired bootstrap interval, and the embeddings, engine searches and arms per
    query each way."""
    shipped = EnsembleMemory(store)
    out: dict[str, Any] = {"n_queries": len(queries)}
    work = {"embeddings": 0, "searches": 0}
    _counting(store, work)
    try:
        for ns, q, now in queries[:10]:
            shipped.retrieve(q, namespace=ns, k=10, now=now)
        for rule in (*rules, "optimizer off"):
            variant = (EnsembleMemory(store, optimizer=False) if rule == "optimizer off"
                       else EnsembleMemory(store, rules_off=[rule]))
            times: dict[str, list[float]] = {"shipped": [], "variant": []}
            done = {label: {"embeddings": 0, "searches": 0, "arms": 0} for label in times}
            for i, (ns, q, now) in enumerate(queries):
                order = (("shipped", shipped), ("variant", variant))
                for label, ens in (order if i % 2 == 0 else order[::-1]):
                    store.embedder.cache.clear()
                    work.update(embeddings=0, searches=0)
                    t0 = time.perf_counter()
                    result = ens.retrieve(q, namespace=ns, k=10, now=now)
                    times[label].append((time.perf_counter() - t0) * 1000)
                    for key in ("embeddings", "searches"):
                        done[label][key] += work[key]
                    done[label]["arms"] += len(result.plan.arms)
            variant.close()
            s, v = times["shipped"], times["variant"]
            lo, hi = bootstrap_ci(s, v, stat=_median_ratio)
            out[rule] = {"p50_ratio": round(statistics.median(v) / statistics.median(s), 3),
                         "p50_ratio_ci95": [round(lo, 3), round(hi, 3)],
                         "p99_ratio": round(percentile(v, 0.99) / percentile(s, 0.99), 3),
                         "shipped_p50_ms": round(statistics.median(s), 2),
                         "variant_p50_ms": round(statistics.median(v), 2),
                         "per_100_queries": {label: {k: round(100 * n / len(queries), 1) for k, n in d.items()}
                                             for label, d in done.items()}}
            print(f"latency {rule}: {out[rule]}", file=sys.stderr)
    finally:
        shipped.close()
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--rules", default="all", help="comma-separated rule names (default: every rule)")
    ap.add_argument("--n", type=int, default=10_000, help="synthetic store size for the latency part")
    ap.add_argument("--store", default=None, help="a kept synthetic bench store (namespace 'bench') instead")
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--timed", type=int, default=300, help="dataset questions timed per rule in its own store")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    every = (*RULE_NAMES, *STORE_RULE_NAMES)
    rules = every if args.rules == "all" else tuple(r.strip() for r in args.rules.split(",") if r.strip())
    unknown = [r for r in rules if r not in every]
    if unknown:
        ap.error(f"unknown rule(s) {unknown}; rules are {', '.join(every)}")
    result: dict[str, Any] = {"rules": list(rules)}
    if not args.no_quality:
        result["quality"] = quality(args.memories, args.queries, rules, 0 if args.no_latency else args.timed)
    if not args.no_latency:
        store, tmp = _store(args.n, args.store)
        try:
            result["latency"] = latency(store, rules, bench_queries(store))
        finally:
            store.close()
            if tmp is not None:
                tmp.cleanup()
    text = json.dumps(result, indent=1)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    _print_table(result)


def _saved(entry: dict[str, Any]) -> str:
    """Embeddings / engine searches per 100 queries the rule saves (variant - shipped)."""
    work = entry.get("per_100_queries")
    if not work:
        return "-"
    d = {k: work["variant"][k] - work["shipped"][k] for k in ("embeddings", "searches")}
    return f"{d['embeddings']:+.0f} / {d['searches']:+.0f}"


def _print_table(result: dict[str, Any]) -> None:
    """A markdown table: per rule, what leaving it out costs (R@ differences are shipped - without,
    so > 0 means the rule helps; latency ratios are without / shipped, so > 1 means it saves time)."""
    q, lat = result.get("quality"), result.get("latency", {})
    data_lat = (q or {}).get("latency", {})
    print("| rule off | LoCoMo R@5 diff [95% CI] | R@10 diff [95% CI] | category most hurt (R@5) "
          "| bench p50 x [95% CI] | bench p99 x | bench emb / searches saved per 100 q "
          "| LoCoMo p50 x | LoCoMo p99 x | LoCoMo emb / searches saved |")
    print("|" + "---|" * 10)
    for rule in (*result["rules"], "optimizer off"):
        cells = []
        if q is not None:
            d = q["differences"][f"without {rule}" if rule != "optimizer off" else rule]
            for m in ("recall@5", "recall@10"):
                e = d["overall"][m]
                cells.append(f"{e['shipped_minus_variant']:+.4f} [{e['ci95'][0]:+.3f}, {e['ci95'][1]:+.3f}]")
            worst = max(((c, v["recall@5"]["shipped_minus_variant"]) for c, v in d.items() if c != "overall"),
                        key=lambda cv: cv[1])
            cells.append(f"{worst[0]} {worst[1]:+.4f}")
        else:
            cells += ["-", "-", "-"]
        lt, dl = lat.get(rule, {}), data_lat.get(rule, {})
        ci = lt.get("p50_ratio_ci95")
        cells.append(f"{lt['p50_ratio']} [{ci[0]}, {ci[1]}]" if lt else "-")
        cells += [str(lt.get("p99_ratio", "-")), _saved(lt), str(dl.get("p50_ratio", "-")),
                  str(dl.get("p99_ratio", "-")), _saved(dl)]
        print(f"| {rule} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
