"""What is stored: memories, their types and times, and the entities and relations of the graph.

Value types shared by every layer (what a query produces is in `results`). All are frozen
dataclasses: values can be cached, hashed and passed between threads without anyone mutating them
underneath a caller."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from .errors import InvalidMemory, QueryError
from .validation import check_size, json_safe, name_or_int, require_aware, require_clean, require_storable, thaw

__all__ = ["MemoryType", "Memory", "TimeWindow", "EntityMention", "Entity", "Relation", "parse_memory_type",
           "type_list"]

class MemoryType(str, Enum):
    """What kind of thing a memory records; drives the type arm and the hard pre-filter."""

    FACT = "fact"
    PREFERENCE = "preference"
    EVENT = "event"
    ENTITY = "entity"

    def __str__(self) -> str:  # "fact", not "MemoryType.FACT", in explanations and payloads
        return self.value


def type_list(value: Any) -> tuple[Any, ...] | None:
    """`types` as callers give it: None, one type (a `MemoryType` or its name: "fact" is one type,
    not four letters) or a collection of them, as a tuple; the names are checked where they are
    parsed (`parse_memory_type`). Anything else is a `QueryError`."""
    if value is None:
        return None
    if isinstance(value, (str, MemoryType)):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        raise QueryError(f"types must be a memory type or a list of them, got {type(value).__name__}") from None


def parse_memory_type(value: MemoryType | str) -> MemoryType:
    """Accept an enum or its string value (any case); anything else is a clear `QueryError`."""
    if isinstance(value, MemoryType):
        return value
    if isinstance(value, str):
        try:
            return MemoryType(value.strip().lower())
        except ValueError:
            pass
    allowed = ", ".join(t.value for t in MemoryType)
    raise QueryError(f"unknown memory type {value!r}; expected one of: {allowed}")


@dataclass(frozen=True)
class Memory:
    """One thing an agent remembers. `id` is derived from namespace and text when not given, so
    re-adding the same text is an idempotent upsert rather than a duplicate.

    `context` is text that helps *find* this memory without being part of it: in a conversation,
    the turns just before it (a reply like "They were scared but we reassured them" is found by
    the question it answers, "How did the kids handle the accident?"). It is indexed (BM25 at a
    reduced weight, and blended into the embedding) but never returned as the memory's text, and
    it does not change the derived id. `conversation_context` fills it from a session's order."""

    text: str
    namespace: str = "default"
    type: MemoryType | None = None
    id: str = ""
    predicate: str | None = None
    event_at: datetime | None = None
    created_at: datetime | None = None
    entities: tuple[str, ...] = ()
    session_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    context: str | None = None
    #: When the memory stops existing for every read (a LangGraph item's TTL); None: never. Expired
    #: memories are filtered by the vector engine at once and removed by `MemoryStore.sweep_expired`.
    expires_at: datetime | None = None
    #: False keeps the memory out of every ranking: not embedded (a placeholder vector), not in the
    #: lexical index or the graph, filtered out of every arm's search; still listed and got by id.
    indexed: bool = True
    #: The times the text states ("booked the vet for the 14th": that day), read by `MemoryStore.add`
    #: relative to when it was said (`created_at`; `event_at` when only that is given), as windows.
    #: Derived from the text at every write (what a caller passes is replaced); a time window finds a
    #: memory by any of its times: `event_at`, these, `created_at` (docs/design.md, "A memory's times").
    stated_times: tuple[TimeWindow, ...] = ()

    MAX_TEXT = 100_000

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidMemory("memory text must be a non-empty string")
        if len(self.text) > self.MAX_TEXT:
            raise InvalidMemory(f"memory text is {len(self.text)} characters; the limit is {self.MAX_TEXT}")
        require_clean(self.text, "memory text")
        if not isinstance(self.namespace, str) or not self.namespace.strip():
            raise InvalidMemory("namespace must be a non-empty string")
        require_clean(self.namespace, "namespace")
        check_size(self.namespace, "namespace")
        if self.type is not None:
            try:
                object.__setattr__(self, "type", parse_memory_type(self.type))
            except QueryError as exc:
                raise InvalidMemory(str(exc)) from None
        if self.predicate is not None:
            if not isinstance(self.predicate, str):
                raise InvalidMemory("predicate must be a string")
            require_clean(self.predicate, "predicate")
        if not isinstance(self.indexed, bool):
            raise InvalidMemory(f"indexed must be True or False, got {self.indexed!r}")
        for name in ("event_at", "created_at", "expires_at"):
            value = getattr(self, name)
            if value is not None:
                require_storable(value, f"Memory.{name}", InvalidMemory)
        try:
            stated = tuple(self.stated_times or ())
        except TypeError:
            raise InvalidMemory(f"stated_times must be a list of TimeWindows, got {self.stated_times!r:.60}") from None
        for w in stated:
            if not isinstance(w, TimeWindow):
                raise InvalidMemory(f"stated_times must hold TimeWindows, got {type(w).__name__}")
            require_storable(w.start, "Memory.stated_times", InvalidMemory)
            require_storable(w.end, "Memory.stated_times", InvalidMemory)
        object.__setattr__(self, "stated_times", stated)
        if self.session_id is not None:
            object.__setattr__(self, "session_id", name_or_int(self.session_id, "session_id"))
            require_clean(self.session_id, "session_id")
        if self.context is not None:
            if not isinstance(self.context, str):
                raise InvalidMemory("context must be a string")
            if len(self.context) > self.MAX_TEXT:
                raise InvalidMemory(f"context is {len(self.context)} characters; the limit is {self.MAX_TEXT}")
            require_clean(self.context, "context")
            object.__setattr__(self, "context", self.context.strip() or None)
        if isinstance(self.entities, (str, bytes)):  # tuple("Tom") would be ("T", "o", "m")
            raise InvalidMemory(f"entities must be a list of names, not a single string: {self.entities!r} "
                                "(write a list, e.g. [\"Tom\"])")
        try:
            ents = tuple(self.entities)
        except TypeError:
            raise InvalidMemory(f"entities must be a list of names, got {type(self.entities).__name__}") from None
        for e in ents:
            if not isinstance(e, str) or not e.strip():
                raise InvalidMemory(f"entity {e!r} must be a non-empty string")
            require_clean(e, "entity")
            check_size(e, "entity")
        object.__setattr__(self, "entities", ents)
        object.__setattr__(self, "metadata", json_safe(dict(self.metadata or {}), "metadata"))
        if self.id is None or self.id == "":
            digest = hashlib.sha256(f"{self.namespace}\x1f{self.text}".encode()).hexdigest()[:24]
            object.__setattr__(self, "id", f"m-{digest}")
        else:  # id=0 is the id "0", not "no id"
            object.__setattr__(self, "id", name_or_int(self.id, "memory id"))
        require_clean(self.id, "memory id")
        check_size(self.id, "memory id")

    def with_(self, **changes: Any) -> Memory:
        """A copy with some fields changed (dataclasses.replace, validated again)."""
        from dataclasses import replace
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict (ISO datetimes) for adapters, CLI output and reports."""
        return {
            "id": self.id, "namespace": self.namespace, "text": self.text,
            "type": self.type.value if self.type else None, "predicate": self.predicate,
            "event_at": self.event_at.isoformat() if self.event_at else None,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "entities": list(self.entities), "session_id": self.session_id,
            "metadata": thaw(self.metadata), "context": self.context,
            "stated_times": [[w.start.isoformat(), w.end.isoformat()] for w in self.stated_times],
        }


@dataclass(frozen=True)
class TimeWindow:
    """A closed interval [start, end] of aware datetimes; never inverted."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        require_aware(self.start, "TimeWindow.start")
        require_aware(self.end, "TimeWindow.end")
        if self.start > self.end:
            raise QueryError(f"time window starts after it ends: {self.start} > {self.end}")

    def contains(self, when: datetime) -> bool:
        return self.start <= when <= self.end

    def clip_to(self, now: datetime) -> TimeWindow | None:
        """Clip the end to `now`; a window that lies wholly in the future gives None."""
        if self.start > now:
            return None
        return TimeWindow(self.start, min(self.end, now))

    def __str__(self) -> str:
        return f"[{self.start.isoformat()} .. {self.end.isoformat()}]"


# ---------------------------------------------------------------- entities (graph values)
@dataclass(frozen=True)
class EntityMention:
    """An entity named in a memory, as ingest found it (`kind` is spaCy's label, e.g. PERSON)."""

    name: str
    kind: str | None = None


@dataclass(frozen=True)
class Entity:
    """A canonical entity of one namespace. `id` is the normalized name; `aliases` are the other
    names that resolve to it (merged and explicit aliases, plus the first and last name of a
    multi-token PERSON); `mentions` counts the memories that mention it (any alias); `relations`
    lists the explicit relations its group has with another as (name, forward), forward when the
    entity is the source, sorted (the optimizer checks whether a query asks one of them, in that
    direction: `query.relations`)."""

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    kind: str | None = None
    mentions: int = 0
    relations: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class Relation:
    """An explicit entity relation; endpoints are names (normalized, created when missing).
    Times are aware datetimes; `valid_to` in the past makes a lifecycle edge stale (x 0.3)."""

    src: str
    rel: str
    dst: str
    kind: str = "semantic"  # structural | semantic | lifecycle
    confidence: float = 1.0
    valid_from: datetime | None = None
    valid_to: datetime | None = None
