"""Score-weighted Reciprocal Rank Fusion, pure.

    score(d) = Σᵢ wᵢ · √sᵢ(d) / (k + rankᵢ(d))        ranks from 1, sᵢ in [0, 1]

k defaults to `config.DEFAULT_RRF_K` (10, tuned on public LoCoMo; DESIGN.md's seed was 60).

Plain RRF throws the arms' scores away; weighting by √score keeps a confident #1 (BM25 0.95 on an
exact identifier) above a lukewarm #1 (dense 0.30), while the square root stops raw scores from
different arms, which are not calibrated against each other, from dominating the rank signal.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .config import DEFAULT_RRF_K
from .types import ARMS, Contribution, Hit

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


def _first_occurrences(hits: Sequence[Hit]) -> list[Hit]:
    seen: set[str] = set()
    out: list[Hit] = []
    for h in hits:
        if h.memory_id not in seen:
            seen.add(h.memory_id)
            out.append(h)
    return out


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
    # the `limit` memories returned: building them all was most of the fusion's cost.
    acc: dict[str, list[tuple[str, int, Hit, float, float]]] = {}
    for arm in sorted(results, key=lambda a: (_arm_order(a), a)):
        w = float(weights.get(arm, 1.0))
        for rank, hit in enumerate(_first_occurrences(results[arm]), start=1):
            acc.setdefault(hit.memory_id, []).append((arm, rank, hit, w, rrf_contribution(w, hit.score, rank, k)))
    order = sorted(((math.fsum(t[4] for t in ts), mid, ts) for mid, ts in acc.items()),
                   key=lambda x: (-x[0], -len(x[2]), min(t[1] for t in x[2]), x[1]))
    if limit is not None:
        order = order[:limit]
    return [FusedScore(mid, score, tuple(Contribution(arm=arm, rank=rank, raw_score=hit.score, weight=w,
                                                      contribution=c, detail=hit.detail)
                                         for arm, rank, hit, w, c in ts))
            for score, mid, ts in order]
