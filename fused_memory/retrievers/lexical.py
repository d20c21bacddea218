"""The BM25 arm: exact identifiers, rare names, codes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..results import Hit
from .base import ArmRequest

if TYPE_CHECKING:
    from ..store.memory_store import MemoryStore

__all__ = ["LexicalRetriever"]


class LexicalRetriever:
    """BM25 (rank-bm25 scoring over candidate documents) inside the request's namespace and types."""

    name = "lexical"

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def search(self, request: ArmRequest) -> list[Hit]:
        self.store._ensure_open()
        ranked = self.store.lexical.search(request.namespace, request.query.text, request.k, request.types)
        return [Hit(mid, score) for mid, score in ranked]
