"""The four memory tools the MCP server offers, with their schemas, their argument rules and the
text a model reads back; nothing here imports the MCP SDK (`server` adapts it to the protocol).

* The descriptions and answers are the framework tools' (`adapters`, `agent_writes`): a memory is
  `[type, time, id=...] text`, saves and deletes are checked by `write_arguments` and `forget`,
  so a model moving from the LangChain tools to this server reads the same lines. Each search hit
  also carries its explanation (the arms that found it and the fused score).
* Every call is checked here before the store is touched: a tool name or argument the schema does
  not have, a value of the wrong kind, an empty query, a `k` above the server's limit, a namespace
  the grant does not hold. Each refusal is a `FusedMemoryError` whose message names the argument;
  `MemoryTools.call` turns it into an error answer (`isError` on the wire), never an exception
  that ends the server, and never an argument quietly dropped.
* The namespace comes from the caller's `Grant`, never from the arguments alone: `namespace` may
  only pick one of the grant's namespaces.
* The tools are a registry, `TOOLS`: each `ToolEntry` says whether it `writes`, and that flag alone
  decides whether a grant is offered it and may call it. A new tool declares its permission where it
  is declared, instead of inheriting one from where it lands in a dispatch chain.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from ..adapters import DEFAULT_TOOL_DESCRIPTION, NO_MEMORIES, answered, memory_line
from ..agent_writes import (
    DELETE_TOOL_DESCRIPTION,
    WRITE_TOOL_DESCRIPTION,
    aforget,
    aremember,
    forgotten_answer,
    parse_time,
    refuse_unknown,
    saved_answer,
    write_arguments,
)
from ..ensemble import EnsembleMemory
from ..errors import FusedMemoryError, QueryError
from ..results import FusedHit
from ..store.memory_store import MemoryStore
from ..types import Memory, MemoryType, parse_memory_type
from .access import Grant, RateLimiter

__all__ = ["ToolSpec", "ToolAnswer", "ToolEntry", "ToolHandler", "TOOLS", "Limits", "MemoryTools", "SEARCH", "SAVE",
           "DELETE", "LIST"]

log = logging.getLogger("fused_memory.mcp")

SEARCH, SAVE, DELETE, LIST = "search_memory", "save_memory", "delete_memory", "list_memories"


@dataclass(frozen=True)
class Limits:
    """What one call may ask for: `max_k` caps search results, `max_page` a listing's page (the
    query's length is the ensemble's own limit, `FusionConfig.max_query_chars`). Why each default:
    docs/decisions/0040-mcp-server-and-limits.md."""

    max_k: int = 50
    max_page: int = 100
    default_k: int = 5
    default_page: int = 20

    def __post_init__(self) -> None:
        for name in ("max_k", "max_page", "default_k", "default_page"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class ToolSpec:
    """One tool as the protocol lists it: its name, a description written for a model, and the
    JSON schema of its arguments (no property outside it is accepted)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolAnswer:
    """What a call returns: the text the model reads, the same as structured data, and whether it
    is an error the model should correct (`isError`)."""

    text: str
    data: Mapping[str, Any] | None = None
    error: bool = False


_NAMESPACE = {"type": "string", "description": "Optional: which memory space to use, if this connection was given "
                                               "more than one; leave it out for the default."}
_TIME = "ISO 8601 with a zone, e.g. 2024-03-01T09:00:00+01:00"


