"""Widening (docs/architecture.md, "The pipeline", step 4): with a hard type filter, dense and lexical search inside
the wanted types; when that leaves fewer than `FusionConfig.widen_below` hits, the arm reruns
without the filter and the ensemble records it (`Retrieval.widened`).

Who chose the filter decides what widening means:

- **The caller** (`types=[...]`): "these types first". The rerun's list used to replace the filtered
  one, and off-type memories then outranked the few the filter kept: with `types=["entity"]` on the
  demo, a fact, a preference and an event led. So the kept hits come first and the rest of the rerun
  fills the list up, each scored at most the weakest kept hit, because fusion weighs an arm's score
  as well as its rank (`fusion.fuse`); the hit's detail keeps its own score.
- **The optimizer** (a type read off one word, "prefer", "setting"): a guess, and widening is what
  rescues the memory stored under another type ("I drink my coffee black" filed as a fact answers
  "how do I prefer my coffee?"). Capping it at the weakest kept preference buried it 3rd-4th (found
  by review), so here the rerun's own list, by its own scores, replaces the filtered one.
"""

from __future__ import annotations

from dataclasses import replace

from ..results import Hit
from ..retrievers.base import ArmRequest

__all__ = ["NOTHING_KEPT_SCALE", "WIDENABLE", "needs_widening", "widened"]

#: The arms a hard type filter applies to, and so the arms that widen.
WIDENABLE = ("dense", "lexical")
#: A forced filter that kept nothing in one arm: the rerun keeps its order, its scores times this. A
#: score counts by its square root, so the arm's votes shrink tenfold and one arm's off-type #1 no
#: longer outranks another arm's hit of the forced types ("Zephyr" under types=["fact"]: BM25 kept
#: no fact, and its preference at full score led; found by probing the API). Where no arm keeps any,
#: dense and BM25 shrink alike, so the arms that cannot filter (graph, temporal) weigh more there.
NOTHING_KEPT_SCALE = 0.01


def needs_widening(arm: str, request: ArmRequest, hits: list[Hit], widen_below: int) -> bool:
    """True when `arm` searched under a type filter and found fewer than `widen_below` hits."""
    return arm in WIDENABLE and request.types is not None and len(hits) < widen_below


def widened(narrow: list[Hit], wide: list[Hit], k: int, kept_first: bool = True) -> list[Hit]:
    """With `kept_first` (the caller forced the types): the filtered hits first, then the unfiltered
    search's others, capped at the weakest kept score, at most `k`. Without (the optimizer guessed
    them): the unfiltered search as it is. See the module docstring."""
    if not kept_first:
        return wide[:k]
    if not narrow:  # nothing to stay below here, but another arm's hits of the forced types may be
        return [replace(h, score=h.score * NOTHING_KEPT_SCALE, detail=f"off-type, widened (own score {h.score:.2f})")
                for h in wide[:k]]
    kept = {h.memory_id for h in narrow}
    floor = min(h.score for h in narrow)
    rest = [h if h.score <= floor else replace(h, score=floor, detail=f"off-type, widened (own score {h.score:.2f})")
            for h in wide if h.memory_id not in kept]
    return (narrow + rest)[:k]
