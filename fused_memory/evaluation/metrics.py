"""Recall@k and NDCG@k over ranked memory ids, with binary relevance (an id is gold or it is not).

Our own and deliberately small: the eval has to run on a fresh install without an IR toolkit, and
every number it prints must be traceable to a dozen lines. The definitions are the textbook ones
(they agree with trec_eval / ir-measures, which a test checks when installed):

* Recall@k = |gold ∩ top-k| / |gold|.
* NDCG@k  = DCG@k / IDCG@k, DCG = Σ_{rank r ≤ k, id gold} 1 / log2(r + 1), IDCG the same for a
  perfect ranking (min(|gold|, k) gold ids on top).

Conventions that matter for a benchmark and are easy to get wrong:

* A query with no gold ids is *excluded* (`None`), not scored 0 or 1: there is nothing to recall.
* A ranking shorter than k is fine: missing slots simply hold nothing relevant.
* An id repeated in a ranking counts once, at its first (best) position; a retriever that
  returns one memory twice must not get credit twice.
* Ties in scores are the ranker's business; `rank_by_score` breaks them by id so the same scores
  always give the same ranking (and so the same metric).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

__all__ = [
    "percentile",
    "rank_index",
    "recall_at_k",
    "ndcg_at_k",
    "rank_by_score",
    "metric_names",
    "score_query",
    "mean_scores",
]


def _check_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _top_k_unique(ranked: Sequence[str], k: int) -> list[str]:
    """The first k distinct ids, in rank order (later repeats dropped)."""
    seen: set[str] = set()
    out: list[str] = []
    for mid in ranked:
        if mid in seen:
            continue
        seen.add(mid)
        out.append(mid)
        if len(out) == k:
            break
    return out


def recall_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float | None:
    """Share of the gold ids found in the top k; None when there is no gold (query excluded)."""
    _check_k(k)
    gold_set = set(gold)
    if not gold_set:
        return None
    found = sum(1 for mid in _top_k_unique(ranked, k) if mid in gold_set)
    return found / len(gold_set)


def ndcg_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float | None:
    """Binary-relevance NDCG over the top k; None when there is no gold (query excluded)."""
    _check_k(k)
    gold_set = set(gold)
    if not gold_set:
        return None
    dcg = sum(1.0 / math.log2(rank + 1)
              for rank, mid in enumerate(_top_k_unique(ranked, k), start=1) if mid in gold_set)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold_set), k) + 1))
    return dcg / ideal


def rank_by_score(scores: Mapping[str, float]) -> list[str]:
    """Ids by descending score, ties broken by ascending id: deterministic, so reproducible."""
    return [mid for mid, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def metric_names(recall_ks: Sequence[int], ndcg_ks: Sequence[int] = (10,)) -> tuple[str, ...]:
    """The report's metric keys, e.g. ("recall@5", "recall@10", "ndcg@10")."""
    return (*(f"recall@{k}" for k in recall_ks), *(f"ndcg@{k}" for k in ndcg_ks))


def score_query(ranked: Sequence[str], gold: Collection[str], recall_ks: Sequence[int],
                ndcg_ks: Sequence[int] = (10,)) -> dict[str, float] | None:
    """Every metric for one query, keyed as `metric_names` says; None when it has no gold."""
    if not set(gold):
        return None
    out: dict[str, float] = {}
    for k in recall_ks:
        out[f"recall@{k}"] = recall_at_k(ranked, gold, k)  # type: ignore[assignment]
    for k in ndcg_ks:
        out[f"ndcg@{k}"] = ndcg_at_k(ranked, gold, k)  # type: ignore[assignment]
    return out


def mean_scores(rows: Iterable[Mapping[str, float] | None]) -> dict[str, float]:
    """Per-metric mean over the scored queries (None rows, i.e. excluded queries, are skipped).
    No scored queries gives an empty dict rather than a made-up 0."""
    totals: dict[str, float] = {}
    n = 0
    for row in rows:
        if row is None:
            continue
        n += 1
        for name, value in row.items():
            totals[name] = totals.get(name, 0.0) + float(value)
    return {name: total / n for name, total in totals.items()} if n else {}


def rank_index(n: int, q: float) -> int:
    """The position of the nearest-rank `q` percentile (q in [0, 1]) among `n` sorted values."""
    return min(n - 1, int(round(q * (n - 1))))


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile on sorted values (q in [0, 1]); 0.0 for no values."""
    ordered = sorted(values)
    return ordered[rank_index(len(ordered), q)] if ordered else 0.0
