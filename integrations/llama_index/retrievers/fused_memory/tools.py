"""`memory_tool`: a fused-memory retriever as a LlamaIndex agent tool (`RetrieverTool`).

The tool's `ToolOutput.content` is the memories' text; `ToolOutput.raw_output` keeps the
`NodeWithScore`s (ids, scores, explanations) for the program.
"""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.tools import RetrieverTool

from fused_memory.adapter_support import DEFAULT_TOOL_DESCRIPTION, DEFAULT_TOOL_NAME

__all__ = ["memory_tool", "DEFAULT_TOOL_NAME", "DEFAULT_TOOL_DESCRIPTION"]


def memory_tool(retriever: BaseRetriever, name: str = DEFAULT_TOOL_NAME,
                description: str = DEFAULT_TOOL_DESCRIPTION) -> RetrieverTool:
    """A `RetrieverTool` over `retriever` with the given name and description."""
    return RetrieverTool.from_defaults(retriever=retriever, name=name, description=description)
