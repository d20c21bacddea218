"""`memory_tool`: a fused-memory retriever as a LlamaIndex agent tool (`RetrieverTool`).

The tool's `ToolOutput.content` is what the LangChain tool shows the model: one memory per
paragraph as `[type, event time] text` (`fused_memory.adapters.memory_line`), or `NO_MEMORIES` when
nothing matched (it was empty content, which some providers refuse). `RetrieverTool` rendered
every node's LLM metadata instead, including the two chat turns indexed with a memory as its
context. `ToolOutput.raw_output` keeps the `NodeWithScore`s (ids, scores, explanations).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import MetadataMode
from llama_index.core.tools import RetrieverTool, ToolOutput

from fused_memory import ConfigurationError, QueryError
from fused_memory.adapters import DEFAULT_TOOL_DESCRIPTION, DEFAULT_TOOL_NAME, NO_MEMORIES, memory_line

__all__ = ["memory_tool", "MemoryTool", "NO_MEMORIES", "DEFAULT_TOOL_NAME", "DEFAULT_TOOL_DESCRIPTION"]


class MemoryTool(RetrieverTool):
    """A `RetrieverTool` that searches exactly the question. LlamaIndex's folds every argument into
    one text ("input is badge ID, k is 3"), so an empty or missing question still searched (for the
    words "input is") instead of meeting the query checks; other arguments are dropped, as the
    LangChain tool drops them."""

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return _as_memories(super().call(self._question(args, kwargs)))

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return _as_memories(await super().acall(self._question(args, kwargs)))

    def _question(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        """`input=...` (the tool's schema), else the one positional argument, else the one text
        argument under another name (agents sometimes write `query=...`)."""
        texts = [v for v in kwargs.values() if isinstance(v, str)]
        question: Any = None
        if "input" in kwargs:
            question = kwargs["input"]
        elif len(args) == 1 and not kwargs:
            question = args[0]
        elif not args and len(texts) == 1:
            question = texts[0]
        if not isinstance(question, str):
            raise QueryError(f"{self.metadata.get_name()} takes one question as text (input=...), "
                             f"got {args or kwargs!r}")
        return question


def _as_memories(out: ToolOutput) -> ToolOutput:
    nodes = out.raw_output or []
    content = "\n\n".join(memory_line(n.node.metadata.get("type"), n.node.metadata.get("event_at"),
                                       n.node.get_content(MetadataMode.NONE)) for n in nodes)
    return ToolOutput(content=content or NO_MEMORIES, tool_name=out.tool_name, raw_input=out.raw_input,
                      raw_output=out.raw_output)


def memory_tool(retriever: BaseRetriever, name: str = DEFAULT_TOOL_NAME,
                description: str = DEFAULT_TOOL_DESCRIPTION) -> MemoryTool:
    """A `MemoryTool` (a `RetrieverTool`) over `retriever` with the given name and description."""
    if not isinstance(retriever, BaseRetriever):  # e.g. LangChain's retriever of the same name
        raise ConfigurationError(f"memory_tool takes a LlamaIndex retriever, got {type(retriever).__module__}."
                                 f"{type(retriever).__name__} (for LangChain, import memory_tool from "
                                 "langchain_fused_memory)")
    return MemoryTool.from_defaults(retriever=retriever, name=name, description=description)
