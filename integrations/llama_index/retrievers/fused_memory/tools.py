"""Agent tools over a fused-memory store: `memory_tool` searches (a `RetrieverTool`),
`memory_write_tool` saves and `memory_delete_tool` deletes.

The search tool's `ToolOutput.content` is what the LangChain tool shows the model: one memory per
paragraph as `[type, event time] text` (`fused_memory.adapters.memory_line`; with `show_ids=True`
also `id=...`, which the delete tool takes), or `NO_MEMORIES` when nothing matched (it was empty
content, which some providers refuse). `RetrieverTool` rendered every node's LLM metadata instead,
including the two chat turns indexed with a memory as its context. `ToolOutput.raw_output` keeps
the `NodeWithScore`s (ids, scores, explanations).

The write and delete tools act on the store and namespace of the retriever they are built from,
and check the model's arguments as the LangChain tools do (`fused_memory.agent_writes`). A bad
argument is the tool's answer, a `ToolOutput` with `is_error=True` whose content names the
argument, whichever agent calls it; a backend that is down still raises. A save with a
`session_id` is indexed with that conversation's earlier memories as context.
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
from llama_index.core.tools import RetrieverTool, ToolMetadata, ToolOutput
from llama_index.core.tools.types import AsyncBaseTool
from pydantic import BaseModel

from fused_memory import ConfigurationError, InvalidMemory, Memory, QueryError, agent_writes
from fused_memory.adapters import DEFAULT_TOOL_DESCRIPTION, DEFAULT_TOOL_NAME, NO_MEMORIES, memory_line, writable_store
from fused_memory.agent_writes import (
    DELETE_TOOL_DESCRIPTION,
    DELETE_TOOL_NAME,
    WRITE_TOOL_DESCRIPTION,
    WRITE_TOOL_NAME,
    MemoryDeleteInput,
    MemoryWriteInput,
    refuse_unknown,
)

from .retrievers import FusedMemoryRetriever

__all__ = ["memory_tool", "memory_write_tool", "memory_delete_tool", "MemoryTool", "MemoryWriteTool",
           "MemoryDeleteTool", "NO_MEMORIES", "DEFAULT_TOOL_NAME", "DEFAULT_TOOL_DESCRIPTION"]


class MemoryTool(RetrieverTool):
    """A `RetrieverTool` that searches exactly the question. LlamaIndex's folds every argument into
    one text ("input is badge ID, k is 3"), so an empty or missing question still searched (for the
    words "input is") instead of meeting the query checks. The question is `input` (the tool's
    schema) or `query` (the LangChain tool's name for it, which agents write too); any other
    argument is refused by name, in the words of every tool (`agent_writes.refuse_unknown`), not
    dropped: a model that wrote `namepsace` must hear that it meant nothing. A question the core
    refuses (empty, too long) is the tool's answer (`is_error`), word for word what LangChain's tool
    answers. `show_ids`: each line also shows the memory's id."""

    show_ids: bool = False

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        try:
            question = self._question(args, kwargs)
            nodes = self._apply_node_postprocessors(self._retriever.retrieve(question), QueryBundle(question))
        except QueryError as exc:  # the model's mistake: its answer, as LangChain's tool gives it
            return self._refused(exc, args, kwargs)
        return _as_memories(self.metadata.get_name(), question, nodes, self.show_ids)

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        try:
            question = self._question(args, kwargs)
            nodes = await self._async_apply_node_postprocessors(await self._retriever.aretrieve(question),
                                                                QueryBundle(question))
        except QueryError as exc:
            return self._refused(exc, args, kwargs)
        return _as_memories(self.metadata.get_name(), question, nodes, self.show_ids)

    def _refused(self, error: QueryError, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToolOutput:
        return ToolOutput(content=str(error), tool_name=self.metadata.get_name(),
                          raw_input={"args": args, "kwargs": kwargs}, raw_output=None, is_error=True)

    def _question(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        """`input=...` (the tool's schema) or `query=...`, else the one positional argument; any
        other argument is refused by name."""
        name = self.metadata.get_name()
        try:
            refuse_unknown([k for k in kwargs if k != "query"], ("input",), name, error=QueryError)
        except QueryError as exc:
            raise QueryError(f"{exc}. Call this tool with one argument, input: the question to look up in "
                             "memory (a non-empty string).") from None
        if "input" in kwargs and "query" in kwargs:
            raise QueryError(f"{name} takes one question: give the question once, as input (or query), not both")
        question: Any = kwargs.get("input", kwargs.get("query"))
        if not kwargs and len(args) == 1:
            question = args[0]
        if not isinstance(question, str) or (args and kwargs):
            raise QueryError(f"{name} takes one question as text (input=...), got {args or kwargs!r}")
        return question


def _as_memories(tool_name: str, question: str, nodes: list[NodeWithScore], show_ids: bool = False) -> ToolOutput:
    """The nodes as the model reads them. The question is searched as it was asked: `RetrieverTool`
    searched it with two newlines appended, so its length check counted two more characters."""
    content = "\n\n".join(memory_line(n.node.metadata.get("type"), n.node.metadata.get("event_at"),
                                       n.node.get_content(MetadataMode.NONE), n.node.node_id if show_ids else None)
                           for n in nodes)
    return ToolOutput(content=content or NO_MEMORIES, tool_name=tool_name, raw_input={"input": question},
                      raw_output=nodes)


def memory_tool(retriever: BaseRetriever, name: str = DEFAULT_TOOL_NAME,
                description: str = DEFAULT_TOOL_DESCRIPTION, *, show_ids: bool = False) -> MemoryTool:
    """A `MemoryTool` (a `RetrieverTool`) over `retriever` with the given name and description;
    `show_ids`: each memory's line shows its id (for an agent that has `memory_delete_tool`)."""
    if not isinstance(retriever, BaseRetriever):  # e.g. LangChain's retriever of the same name
        raise ConfigurationError(f"memory_tool takes a LlamaIndex retriever, got {type(retriever).__module__}."
                                 f"{type(retriever).__name__} (for LangChain, import memory_tool from "
                                 "langchain_fused_memory)")
    tool = MemoryTool.from_defaults(retriever=retriever, name=name, description=description)
    assert isinstance(tool, MemoryTool)  # from_defaults builds `cls`
    tool.show_ids = show_ids
    return tool


# ---------------------------------------------------------------- writing
class _StoreTool(AsyncBaseTool):
    """A tool acting on one store and namespace whose arguments are `schema`'s fields, given by
    name (or the first one alone, positionally). The model's mistakes are its `ToolOutput`."""

    schema: type[BaseModel]

    def __init__(self, retriever: FusedMemoryRetriever, name: str, description: str) -> None:
        self.store, self.namespace = writable_store(retriever.store, name), retriever.namespace
        self._metadata = ToolMetadata(description=description, name=name, fn_schema=self.schema)

    @property
    def metadata(self) -> ToolMetadata:
        return self._metadata

    def _arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        names = list(self.schema.model_fields)
        if len(args) > 1 or (args and names[0] in kwargs):
            raise InvalidMemory(f"{self.metadata.get_name()} takes its arguments by name: {', '.join(names)}")
        agent_writes.refuse_unknown(kwargs, names, self.metadata.get_name())
        return {**({names[0]: args[0]} if args else {}), **kwargs}

    def _answer(self, content: str, raw: dict[str, Any], memory: Memory | None) -> ToolOutput:
        return ToolOutput(content=content, tool_name=self.metadata.get_name(), raw_input=raw,
                          raw_output=memory.to_json() if memory else None, is_error=memory is None)

    def _run(self, raw: dict[str, Any]) -> Memory:
        raise NotImplementedError

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        raw = {"args": args, "kwargs": kwargs}
        try:
            memory = self._run(self._arguments(args, kwargs))
        except (InvalidMemory, QueryError) as exc:
            return self._answer(str(exc), raw, None)
        return self._answer(self._said(memory), raw, memory)

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return await asyncio.to_thread(self.call, *args, **kwargs)

    def _said(self, memory: Memory) -> str:
        raise NotImplementedError


class MemoryWriteTool(_StoreTool):
    """Saves `text` (optional `type`, ISO `time`) in the retriever's store and namespace."""

    schema = MemoryWriteInput

    def __init__(self, retriever: FusedMemoryRetriever, name: str = WRITE_TOOL_NAME,
                 description: str = WRITE_TOOL_DESCRIPTION, session_id: str | None = None) -> None:
        super().__init__(retriever, name, description)
        self.session_id = session_id

    def _run(self, raw: dict[str, Any]) -> Memory:
        arguments = agent_writes.write_arguments(raw.get("text"), raw.get("type"), raw.get("time"))
        return agent_writes.remember(self.store, self.namespace, arguments, session_id=self.session_id)

    def _said(self, memory: Memory) -> str:
        return agent_writes.saved_answer(memory)


class MemoryDeleteTool(_StoreTool):
    """Deletes one memory of the retriever's namespace by `memory_id`."""

    schema = MemoryDeleteInput

    def _run(self, raw: dict[str, Any]) -> Memory:
        return agent_writes.forget(self.store, self.namespace, raw.get("memory_id"))

    def _said(self, memory: Memory) -> str:
        return agent_writes.forgotten_answer(memory)


def _target(retriever: object, factory: str) -> FusedMemoryRetriever:
    if not isinstance(retriever, FusedMemoryRetriever):
        raise ConfigurationError(f"{factory} takes a fused-memory LlamaIndex retriever (its store and namespace are "
                                 f"where memories go), got {type(retriever).__module__}.{type(retriever).__name__}")
    return retriever


def memory_write_tool(retriever: FusedMemoryRetriever, name: str = WRITE_TOOL_NAME,
                      description: str = WRITE_TOOL_DESCRIPTION, *, session_id: str | None = None) -> MemoryWriteTool:
    """A tool that saves what the model gives it in the retriever's store and namespace; its
    content tells the model what was stored (type, time, id), its `raw_output` is the memory as JSON."""
    return MemoryWriteTool(_target(retriever, "memory_write_tool"), name, description, session_id)


def memory_delete_tool(retriever: FusedMemoryRetriever, name: str = DELETE_TOOL_NAME,
                       description: str = DELETE_TOOL_DESCRIPTION) -> MemoryDeleteTool:
    """A tool that deletes one memory of the retriever's namespace by id (for "forget that")."""
    return MemoryDeleteTool(_target(retriever, "memory_delete_tool"), name, description)
