"""A LangGraph agent whose memory is `fused-memory mcp`, reached over the Model Context Protocol.

The server runs as a subprocess over stdio (as Claude Desktop or Cursor would launch it), for the
namespace "alice"; `langchain-mcp-adapters` loads its tools (search_memory, save_memory,
delete_memory, list_memories) into LangChain tools, and LangChain's prebuilt agent calls them. One
session serves the whole run (`MultiServerMCPClient.session`): `get_tools()` alone would start a
server per call. Thread 1 saves two memories, thread 2 asks a question and the search finds the
answer; a call with a misspelled argument comes back to the model as an error it can correct.

Runs offline: the chat model is a scripted stand-in for a real tool-calling LLM (it saves what it
is asked to remember, searches for a question, answers with the search's first line); the server,
the store, the embedder, the MCP client and the agent runtime are the real ones.

    pip install "fused-memory[mcp,langgraph]" langchain-mcp-adapters
    python examples/mcp_agent.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from langgraph.checkpoint.memory import InMemorySaver

__all__ = ["main", "amain", "ScriptedToolModel", "REMEMBER", "QUESTION", "TYPO"]

REMEMBER = (("I moved to Munich in March.", "event", "2024-03-01T09:00:00+01:00"),
            ("I prefer window seats on trains.", "preference", None))
QUESTION = "Where did I move to?"
TYPO = "Search with a typo"


class ScriptedToolModel(BaseChatModel):
    """A deterministic stand-in for a tool-calling LLM (it supports `bind_tools`): "Remember: X"
    calls `save_memory` with the type and time a real model would read from X (scripted in
    `saves`), `TYPO` calls `search_memory` with a misspelled argument, any other question calls
    `search_memory`; a tool's answer is echoed back as the reply."""

    saves: dict[str, tuple[str, str | None, str | None]] = {}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:  # type: ignore[override]
        return self  # the script knows the tools by name

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        last = messages[-1]
        text = last.text
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=f"({last.name}, {last.status}) {text.splitlines()[0]}")
        elif text.startswith("Remember:"):
            memory, kind, when = self.saves[text]
            args = {"text": memory, **({"type": kind} if kind else {}), **({"time": when} if when else {})}
            reply = AIMessage(content="", tool_calls=[{"name": "save_memory", "id": "save-1", "args": args}])
        elif text == TYPO:
            reply = AIMessage(content="", tool_calls=[{"name": "search_memory", "id": "typo-1",
                                                       "args": {"qeury": "Munich"}}])
        else:
            reply = AIMessage(content="", tool_calls=[{"name": "search_memory", "id": "search-1",
                                                       "args": {"query": text, "k": 2}}])
        return ChatResult(generations=[ChatGeneration(message=reply)])

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-model"


async def amain(path: str | None = None) -> dict[str, Any]:
    """Run the three conversations against a server over a store at `path` (default: a temporary
    one); print and return the transcripts."""
    with tempfile.TemporaryDirectory(prefix="fused-memory-mcp-example-") as tmp:
        client = MultiServerMCPClient({"memory": {
            "transport": "stdio", "command": sys.executable,  # the `fused-memory` script, in this Python
            "args": ["-m", "fused_memory.cli", "mcp", "--path", path or tmp, "--namespace", "alice"]}})
        async with client.session("memory") as session:
            tools = await load_mcp_tools(session)
            model = ScriptedToolModel(saves={f"Remember: {t}": (t, kind, when) for t, kind, when in REMEMBER})
            agent = create_agent(model, tools=tools, checkpointer=InMemorySaver())
            runs: dict[str, list[BaseMessage]] = {}
            turns = [*(("1", f"Remember: {t}") for t, _, _ in REMEMBER), ("2", QUESTION), ("3", TYPO)]
            for thread, text in turns:
                state = await agent.ainvoke({"messages": [HumanMessage(text)]},
                                            {"configurable": {"thread_id": thread}})
                runs[thread] = state["messages"]
    for thread, messages in runs.items():
        print(f"thread {thread}:")
        for m in messages:
            print(f"  {m.type:>5}: {m.text or m.tool_calls}")  # type: ignore[attr-defined]
    return {"tools": sorted(t.name for t in tools), "thread_1": runs["1"], "thread_2": runs["2"],
            "thread_3": runs["3"], "answer": runs["2"][-1].text}


def main(path: str | None = None) -> dict[str, Any]:
    return asyncio.run(amain(path))


if __name__ == "__main__":
    main()
