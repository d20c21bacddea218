"""The learned order against RRF on public LoCoMo, out of fold (docs/results.md, "The learned order").

    python benchmarks/learned_order.py capture --data ../shared/bench/locomo/public --cache /tmp/lo/locomo.jsonl.gz
    python benchmarks/learned_order.py loco --cache /tmp/lo/locomo.jsonl.gz [--ablation] [--c 0.01,0.1,1]
    python benchmarks/learned_order.py select --cache /tmp/lo/locomo.jsonl.gz
    python benchmarks/learned_order.py latency --cache /tmp/lo/locomo.jsonl.gz

`capture` asks every question once through the ensemble and keeps what reached fusion
(`evaluation.candidates`); `loco` then runs in seconds from that cache: per conversation, RRF's k
and weights re-tuned and the ranker fitted on the other four, both scored on it (before the stage
after fusion: both orders feed the same stage). Per category, paired bootstrap 95% intervals of
learned minus RRF.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from fused_memory.evaluation.candidates import capture, load_records, replay, save_records
from fused_memory.evaluation.data import load_dataset
from fused_memory.evaluation.learning import grid_scores, leave_one_out, rrf_grid
from fused_memory.evaluation.runner import stderr_progress
from fused_memory.evaluation.significance import bootstrap_ci
from fused_memory.evaluation.timeline import as_dataset as timeline_dataset
from fused_memory.evaluation.timeline import load_timeline
from fused_memory.evaluation.updates import as_dataset as updates_dataset
from fused_memory.evaluation.updates import load_updates
from fused_memory.ranking.features import FEATURE_GROUPS


def _grid_scores(queries, grid, cache: str) -> np.ndarray:
    """RRF's R@5 per setting and query (the slow part), kept beside the cache."""
    cached = Path(cache + f".grid{len(grid)}.npy")
    if cached.exists():
        return np.load(cached)
    scores = grid_scores(queries, grid, stderr_progress)
    np.save(cached, scores)
    return scores


def _capture(data: Path) -> list:
    """LoCoMo as a conversation (two turns of context); the labelled sets of benchmarks/data, their
    dev half only, as notes (no context): what the learned order is trained on."""
    if data.name == "timeline.jsonl":
        ds, turns = timeline_dataset(load_timeline(data), "dev"), 0
    elif data.name == "updates.jsonl":
        ds, turns = updates_dataset(load_updates(data), "dev"), 0
    else:
        ds, turns = load_dataset(data / "memories.jsonl", data / "queries.jsonl"), None
    return capture(ds, progress=stderr_progress, context_turns=turns)


def ship(args) -> None:
    """The shipped ranker: every captured query (LoCoMo's public conversations and the extra sets'
    dev halves) over RRF's default order, C chosen by leaving one LoCoMo conversation out; the file
    says which data it saw."""
    from fused_memory.evaluation.learning import DEFAULT_RRF, choose_c, fit_ranker, training_rows

    queries = [replay(r) for r in load_records(args.cache)]
    extra = [replay(r) for cache in args.extra for r in load_records(cache)]
    cs = tuple(float(v) for v in args.c.split(","))
    c = choose_c(queries, DEFAULT_RRF, cs, args.depth, extra=extra)
    rows = training_rows([*queries, *extra], DEFAULT_RRF, args.depth)
    seen = {"locomo public (conversations 0-4)": len(queries),
            **{Path(e).name.split(".")[0] + " (dev half)": sum(1 for _ in load_records(e)) for e in args.extra}}
    meta = {"data": seen, "n_candidates": int(len(rows.y)), "n_gold": int(rows.y.sum()), "c": c,
            "depth": args.depth, "rrf": "defaults"}
    ranker = fit_ranker(rows, c=c, meta=meta)
    Path(args.out).write_text(json.dumps(ranker.to_json(), indent=1) + "\n")
    print(f"wrote {args.out}: C={c}, {meta}")


def _table(queries, folds) -> dict:
    by_id = {q.query_id: q for q in queries}
    rows = defaultdict(list)
    for f in folds:
        for qid, (rrf, learned) in f.per_query.items():
            rows[by_id[qid].category].append((rrf, learned))
            rows["all"].append((rrf, learned))
    out = {}
    for cat in ["all", *sorted(c for c in rows if c != "all")]:
        a = np.array([r for r, _ in rows[cat]])
        b = np.array([lr for _, lr in rows[cat]])
        entry = {"n": len(a)}
        for j, name in enumerate(("R@5", "R@10")):
            lo, hi = bootstrap_ci(b[:, j], a[:, j], stat=lambda x, y: (x - y).mean(axis=1))
            entry[name] = {"rrf": round(a[:, j].mean(), 4), "learned": round(b[:, j].mean(), 4),
                           "diff": round((b[:, j] - a[:, j]).mean(), 4), "ci": [round(lo, 4), round(hi, 4)]}
        out[cat] = entry
    fold_means = [np.mean([lr[0] - r[0] for r, lr in f.per_query.values()]) for f in folds]
    out["fold_mean_R@5_diff"] = round(float(np.mean(fold_means)), 4)
    return out


