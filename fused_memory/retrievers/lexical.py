"""The BM25 arm: exact identifiers, rare names, codes."""

from __future__ import annotations

from ..results import Hit
from .base import ArmRequest, LexicalSource

__all__ = ["LexicalRetriever"]


class LexicalRetriever:
    """BM25 (rank-bm25 scoring over candidate documents) inside the request's namespace and types."""

    name = "lexical"

    def __init__(self, source: LexicalSource) -> None:
        self.source = source

    def search(self, request: ArmRequest) -> list[Hit]:
        ranked = self.source.lexical_search(request.namespace, request.query.text, request.k, request.types)
        return [Hit(mid, score) for mid, score in ranked]
