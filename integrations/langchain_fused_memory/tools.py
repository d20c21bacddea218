"""Agent tools over a fused-memory store: `memory_tool` searches, `memory_write_tool` saves and
`memory_delete_tool` deletes.

`memory_tool` is a `StructuredTool` with `response_format="content_and_artifact"`, built as
LangChain's own `create_retriever_tool` builds one, with three differences an agent needs from a
*memory* tool:

* the content the model reads gives each memory its type and, for an event, when it happened
  (`[event, 2026-03-18T17:00:00+00:00] Lunch with Tom`): "when did I...?" is half of what agents ask
  a memory, and the bare text cannot answer it (the `ToolMessage.artifact` still carries the
  `Document`s with ids, scores and explanations, for the program); with `show_ids=True` each line
  also carries the memory's id, which `memory_delete_tool` takes;
* no match is said in words (`NO_MEMORIES`), not as empty content, which some providers refuse
  and every model reads ambiguously;
* a query the core refuses (empty, over the length limit, a lone surrogate) and arguments that do
  not fit the schema, an argument it does not have included (`MemorySearchInput`; LangChain's
  `RetrieverInput` dropped it), are the model's mistakes, so they come back to the model as an error
  `ToolMessage` it can correct (`handle_tool_error`, `handle_validation_error`), in the words of the
  write tools and of LlamaIndex's, instead of ending the agent's run. A backend that is down still
  raises: the model cannot fix that, the program must know.

The write and delete tools act on the store and namespace of the retriever they are built from,
so what they save is what `memory_tool` over the same retriever finds. They check the model's
arguments in `fused_memory.agent_writes` (shared with LlamaIndex): a bad one is the tool's answer
(an error `ToolMessage` naming the argument), never an exception that ends the run. A save in a
known conversation (`session_id=`, else the `thread_id` LangGraph puts in the run's config) is
indexed with that conversation's earlier memories as context, as `conversation_context` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import Callbacks  # noqa: TC002 - StructuredTool reads the annotations
from langchain_core.documents import Document  # noqa: TC002
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fused_memory import ConfigurationError, InvalidMemory, Memory, MemoryStore, QueryError, adapters, agent_writes
from fused_memory.adapters import DEFAULT_TOOL_DESCRIPTION, DEFAULT_TOOL_NAME, NO_MEMORIES, writable_store
from fused_memory.agent_writes import (
    DELETE_TOOL_DESCRIPTION,
    DELETE_TOOL_NAME,
    WRITE_TOOL_DESCRIPTION,
    WRITE_TOOL_NAME,
    MemoryDeleteInput,
    MemoryWriteInput,
)

from .retrievers import FusedMemoryRetriever

__all__ = ["memory_tool", "memory_write_tool", "memory_delete_tool", "memory_line", "MemorySearchInput",
           "MemoryWriteInput", "MemoryDeleteInput", "NO_MEMORIES", "DEFAULT_TOOL_NAME", "DEFAULT_TOOL_DESCRIPTION"]


def memory_line(doc: Document, show_id: bool = False) -> str:
    """One memory as the model reads it: `[type, event time] text`, with `id=...` when `show_id`
    (`adapters.memory_line`)."""
    return adapters.memory_line(doc.metadata.get("type"), doc.metadata.get("event_at"), doc.page_content,
                                doc.id if show_id else None)


def _content(docs: Sequence[Document], show_ids: bool = False) -> tuple[str, list[Document]]:
    return ("\n\n".join(memory_line(d, show_ids) for d in docs) or NO_MEMORIES), list(docs)


class MemorySearchInput(BaseModel):
    """The argument of `memory_tool`, as the model sees it, and no other: LangChain's
    `RetrieverInput` drops what it does not know, so a model that wrote `namepsace` was answered
    from the retriever's namespace without a word (`agent_writes.refuse_unknown` names it)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="query to look up in retriever")


def _bad_search(name: str) -> Callable[[Exception], str]:
    """What the model reads when its call does not fit the schema: an argument the tool does not
    have, in the words every tool uses, then how to call it (LangChain's default is only "Tool input
    validation error", which does not say how)."""
    def said(error: Exception) -> str:
        return (_schema_errors(error, name, MemorySearchInput)
                + "Call this tool with one argument, query: the text to look up in memory (a non-empty string).")
    return said


def memory_tool(retriever: Runnable[str, list[Document]], name: str = DEFAULT_TOOL_NAME,
                description: str = DEFAULT_TOOL_DESCRIPTION, *, show_ids: bool = False) -> StructuredTool:
    """A tool whose content is the memories, one per paragraph, and whose artifact is the Documents.
    `show_ids`: each line also shows the memory's id (for an agent that has `memory_delete_tool`)."""
    if not isinstance(retriever, Runnable):  # e.g. LlamaIndex's retriever of the same name; a
        # configurable_fields / bind / with_config wrapper of ours is a Runnable and is welcome
        raise ConfigurationError(f"memory_tool takes a LangChain retriever, got {type(retriever).__module__}."
                                 f"{type(retriever).__name__} (for LlamaIndex, import memory_tool from "
                                 "llama_index.retrievers.fused_memory)")

    def search(query: str, callbacks: Callbacks = None) -> tuple[str, list[Document]]:
        try:
            return _content(retriever.invoke(query, config={"callbacks": callbacks}), show_ids)
        except QueryError as exc:
            raise ToolException(str(exc)) from exc

    async def asearch(query: str, callbacks: Callbacks = None) -> tuple[str, list[Document]]:
        try:
            return _content(await retriever.ainvoke(query, config={"callbacks": callbacks}), show_ids)
        except QueryError as exc:
            raise ToolException(str(exc)) from exc

    return StructuredTool(name=name, description=description, func=search, coroutine=asearch,
                          args_schema=MemorySearchInput, response_format="content_and_artifact",
                          handle_tool_error=True, handle_validation_error=_bad_search(name))


