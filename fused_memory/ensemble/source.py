"""What the ensemble reads from its store, as a protocol: a `MemoryStore` is one, and so is anything
that answers the same calls (a wrapper that injects faults, in the reliability tests). `VectorLookup`
is optional: a source that has it lets the stage after fusion compare stored vectors; so is
`ReadyToEmbed`, a source whose embedding model can be loaded before the arms' timeouts start."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import numpy as np

from ..query.entities import EntityMatcher
from ..retrievers.base import MemorySource
from ..types import Memory, MemoryType

__all__ = ["EnsembleSource", "VectorLookup", "ReadyToEmbed", "SlotLookup"]


@runtime_checkable
class EnsembleSource(MemorySource, Protocol):
    """The five arms' reads (`MemorySource`), and what planning and hydration read besides."""

    def entity_matcher(self, namespace: str) -> EntityMatcher:
        """The namespace's known entities, for the parser's phrase matching (`ensemble.lookup`)."""
        ...

    def last_session_end(self, namespace: str) -> datetime | None:
        """When the namespace's last conversation ended, for "since we last talked"."""
        ...

    def type_counts(self, namespace: str) -> Mapping[MemoryType | None, int] | None:
        """Memories per type, for the planner's statistics; None when unknown."""
        ...

    def get_many(self, namespace: str, memory_ids: str | Sequence[str]) -> list[Memory]:
        """Memories by id, for hydration: the fused top k that no arm carried."""
        ...


@runtime_checkable
class VectorLookup(Protocol):
    """Optional: the stored vectors of some memories by id (None: the store cannot hand them out),
    for the near-duplicate check and MMR after fusion (`ensemble.duplicates`)."""

    def stored_vectors(self, namespace: str, memory_ids: Sequence[str]) -> Mapping[str, np.ndarray] | None:
        ...


@runtime_checkable
class ReadyToEmbed(Protocol):
    """Optional: loads the query embedder's model now if it loads on first use
    (`MemoryStore.ready_to_embed`), so a first query pays the load as its own time, not inside the
    dense arm's timeout."""

    def ready_to_embed(self) -> bool:
        """True when it loaded the model now."""
        ...


@runtime_checkable
class SlotLookup(Protocol):
    """Optional: the newest memories that state one of some slots (`MemoryStore.memories_with_slots`),
    so a question about a fact sees every version of it, not only those the arms found."""

    def memories_with_slots(self, namespace: str, keys: Sequence[str], limit: int) -> list[Memory]:
        ...
