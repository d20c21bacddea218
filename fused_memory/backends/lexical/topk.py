"""Exact top-k for the BM25 index: which candidates must be scored, and the final cut.

Split from `bm25.py` because it is a separate concern: `bm25.py` keeps the statistics and calls
rank-bm25's scorer; this module only decides which documents can be skipped without changing the
top k, and turns raw scores into the normalized, id-tie-broken result.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from .columns import TermColumn, common_scores

__all__ = ["Pruner", "top_k"]


class Pruner:
    """Exact top-k over the candidates, scoring as few as possible (each on the whole query, by
    rank-bm25's `get_batch_scores`; this class only decides which candidates can be skipped).

    Documents holding a rare term (a posting of at most `SCAN_LIMIT`) are all scored: they are few
    and usually the answer ("JIRA-5544"). So are the common terms' documents written since their
    columns were built (`columns`). Every other candidate holds common terms only, and the
    columns give its score on them (exact, or an overestimate at a stale entry). Those are scored
    best first, `FIRST_TAKE` times k at a time and four times more each round, and once k scores
    are known only those whose column score reaches the k-th best are left: nothing else can enter
    the top k, ties included (a relative slack of 1e-9 keeps float summation order from pruning a
    tie). Exact ties by id have a price: every document tied with the k-th best is scored.
    """

    SCAN_LIMIT = 1024   # postings this short are cheaper to score than to put in columns
    FIRST_TAKE = 2      # the first round scores the best 2k documents by column score

    def __init__(self, scorer: Any, query: list[str], k: int, allowed: np.ndarray | None = None) -> None:
        self.scorer, self.query, self.k = scorer, query, k
        self.allowed = allowed  # per position, whether a type filter keeps it (None: no filter)
        self.seen: set[int] = set()
        self.positions: list[int] = []
        self.scores: list[float] = []
        self.best: list[float] = []  # min-heap of the k best raw scores so far

    def threshold(self) -> float:
        return self.best[0] if len(self.best) == self.k else -math.inf

    def score(self, docs: Collection[int]) -> None:
        fresh = (docs if isinstance(docs, set) else set(docs)) - self.seen
        if not fresh:
            return
        self.seen |= fresh
        batch = np.fromiter(fresh, dtype=np.int64, count=len(fresh))
        if self.allowed is not None:
            batch = batch[self.allowed[batch]]
            if not len(batch):
                return
        raw = np.asarray(self.scorer.get_batch_scores(self.query, batch), dtype=np.float64)
        live = raw > 0
        if not live.all():  # a stale column entry: the position holds no query term now
            batch, raw = batch[live], raw[live]
        self.positions.extend(batch.tolist())
        self.scores.extend(raw.tolist())
        if len(raw) > self.k:  # only this batch's k best can be among the k best so far
            raw = np.partition(raw, len(raw) - self.k)[len(raw) - self.k:]
        for r in raw.tolist():
            if len(self.best) < self.k:
                heapq.heappush(self.best, r)
            elif r > self.best[0]:
                heapq.heapreplace(self.best, r)

    def run(self, rare: Sequence[Collection[int]], columns: list[tuple[TermColumn, float]]) -> None:
        """Score the rare terms' documents and the columns' recent ones, then the columns' best."""
        s = self.scorer
        first: set[int] = set()  # one batch: every document is scored alone, so batching changes no score
        for posting in rare:
            first.update(posting)
        for column, _ in columns:
            if column.recent:  # a freed slot (length 0) holds nothing to score
                first.update(p for p in column.recent if s.doc_len[p] > 0)
        self.score(first)
        if not columns:
            return
        acc = common_scores(columns, s.doc_len, s.k1, s.b, s.avgdl)
        acc[s.doc_len == 0] = 0.0  # stale entries at deleted documents' slots
        if self.seen:
            acc[np.fromiter(self.seen, dtype=np.int64, count=len(self.seen))] = 0.0
        if self.allowed is not None:
            acc[~self.allowed[:len(acc)]] = 0.0
        left = np.flatnonzero(acc > 0)
        take = self.FIRST_TAKE * self.k
        while len(left):
            threshold = self.threshold()
            if threshold > -math.inf:  # only what can still reach the k-th best is worth scoring
                left = left[acc[left] * (1 + 1e-9) >= threshold]
            if len(left) <= take:
                self.score(set(left.tolist()))
                return
            order = np.argpartition(-acc[left], take)
            self.score(set(left[order[:take]].tolist()))
            left = left[order[take:]]
            take *= 4


def top_k(raw: np.ndarray, positions: list[int], ids: Sequence[str | None], k: int,
           ideal: float) -> list[tuple[str, float]]:
    """Best `k` by raw score, ties broken by memory id, scores divided by `ideal` and clipped."""
    n = len(raw)
    if n > k:
        kth = np.partition(raw, n - k)[n - k]
        chosen = np.flatnonzero(raw >= kth).tolist()
    else:
        chosen = list(range(n))
    ranked = sorted(((float(raw[i]), ids[positions[i]]) for i in chosen), key=lambda p: (-p[0], p[1]))[:k]
    return [(str(mid), min(1.0, max(0.0, score / ideal))) for score, mid in ranked]