def _print(table: dict) -> None:
    print(f"{'category':<12} {'n':>4}  {'R@5 rrf':>8} {'learned':>8} {'diff [95% CI]':>24}   "
          f"{'R@10 rrf':>8} {'learned':>8} {'diff [95% CI]':>24}")
    for cat, e in table.items():
        if not isinstance(e, dict):
            continue
        cells = []
        for name in ("R@5", "R@10"):
            m = e[name]
            cells.append(f"{m['rrf']:>8.3f} {m['learned']:>8.3f} "
                         f"{m['diff'] * 100:>+6.1f} [{m['ci'][0] * 100:+.1f}, {m['ci'][1] * 100:+.1f}]".rjust(24))
        print(f"{cat:<12} {e['n']:>4}  " + "   ".join(cells))
    print(f"mean over the five folds of R@5 learned - RRF: {table['fold_mean_R@5_diff'] * 100:+.2f} points")


def latency(queries, repeats: int = 5, depth: int = 30) -> dict:
    """What the learned order adds to fusion, per query, over real candidate lists: RRF's top 10
    (`fuse(limit=10)`, what the ensemble fuses today) against RRF's top `depth` plus the learned order,
    the two taking turns query by query so machine load falls on both alike."""
    from fused_memory.evaluation.learning import DEFAULT_RRF, fused_list
    from fused_memory.ranking import default_ranker, learned_order

    ranker = default_ranker()
    rrf_ms, learned_ms = [], []
    for _ in range(repeats):
        for q in queries:
            if q.plan.shortcut is not None:
                continue
            t0 = time.perf_counter()
            fused_list(q, DEFAULT_RRF, 10)
            t1 = time.perf_counter()
            head = fused_list(q, DEFAULT_RRF, depth)
            learned_order(ranker, head, q.results, q.plan, q.parsed, depth, 10)
            t2 = time.perf_counter()
            rrf_ms.append((t1 - t0) * 1000)
            learned_ms.append((t2 - t1) * 1000)
    a, b = np.array(rrf_ms), np.array(learned_ms)
    return {"n": len(a), "depth": depth, "rrf_p50_ms": round(float(np.median(a)), 4),
            "learned_p50_ms": round(float(np.median(b)), 4),
            "added_p50_ms": round(float(np.median(b - a)), 4), "ratio_p50": round(float(np.median(b / a)), 2),
            "rrf_p99_ms": round(float(np.quantile(a, 0.99)), 4),
            "learned_p99_ms": round(float(np.quantile(b, 0.99)), 4)}


