"""The ensemble: parse -> optimize -> fan-out -> widen -> fuse -> hydrate, over one `MemoryStore`.

* `engine`: `EnsembleMemory`, which runs the stages (sync and async share every step but the waiting).
* `options` / `caller_plan`: the caller's per-query options, checked, and applied to the plan.
* `fanout` / `hung_arms` / `lookup`: tasks with timeouts, arms still running past theirs, and the
  planner's bounded entity lookup.
* `widening`: a type filter that left too few hits searched again without it.
* `fusion`: score-weighted RRF; `hydration`: the fused top k as `Memory` objects.
* `after_fusion`: the stage after fusion, over `candidate`s: `recency` (the recency list and
  supersession), `duplicates` (near-duplicate collapse, MMR), `reranking` (the reranker's call).
"""

from __future__ import annotations

from .engine import EnsembleMemory
from .options import check_after, check_options

__all__ = ["EnsembleMemory", "check_options", "check_after"]
