"""langchain-tests' `RetrieversIntegrationTests`, unmodified, for all six LangChain retrievers.

The suite builds retrievers from `retriever_constructor_params`, a property, so the session's
seeded store is handed to each test instance by an autouse fixture before the suite's own
`retriever` fixture runs. The example query reaches >= 3 memories through every arm (an entity for
the graph, "last week" for the temporal window, "did I" for the event type hint).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests

from fused_memory.store.memory_store import MemoryStore
from langchain_fused_memory import (
    BM25MemoryRetriever,
    DenseMemoryRetriever,
    EnsembleMemoryRetriever,
    GraphMemoryRetriever,
    TemporalMemoryRetriever,
    TypeFilterMemoryRetriever,
)

from ._seed import NOW, NS, QUERY


class _OverSeededStore(RetrieversIntegrationTests):
    """Binds the seeded store; subclasses name the retriever class."""

    _store: MemoryStore

    @pytest.fixture(autouse=True)
    def _bind_store(self, seeded_store: MemoryStore) -> None:
        self._store = seeded_store

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": self._store, "namespace": NS, "now": NOW, "k": 4}

    @property
    def retriever_query_example(self) -> str:
        return QUERY


class TestDenseMemoryRetriever(_OverSeededStore):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return DenseMemoryRetriever


class TestBM25MemoryRetriever(_OverSeededStore):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return BM25MemoryRetriever


class TestGraphMemoryRetriever(_OverSeededStore):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return GraphMemoryRetriever


class TestTemporalMemoryRetriever(_OverSeededStore):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return TemporalMemoryRetriever


class TestTypeFilterMemoryRetriever(_OverSeededStore):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return TypeFilterMemoryRetriever


class TestEnsembleMemoryRetriever(_OverSeededStore):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return EnsembleMemoryRetriever
