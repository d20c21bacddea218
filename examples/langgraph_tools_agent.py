"""A LangGraph agent that saves and searches its memory with fused-memory's own tools.

`memory_write_tool` saves what the model gives it (text, optional type and ISO time) and
`memory_tool` searches, both over one `EnsembleMemoryRetriever` (its store and namespace). The
agent is LangChain's current prebuilt (`langchain.agents.create_agent`) with a checkpointer, so
thread 1 and thread 2 are separate conversations; the save in thread 1 is indexed with its
conversation (the thread id is its session), and the search in thread 2 finds it. The graph is
also compiled with `store=FusedMemoryStore(...)`: the same memories are LangGraph items under
("memories", "u1"), for any node or LangMem tool that reads the store.

Runs offline: the chat model is a scripted stand-in for a real tool-calling LLM (it saves what the
user asks it to remember, searches memory for a question, and answers with the tool's result); the
store, the embedder, the graph runtime and the tools are the real ones.

    python examples/langgraph_tools_agent.py
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from fused_memory import MemoryStore
from langchain_fused_memory import EnsembleMemoryRetriever, FusedMemoryStore, memory_tool, memory_write_tool

__all__ = ["main", "ScriptedToolModel", "REMEMBER", "QUESTION"]

REMEMBER = (("I moved to Munich in March.", "event", "2024-03-01T09:00:00+01:00"),
            ("I prefer window seats on trains.", "preference", None))
QUESTION = "Where did I move to?"


class ScriptedToolModel(BaseChatModel):
    """A deterministic stand-in for a tool-calling LLM: "Remember: X" calls `save_memory` (with the
    type and time a real model would read from X, scripted in `saves`), a question calls
    `search_memory`, and the search's first memory is the answer."""

    saves: dict[str, tuple[str, str | None, str | None]] = {}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:  # type: ignore[override]
        return self  # the script knows the tools by name

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        last = messages[-1]
        text = str(last.content)
        if isinstance(last, ToolMessage) and last.name == "save_memory":
            reply = AIMessage(content="I'll remember that.")
        elif isinstance(last, ToolMessage):
            reply = AIMessage(content=f"From your memory: {text.splitlines()[0]}")
        elif text.startswith("Remember:"):
            memory, kind, when = self.saves[text]
            reply = AIMessage(content="", tool_calls=[{"name": "save_memory", "id": "save-1",
                                                       "args": {"text": memory, "type": kind, "time": when}}])
        else:
            reply = AIMessage(content="", tool_calls=[{"name": "search_memory", "id": "search-1",
                                                       "args": {"query": text}}])
        return ChatResult(generations=[ChatGeneration(message=reply)])

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-model"


def main(path: str | None = None) -> dict[str, Any]:
    """Thread 1 saves two memories, thread 2 finds the one it asks about; print and return the
    transcripts, the stored memories and the LangGraph store's view of them."""
    with tempfile.TemporaryDirectory(prefix="fused-memory-example-") as tmp, MemoryStore.embedded(path or tmp) as mem:
        retriever = EnsembleMemoryRetriever(store=mem, namespace="memories.u1", k=3)
        tools = [memory_write_tool(retriever), memory_tool(retriever)]
        model = ScriptedToolModel(saves={f"Remember: {text}": (text, kind, when) for text, kind, when in REMEMBER})
        agent = create_agent(model, tools=tools, store=FusedMemoryStore(mem), checkpointer=InMemorySaver())
        runs: dict[str, list[BaseMessage]] = {}
        for thread, text in [*(("1", f"Remember: {t}") for t, _, _ in REMEMBER), ("2", QUESTION)]:
            runs[thread] = agent.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}})[
                "messages"]
        stored = mem.memories("memories.u1")
        items = FusedMemoryStore(mem).search(("memories", "u1"))
    for thread, messages in runs.items():
        print(f"thread {thread}:")
        for m in messages:
            print(f"  {m.type:>5}: {m.content or m.tool_calls}")  # type: ignore[attr-defined]
    print("stored:", [(m.text, m.type.value if m.type else None, m.session_id, m.context) for m in stored])
    return {"thread_1": runs["1"], "thread_2": runs["2"], "answer": runs["2"][-1].content, "stored": stored,
            "items": items}


if __name__ == "__main__":
    main()
