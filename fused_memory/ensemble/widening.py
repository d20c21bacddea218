"""Widening (docs/design.md, "The pipeline", step 3): when the optimizer reads a type off one
word ("prefer", "setting": `optimizer.hard_filter_explicit_hint`), dense and lexical search inside
it; when that leaves fewer than `FusionConfig.widen_below` hits, the arm reruns without the filter
and the ensemble records it (`Retrieval.widened`). The optimizer's type is a guess, and widening is
what rescues the memory stored under another type ("I drink my coffee black" filed as a fact answers
"how do I prefer my coffee?"), so the rerun's own list, by its own scores, replaces the filtered one.

A caller's `types=` never widens: it is a filter in every arm ("only memories of these types",
`EnsembleMemory._request_for`), and the candidates of other types never reach the answer.
"""

from __future__ import annotations

from ..results import Arm, Hit
from ..retrievers.base import ArmRequest

__all__ = ["WIDENABLE", "needs_widening", "widened"]

#: The arms an optimizer's type filter applies to, and so the arms that widen.
WIDENABLE: tuple[str, ...] = (Arm.DENSE.value, Arm.LEXICAL.value)


def needs_widening(arm: str, request: ArmRequest, hits: list[Hit], widen_below: int) -> bool:
    """True when `arm` searched under a type filter and found fewer than `widen_below` hits."""
    return arm in WIDENABLE and request.types is not None and len(hits) < widen_below


def widened(wide: list[Hit], k: int) -> list[Hit]:
    """The unfiltered search's hits, at most `k` (the filtered ones were too few)."""
    return wide[:k]
