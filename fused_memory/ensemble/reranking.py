"""The reranker's step, the last of a retrieval: a task that calls it, and its answer applied.

The call is a `fanout.Task` labelled "rerank", so `EnsembleMemory` runs it as it runs an arm: in the
ensemble's pool, under `FusionConfig.rerank_timeout_s`, waited for by `retrieve` and awaited by
`aretrieve`, and not called again while an earlier call still runs past its timeout
(`hung_arms.HungArms`, under the name "rerank"). Whatever goes wrong (it raises, it times out, it
answers garbage: `rerank.check_scores`) costs the reranker's say and nothing else: the hits keep
the order the stage after fusion gave them, and `Retrieval.failures` names "rerank".

The answer reorders the top `FusionConfig.rerank_depth` by

    blend(i) = b / (k + rerank_rank(i)) + (1 - b) / (k + fused_rank(i))        b = `rerank_blend`, k = RRF k

ties broken by the fused rank: b = 1 is the reranker's order, b = 0 the fused order, and in between
the two ranks are fused as the arms' are, by reciprocal rank, since a reranker's scores are on a
scale of its own. Rerank ranks follow the scores, highest first, equal scores in fused order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..rerank import Reranker, check_scores, reranker_name
from ..results import ArmFailure
from .candidate import Candidate
from .fanout import Task

__all__ = ["RERANK", "rerank_task", "blend_order", "apply_rerank"]

#: The name the rerank step goes by in failures, timings and the record of hung calls.
RERANK = "rerank"


def rerank_task(reranker: Reranker | None, query: str, candidates: Sequence[Candidate], depth: int,
                timeout_s: float) -> Task | None:
    """The task that asks `reranker` about the texts of the top `depth` candidates; None when there
    is no reranker or fewer than two candidates (nothing to order)."""
    texts = [c.memory.text for c in candidates[:depth]]
    if reranker is None or len(texts) < 2:
        return None
    name = reranker_name(reranker)

    def call() -> tuple[float, ...]:
        return check_scores(reranker.rerank(query, list(texts)), len(texts), name)

    return Task(RERANK, (RERANK,), float(timeout_s), call)


def blend_order(scores: Sequence[float], blend: float, k: int) -> list[int]:
    """The order (indices into `scores`, whose order is the fused one) of the module docstring."""
    n = len(scores)
    by_score = sorted(range(n), key=lambda i: (-scores[i], i))
    rerank_rank = {i: r for r, i in enumerate(by_score, start=1)}
    value = {i: blend / (k + rerank_rank[i]) + (1.0 - blend) / (k + i + 1) for i in range(n)}
    return sorted(range(n), key=lambda i: (-value[i], i))


def apply_rerank(candidates: Sequence[Candidate], task: Task | None, outcome: Any, blend: float, k: int,
                 name: str | None) -> tuple[list[Candidate], ArmFailure | None, float | None]:
    """`candidates` with the reranker's answer applied: (candidates, failure, milliseconds). `outcome`
    is what running `task` gave: (scores, ms), or the exception it raised or timed out with."""
    if task is None:
        return list(candidates), None, None
    if isinstance(outcome, BaseException) or outcome is None:
        kind = "timeout" if isinstance(outcome, TimeoutError) else "error"
        reason = f"{type(outcome).__name__}: {outcome}" if outcome is not None else "no answer"
        return list(candidates), ArmFailure(RERANK, f"{name}: {reason}; the fused order stands", kind), None
    scores, ms = outcome
    top = list(candidates[:len(scores)])
    order = blend_order(scores, blend, k)
    reordered = [replace(top[i], rerank_score=float(scores[i]), rank_before_rerank=i + 1) for i in order]
    return [*reordered, *candidates[len(scores):]], None, ms
