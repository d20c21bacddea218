"""Score-weighted Reciprocal Rank Fusion, pure.

    score(d) = Σᵢ wᵢ · √sᵢ(d) / (k + rankᵢ(d))        ranks from 1, sᵢ in [0, 1]

k defaults to `config.DEFAULT_RRF_K` (10, tuned on public LoCoMo: docs/decisions/0001-rrf-k-and-weights.md).

Plain RRF throws the arms' scores away; weighting by √score keeps a confident #1 (BM25 0.95 on an
exact identifier) above a lukewarm #1 (dense 0.30), while the square root stops raw scores from
different arms, which are not calibrated against each other, from dominating the rank signal.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..config import DEFAULT_RRF_K
from ..results import ARMS, Contribution, Hit

__all__ = ["FusedScore", "rrf_contribution", "fuse"]


@dataclass(frozen=True)
class FusedScore:
    memory_id: str
    score: float
    contributions: tuple[Contribution, ...]


def rrf_contribution(weight: float, score: float, rank: int, k: int) -> float:
    """One arm's term: w · √s / (k + rank). Ranks start at 1."""
    if rank < 1:
        raise ValueError("ranks start at 1")
    return weight * math.sqrt(max(0.0, min(1.0, score))) / (k + rank)


def _arm_order(arm: str) -> int:
    return ARMS.index(arm) if arm in ARMS else len(ARMS)


def fuse(results: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int = DEFAULT_RRF_K,
         limit: int | None = None) -> list[FusedScore]:
    """Fuse ranked hit lists per arm into one ranking.

    Each arm's list is its ranking, best first. Duplicates inside one arm are dropped (the first,
    best-ranked occurrence is kept) before ranks 1..n are assigned.
    An arm missing from `weights` gets weight 1. Ties on fused score break on the number of arms
    that found the memory, then its best single rank, then memory id: deterministic for a given input.
    """
    # Plain tuples while scoring every candidate (~150 per query); Contribution objects only for
    # the `limit` memories returned: building them all was most of the fusion's cost. The loop inlines
    # the per-arm dedup, and the sort keys are plain tuples compared in C
    # (not a key function per candidate), with identical output on captured and random inputs.
    # rrf_contribution is inlined (the same expression, so the same floats; the costs are in
    # docs/decisions/0016-read-ahead-and-fixed-costs.md).
    acc: dict[str, list[tuple[str, int, Hit, float, float]]] = {}
    sqrt = math.sqrt
    for arm in sorted(results, key=lambda a: (_arm_order(a), a)):
        w = float(weights.get(arm, 1.0))
        seen: set[str] = set()
        rank = 0
        for hit in results[arm]:
            mid = hit.memory_id
            if mid in seen:
                continue
            seen.add(mid)
            rank += 1
            term = (arm, rank, hit, w, w * sqrt(max(0.0, min(1.0, hit.score))) / (k + rank))
            found = acc.get(mid)
            if found is None:
                acc[mid] = [term]
            else:
                found.append(term)
    # (-score, -arms, best rank, id): ascending order is the ranking; one arm's term is its own fsum
    keys = [(-ts[0][4], -1, ts[0][1], mid) if len(ts) == 1 else
            (-math.fsum(t[4] for t in ts), -len(ts), min(t[1] for t in ts), mid) for mid, ts in acc.items()]
    order = sorted(keys) if limit is None else heapq.nsmallest(limit, keys)
    return [FusedScore(mid, -neg_score, tuple(Contribution(arm=arm, rank=rank, raw_score=hit.score, weight=w,
                                                           contribution=c, detail=hit.detail)
                                              for arm, rank, hit, w, c in acc[mid]))
            for neg_score, _, _, mid in order]
