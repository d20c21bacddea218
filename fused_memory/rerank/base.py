"""The `Reranker` protocol and the check every reranker's answer goes through.

Contract: `rerank(query, texts)` returns one score per text, in the order of `texts`, higher is
better; any finite numbers (a cross-encoder's logits, Cohere's relevance in [0, 1], an LLM's 1-10).
Only their order is used for ranking (`FusionConfig.rerank_blend` blends ranks, not scores, since a
reranker's scores are on a scale of its own); they are shown in explanations as given.

Why a protocol of plain texts and floats: a reranker is the one part of a retrieval that may be a
network call or a model the caller brings, and the ensemble must be able to check its answer (a
score per text, each a number) before trusting it with the order.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import BackendError

__all__ = ["Reranker", "check_scores"]


@runtime_checkable
class Reranker(Protocol):
    """Scores texts for a query: `rerank(query, texts)` -> one score per text, higher is better."""

    def rerank(self, query: str, texts: Sequence[str]) -> Sequence[float]: ...


def check_scores(scores: Any, n: int, name: str) -> tuple[float, ...]:
    """A reranker's answer as the ensemble uses it, or a `BackendError` saying what is wrong with it
    (not a sequence, a score per text missing or extra, a score that is not a finite number): the
    ensemble then keeps the fused order and names the reranker in `Retrieval.failures`."""
    if isinstance(scores, (str, bytes, Mapping)):
        raise BackendError(f"{name} returned {type(scores).__name__}, not a list of scores")
    if not isinstance(scores, Sequence):
        try:  # numpy arrays and other array-likes are not `Sequence`s
            scores = list(scores)
        except TypeError:
            raise BackendError(f"{name} returned {type(scores).__name__}, not a list of scores") from None
    if len(scores) != n:
        raise BackendError(f"{name} returned {len(scores)} scores for {n} texts")
    out: list[float] = []
    for i, s in enumerate(scores):
        if isinstance(s, bool) or not isinstance(s, numbers.Real):
            raise BackendError(f"{name} returned {s!r} for text {i}, not a number")
        value = float(s)
        if not math.isfinite(value):
            raise BackendError(f"{name} returned {value} for text {i}, not a finite number")
        out.append(value)
    return tuple(out)
