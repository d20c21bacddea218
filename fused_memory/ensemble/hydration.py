"""Hydration: the memories behind the fused ids, the last step of a retrieval.

Vector arms return their hits with payloads, so their memories are at hand; BM25 and the graph
return ids alone, and the memories those alone found are read from the vector store (the source
of truth) in one `get_many` round trip. If that read fails, the answer is the best `k` of what the
arms carried (taken from the whole fused ranking, not from its first `k` only, so `k` decides how
many are returned, not whether there is an answer), with the arms whose hits were left out named
as failed ("hydration"), the way a failed arm is: one backend call should not cost the whole
answer. With nothing carried there is no answer, and the backend's error is raised; so is
`StoreClosed`, which is the caller's doing, not a fault. The wording a payload keeps is remembered
as the payload is decoded (`backends.wording`): the stage after fusion compares those fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..backends.codec import from_payload
from ..backends.wording import remember
from ..errors import FusedMemoryError, StoreClosed
from ..results import ArmFailure, FailureKind, Hit
from ..types import Memory
from .fusion import FusedScore

if TYPE_CHECKING:
    from .source import EnsembleSource

__all__ = ["hydrate"]


def hydrate(store: EnsembleSource, namespace: str, results: Mapping[str, Sequence[Hit]], fused: Sequence[FusedScore],
            k: int, ranked_all: Callable[[], Sequence[FusedScore]], ahead: Mapping[str, Memory] | None = None
            ) -> tuple[list[tuple[FusedScore, Memory]], list[ArmFailure]]:
    """The fused top `k` with their memories, and the failures of arms left short. `fused` is the
    fused top `k`; `ranked_all()` the whole fused ranking, asked for only when a memory of the top
    `k` cannot be had: its read failed, or it was deleted since the arms saw it. The rest of the
    ranking then fills the `k` places, with one more read if the first one worked. `ahead`: memories
    already read for this query (`slack`), taken after what the arms carry and before the store."""
    ahead = ahead or {}
    known = _at_hand(results, {f.memory_id for f in fused}, ahead)
    missing = [f.memory_id for f in fused if f.memory_id not in known]
    error = _read(store, namespace, missing, known)
    if all(f.memory_id in known for f in fused):
        return [(f, known[f.memory_id]) for f in fused], []
    gone = set() if error else set(missing) - known.keys()  # read without error, yet absent: deleted
    ranked = ranked_all()
    known.update(_at_hand(results, {f.memory_id for f in ranked} - known.keys(), ahead))
    if error is None:  # a short read: read just the candidates that can still fill the k places
        more: list[str] = []
        places = 0
        for f in ranked:
            if places == k:
                break
            if f.memory_id in known or f.memory_id not in gone:
                places += 1
                if f.memory_id not in known:
                    more.append(f.memory_id)
        error = _read(store, namespace, more, known)
        gone |= set() if error else set(more) - known.keys()
    kept = [(f, known[f.memory_id]) for f in ranked if f.memory_id in known][:k]
    if error is None:
        return kept, []
    if not kept:
        raise error
    # the arms whose hits ranked above the last one kept (or anywhere, if fewer than k were kept)
    # could not be read (deleted ones aside): they are named, as a failed arm is
    cut = {f.memory_id for f, _ in kept}
    last = max(i for i, f in enumerate(ranked) if f.memory_id in cut) if len(kept) == k else len(ranked)
    lost = {f.memory_id for f in ranked[:last + 1] if f.memory_id not in known} - gone
    reason = f"{type(error).__name__}: {error}; the memories of its hits no other arm carried are left out"
    return kept, [ArmFailure(arm, reason, FailureKind.HYDRATION) for arm, hits in results.items()
                  if any(h.memory_id in lost for h in hits)]


def _read(store: EnsembleSource, namespace: str, ids: Sequence[str], into: dict[str, Memory]) -> Exception | None:
    """Read `ids` into `into`; the read's error if it failed (a closed store is not such an error)."""
    if not ids:
        return None
    try:
        into.update((m.id, m) for m in store.get_many(namespace, ids))
    except StoreClosed:
        raise
    except FusedMemoryError as exc:
        return exc
    return None


def _at_hand(results: Mapping[str, Sequence[Hit]], wanted: set[str], ahead: Mapping[str, Memory]) -> dict[str, Memory]:
    """The wanted memories the arms already carry (as `memory` or as a raw payload; payloads are
    decoded for the wanted ids only), then those read ahead."""
    known: dict[str, Memory] = {}
    for hits in results.values():
        for h in hits:
            if h.memory_id in wanted and h.memory_id not in known:
                if h.memory is not None:
                    known[h.memory_id] = h.memory
                elif h.payload is not None:
                    known[h.memory_id] = from_payload(h.payload)
                    remember(h.payload)  # its wording, for the stage after fusion
    known.update((m, ahead[m]) for m in wanted if m in ahead and m not in known)
    return known