def _schema(properties: Mapping[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": list(required),
            "additionalProperties": False}


def _as_int(value: object, name: str, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():  # JSON has one number type; 5.0 is 5
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise QueryError(f"{name} must be an integer from {low} to {high}, got {value!r}")
    return value


def _types(value: object) -> tuple[MemoryType, ...] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    allowed = ", ".join(t.value for t in MemoryType)
    if not isinstance(items, list) or not items or not all(isinstance(t, str) for t in items):
        raise QueryError(f"types must be a list of memory types ({allowed}), got {value!r}")
    try:
        return tuple(dict.fromkeys(parse_memory_type(t) for t in items))
    except QueryError:
        raise QueryError(f"types must be memory types from {allowed}, got {value!r}") from None


def _when(memory: Memory) -> str | None:
    return memory.event_at.isoformat() if memory.event_at else None


def _line(memory: Memory) -> str:
    return memory_line(memory.type.value if memory.type else None, _when(memory), memory.text, memory.id)


def _memory_data(memory: Memory) -> dict[str, Any]:
    return {"id": memory.id, "type": memory.type.value if memory.type else None, "time": _when(memory),
            "text": memory.text}


@dataclass
class MemoryTools:
    """The tools over one store: `specs(grant)` lists what a grant may call (a read-only grant is
    not offered the write tools), `call(name, arguments, grant)` runs one call and always answers.
    The ensemble is built once (it holds the arms' thread pool)."""

    store: MemoryStore
    ensemble: EnsembleMemory
    limits: Limits = field(default_factory=Limits)
    rate: RateLimiter = field(default_factory=lambda: RateLimiter(None))

    def specs(self, grant: Grant) -> list[ToolSpec]:
        return [entry.spec(self.limits) for entry in TOOLS.values() if entry.permits(grant)]

    async def call(self, name: str, arguments: object, grant: Grant) -> ToolAnswer:
        """Run one call for `grant`. A refusal (bad arguments, access, rate, a backend down) is an
        error answer; an unexpected exception is logged with its traceback and answered as an
        internal error, so one bad call never ends the server."""
        try:
            self.rate.take(grant)
            entry = TOOLS.get(name)
            if entry is None or not entry.permits(grant):
                # a tool the grant is not offered does not exist for it, whether unknown or writing
                offered = ", ".join(e.name for e in TOOLS.values() if e.permits(grant))
                why = " (this connection may not write)" if entry is not None else ""
                raise QueryError(f"unknown tool {name!r}{why}; the tools are {offered}")
            args = _arguments(arguments, entry.spec(self.limits))
            return await entry.handler(self, grant.namespace(args.get("namespace")), args)
        except FusedMemoryError as exc:
            return ToolAnswer(f"{name}: {exc}", {"error": str(exc)}, error=True)
        except Exception:
            log.exception("tool %s failed for %s", name, grant.label)
            return ToolAnswer(f"{name}: internal error (logged by the server); nothing was changed by this answer",
                              {"error": "internal error"}, error=True)

    async def _search(self, namespace: str, args: Mapping[str, Any]) -> ToolAnswer:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise QueryError(f"query must be a non-empty question, got {query!r}")
        k = _as_int(args.get("k"), "k", self.limits.default_k, 1, self.limits.max_k)
        types = _types(args.get("types"))
        after, before = parse_time(args.get("after"), "after"), parse_time(args.get("before"), "before")
        if after and before and after >= before:
            raise QueryError(f"after ({after.isoformat()}) must be earlier than before ({before.isoformat()})")
        # `types` ranks those types first in the ensemble; the tool promises only those, and a window
        # only memories inside it, so both are filters over the fused top `depth`
        filtered = types is not None or after is not None or before is not None
        # one thread hop for the whole retrieval (its arms keep their own timeouts), not aretrieve's
        # three: each hop is a scheduler wake-up the caller waits for
        retrieval = answered(await asyncio.to_thread(
            self.ensemble.retrieve, query, namespace=namespace,
            k=max(k, self.ensemble.config.depth) if filtered else k, types=types))
        hits = [h for h in retrieval.hits
                if (types is None or h.memory.type in types) and _inside(h, after, before)][:k]
        if not hits:
            return ToolAnswer(NO_MEMORIES, {"memories": []})
        text = "\n\n".join(f"{_line(h.memory)}\n(why: {h.explain()})" for h in hits)
        data = [{**_memory_data(h.memory), "score": h.score, "explain": h.explain()} for h in hits]
        return ToolAnswer(text, {"memories": data})

    async def _list(self, namespace: str, args: Mapping[str, Any]) -> ToolAnswer:
        limit = _as_int(args.get("limit"), "limit", self.limits.default_page, 1, self.limits.max_page)
        offset = _as_int(args.get("offset"), "offset", 0, 0, 2**31)
        # one memory past the page says whether there is a next one: a full page may be the last
        read = await asyncio.to_thread(self.store.memories, namespace, limit=limit + 1, offset=offset)
        page, more = read[:limit], len(read) > limit
        data: dict[str, Any] = {"memories": [_memory_data(m) for m in page], "offset": offset,
                                "next_offset": offset + limit if more else None}
        if not page:
            return ToolAnswer("No memories here" + (f" past offset {offset}." if offset else "."), data)
        lines = "\n\n".join(_line(m) for m in page)
        tail = f"(more: call again with offset={offset + limit})" if more else "(that is all)"
        return ToolAnswer(f"{lines}\n\n{tail}", data)

    async def _save(self, namespace: str, args: Mapping[str, Any]) -> ToolAnswer:
        saved = await aremember(self.store, namespace,
                                write_arguments(args.get("text"), args.get("type"), args.get("time")))
        return ToolAnswer(saved_answer(saved), {"memory": _memory_data(saved)})

    async def _delete(self, namespace: str, args: Mapping[str, Any]) -> ToolAnswer:
        gone = await aforget(self.store, namespace, args.get("memory_id"))
        return ToolAnswer(forgotten_answer(gone), {"memory": _memory_data(gone)})


#: What runs a call once its arguments are checked: (the tools, the granted namespace, the arguments).
ToolHandler = Callable[[MemoryTools, str, Mapping[str, Any]], Awaitable[ToolAnswer]]


@dataclass(frozen=True)
class ToolEntry:
    """One tool of the server. `writes` says whether it changes the store; a grant without `write`
    is neither offered it nor allowed to call it (`permits`), and nothing else decides that.
    `describe` and `properties` give its description and its arguments under the server's `Limits`
    (search and list name their caps); every tool also takes `namespace`, checked against the grant
    before `handler` runs."""

    name: str
    writes: bool
    describe: Callable[[Limits], str]
    properties: Callable[[Limits], Mapping[str, Any]]
    required: tuple[str, ...]
    handler: ToolHandler

    def spec(self, limits: Limits) -> ToolSpec:
        """The tool as the protocol lists it, under `limits`."""
        return ToolSpec(self.name, self.describe(limits),
                        _schema({**self.properties(limits), "namespace": _NAMESPACE}, self.required))

    def permits(self, grant: Grant) -> bool:
        """Whether `grant` may see and call this tool: any grant a reading tool, a writing one only with write."""
        return grant.write or not self.writes


def _search_description(limits: Limits) -> str:
    return DEFAULT_TOOL_DESCRIPTION + (
        " Each result shows [type, time, id=...] and why it matched. Optional: k (how many, default "
        f"{limits.default_k}, at most {limits.max_k}), types (a list of fact, preference, event, "
        f"entity: only those), after / before ({_TIME}: only memories whose time is in that window).")


def _search_properties(limits: Limits) -> dict[str, Any]:
    return {"query": {"type": "string", "description": "The question to look up, in natural language."},
            "k": {"type": "integer", "minimum": 1, "maximum": limits.max_k,
                  "description": "How many memories to return."},
            "types": {"type": "array", "items": {"type": "string", "enum": [t.value for t in MemoryType]},
                      "description": "Only memories of these types."},
            "after": {"type": "string", "description": f"Only memories at or after this time, {_TIME}."},
            "before": {"type": "string", "description": f"Only memories before this time, {_TIME}."}}


def _list_description(limits: Limits) -> str:
    return ("List the user's memories, newest first, one page at a time, each as [type, time, id=...] text. "
            f"Optional: limit (page size, default {limits.default_page}, at most {limits.max_page}) "
            "and offset (how many to skip: the offset a previous page says to use next).")


def _list_properties(limits: Limits) -> dict[str, Any]:
    return {"limit": {"type": "integer", "minimum": 1, "maximum": limits.max_page},
            "offset": {"type": "integer", "minimum": 0}}


def _save_properties(_limits: Limits) -> dict[str, Any]:
    return {"text": {"type": "string", "description": "One self-contained statement about the user."},
            "type": {"type": "string", "enum": [t.value for t in MemoryType]},
            "time": {"type": "string", "description": f"When it happened or will happen, {_TIME}."}}


def _delete_properties(_limits: Limits) -> dict[str, Any]:
    return {"memory_id": {"type": "string", "description": "The id of the memory, shown as id=... by the other tools."}}

#: Every tool, in the order `specs` lists them: the two that read, then the two that write.
TOOLS: Mapping[str, ToolEntry] = MappingProxyType({entry.name: entry for entry in (
    ToolEntry(SEARCH, False, _search_description, _search_properties, ("query",), MemoryTools._search),
    ToolEntry(LIST, False, _list_description, _list_properties, (), MemoryTools._list),
    ToolEntry(SAVE, True, lambda _limits: WRITE_TOOL_DESCRIPTION, _save_properties, ("text",), MemoryTools._save),
    ToolEntry(DELETE, True, lambda _limits: DELETE_TOOL_DESCRIPTION, _delete_properties, ("memory_id",),
              MemoryTools._delete),
)})


def _inside(hit: FusedHit, after: datetime | None, before: datetime | None) -> bool:
    """Inside the window [after, before); with no window, every hit is."""
    if after is None and before is None:
        return True
    when = hit.memory.event_at
    return when is not None and (after is None or when >= after) and (before is None or when < before)


def _arguments(arguments: object, spec: ToolSpec) -> dict[str, Any]:
    """The call's arguments as a dict, every name one the tool's schema has (an argument the tool
    does not know is refused by name, not dropped: the model meant something by it)."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise QueryError(f"arguments must be an object, got {type(arguments).__name__}")
    known = spec.input_schema["properties"]
    refuse_unknown([str(a) for a in arguments], tuple(known), spec.name, error=QueryError)  # the frameworks' words
    missing = [a for a in spec.input_schema["required"] if a not in arguments]
    if missing:
        raise QueryError(f"missing argument {', '.join(map(repr, missing))}; {spec.name} takes {', '.join(known)}")
    return dict(arguments)