# ---------------------------------------------------------------- writing
def _target(retriever: object, factory: str) -> FusedMemoryRetriever:
    if not isinstance(retriever, FusedMemoryRetriever):
        raise ConfigurationError(f"{factory} takes a fused-memory LangChain retriever (its store and namespace are "
                                 f"where memories go), got {type(retriever).__module__}.{type(retriever).__name__}")
    writable_store(retriever.store, factory)  # refused now, not at the model's first save
    return retriever


def _store(target: FusedMemoryRetriever, factory: str) -> MemoryStore:
    """The store a call writes to, read when the call runs (as the namespace is)."""
    return writable_store(target.store, factory)


def _session(session_id: str | None, config: RunnableConfig | None) -> str | None:
    """The conversation a save belongs to: the tool's own `session_id`, else LangGraph's thread."""
    if session_id is not None:
        return session_id
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)


def _write_answer(memory: Memory) -> tuple[str, dict[str, Any]]:
    return agent_writes.saved_answer(memory), memory.to_json()


def _schema_errors(error: Exception, name: str, schema: type[BaseModel]) -> str:
    """Which argument did not fit the schema, as pydantic says it ("type: Input should be a valid
    string"); an argument the schema does not have, as `agent_writes.refuse_unknown` says it for
    both frameworks ("unknown argument 'event_at': save_memory takes text, type, time")."""
    if not isinstance(error, ValidationError):
        return ""
    said = []
    unknown = [str(e["loc"][0]) for e in error.errors() if e["type"] == "extra_forbidden" and e["loc"]]
    try:
        agent_writes.refuse_unknown(unknown, tuple(schema.model_fields), name)
    except InvalidMemory as exc:
        said.append(str(exc))
    said += [f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in error.errors()
             if e["type"] != "extra_forbidden"]
    return "; ".join(said) + ". "


def _bad_write(name: str) -> Callable[[Exception], str]:
    def said(error: Exception) -> str:
        return (_schema_errors(error, name, MemoryWriteInput) + "Call this tool with text (a non-empty statement to "
                "remember) and optionally type (fact, preference, event or entity) and time (ISO 8601 with a zone).")
    return said


def _bad_delete(name: str) -> Callable[[Exception], str]:
    def said(error: Exception) -> str:
        return (_schema_errors(error, name, MemoryDeleteInput)
                + "Call this tool with memory_id: the id of one memory (shown as id=...).")
    return said


def memory_write_tool(retriever: FusedMemoryRetriever, name: str = WRITE_TOOL_NAME,
                      description: str = WRITE_TOOL_DESCRIPTION, *, session_id: str | None = None) -> StructuredTool:
    """A tool that saves what the model gives it (`text`, optional `type` and ISO `time`) in the
    retriever's store and namespace. Its content tells the model what was stored (type, time, id);
    its artifact is the stored memory as JSON. A bad argument comes back as an error `ToolMessage`."""
    target = _target(retriever, "memory_write_tool")

    def save(text: str, type: str | None = None, time: str | None = None,
             config: RunnableConfig = None) -> tuple[str, dict[str, Any]]:  # type: ignore[assignment]
        try:
            arguments = agent_writes.write_arguments(text, type, time)
            return _write_answer(agent_writes.remember(_store(target, "memory_write_tool"), target.namespace, arguments,
                                                       session_id=_session(session_id, config)))
        except (InvalidMemory, QueryError) as exc:
            raise ToolException(str(exc)) from exc

    async def asave(text: str, type: str | None = None, time: str | None = None,
                    config: RunnableConfig = None) -> tuple[str, dict[str, Any]]:  # type: ignore[assignment]
        try:
            arguments = agent_writes.write_arguments(text, type, time)
            return _write_answer(await agent_writes.aremember(_store(target, "memory_write_tool"), target.namespace,
                                                              arguments, session_id=_session(session_id, config)))
        except (InvalidMemory, QueryError) as exc:
            raise ToolException(str(exc)) from exc

    return StructuredTool(name=name, description=description, func=save, coroutine=asave,
                          args_schema=MemoryWriteInput, response_format="content_and_artifact",
                          handle_tool_error=True, handle_validation_error=_bad_write(name))


def memory_delete_tool(retriever: FusedMemoryRetriever, name: str = DELETE_TOOL_NAME,
                       description: str = DELETE_TOOL_DESCRIPTION) -> StructuredTool:
    """A tool that deletes one memory of the retriever's namespace by id (for "forget that"). An id
    the namespace does not hold comes back to the model as an error `ToolMessage`."""
    target = _target(retriever, "memory_delete_tool")

    def delete(memory_id: str) -> tuple[str, dict[str, Any]]:
        try:
            gone = agent_writes.forget(_store(target, "memory_delete_tool"), target.namespace, memory_id)
        except (InvalidMemory, QueryError) as exc:
            raise ToolException(str(exc)) from exc
        return agent_writes.forgotten_answer(gone), gone.to_json()

    async def adelete(memory_id: str) -> tuple[str, dict[str, Any]]:
        try:
            gone = await agent_writes.aforget(_store(target, "memory_delete_tool"), target.namespace, memory_id)
        except (InvalidMemory, QueryError) as exc:
            raise ToolException(str(exc)) from exc
        return agent_writes.forgotten_answer(gone), gone.to_json()

    return StructuredTool(name=name, description=description, func=delete, coroutine=adelete,
                          args_schema=MemoryDeleteInput, response_format="content_and_artifact",
                          handle_tool_error=True, handle_validation_error=_bad_delete(name))
