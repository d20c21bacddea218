"""fused-memory for LangChain: six native retrievers, an agent tool and the query optimizer.

    from langchain_fused_memory import EnsembleMemoryRetriever, memory_tool
    retriever = EnsembleMemoryRetriever(store=store, namespace="alice", k=5)

Names load on first access (PEP 562): importing the package is free, and a missing langchain-core
surfaces as a clear error naming the extra to install only when a class is used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = [
    "DenseMemoryRetriever",
    "BM25MemoryRetriever",
    "GraphMemoryRetriever",
    "TemporalMemoryRetriever",
    "TypeFilterMemoryRetriever",
    "EnsembleMemoryRetriever",
    "FusedMemoryRetriever",
    "QueryOptimizerChain",
    "memory_tool",
    "to_documents",
]

_HOME = {
    "DenseMemoryRetriever": "retrievers",
    "BM25MemoryRetriever": "retrievers",
    "GraphMemoryRetriever": "retrievers",
    "TemporalMemoryRetriever": "retrievers",
    "TypeFilterMemoryRetriever": "retrievers",
    "EnsembleMemoryRetriever": "retrievers",
    "FusedMemoryRetriever": "retrievers",
    "to_documents": "retrievers",
    "QueryOptimizerChain": "optimizer",
    "memory_tool": "tools",
}

if TYPE_CHECKING:
    from .optimizer import QueryOptimizerChain
    from .retrievers import (
        BM25MemoryRetriever,
        DenseMemoryRetriever,
        EnsembleMemoryRetriever,
        FusedMemoryRetriever,
        GraphMemoryRetriever,
        TemporalMemoryRetriever,
        TypeFilterMemoryRetriever,
        to_documents,
    )
    from .tools import memory_tool


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        value = getattr(import_module(f".{module}", __name__), name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("langchain_core", "pydantic"):
            from fused_memory import MissingDependency
            raise MissingDependency('langchain-core is not installed: pip install "fused-memory[langchain]"') from exc
        raise
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
