"""`memory_tool`: a fused-memory retriever as an agent tool.

Built on LangChain's own `create_retriever_tool` with `response_format="content_and_artifact"`:
the model sees the memories' text, and the `ToolMessage.artifact` carries the `Document`s with
their ids, scores and explanations for the program (not the model) to use.
"""

from __future__ import annotations

from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import StructuredTool, create_retriever_tool

from fused_memory.adapter_support import DEFAULT_TOOL_DESCRIPTION, DEFAULT_TOOL_NAME

__all__ = ["memory_tool", "DEFAULT_TOOL_NAME", "DEFAULT_TOOL_DESCRIPTION"]


def memory_tool(retriever: BaseRetriever, name: str = DEFAULT_TOOL_NAME,
                description: str = DEFAULT_TOOL_DESCRIPTION) -> StructuredTool:
    """A tool whose content is the memories' text and whose artifact is the list of Documents."""
    return create_retriever_tool(retriever, name, description, response_format="content_and_artifact")
