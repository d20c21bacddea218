"""fused-memory for LlamaIndex: six native retrievers, agent tools to search, save and delete
memories, and a long-term memory block for `llama_index.core.memory.Memory`.

    from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever, FusedMemoryBlock, memory_tool
    retriever = EnsembleMemoryRetriever(store, namespace="alice", k=5)
    memory = Memory.from_defaults(memory_blocks=[FusedMemoryBlock(store=store, namespace="alice")])

`llama_index` and `llama_index.retrievers` are namespace packages (no `__init__.py` in this
distribution), so this merges with llama-index-core's `llama_index`.
"""

from __future__ import annotations

try:
    import llama_index.core  # noqa: F401 - the extra this package needs, named if it is missing
except ModuleNotFoundError as _exc:
    from fused_memory.adapters import missing_extra

    _error = missing_extra(_exc, {"llama_index.core": "llama-index"})
    if _error is _exc:
        raise
    raise _error from _exc

from .memory_block import FusedMemoryBlock
from .retrievers import (
                         BM25MemoryRetriever,
                         DenseMemoryRetriever,
                         EnsembleMemoryRetriever,
                         FusedMemoryRetriever,
                         GraphMemoryRetriever,
                         MemoryNode,
                         TemporalMemoryRetriever,
                         TypeFilterMemoryRetriever,
                         arm_retriever,
                         to_nodes,
)
from .tools import (
                         MemoryDeleteTool,
                         MemoryTool,
                         MemoryWriteTool,
                         memory_delete_tool,
                         memory_tool,
                         memory_write_tool,
)

__all__ = [
    "DenseMemoryRetriever",
    "BM25MemoryRetriever",
    "GraphMemoryRetriever",
    "TemporalMemoryRetriever",
    "TypeFilterMemoryRetriever",
    "EnsembleMemoryRetriever",
    "FusedMemoryRetriever",
    "arm_retriever",
    "memory_tool",
    "memory_write_tool",
    "memory_delete_tool",
    "MemoryTool",
    "MemoryWriteTool",
    "MemoryDeleteTool",
    "FusedMemoryBlock",
    "MemoryNode",
    "to_nodes",
]
