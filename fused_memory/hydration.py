"""Hydration: the memories behind the fused ids, the last step of a retrieval.

Vector arms return their hits with payloads, so their memories are at hand; BM25 and the graph
return ids alone, and the memories those alone found are read from the vector store (the source
of truth) in one `get_many` round trip. If that read fails, the answer is what the arms carried,
with the arms whose hits were left out named as failed ("hydration"), the way a failed arm is:
one backend call should not cost the whole answer. With nothing carried there is no answer, and
the backend's error is raised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .errors import FusedMemoryError
from .store.codec import from_payload
from .types import ArmFailure, Hit, Memory

if TYPE_CHECKING:
    from .store.memory_store import MemoryStore

__all__ = ["hydrate"]


def hydrate(store: MemoryStore, namespace: str, results: Mapping[str, Sequence[Hit]],
            wanted: Sequence[str]) -> tuple[dict[str, Memory], list[ArmFailure]]:
    """The memories of `wanted` ids that could be had, and the failures of arms left short."""
    known = _at_hand(results, set(wanted))
    missing = [i for i in wanted if i not in known]
    if not missing:
        return known, []
    try:
        known.update((m.id, m) for m in store.get_many(namespace, missing))
    except FusedMemoryError as exc:
        if not known:
            raise
        reason = f"{type(exc).__name__}: {exc}; memories only it found could not be read and are left out"
        lost = set(missing)
        return known, [ArmFailure(arm, reason, "hydration") for arm, hits in results.items()
                       if any(h.memory_id in lost for h in hits)]
    return known, []


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
