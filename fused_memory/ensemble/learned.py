"""The learned order in the ensemble: which ranker a `FusionConfig` asks for, and fusion with it.

    fuse (RRF) -> learned order over the top `learned_depth` -> hydrate -> the stage after fusion -> rerank

`ordered_fusion` returns what the stage after fusion calls in place of `fusion.fuse`: RRF's ranking
with its top reordered by the ranker (`ranking.learned_order`). It stands aside (RRF as is) where
an order has nothing to learn from or must not cost time: `order="rrf"`, one arm alone (the caller
asked for that arm's ranking), the shortcut plans (one cheap arm; they keep their speed) and an
asked relation (`ranking.applies`: the graph re-rooted there orders it). Whatever the order, the
rules after it hold: a precise window's memories before the rest, each fact's versions in order, the
version a question asks for first (`ensemble.after_fusion`). A ranker that raises leaves that query
in RRF's order, reported in `Retrieval.failures` under `LEARNED` as a failed arm is.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..config import FusionConfig, Order
from ..errors import ConfigurationError
from ..ranking import Learned, Ranker, applies, default_ranker, feature_names, learned_order, load_ranker
from ..results import ARMS, ArmFailure, Hit
from .fanout import Job
from .fusion import FusedScore, fuse

__all__ = ["LEARNED", "resolve_ranker", "ordered_fusion", "with_learned"]

#: The name a failed learned order goes by in `Retrieval.failures`.
LEARNED = "learned"

Fuse = Callable[..., list[FusedScore]]


def resolve_ranker(config: FusionConfig, ranker: object = None, arms: tuple[str, ...] = ARMS) -> Ranker | None:
    """The ranker an ensemble orders with: None under `order="rrf"`; else `ranker` (a `Ranker` or a
    path to a ranker file), else `config.ranker`, else the shipped one. A file is read and checked
    here, once, so a bad one is refused when the ensemble is built (`ConfigurationError`), as is a
    ranker that has no features for one of the ensemble's `arms` (it cannot weigh what that arm says)."""
    if config.order == Order.RRF:
        return None
    if ranker is not None and not isinstance(ranker, (Ranker, str, os.PathLike)):
        raise ConfigurationError(f"ranker must be a path to a ranker file or a Ranker, got {type(ranker).__name__}")
    if isinstance(ranker, Ranker):
        chosen = ranker
    else:
        path = ranker if ranker is not None else config.ranker
        chosen = load_ranker(path) if path is not None else default_ranker()
    width = len(feature_names(chosen.arms))
    if any(np.shape(v) != (width,) for v in (chosen.weights, chosen.mean, chosen.scale)):
        raise ConfigurationError(f"ranker {chosen.source}: its weights, mean and scale must each hold {width} numbers "
                                 f"(the features of {', '.join(chosen.arms)})")
    unknown = [a for a in arms if a not in chosen.arms]
    if unknown:
        raise ConfigurationError(f"ranker {chosen.source} has no features for arm(s) {unknown} (it was trained with "
                                 f"{', '.join(chosen.arms)}): train one with them (fused-memory train-ranker) or "
                                 "order the fused candidates by RRF (FusionConfig(order='rrf'))")
    return chosen


def ordered_fusion(ranker: Ranker | None, job: Job, config: FusionConfig, failures: list[ArmFailure],
                   learned: dict[str, Learned]) -> Fuse:
    """`fusion.fuse`, or fusion followed by the learned order for this query. What the ranker said
    of each candidate goes into `learned`; a ranker that raises adds a failure and RRF's order stands."""
    if ranker is None or not applies(job.plan, job.parsed):
        return fuse
    depth = config.learned_depth

    def run(results: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int,
            limit: int | None = None) -> list[FusedScore]:
        whole = fuse(results, weights, k, limit=None if limit is None else max(limit, depth))
        if any(f.arm == LEARNED for f in failures):
            return whole[:limit]  # it failed on this query already (a second call widens the window)
        t0 = time.perf_counter()
        try:
            ordered, info = learned_order(ranker, whole, results, job.plan, job.parsed, depth, limit)
        except Exception as exc:  # noqa: BLE001 - the order must not cost the answer
            failures.append(ArmFailure(LEARNED, f"the learned order failed ({type(exc).__name__}: {exc}); "
                                                f"RRF's order stands", "error"))
            return whole[:limit]
        learned.clear()
        learned.update(info)
        job.timings[LEARNED] = job.timings.get(LEARNED, 0.0) + (time.perf_counter() - t0) * 1000
        return ordered[:limit]

    return run


def with_learned(candidates: list[Any], learned: Mapping[str, Learned]) -> list[Any]:
    """The candidates with what the ranker said of each (for `FusedHit.explain`)."""
    if not learned:
        return candidates
    return [replace(c, learned=learned.get(c.memory.id)) for c in candidates]
