"""The fused-memory `RetrieverTool` in a LlamaIndex `FunctionAgent`.

Runs offline: the agent's LLM is LlamaIndex's `MockFunctionCallingLLM` with a scripted response
generator that calls the memory tool with the user's question, then answers with what the tool
returned. The tool's `ToolOutput.raw_output` keeps the retrieved nodes for the program.

    python examples/llamaindex_agent.py
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM

from fused_memory import MemoryStore
from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW, demo_memories
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever, memory_tool

__all__ = ["main", "scripted_llm", "QUESTION"]

QUESTION = "Who is my manager?"
TOOL_NAME = "search_memory"


def scripted_llm() -> MockFunctionCallingLLM:
    """Turn 1: call the memory tool with the user's question. Turn 2: answer with what it returned."""
    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        results = [m for m in messages if m.role == MessageRole.TOOL]
        if results:
            return ChatMessage(role=MessageRole.ASSISTANT, content=f"From your memory:\n{results[-1].content}")
        question = next(str(m.content) for m in reversed(messages) if m.role == MessageRole.USER)
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[
            TextBlock(text=""),
            ToolCallBlock(tool_call_id="call-1", tool_name=TOOL_NAME, tool_kwargs={"input": question}),
        ])
    return MockFunctionCallingLLM(response_generator=respond)


async def ask(store: MemoryStore, question: str) -> dict[str, Any]:
    retriever = EnsembleMemoryRetriever(store, namespace=DEMO_NAMESPACE, now=DEMO_NOW, k=3)
    tool = memory_tool(retriever, TOOL_NAME, "Search the user's long-term memory.")
    agent = FunctionAgent(tools=[tool], llm=scripted_llm(), system_prompt="Answer from the user's memory.")
    handler = agent.run(user_msg=question)
    calls = [ev async for ev in handler.stream_events() if isinstance(ev, ToolCallResult)]
    output = await handler
    return {"answer": str(output.response.content), "tool_calls": calls}


def main(path: str | None = None, question: str = QUESTION) -> dict[str, Any]:
    """Run the agent once; print and return the answer and the tool call results."""
    with tempfile.TemporaryDirectory(prefix="fused-memory-example-") as tmp, MemoryStore.embedded(path or tmp) as store:
        store.add(demo_memories())
        result = asyncio.run(ask(store, question))
    [call] = result["tool_calls"]
    nodes = call.tool_output.raw_output
    print(f"user:  {question}")
    print(f"tool:  {call.tool_name}({call.tool_kwargs}) -> {[n.node.node_id for n in nodes]}")
    print(f"agent: {result['answer']}")
    return {**result, "nodes": nodes}


if __name__ == "__main__":
    main()
