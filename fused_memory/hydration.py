"""Hydration: the memories behind the fused ids, the last step of a retrieval.

Vector arms return their hits with payloads, so their memories are at hand; BM25 and the graph
return ids alone, and the memories those alone found are read from the vector store (the source
of truth) in one `get_many` round trip. If that read fails, the answer is the best `k` of what the
arms carried (taken from the whole fused ranking, not from its first `k` only, so `k` decides how
many are returned, not whether there is an answer), with the arms whose hits were left out named
as failed ("hydration"), the way a failed arm is: one backend call should not cost the whole
answer. With nothing carried there is no answer, and the backend's error is raised; so is
`StoreClosed`, which is the caller's doing, not a fault.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from .errors import FusedMemoryError, StoreClosed
from .fusion import FusedScore
from .store.codec import from_payload
from .types import ArmFailure, Hit, Memory

if TYPE_CHECKING:
    from .store.memory_store import MemoryStore

__all__ = ["hydrate"]


def hydrate(store: MemoryStore, namespace: str, results: Mapping[str, Sequence[Hit]], fused: Sequence[FusedScore],
            k: int, ranked_all: Callable[[], Sequence[FusedScore]]
            ) -> tuple[list[tuple[FusedScore, Memory]], list[ArmFailure]]:
    """The fused top `k` with their memories, and the failures of arms left short. `fused` is the
    fused top `k`; `ranked_all()` the whole fused ranking, asked for only if the read fails."""
    known = _at_hand(results, {f.memory_id for f in fused})
    missing = [f.memory_id for f in fused if f.memory_id not in known]
    failures: list[ArmFailure] = []
    if missing:
        try:
            known.update((m.id, m) for m in store.get_many(namespace, missing))
        except StoreClosed:
            raise
        except FusedMemoryError as exc:
            fused = ranked_all()
            known = _at_hand(results, {f.memory_id for f in fused})
            if not known:
                raise
            reason = f"{type(exc).__name__}: {exc}; the memories of its hits no other arm carried are left out"
            lost = set(missing)
            failures = [ArmFailure(arm, reason, "hydration") for arm, hits in results.items()
                        if any(h.memory_id in lost for h in hits)]
    return [(f, known[f.memory_id]) for f in fused if f.memory_id in known][:k], failures


def _at_hand(results: Mapping[str, Sequence[Hit]], wanted: set[str]) -> dict[str, Memory]:
    """The wanted memories the arms already carry (as `memory` or as a raw payload); payloads are
    decoded for the wanted ids only."""
    known: dict[str, Memory] = {}
    for hits in results.values():
        for h in hits:
            if h.memory_id in wanted and h.memory_id not in known:
                if h.memory is not None:
                    known[h.memory_id] = h.memory
                elif h.payload is not None:
                    known[h.memory_id] = from_payload(h.payload)
    return known
