"""Widening (DESIGN.md section 5, step 4): with a hard type filter, dense and lexical search inside
the wanted types; when that leaves fewer than `FusionConfig.widen_below` hits, the arm reruns
without the filter and the ensemble records it (`Retrieval.widened`).

Widening fills the list up; it does not reorder it. The rerun's list used to replace the filtered
one, and off-type memories then outranked the few the filter kept: with `types=["entity"]` on the
demo, a fact, a preference and an event led. Now the kept hits come first and the rest of the rerun
follows, each scored at most the weakest kept hit, because fusion weighs an arm's score as well as
its rank (`fusion.fuse`); the hit's detail keeps its own score.
"""

from __future__ import annotations

from dataclasses import replace

from .retrievers.base import ArmRequest
from .types import Hit

__all__ = ["WIDENABLE", "needs_widening", "widened"]

#: The arms a hard type filter applies to, and so the arms that widen.
WIDENABLE = ("dense", "lexical")


def needs_widening(arm: str, request: ArmRequest, hits: list[Hit], widen_below: int) -> bool:
    """True when `arm` searched under a type filter and found fewer than `widen_below` hits."""
    return arm in WIDENABLE and request.types is not None and len(hits) < widen_below


def widened(narrow: list[Hit], wide: list[Hit], k: int) -> list[Hit]:
    """The filtered hits first, then the unfiltered search's others, capped at the weakest kept
    score (see the module docstring), at most `k`."""
    kept = {h.memory_id for h in narrow}
    floor = min((h.score for h in narrow), default=1.0)
    rest = [h if h.score <= floor else replace(h, score=floor, detail=f"off-type, widened (own score {h.score:.2f})")
            for h in wide if h.memory_id not in kept]
    return (narrow + rest)[:k]
