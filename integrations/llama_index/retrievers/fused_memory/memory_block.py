"""`FusedMemoryBlock`: fused-memory as a long-term memory block of LlamaIndex's `Memory`.

    from llama_index.core.memory import Memory
    from llama_index.retrievers.fused_memory import FusedMemoryBlock
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[FusedMemoryBlock(store=store, namespace="alice")])
    await agent.run(user_msg="...", memory=memory)

Reading (`_aget`): the memories the fused ensemble finds for the latest user message go into the
agent's context, one per line as the search tool shows them (`[type, event time] text`), inside
LlamaIndex's `<memory><fused_memory>...</fused_memory></memory>` block. An agent run asks its
memory about three times per turn (when the turn starts, after tool calls, when it ends; the
second time with the user message twice), always for the same latest message, so the block
retrieves once per question and keeps the answer until the namespace changes (its number of
memories; a memory rewritten in place by another path shows from the next question).

Writing (`_aput`): LlamaIndex hands a block the chat turns it flushes out of the short-term window
(whole turns, with their `session_id`). The user's messages with text are stored (`roles`; the
assistant's replies too if asked, shown back as `[assistant said] ...`, never as facts: "Got it, I
will remember that." is not something the user said), each with its session and role, indexed with
the turns before it as context (the session's
earlier turns are read back from the store, `fused_memory.agent_writes.with_session_context`), so
the next conversation finds them by the question they answered. Tool calls and tool results are not
stored: they are how an answer was found, not what was said.

`priority` is 0, LlamaIndex's "never truncate": memories are the point of the block. (For the
other priorities, LlamaIndex 0.14 drops priority 1 before priority 2.)
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import datetime, timedelta, timezone
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import Field, PrivateAttr, model_validator

from fused_memory import EnsembleMemory, Memory, MemoryStore, conversation_context
from fused_memory.adapters import CallOptions, answered, memory_line, resolve_ensemble, writable_store
from fused_memory.agent_writes import with_session_context

__all__ = ["FusedMemoryBlock"]

ASSISTANT_ROLE = MessageRole.ASSISTANT.value


def _text(message: ChatMessage) -> str:
    return (message.content or "").strip()


def _kind(memory: Memory) -> object:
    """How the block labels a memory: an assistant's turn as what it is (its classified type would
    show "Got it, I will remember that." as a fact about the user)."""
    return f"{ASSISTANT_ROLE} said" if memory.metadata.get("role") == ASSISTANT_ROLE else memory.type


class FusedMemoryBlock(BaseMemoryBlock[str]):
    """A memory block that reads the memories for the latest user message from a fused-memory
    store and writes the turns LlamaIndex flushes into it (see the module docstring)."""

    name: str = Field(default="fused_memory", description="The block's name (its tag in the prompt).")
    description: str | None = Field(default="What long-term memory holds about the latest message.")
    store: MemoryStore | EnsembleMemory = Field(description="The fused-memory store (or an ensemble over it).")
    ensemble: EnsembleMemory | None = Field(default=None, description="The ensemble to search with; built if absent.")
    namespace: str = Field(default="default", description="Whose memories are read and written.")
    k: int = Field(default=5, description="Memories put into the context per message.")
    roles: tuple[str, ...] = Field(default=("user",), description="Roles whose flushed messages are stored: what "
                                   "the user said; add 'assistant' to keep the replies too (shown as what the "
                                   "assistant said, never as facts about the user).")
    context_turns: int | None = Field(default=None, description="Earlier turns indexed with each turn (None: "
                                                                "conversation_context's default, 2).")

    _answers: dict[tuple[str, int], str] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _bind(self) -> FusedMemoryBlock:
        CallOptions.of(self.namespace, self.k).checked()
        if self.context_turns is not None:
            conversation_context([], self.context_turns)  # refuses a count it could not use, naming it
        source, self.ensemble = resolve_ensemble(self.store, self.ensemble)
        self.store = writable_store(source, "FusedMemoryBlock")
        return self

    def _memory_store(self) -> MemoryStore:
        return writable_store(self.store, "FusedMemoryBlock")

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        """The memories for the latest user message, one per line ("" when there is none)."""
        question = next((_text(m) for m in reversed(messages or []) if m.role == MessageRole.USER and _text(m)), "")
        if not question:
            return ""
        key = (question, await asyncio.to_thread(self._memory_store().count, self.namespace))
        if key not in self._answers:
            assert self.ensemble is not None
            retrieval = answered(await self.ensemble.aretrieve(question, namespace=self.namespace, k=self.k))
            lines = [memory_line(_kind(h.memory), h.memory.event_at.isoformat() if h.memory.event_at else None,
                                 h.memory.text) for h in retrieval.hits]
            self._answers = {key: "\n".join(lines)}  # only the latest question is asked again
        return self._answers[key]

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Store the flushed turns of `messages` (see the module docstring)."""
        turns = [m for m in messages if str(getattr(m.role, "value", m.role)) in self.roles and _text(m)]
        if turns:
            await asyncio.to_thread(self._write, turns)

    def _write(self, turns: list[ChatMessage]) -> None:
        """One `add` for the flush. Each turn's id derives from its session, role and text (a flush
        written twice is one set of memories), and the turns are stamped a microsecond apart: one
        `add` gives them one `created_at`, and the session's order is what the next flush reads
        back as context (newest first)."""
        store = self._memory_store()
        start = datetime.now(timezone.utc)
        memories = []
        for i, message in enumerate(turns):
            session = message.additional_kwargs.get("session_id")
            role = str(getattr(message.role, "value", message.role))
            digest = hashlib.sha256(f"{session}\x1f{role}\x1f{_text(message)}".encode("utf-8", "surrogatepass"))
            memories.append(Memory(text=_text(message), namespace=self.namespace, id=f"turn-{digest.hexdigest()[:24]}",
                                   session_id=None if session is None else str(session), metadata={"role": role},
                                   created_at=start + timedelta(microseconds=i)))
        store.add(with_session_context(store, memories, self.context_turns))
        self._answers = {}
