"""What an agent's writes share, in both frameworks: the write and delete tools, and the LlamaIndex
memory block.

* The model's arguments are checked here, once (`write_arguments`): a text that is not empty, a
  memory type by name, a time in ISO 8601 *with* its zone (a store shared across zones cannot
  guess one). A bad argument is an `InvalidMemory` whose message names the argument as the model
  wrote it (`text`, `type`, `time`, `memory_id`), so the tools can hand it back as their answer
  and the model can correct the call.
* A write that knows its conversation (a session id) is indexed with the turns before it, as
  `conversation_context` indexes a conversation ingested in one batch: the session's earlier
  memories are read from the store (`with_session_context`), so a turn written now is found by the
  question it answers just as it would be had the whole conversation been added at once.
* The texts the model reads back say what was stored, in the line format of the search tool
  (`adapters.memory_line`), with the memory's id, which the delete tool takes.

The arguments' schemas (`MemoryWriteInput`, `MemoryDeleteInput`) are pydantic models, which both
frameworks take as a tool's schema; nothing here imports a framework.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .adapters import memory_line, writable_store
from .conversation import DEFAULT_CONTEXT_TURNS, conversation_context
from .errors import FusedMemoryError, InvalidMemory, QueryError
from .store.memory_store import MemoryStore
from .types import Memory, MemoryType, parse_memory_type
from .validation import require_clean, require_storable

__all__ = [
    "WRITE_TOOL_NAME",
    "WRITE_TOOL_DESCRIPTION",
    "DELETE_TOOL_NAME",
    "DELETE_TOOL_DESCRIPTION",
    "WriteArguments",
    "MemoryWriteInput",
    "MemoryDeleteInput",
    "write_arguments",
    "refuse_unknown",
    "parse_time",
    "with_session_context",
    "remember",
    "aremember",
    "forget",
    "aforget",
    "saved_answer",
    "forgotten_answer",
]

class MemoryWriteInput(BaseModel):
    """The arguments of `memory_write_tool`, as the model sees them, and no other: one it guessed,
    `event_at` for `time`, is refused by `refuse_unknown`, not dropped with the date it carried."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="What to remember: one self-contained statement about the user.")
    type: str | None = Field(default=None, description="Optional: fact, preference, event or entity.")
    time: str | None = Field(default=None, description="Optional: when it happened or will happen, ISO 8601 "
                                                         "with a zone, e.g. 2024-03-01T09:00:00+01:00.")


class MemoryDeleteInput(BaseModel):
    """The argument of `memory_delete_tool`, as the model sees it (and no other)."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str = Field(description="The id of the memory to delete, shown as id=... by the memory tools.")


#: Name and description both frameworks give `memory_write_tool` unless the caller chooses others.
WRITE_TOOL_NAME = "save_memory"
WRITE_TOOL_DESCRIPTION = (
    "Save something about the user to long-term memory, to be found in later conversations: a fact, a "
    "preference, a plan or an event. Arguments: text (one self-contained statement, e.g. 'I moved to Munich "
    "in March 2024'); type (optional: fact, preference, event or entity); time (optional: when it happened "
    "or will happen, ISO 8601 with a zone, e.g. 2024-03-01T09:00:00+01:00)."
)
#: Name and description both frameworks give `memory_delete_tool` unless the caller chooses others.
DELETE_TOOL_NAME = "forget_memory"
DELETE_TOOL_DESCRIPTION = (
    "Delete one memory the user wants forgotten or that is no longer true. Argument: memory_id, the id "
    "shown as id=... by the memory search and save tools."
)


@dataclass(frozen=True)
class WriteArguments:
    """A write as the model asked for it, checked: `type` None lets the store classify the text."""

    text: str
    type: MemoryType | None = None
    event_at: datetime | None = None

    def memory(self, namespace: str, session_id: str | None = None,
               metadata: Mapping[str, Any] | None = None) -> Memory:
        """The `Memory` to store (its id derives from namespace and text: saving the same text twice
        is one memory, updated)."""
        return Memory(text=self.text, namespace=namespace, type=self.type, event_at=self.event_at,
                      session_id=session_id, metadata=metadata or {})


def parse_time(value: object, what: str = "time", *, assume_utc: bool = False,
               utc_flag: str | None = None) -> datetime | None:
    """An ISO 8601 time with its zone ("Z" too, on every Python); None or "" is no time. A time
    without a zone is refused with the fix spelled out, never read in some zone, unless the caller
    said so explicitly (`assume_utc`: the command line's `--assume-utc`, named by `utc_flag` in the
    refusal as the other fix)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, datetime):
        when = value
    elif isinstance(value, str):
        text = value.strip()
        try:
            when = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "Zz" else text)
        except ValueError:
            raise InvalidMemory(f"{what} must be an ISO 8601 time with a zone, e.g. 2024-03-01T09:00:00+01:00; "
                                f"got {value!r}") from None
    else:
        raise InvalidMemory(f"{what} must be an ISO 8601 time as text, got {type(value).__name__}: {value!r}")
    if (when.tzinfo is None or when.tzinfo.utcoffset(when) is None) and assume_utc:
        when = when.replace(tzinfo=timezone.utc)
    elif when.tzinfo is None or when.tzinfo.utcoffset(when) is None:
        raise InvalidMemory(f"{what} {value!r} has no time zone; write it with one, e.g. "
                            f"{when.isoformat()}+00:00 for UTC" + (f", or pass {utc_flag}" if utc_flag else ""))
    return require_storable(when, what, InvalidMemory)


