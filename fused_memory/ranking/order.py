"""The learned order: the fused top `depth` reordered by a `Ranker`, the rest left in RRF's order.

Each reordered candidate keeps its per-arm RRF contributions (what each arm said) and takes the
fused score of the place it lands at, so the scores still fall down the ranking on RRF's scale
and what reads them afterwards (the recency list's fusion, the reranker's blend) works as it did.
The learned score and the features that moved it most are kept beside it (`Learned`) for
`FusedHit.explain()`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from ..results import Hit, ParsedQuery, QueryPlan
from .features import Fused, candidate_features
from .model import Ranker

__all__ = ["Learned", "learned_order", "order_by_scores", "applies"]

F = TypeVar("F", bound=Fused)


@dataclass(frozen=True)
class Learned:
    """What the learned order said of one candidate: its score, its RRF rank before the order, and
    the features that moved the score most, (name, weight x standardized value)."""

    score: float
    rrf_rank: int
    row: np.ndarray = field(repr=False, compare=False)
    ranker: Ranker = field(repr=False, compare=False)

    def top(self, n: int = 3) -> tuple[tuple[str, float], ...]:
        """The `n` features that moved the score most (worked out when asked: it is not free)."""
        return self.ranker.top_features(self.row, n)

    def explain(self) -> str:
        moved = ", ".join(f"{name} {share:+.2f}" for name, share in self.top())
        return f"learned {self.score:+.2f} (rrf #{self.rrf_rank}{'; ' + moved if moved else ''})"


def applies(plan: QueryPlan, parsed: ParsedQuery) -> bool:
    """Whether the learned order reorders this query's candidates (training reads the same rule):
    not for one arm alone or a plan that needs no embedding (nothing to weigh; they keep their
    speed), nor where the plan's own rules decide the order: a relation the query asks (the graph
    re-rooted there). A question with a time window is reordered too: the window's guarantee (a
    memory inside it before one outside) is a rule after the order (`ensemble.after_fusion.
    window_first`), and the model reads whether each candidate is inside it."""
    return plan.shortcut is None and len(plan.arms) > 1 and not plan.asked_relations


def order_by_scores(n: int, scores: np.ndarray) -> list[int]:
    """Positions 0..n-1 by descending score; ties keep RRF's order (stable)."""
    return [int(i) for i in np.argsort(-scores[:n], kind="stable")]


def learned_order(ranker: Ranker, fused: Sequence[F], results: Mapping[str, Sequence[Hit]], plan: QueryPlan,
                  parsed: ParsedQuery, depth: int, keep: int | None = None) -> tuple[list[F], dict[str, Learned]]:
    """`fused` (RRF's ranking, best first) with its top `depth` reordered by `ranker`, and what the
    ranker said of each of the first `keep` (None: all) of the new order, by memory id."""
    # a candidate no arm scored above 0 is never a hit (docs/design.md, "The pipeline", step 4):
    # it takes no place here either, or it would lift into a scored place and push a found one out
    head = [f for f in fused[:depth] if f.score > 0]  # RRF's order is by score: these lead
    if len(head) < 2:
        return list(fused), {}
    x = candidate_features(head, results, plan, parsed, ranker.arms)
    scores = ranker.scores(x)
    order = order_by_scores(len(head), scores)
    make = type(head[0])  # a FusedScore: (memory_id, score, contributions); `replace` costs 2 us a candidate
    out: list[Any] = [make(head[i].memory_id, head[pos].score, head[i].contributions)  # type: ignore[call-arg]
                      for pos, i in enumerate(order)]
    told = order if keep is None else order[:keep]
    info = {head[i].memory_id: Learned(float(scores[i]), i + 1, x[i], ranker) for i in told}
    return out + list(fused[len(head):]), info
