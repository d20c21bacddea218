"""`memory_tool`: a fused-memory retriever as an agent tool.

Built on LangChain's own `create_retriever_tool` with `response_format="content_and_artifact"`:
the model sees the memories' text, and the `ToolMessage.artifact` carries the `Document`s with
their ids, scores and explanations for the program (not the model) to use.

A query the core refuses (empty, over the length limit, a lone surrogate) is the model's mistake,
so it comes back to the model as an error `ToolMessage` it can correct (`ToolException` with
`handle_tool_error`), as LlamaIndex's tools do, instead of ending the agent's run. A backend that
is down still raises: the model cannot fix that, the program must know.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import StructuredTool, ToolException, create_retriever_tool

from fused_memory.adapter_support import DEFAULT_TOOL_DESCRIPTION, DEFAULT_TOOL_NAME
from fused_memory.errors import QueryError

__all__ = ["memory_tool", "DEFAULT_TOOL_NAME", "DEFAULT_TOOL_DESCRIPTION"]


def _sync(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)  # the signature LangChain inspects (`callbacks`, a config parameter)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except QueryError as exc:
            raise ToolException(str(exc)) from exc
    return run


def _async(func: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(func)
    async def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return await func(*args, **kwargs)
        except QueryError as exc:
            raise ToolException(str(exc)) from exc
    return run


def memory_tool(retriever: BaseRetriever, name: str = DEFAULT_TOOL_NAME,
                description: str = DEFAULT_TOOL_DESCRIPTION) -> StructuredTool:
    """A tool whose content is the memories' text and whose artifact is the list of Documents."""
    tool = create_retriever_tool(retriever, name, description, response_format="content_and_artifact")
    assert tool.func is not None and tool.coroutine is not None
    tool.func, tool.coroutine = _sync(tool.func), _async(tool.coroutine)
    tool.handle_tool_error = True
    return tool
