"""What the open, repair and upgrade steps (`recovery`, `upgrade`) need of a store: its backends,
its meta and its write lock, as a protocol. `MemoryStore` satisfies it; those modules depend on
this, not on `memory_store`, so the open / upgrade path imports one way only (`memory_store` ->
`recovery` -> `upgrade`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..backends.protocols import GraphStore, LexicalIndex, VectorBackend
from ..config import StoreConfig
from ..types import Memory

if TYPE_CHECKING:
    from .ingest import EntityExtractor
    from .journal import WriteJournal

__all__ = ["StoreParts"]


class StoreParts(Protocol):
    """A store as `recovery` and `upgrade` see it. `_meta` is the meta in force and `_write_lock`
    orders writes; both stay the store's own (private to the store package)."""

    vectors: VectorBackend
    lexical: LexicalIndex
    graph: GraphStore | None
    journal: WriteJournal | None
    config: StoreConfig
    extractor: EntityExtractor
    _meta: dict[str, Any]
    _write_lock: threading.RLock

    def embed_memories(self, memories: Sequence[Memory]) -> np.ndarray: ...
