"""A LangGraph agent whose long-term memory is fused-memory, written and read by LangMem's tools.

The agent is LangChain's current prebuilt (`langchain.agents.create_agent`, the successor of
LangGraph's `create_react_agent`) compiled with `store=FusedMemoryStore(...)`. LangMem's
`manage_memory` tool saves in one conversation (thread 1); in a new conversation (thread 2, which
shares no messages with thread 1) LangMem's `search_memory` tool finds it, ranked by the fused
ensemble. The namespace ("memories", "{langgraph_user_id}") is filled from the run's config, as
LangMem does, and is the fused-memory namespace "memories.u1".

Runs offline: the chat model is a scripted stand-in for a real tool-calling LLM (it saves what the
user asks it to remember, searches memory for a question, and answers with the tool's result); the
store, the embedder, the graph runtime, the checkpointer and LangMem's tools are the real ones.

    python examples/langgraph_langmem_agent.py
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langmem import create_manage_memory_tool, create_search_memory_tool

from fused_memory import MemoryStore
from langchain_fused_memory import FusedMemoryStore

__all__ = ["main", "ScriptedMemoryModel", "REMEMBER", "QUESTION"]

REMEMBER = ("Remember: my dog is called Rex.", "Remember: I take my coffee as a dark roast, no sugar.")
QUESTION = "How do I like my coffee?"
NAMESPACE = ("memories", "{langgraph_user_id}")


class ScriptedMemoryModel(BaseChatModel):
    """A deterministic stand-in for a tool-calling LLM: "Remember: X" calls LangMem's
    `manage_memory` with X, any other question calls `search_memory` with it, and a tool's result
    is answered from (the top memory found, or the save's confirmation)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedMemoryModel:  # type: ignore[override]
        return self  # the script knows the tools by name

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=_answer(last))
        elif str(last.content).startswith("Remember:"):
            memory = str(last.content).removeprefix("Remember:").strip()
            reply = AIMessage(content="", tool_calls=[{"name": "manage_memory", "id": "save-1",
                                                       "args": {"content": memory, "action": "create"}}])
        else:
            reply = AIMessage(content="", tool_calls=[{"name": "search_memory", "id": "search-1",
                                                       "args": {"query": str(last.content), "limit": 3}}])
        return ChatResult(generations=[ChatGeneration(message=reply)])

    @property
    def _llm_type(self) -> str:
        return "scripted-memory-model"


def _answer(result: ToolMessage) -> str:
    if result.name != "search_memory":
        return f"Done: {result.content}."
    found = json.loads(str(result.content))
    return f"From your memory: {found[0]['value']['content']}" if found else "I have no memory of that."


def main(path: str | None = None) -> dict[str, Any]:
    """Thread 1 saves two memories, thread 2 finds the one it asks about; print and return both
    transcripts and the store's items."""
    with tempfile.TemporaryDirectory(prefix="fused-memory-example-") as tmp, MemoryStore.embedded(path or tmp) as mem:
        store = FusedMemoryStore(mem)
        tools = [create_manage_memory_tool(namespace=NAMESPACE), create_search_memory_tool(namespace=NAMESPACE)]
        agent = create_agent(ScriptedMemoryModel(), tools=tools, store=store, checkpointer=InMemorySaver())
        runs = {}
        for thread, text in [*(("1", r) for r in REMEMBER), ("2", QUESTION)]:
            config = {"configurable": {"thread_id": thread, "langgraph_user_id": "u1"}}
            runs[thread] = agent.invoke({"messages": [HumanMessage(text)]}, config)["messages"]  # the thread so far
        items = store.search(("memories", "u1"), query="coffee")
    for thread, messages in runs.items():
        print(f"thread {thread}:")
        for m in messages:
            print(f"  {m.type:>5}: {m.content or m.tool_calls}")  # type: ignore[attr-defined]
    print("store:", [(tuple(i.namespace), i.value, round(i.score or 0.0, 4)) for i in items])
    return {"thread_1": runs["1"], "thread_2": runs["2"], "answer": runs["2"][-1].content, "items": items}


if __name__ == "__main__":
    main()
