"""fused-memory for LlamaIndex: six native retrievers and an agent tool.

    from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever, memory_tool
    retriever = EnsembleMemoryRetriever(store, namespace="alice", k=5)

`llama_index` and `llama_index.retrievers` are namespace packages (no `__init__.py` in this
distribution), so this merges with llama-index-core's `llama_index`.
"""

from __future__ import annotations

from .retrievers import (
                         BM25MemoryRetriever,
                         DenseMemoryRetriever,
                         EnsembleMemoryRetriever,
                         FusedMemoryRetriever,
                         GraphMemoryRetriever,
                         MemoryNode,
                         TemporalMemoryRetriever,
                         TypeFilterMemoryRetriever,
                         to_nodes,
)
from .tools import MemoryTool, memory_tool

__all__ = [
    "DenseMemoryRetriever",
    "BM25MemoryRetriever",
    "GraphMemoryRetriever",
    "TemporalMemoryRetriever",
    "TypeFilterMemoryRetriever",
    "EnsembleMemoryRetriever",
    "FusedMemoryRetriever",
    "memory_tool",
    "MemoryTool",
    "MemoryNode",
    "to_nodes",
]
