"""`check_options`: the checks every retrieve makes on its options, in one place; `check_after`:
the same for the options of the stage after fusion (reranker, recency weight, collapse).

The ensemble runs them on every call and the LangChain / LlamaIndex adapters on their defaults at
construction, so a bad default fails where it was written, with the same message either way.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..errors import ConfigurationError, QueryError
from ..query.optimizer import RULE_NAMES
from ..query.store_rules import STORE_RULE_NAMES
from ..rerank import Reranker, as_reranker
from ..types import MemoryType, parse_memory_type, type_list
from ..validation import check_namespace, require_aware

__all__ = ["check_options", "check_after", "check_rules_off", "AfterOptions", "MAX_K"]

#: More results than any agent reads; past it a k is a mistake (and 2**64 broke the engines' ints).
MAX_K = 10_000


def check_options(namespace: object, k: object, now: object = None,
                  types: Sequence[MemoryType | str] | MemoryType | str | None = None,
                  arms: Sequence[str] | None = None) -> tuple[int, frozenset[MemoryType] | None]:
    """The checks every retrieve makes on its options; returns k as an int (numpy's integers too)
    and the caller's types (a filter in every arm). The adapters run it on their defaults at
    construction, so a bad default fails where it was written instead of on the first query."""
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k <= 0:
        raise QueryError(f"k must be a positive integer, got {k!r}")
    if int(k) > MAX_K:  # 2**64 made the vector engine's int conversion fail inside the arms
        raise QueryError(f"k must be at most {MAX_K}, got {k!r}")
    check_namespace(namespace)  # type: ignore[arg-type]  # it refuses any non-string
    if now is not None:
        require_aware(now, "now")  # type: ignore[arg-type]  # it names what is wrong with any value
    listed = type_list(types)
    return int(k), frozenset(parse_memory_type(t) for t in listed) if listed else None


@dataclass(frozen=True)
class AfterOptions:
    """A call's say over the stage after fusion; None leaves it to the ensemble and its config:
    `reranker` (the ensemble's own when None), `recency` (the recency list's weight, replacing the
    configured weight and the optimizer's boost; 0 turns recency off), `collapse` (near-duplicates),
    `min_score` (a floor on the fused score, replacing `FusionConfig.min_score`)."""

    reranker: Reranker | None = None
    recency: float | None = None
    collapse: bool | None = None
    min_score: float | None = None

    def floor(self, configured: float) -> float:
        """The floor on the fused score this call keeps hits above: its own, else the configured one."""
        return self.min_score if self.min_score is not None else configured


def check_after(reranker: object = None, recency: object = None, collapse: object = None,
                min_score: object = None) -> AfterOptions:
    """The per-call options of the stage after fusion, checked: a reranker as `as_reranker` takes it
    (a LangChain compressor or a LlamaIndex postprocessor is wrapped), a recency weight a finite
    number >= 0, collapse a bool."""
    if reranker is not None:
        try:
            reranker = as_reranker(reranker)
        except ConfigurationError as exc:
            raise QueryError(str(exc)) from None
    if recency is not None:
        value = float(recency) if isinstance(recency, numbers.Real) and not isinstance(recency, bool) else math.nan
        if not (math.isfinite(value) and value >= 0):
            raise QueryError(f"recency must be a finite number >= 0 (the recency list's weight; 0: off), "
                             f"got {recency!r}")
        recency = value
    if collapse is not None and not isinstance(collapse, bool):
        raise QueryError(f"collapse must be True, False or None, got {collapse!r}")
    if min_score is not None:
        floor = float(min_score) if isinstance(min_score, numbers.Real) and not isinstance(min_score, bool) \
            else math.nan
        if not (math.isfinite(floor) and floor >= 0):
            raise QueryError(f"min_score must be a finite number >= 0 (a floor on the fused score), got {min_score!r}")
        min_score = floor
    return AfterOptions(reranker, recency, collapse, min_score)

def check_rules_off(rules_off: Collection[str], extra: Sequence[str] = ()) -> frozenset[str]:
    """`EnsembleMemory(rules_off=...)`: names of optimizer rules (stage 2's `RULE_NAMES`, stage 2b's
    `STORE_RULE_NAMES`, and `extra`: the rules of registered arms), each known; a typo would
    otherwise measure the full optimizer under its name."""
    if isinstance(rules_off, str) or not isinstance(rules_off, Collection):
        raise ConfigurationError(f"rules_off must be a collection of rule names, got {rules_off!r}")
    known = (*RULE_NAMES, *STORE_RULE_NAMES, *extra)
    unknown = sorted(str(r) for r in rules_off if r not in known)
    if unknown:
        raise ConfigurationError(f"rules_off names unknown rule(s) {unknown}; rules are {', '.join(known)}")
    return frozenset(rules_off)