def refuse_unknown(given: Iterable[str], accepted: Sequence[str], what: str, kind: str = "argument",
                   error: type[FusedMemoryError] = InvalidMemory) -> None:
    """Refuse the names in `given` that `accepted` does not hold, naming them and what `what` takes,
    so the caller (a model, a JSONL line's author) can correct the call; a silently dropped
    `event_at` loses a date, a dropped `namepsace` searches the default namespace. The one check
    behind the CLI's `ingest` and every tool's arguments, search and write alike; a search raises it
    as a `QueryError` (`error`)."""
    unknown = [name for name in given if name not in accepted]
    if unknown:
        raise error(f"unknown {kind}{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}: "
                    f"{what} takes {', '.join(accepted)}")


def write_arguments(text: object, type: object = None, time: object = None) -> WriteArguments:
    """The model's `text`, `type` and `time`, checked; each refusal names its argument."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidMemory(f"text must be a non-empty statement to remember, got {text!r}")
    kind: MemoryType | None = None
    if type is not None and not (isinstance(type, str) and not type.strip()):
        allowed = ", ".join(t.value for t in MemoryType)
        if not isinstance(type, (str, MemoryType)):
            raise InvalidMemory(f"type must be one of {allowed} (or left out), got {type!r}")
        try:
            kind = parse_memory_type(type)
        except QueryError:
            raise InvalidMemory(f"type must be one of {allowed} (or left out), got {type!r}") from None
    require_clean(text, "text")  # the limits `Memory` sets, said in the model's words
    if len(text) > Memory.MAX_TEXT:
        raise InvalidMemory(f"text is {len(text)} characters; the limit is {Memory.MAX_TEXT}")
    return WriteArguments(text.strip(), kind, parse_time(time, "time"))


def with_session_context(store: MemoryStore, memories: Sequence[Memory], turns: int | None = None) -> list[Memory]:
    """`memories` (new turns, oldest first) with `context` from the turns before each: the last
    `turns` (None: `conversation_context`'s default) memories their session already holds in the
    store, then each other, as `conversation_context` gives a conversation added in one batch.
    Memories without a session are returned as they are."""
    turns = DEFAULT_CONTEXT_TURNS if turns is None else turns
    writing = {(m.namespace, m.id) for m in memories}
    earlier: list[Memory] = []
    for namespace, session in dict.fromkeys((m.namespace, m.session_id) for m in memories if m.session_id):
        newest = store.memories(namespace, session_id=session, limit=turns + len(writing))
        stored = [m for m in newest if (m.namespace, m.id) not in writing]
        earlier.extend(reversed(stored[:turns]))  # newest first from the store; a history is oldest first
    return conversation_context([*earlier, *memories], turns)[len(earlier):]


def remember(store: MemoryStore, namespace: str, arguments: WriteArguments, *, session_id: str | None = None,
             metadata: Mapping[str, Any] | None = None) -> Memory:
    """Store one memory the model asked for, with its session's context; returns it as stored."""
    store = writable_store(store, "the write tool")
    memory = arguments.memory(namespace, session_id, metadata)
    return store.add(with_session_context(store, [memory]))[0]


async def aremember(store: MemoryStore, namespace: str, arguments: WriteArguments, *,
                    session_id: str | None = None, metadata: Mapping[str, Any] | None = None) -> Memory:
    """`remember` off the event loop (it embeds, and reads the session's turns)."""
    return await asyncio.to_thread(remember, store, namespace, arguments, session_id=session_id, metadata=metadata)


def forget(store: MemoryStore, namespace: str, memory_id: object) -> Memory:
    """Delete one memory by id and return it. An id this namespace does not hold is the model's
    mistake (an `InvalidMemory` naming `memory_id`), not a silent success."""
    store = writable_store(store, "the delete tool")
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidMemory(f"memory_id must be the id of a memory (shown as id=...), got {memory_id!r}")
    found = store.get_many(namespace, [memory_id.strip()])
    if not found:
        raise InvalidMemory(f"memory_id {memory_id!r} is not the id of any memory here; use an id shown as id=... "
                            "by the memory search or save tool")
    store.delete(namespace, found)
    return found[0]


async def aforget(store: MemoryStore, namespace: str, memory_id: object) -> Memory:
    """`forget` off the event loop."""
    return await asyncio.to_thread(forget, store, namespace, memory_id)


def _line(memory: Memory) -> str:
    when = memory.event_at.isoformat() if memory.event_at else None
    return memory_line(memory.type, when, memory.text, memory.id)


def saved_answer(memory: Memory) -> str:
    """What the write tool tells the model: the memory as stored (its type, time and id)."""
    return f"Saved to memory: {_line(memory)}"


def forgotten_answer(memory: Memory) -> str:
    """What the delete tool tells the model: the memory it deleted."""
    return f"Deleted from memory: {_line(memory)}"