def select(queries, grid, scores, depths=(20, 30), cs=(0.01, 0.1, 1.0), seed: int = 0) -> list[dict]:
    """Depth and C chosen on a random half of the questions (dev), the other half (test) scored once:
    leave one conversation out at each setting, each question's learned - RRF split by its half."""
    rng = np.random.default_rng(seed)
    dev = {q.query_id for q in queries if rng.random() < 0.5}
    rows = []
    for depth in depths:
        for c in cs:
            folds = leave_one_out(queries, depth=depth, c=c, grid=grid, scores=scores)
            diffs = {True: [], False: []}
            for f in folds:
                for qid, (rrf, learned) in f.per_query.items():
                    diffs[qid in dev].append([b - a for a, b in zip(rrf, learned, strict=True)])
            d, t = np.mean(diffs[True], axis=0) * 100, np.mean(diffs[False], axis=0) * 100
            rows.append({"depth": depth, "c": c, "dev": [round(float(v), 2) for v in d],
                         "test": [round(float(v), 2) for v in t], "n_dev": len(diffs[True]),
                         "n_test": len(diffs[False])})
            print(f"depth {depth} C {c:<5} dev R@5 {d[0]:+.2f} R@10 {d[1]:+.2f}   test R@5 {t[0]:+.2f} "
                  f"R@10 {t[1]:+.2f}", flush=True)
    best = max(rows, key=lambda r: sum(r["dev"]))
    print(f"chosen on dev (R@5 + R@10): depth {best['depth']}, C {best['c']}; test R@5 {best['test'][0]:+.2f}, "
          f"R@10 {best['test'][1]:+.2f}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("--data", required=True, help="LoCoMo's folder (memories.jsonl, queries.jsonl), or a "
                                                 "timeline.jsonl / updates.jsonl of benchmarks/data")
    c.add_argument("--cache", required=True)
    lo = sub.add_parser("loco")
    lo.add_argument("--cache", required=True)
    lo.add_argument("--c", default="0.01,0.1,1", help="regularization; several: chosen inside each fold's training "
                                                       "conversations (`learning.choose_c`)")
    lo.add_argument("--depth", type=int, default=30)
    lo.add_argument("--ablation", action="store_true", help="also leave out each feature group in turn")
    lo.add_argument("--ablation-c", type=float, default=1.0, help="the ablation's regularization (one, not chosen "
                                                                   "per fold: five times faster)")
    lo.add_argument("--json")
    lo.add_argument("--objective", default="pointwise", help="pointwise or pairwise (`learning.OBJECTIVES`)")
    lo.add_argument("--extra", action="append", default=[], metavar="CACHE",
                    help="a captured labelled set (timeline, updates) that joins every fold's training, never scored")
    se = sub.add_parser("select")
    se.add_argument("--cache", required=True)
    sh = sub.add_parser("ship", help="fit the shipped ranker on every captured query (C chosen out of fold)")
    sh.add_argument("--cache", required=True)
    sh.add_argument("--extra", action="append", default=[], metavar="CACHE")
    sh.add_argument("--c", default="0.01,0.1,1")
    sh.add_argument("--depth", type=int, default=30)
    sh.add_argument("--out", default="fused_memory/ranking/ranker.json")
    la = sub.add_parser("latency")
    la.add_argument("--cache", required=True)
    la.add_argument("--depth", type=int, default=30)
    args = ap.parse_args()
    if args.cmd == "latency":
        print(json.dumps(latency([replay(r) for r in load_records(args.cache)], depth=args.depth), indent=1))
        return
    if args.cmd == "ship":
        ship(args)
        return
    if args.cmd == "capture":
        Path(args.cache).parent.mkdir(parents=True, exist_ok=True)
        save_records(_capture(Path(args.data)), args.cache)
        return
    t0 = time.perf_counter()
    queries = [replay(r) for r in load_records(args.cache)]
    grid = rrf_grid()
    if args.cmd == "select":
        select(queries, grid, _grid_scores(queries, grid, args.cache))
        return
    scores = _grid_scores(queries, grid, args.cache)
    print(f"{len(queries)} queries, RRF grid of {len(grid)} settings ({time.perf_counter() - t0:.0f} s)",
          file=sys.stderr)
    cs = tuple(float(v) for v in args.c.split(","))
    extra = [replay(r) for cache in args.extra for r in load_records(cache)]
    folds = leave_one_out(queries, depth=args.depth, c=cs, grid=grid, scores=scores, progress=stderr_progress,
                          objective=args.objective, extra=extra)
    table = _table(queries, folds)
    print(f"Leave one conversation out, C={args.c}, depth={args.depth}, {args.objective}, "
          f"{len(extra)} extra training queries")
    _print(table)
    result = {"all_features": table, "folds": [{"conversation": f.conversation, "rrf_k": f.rrf.k,
                                                "weights": f.rrf.weight_map(), "c": (f.ranker.meta or {}).get("c")}
                                               for f in folds]}
    if args.ablation:
        full = _table(queries, leave_one_out(queries, depth=args.depth, c=args.ablation_c, grid=grid, scores=scores))
        result["ablation: every feature"] = full
        print(f"every feature, C={args.ablation_c:<14} R@5 {full['all']['R@5']['learned']:.4f} "
              f"({full['all']['R@5']['diff'] * 100:+.1f} over RRF)  R@10 {full['all']['R@10']['learned']:.4f} "
              f"({full['all']['R@10']['diff'] * 100:+.1f})")
        for group, names in FEATURE_GROUPS.items():
            t = _table(queries, leave_one_out(queries, depth=args.depth, c=args.ablation_c, grid=grid, scores=scores,
                                              mask=names))
            result[f"without {group}"] = t
            print(f"without {group:<24} R@5 {t['all']['R@5']['learned']:.4f} ({t['all']['R@5']['diff'] * 100:+.1f}"
                  f" over RRF)  R@10 {t['all']['R@10']['learned']:.4f} ({t['all']['R@10']['diff'] * 100:+.1f})")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
