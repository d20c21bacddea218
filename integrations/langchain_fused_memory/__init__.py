"""fused-memory for LangChain and LangGraph: six native retrievers, agent tools to search, save and
delete memories, the query optimizer, and a LangGraph store.

    from langchain_fused_memory import EnsembleMemoryRetriever, FusedMemoryStore, memory_tool
    retriever = EnsembleMemoryRetriever(store=store, namespace="alice", k=5)
    graph = builder.compile(store=FusedMemoryStore(store))

Names load on first access (PEP 562): importing the package is free, and a missing langchain-core
(or langgraph, for `FusedMemoryStore`) surfaces as a clear error naming the extra to install only
when a class is used.
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
    "arm_retriever",
    "QueryOptimizerChain",
    "memory_tool",
    "memory_write_tool",
    "memory_delete_tool",
    "to_documents",
    "FusedMemoryStore",
]

_HOME = {
    "DenseMemoryRetriever": "retrievers",
    "BM25MemoryRetriever": "retrievers",
    "GraphMemoryRetriever": "retrievers",
    "TemporalMemoryRetriever": "retrievers",
    "TypeFilterMemoryRetriever": "retrievers",
    "EnsembleMemoryRetriever": "retrievers",
    "FusedMemoryRetriever": "retrievers",
    "arm_retriever": "retrievers",
    "to_documents": "retrievers",
    "QueryOptimizerChain": "optimizer",
    "memory_tool": "tools",
    "memory_write_tool": "tools",
    "memory_delete_tool": "tools",
    "FusedMemoryStore": "langgraph_store",
}

#: The extra that installs what a missing top-level package belongs to.
_EXTRAS = {"langchain_core": "langchain", "pydantic": "langchain", "langgraph": "langgraph"}

if TYPE_CHECKING:
    from .langgraph_store import FusedMemoryStore
    from .optimizer import QueryOptimizerChain
    from .retrievers import (
        BM25MemoryRetriever,
        DenseMemoryRetriever,
        EnsembleMemoryRetriever,
        FusedMemoryRetriever,
        GraphMemoryRetriever,
        TemporalMemoryRetriever,
        TypeFilterMemoryRetriever,
        arm_retriever,
        to_documents,
    )
    from .tools import memory_delete_tool, memory_tool, memory_write_tool


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        value = getattr(import_module(f".{module}", __name__), name)
    except ModuleNotFoundError as exc:
        from fused_memory.adapters import missing_extra

        error = missing_extra(exc, _EXTRAS)
        if error is exc:
            raise
        raise error from exc
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
