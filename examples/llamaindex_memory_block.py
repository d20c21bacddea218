"""A LlamaIndex agent whose long-term memory is a fused-memory block, across two conversations.

`FusedMemoryBlock` is one of the memory blocks of LlamaIndex's `Memory`: the chat turns LlamaIndex
flushes out of the short-term window are written into the store (with their session, so they are
indexed with the turns before them), and for every new user message the memories the fused ensemble
finds go into the agent's context. Conversation 1 (session "monday") tells the agent a few things;
conversation 2 (session "friday", a new `Memory` with an empty history) asks about one of them, and
the answer comes from the `<memory>` block. The short-term window is set small (60 tokens of chat
history, `WINDOW`) so that a three-turn conversation already flushes; with LlamaIndex's defaults
(30,000 tokens) turns are flushed, and so written to the store, much later.

Runs offline: the agent's LLM is LlamaIndex's `MockFunctionCallingLLM` with a scripted response
generator that acknowledges what it is told and answers a question with the first memory in its
`<memory>` block; the store, the embedder, the memory block, `Memory` and `FunctionAgent` are real.

    python examples/llamaindex_memory_block.py
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory

from fused_memory import MemoryStore
from llama_index.retrievers.fused_memory import FusedMemoryBlock

__all__ = ["main", "scripted_llm", "MONDAY", "QUESTION", "WINDOW"]

MONDAY = ("I just started a new job at Kestrel Robotics, on the perception team.",
          "My manager there is Priya Nair, she is great so far.",
          "Also, I am allergic to peanuts, so keep that in mind for restaurant ideas.")
QUESTION = "Who is my manager at the new job?"
#: LlamaIndex `Memory` settings: 120 tokens in all, half of them chat history, flushed 30 at a time.
WINDOW = {"token_limit": 120, "chat_history_token_ratio": 0.5, "token_flush_size": 30}


def scripted_llm(prompts: list[list[ChatMessage]]) -> MockFunctionCallingLLM:
    """A question is answered with the first memory of the `<memory>` block; anything else is
    acknowledged. Every prompt is appended to `prompts`."""
    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        prompts.append(list(messages))
        question = str(messages[-1].content)
        memory = next((str(m.content) for m in messages if "<fused_memory>" in str(m.content)), "")
        lines = [line for line in memory.splitlines() if line.startswith("[")]
        if question.endswith("?"):
            return ChatMessage(role=MessageRole.ASSISTANT, content=f"From memory: {lines[0]}" if lines else "No idea.")
        return ChatMessage(role=MessageRole.ASSISTANT, content="Got it, I will remember that.")
    return MockFunctionCallingLLM(response_generator=respond)


async def converse(agent: FunctionAgent, memory: Memory, messages: Sequence[str]) -> list[str]:
    return [str(await agent.run(user_msg=text, memory=memory)) for text in messages]


def main(path: str | None = None) -> dict[str, Any]:
    """Two conversations with one store; print and return the answers, the stored turns and the
    memory block the LLM saw in the second conversation."""
    prompts: list[list[ChatMessage]] = []
    with tempfile.TemporaryDirectory(prefix="fused-memory-example-") as tmp, MemoryStore.embedded(path or tmp) as store:
        block = FusedMemoryBlock(store=store, namespace="alice", k=3)
        agent = FunctionAgent(tools=[], llm=scripted_llm(prompts), system_prompt="You are a helpful assistant.")
        monday = Memory.from_defaults(session_id="monday", memory_blocks=[block], **WINDOW)
        replies = asyncio.run(converse(agent, monday, MONDAY))
        friday = Memory.from_defaults(session_id="friday", memory_blocks=[block], **WINDOW)
        [answer] = asyncio.run(converse(agent, friday, [QUESTION]))
        stored = store.memories("alice")
    shown = next(str(m.content) for m in prompts[-1] if "<fused_memory>" in str(m.content))
    print("monday:", *(f"  user: {q}\n  agent: {a}" for q, a in zip(MONDAY, replies, strict=True)), sep="\n")
    print(f"friday:\n  user: {QUESTION}\n  agent: {answer}")
    print("stored turns:", [(m.session_id, m.metadata.get("role"), m.text) for m in stored])
    print("memory block the LLM saw on friday:", shown, sep="\n")
    return {"answer": answer, "replies": replies, "stored": stored, "shown": shown}


if __name__ == "__main__":
    main()
