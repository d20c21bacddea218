"""A tool-calling loop: a chat model calls the fused-memory tool and answers from what it returned.

The tool comes from `memory_tool` (LangChain's `create_retriever_tool` with
`response_format="content_and_artifact"`): the model reads the memories' text, and the program gets
the `Document`s (ids, scores, explanations) as the `ToolMessage.artifact`. Runs offline: the chat
model is a scripted stand-in that calls the tool with the user's question, then answers with the
top memory, so the loop is the same one a real tool-calling model would drive.

    python examples/langchain_agent.py
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from fused_memory import MemoryStore
from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW, demo_memories
from langchain_fused_memory import EnsembleMemoryRetriever, memory_tool

__all__ = ["main", "ScriptedToolCaller", "QUESTION"]

QUESTION = "What's my badge ID?"


class ScriptedToolCaller(BaseChatModel):
    """Turn 1: call the first bound tool with the user's question. Turn 2: answer with the first
    memory the tool returned. A stand-in for a real tool-calling model, deterministic and offline."""

    tool_name: str = ""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolCaller:  # type: ignore[override]
        return self.model_copy(update={"tool_name": tools[0].name})

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            top = str(last.content).split("\n\n")[0]
            reply = AIMessage(content=f"From your memory: {top}")
        else:
            call = {"name": self.tool_name, "args": {"query": str(last.content)}, "id": "call-1"}
            reply = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-caller"


def main(path: str | None = None, question: str = QUESTION) -> dict[str, Any]:
    """Run the loop once; print and return the answer, the transcript and the tool's artifact."""
    with tempfile.TemporaryDirectory(prefix="fused-memory-example-") as tmp, MemoryStore.embedded(path or tmp) as store:
        store.add(demo_memories())
        retriever = EnsembleMemoryRetriever(store=store, namespace=DEMO_NAMESPACE, now=DEMO_NOW, k=3)
        tool = memory_tool(retriever, "search_memory", "Search the user's long-term memory.")
        model = ScriptedToolCaller().bind_tools([tool])
        messages: list[BaseMessage] = [HumanMessage(question)]
        while True:
            ai = model.invoke(messages)
            messages.append(ai)
            if not ai.tool_calls:
                break
            messages.extend(tool.invoke({**call, "type": "tool_call"}) for call in ai.tool_calls)
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    artifact = tool_messages[0].artifact
    print(f"user:  {question}")
    print(f"tool:  {tool_messages[0].name} returned {len(artifact)} documents: {[d.id for d in artifact]}")
    print(f"agent: {messages[-1].content}")
    return {"answer": messages[-1].content, "messages": messages, "artifact": artifact}


if __name__ == "__main__":
    main()
