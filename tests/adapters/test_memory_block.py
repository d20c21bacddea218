"""`FusedMemoryBlock` inside LlamaIndex's real `Memory` and `FunctionAgent`: turns flushed out of
the short-term window are stored with their session, role and context; the next conversation's
LLM sees them in its `<memory>` block; one retrieval per question although LlamaIndex asks about
three times per run; and what another path writes shows at once. LlamaIndex's
`MockFunctionCallingLLM` with a scripted response stands in for the LLM; the hashing embedder for
MiniLM (the words still rank through BM25)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory as ChatMemory
from llama_index.core.tools import FunctionTool

from fused_memory import EnsembleMemory, Memory, MemoryStore
from llama_index.retrievers.fused_memory import FusedMemoryBlock

FIRST = ["I moved to Munich last spring and I love the beer gardens by the river there.",
         "My manager is Sarah Chen, she runs the Berlin office of the company these days.",
         "For long flights I always prefer an aisle seat near the front of the plane please."]


class CountingEnsemble(EnsembleMemory):
    """The real ensemble, counting the retrievals the block asks of it."""

    calls = 0

    async def aretrieve(self, query: str, **kw: Any) -> Any:
        type(self).calls += 1
        return await super().aretrieve(query, **kw)


class Script:
    """The LLM: calls `lookup` once per run, then answers; records every prompt it was sent."""

    def __init__(self) -> None:
        self.prompts: list[Sequence[ChatMessage]] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.prompts.append(list(messages))
        if messages[-1].role == MessageRole.TOOL:
            return ChatMessage(role=MessageRole.ASSISTANT, content="Noted, thank you.")
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[
            TextBlock(text=""), ToolCallBlock(tool_call_id="c1", tool_name="lookup", tool_kwargs={"q": "x"})])


def lookup(q: str) -> str:
    """Look something up."""
    return "nothing found"


def _agent(script: Script) -> FunctionAgent:
    return FunctionAgent(tools=[FunctionTool.from_defaults(lookup)], system_prompt="Answer briefly.",
                         llm=MockFunctionCallingLLM(response_generator=script))


def _memory(session: str, block: FusedMemoryBlock) -> ChatMemory:
    # a small window, so earlier turns are flushed into the block (60 tokens of history)
    return ChatMemory.from_defaults(session_id=session, token_limit=120, chat_history_token_ratio=0.5,
                                    token_flush_size=30, memory_blocks=[block])


def test_two_conversations(store_factory: Any) -> None:
    store: MemoryStore = store_factory()
    ensemble = CountingEnsemble(store)
    block = FusedMemoryBlock(store=store, ensemble=ensemble, namespace="alice", k=3)
    script = Script()

    agent = _agent(script)

    async def run() -> None:
        first = _memory("s1", block)
        for text in FIRST:
            await agent.run(user_msg=text, memory=first)
        CountingEnsemble.calls = 0
        await agent.run(user_msg="Who runs the Berlin office?", memory=_memory("s2", block))

    asyncio.run(run())
    stored = store.memories("alice")
    assert {m.session_id for m in stored} == {"s1"} and {m.metadata["role"] for m in stored} == {"user"}
    assert {m.text for m in stored} >= set(FIRST[:2])  # the third turn is still in the window
    assert not any("nothing found" in m.text for m in stored)  # tool results are not memories
    [manager] = [m for m in stored if m.text == FIRST[1]]
    assert manager.context is not None and FIRST[0] in manager.context  # indexed with the turn before it
    shown = [str(m.content) for m in script.prompts[-1] if "<memory>" in str(m.content)]
    assert len(shown) == 1 and "<fused_memory>" in shown[0] and f"] {FIRST[1]}" in shown[0]
    assert CountingEnsemble.calls == 1  # LlamaIndex asked three times for the same question
    assert block.priority == 0  # never truncated


def test_what_another_path_writes_shows_at_once(store_factory: Any) -> None:
    store: MemoryStore = store_factory()
    block = FusedMemoryBlock(store=store, namespace="alice")
    ask = [ChatMessage(role=MessageRole.USER, content="what is my badge number?")]
    assert asyncio.run(block.aget(ask)) == ""
    store.add(Memory(text="My badge number is E-47821", namespace="alice"))
    assert asyncio.run(block.aget(ask)) == "[fact] My badge number is E-47821"
    store.add(Memory(text="Someone else's badge is E-1", namespace="bob"))
    assert "E-1" not in asyncio.run(block.aget(ask))


def test_what_is_written_and_what_is_not(store_factory: Any) -> None:
    store: MemoryStore = store_factory()
    block = FusedMemoryBlock(store=store, namespace="alice", roles=("user",))
    turn = [ChatMessage(role=MessageRole.SYSTEM, content="You are helpful."),
            ChatMessage(role=MessageRole.USER, content="I have two cats"),
            ChatMessage(role=MessageRole.ASSISTANT, content="Lovely!"),
            ChatMessage(role=MessageRole.USER, content="  "),
            ChatMessage(role=MessageRole.TOOL, content="tool output")]
    asyncio.run(block.aput(turn, from_short_term_memory=True, session_id="s9"))
    asyncio.run(block.aput(turn[1:2], session_id="s9"))  # the same turn again: one memory
    [cats] = store.memories("alice")
    assert cats.text == "I have two cats" and cats.session_id == "s9" and cats.metadata == {"role": "user"}
    assert asyncio.run(block.aget([])) == "" and asyncio.run(block.aget(None)) == ""


@pytest.mark.parametrize(("kwargs", "message"), [({"k": 0}, "k must be"), ({"namespace": ""}, "namespace"),
                                                ({"context_turns": -1}, "turns must be")])
def test_bad_settings_are_refused_when_built(store_factory: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):  # pydantic's ValidationError, carrying the core's QueryError
        FusedMemoryBlock(store=store_factory(), **kwargs)


def test_the_block_stores_what_the_user_said_and_an_assistant_turn_as_what_it_is(store_factory: Any) -> None:
    """The model saw `[fact] Got it, I will remember that.` in its memory block: the assistant's
    filler was stored and shown as a fact about the user."""
    turn = [ChatMessage(role=MessageRole.USER, content="My manager is Priya Nair"),
            ChatMessage(role=MessageRole.ASSISTANT, content="Got it, I will remember that.")]
    ask = [ChatMessage(role=MessageRole.USER, content="who is my manager, remember?")]
    store: MemoryStore = store_factory()
    block = FusedMemoryBlock(store=store, namespace="alice")
    asyncio.run(block.aput(turn, session_id="s1"))
    assert [m.text for m in store.memories("alice")] == ["My manager is Priya Nair"]
    kept: MemoryStore = store_factory("kept")
    both = FusedMemoryBlock(store=kept, namespace="alice", roles=("user", "assistant"))
    asyncio.run(both.aput(turn, session_id="s1"))
    shown = asyncio.run(both.aget(ask))
    assert "[assistant said] Got it, I will remember that." in shown.splitlines(), shown
    assert "] My manager is Priya Nair" in shown and "[fact] Got it" not in shown
