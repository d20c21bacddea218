"""`memory_tool`: a fused-memory retriever as an agent tool.

A `StructuredTool` with `response_format="content_and_artifact"`, built as LangChain's own
`create_retriever_tool` builds one, with three differences an agent needs from a *memory* tool:

* the content the model reads gives each memory its type and, for an event, when it happened
  (`[event, 2026-03-18T17:00:00+00:00] Lunch with Tom`): "when did I...?" is half of what agents ask
  a memory, and the bare text cannot answer it (the `ToolMessage.artifact` still carries the
  `Document`s with ids, scores and explanations, for the program);
* no match is said in words (`NO_MEMORIES`), not as empty content, which some providers refuse
  and every model reads ambiguously;
* a query the core refuses (empty, over the length limit, a lone surrogate) and arguments that do
  not fit the schema are the model's mistakes, so they come back to the model as an error
  `ToolMessage` it can correct (`handle_tool_error`, `handle_validation_error`), as LlamaIndex's
  tools do, instead of ending the agent's run. A backend that is down still raises: the model
  cannot fix that, the program must know.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.callbacks import Callbacks  # noqa: TC002 - StructuredTool reads the annotations
from langchain_core.documents import Document  # noqa: TC002
from langchain_core.runnables import Runnable
from langchain_core.tools import StructuredTool, ToolException
from langchain_core.tools.retriever import RetrieverInput

from fused_memory import ConfigurationError, QueryError, adapters
from fused_memory.adapters import DEFAULT_TOOL_DESCRIPTION, DEFAULT_TOOL_NAME, NO_MEMORIES

__all__ = ["memory_tool", "memory_line", "NO_MEMORIES", "DEFAULT_TOOL_NAME", "DEFAULT_TOOL_DESCRIPTION"]


def memory_line(doc: Document) -> str:
    """One memory as the model reads it: `[type, event time] text` (`adapters.memory_line`)."""
    return adapters.memory_line(doc.metadata.get("type"), doc.metadata.get("event_at"), doc.page_content)


def _content(docs: Sequence[Document]) -> tuple[str, list[Document]]:
    return ("\n\n".join(memory_line(d) for d in docs) or NO_MEMORIES), list(docs)


def _bad_arguments(error: Exception) -> str:
    """What the model reads when its call does not fit the schema (LangChain's default is only
    "Tool input validation error", which does not say how to call the tool)."""
    return "Call this tool with one argument, query: the text to look up in memory (a non-empty string)."


def memory_tool(retriever: Runnable[str, list[Document]], name: str = DEFAULT_TOOL_NAME,
                description: str = DEFAULT_TOOL_DESCRIPTION) -> StructuredTool:
    """A tool whose content is the memories, one per paragraph, and whose artifact is the Documents."""
    if not isinstance(retriever, Runnable):  # e.g. LlamaIndex's retriever of the same name; a
        # configurable_fields / bind / with_config wrapper of ours is a Runnable and is welcome
        raise ConfigurationError(f"memory_tool takes a LangChain retriever, got {type(retriever).__module__}."
                                 f"{type(retriever).__name__} (for LlamaIndex, import memory_tool from "
                                 "llama_index.retrievers.fused_memory)")

    def search(query: str, callbacks: Callbacks = None) -> tuple[str, list[Document]]:
        try:
            return _content(retriever.invoke(query, config={"callbacks": callbacks}))
        except QueryError as exc:
            raise ToolException(str(exc)) from exc

    async def asearch(query: str, callbacks: Callbacks = None) -> tuple[str, list[Document]]:
        try:
            return _content(await retriever.ainvoke(query, config={"callbacks": callbacks}))
        except QueryError as exc:
            raise ToolException(str(exc)) from exc

    return StructuredTool(name=name, description=description, func=search, coroutine=asearch,
                          args_schema=RetrieverInput, response_format="content_and_artifact",
                          handle_tool_error=True, handle_validation_error=_bad_arguments)
