"""How LangGraph's items map onto fused-memory's memories, and back (used by `FusedMemoryStore`).

Namespaces
----------
A LangGraph namespace is a tuple of labels; ours is one string. The labels are joined with ".",
the separator LangGraph itself forbids inside a label (and its SQL stores join with), so the
mapping is one-to-one and reversible: `("memories", "u1")` is the namespace `"memories.u1"`, which
is also where a retriever or tool built with `namespace="memories.u1"` reads and writes, and
`"alice"` is `("alice",)`. A tuple that cannot be mapped is refused with LangGraph's own
`InvalidNamespaceError`, naming the label: what LangGraph refuses (an empty or non-string label,
".", NUL) and what a fused-memory namespace cannot hold (a lone blank label, text that is not
valid Unicode, more than 16 KB). A stored namespace that is no tuple (an empty segment, as in
"a..b") is not shown to LangGraph. A prefix is compared label by label on the decoded tuples,
never as text, so `("u1",)` never reaches `("u10",)`.

Values
------
A value is a JSON object. It is kept whole, and `get` and `search` give back exactly what was
put. Its text (what the arms index) is, in order:

* the `index` fields of the put, else the `fields` of the store's `index` config (LangGraph's
  JSON paths: "content", "a.b", "chapters[*].title"), joined by new lines; when they hold no
  text the item is stored unindexed, as LangGraph leaves it unembedded;
* else `value["content"]`, LangGraph's and LangMem's key, unwrapped while it is itself an object
  with a "content" (LangMem's memory manager writes {"kind": ..., "content": {"content": ...}});
  an empty text there is refused, since there is nothing to remember;
* else the whole value as JSON (LangGraph's "$").

Three keys are also fused-memory's own fields, read when present and checked: `type` (fact,
preference, event or entity), `event_at` (an ISO 8601 time with its zone) and `entities` (a list of
names). A memory that another path wrote (a tool, the memory block, `MemoryStore.add`) reads back
as `{"content": text, "type": ..., "event_at": ..., "entities": [...], "session_id": ...,
"metadata": {...}}`, each key only when it has a value.

Filters
-------
`filter` is matched on the value as LangGraph's `InMemoryStore` matches it: keys at the top level
(or, as LangGraph's SQL stores read them, a dotted path "user.level" when no top-level key has that
name), a nested object matches the keys it names, a list matches element by element, and the operators
$eq, $ne, $gt, $gte, $lt, $lte. One difference: a comparison on a field an item lacks (or that is
not a number) leaves that item out, where `InMemoryStore` fails the whole search with a TypeError.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph.store.base import InvalidNamespaceError, MatchCondition, get_text_at_path, tokenize_path

from fused_memory import FusedMemoryError, InvalidMemory, Memory, MemoryType
from fused_memory.agent_writes import parse_time

__all__ = [
    "SEPARATOR",
    "ITEM_KEY",
    "namespace_key",
    "namespace_labels",
    "check_labels",
    "index_fields",
    "item_memory",
    "item_value",
    "is_indexed",
    "item_ttl",
    "matches",
    "check_filter",
    "namespace_matches",
    "stored_at",
]

#: Joins a namespace's labels into our namespace string (LangGraph forbids it inside a label).
SEPARATOR = "."
#: The metadata key under which a memory written through LangGraph keeps its item:
#: `{"value": <the value, whole>, "indexed": <False for index=False>}`.
ITEM_KEY = "langgraph_item"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ORDER = {"$gt": float.__gt__, "$gte": float.__ge__, "$lt": float.__lt__, "$lte": float.__le__}


# ---------------------------------------------------------------- namespaces
def check_labels(labels: object, what: str = "namespace") -> tuple[str, ...]:
    """Labels as LangGraph checks them, and as a fused-memory namespace can hold them; `()` passes
    (an empty prefix is the whole store)."""
    if not isinstance(labels, tuple):
        raise InvalidNamespaceError(f"{what} must be a tuple of strings, got {type(labels).__name__}: {labels!r}")
    for label in labels:
        if not isinstance(label, str):
            raise InvalidNamespaceError(f"{what} label {label!r} in {labels!r} must be a string, "
                                        f"got {type(label).__name__}")
        if not label:
            raise InvalidNamespaceError(f"{what} label in {labels!r} is empty; labels must be non-empty strings")
        if SEPARATOR in label or "\x00" in label:
            raise InvalidNamespaceError(f"{what} label {label!r} in {labels!r} contains "
                                        f"{'a period' if SEPARATOR in label else 'a NUL character'}")
        try:
            label.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidNamespaceError(f"{what} label {label!r} in {labels!r} is not valid Unicode text") from None
    return labels


def namespace_key(labels: object, what: str = "namespace") -> str:
    """The fused-memory namespace of a non-empty LangGraph namespace ("memories.u1")."""
    labels = check_labels(labels, what)
    if not labels:
        raise InvalidNamespaceError(f"{what} cannot be empty")
    key = SEPARATOR.join(labels)
    if not key.strip():
        raise InvalidNamespaceError(f"{what} {labels!r} is one blank label, which no fused-memory namespace can be")
    if len(key.encode("utf-8")) > 16_384:
        raise InvalidNamespaceError(f"{what} {labels[:3]!r}... is longer than 16384 bytes once joined")
    return key


def namespace_labels(key: str) -> tuple[str, ...] | None:
    """The LangGraph namespace of a stored one, or None when it has an empty segment ("a..b")."""
    labels = tuple(key.split(SEPARATOR))
    return None if "" in labels else labels


def namespace_matches(labels: tuple[str, ...], conditions: Sequence[MatchCondition]) -> bool:
    """`list_namespaces` matching, as LangGraph's stores do it: prefix or suffix, label by label,
    "*" standing for any one label."""
    for condition in conditions:
        path = tuple(condition.path)
        if len(labels) < len(path):
            return False
        if condition.match_type == "prefix":
            pairs = zip(labels, path, strict=False)
        elif condition.match_type == "suffix":
            pairs = zip(reversed(labels), reversed(path), strict=False)
        else:
            raise ValueError(f"match_type must be 'prefix' or 'suffix', got {condition.match_type!r}")
        if not all(p == "*" or label == p for label, p in pairs):
            return False
    return True


# ---------------------------------------------------------------- values
def index_fields(index: object, what: str = "index") -> tuple[str, ...] | None:
    """A list of JSON paths (`index=[...]` of a put, or `fields` of the store's config) checked."""
    if index is None:
        return None
    if isinstance(index, str) or not isinstance(index, Sequence) or not all(isinstance(f, str) and f for f in index):
        raise ValueError(f"{what} must be False, None or a list of field paths (e.g. ['content']), got {index!r}")
    return tuple(index)


def _paths_text(value: Mapping[str, Any], fields: Sequence[str]) -> str:
    texts = [t for f in fields for t in get_text_at_path(value, f if f == "$" else tokenize_path(f))]
    return "\n".join(t for t in texts if t.strip())


def _default_text(value: Mapping[str, Any]) -> str:
    if "content" not in value:
        return json.dumps(value, ensure_ascii=False)
    content: Any = value["content"]
    path = 'value["content"]'
    while isinstance(content, Mapping) and "content" in content:
        content, path = content["content"], path + '["content"]'
    if isinstance(content, str):
        if not content.strip():
            raise InvalidMemory(f"{path} is empty: there is nothing to remember")
        return content
    return json.dumps(content, ensure_ascii=False)


def _fields(value: Mapping[str, Any]) -> dict[str, Any]:
    """The memory fields a value names: `type`, `event_at`, `entities`, each checked."""
    out: dict[str, Any] = {}
    if value.get("type") is not None:
        kind = value["type"]
        if not isinstance(kind, str) or kind.strip().lower() not in {t.value for t in MemoryType}:
            allowed = ", ".join(t.value for t in MemoryType)
            raise InvalidMemory(f'value["type"] is a fused-memory field and must be one of {allowed}, got {kind!r} '
                                "(keep your own kind of item under another key)")
        out["type"] = kind
    if value.get("event_at") is not None:
        out["event_at"] = parse_time(value["event_at"], 'value["event_at"]')
    if value.get("entities") is not None:
        names = value["entities"]
        if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
            raise InvalidMemory(f'value["entities"] must be a list of names (non-empty strings), got {names!r}')
        out["entities"] = tuple(names)
    return out


def _ttl_minutes(ttl: object) -> float | None:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl):
        raise ValueError(f"ttl must be a number of minutes or None, got {ttl!r}")
    return float(ttl)


def item_ttl(memory: Memory) -> float | None:
    """The TTL (minutes) an item was put with, which a read's refresh applies again."""
    item = _item(memory)
    ttl = item.get("ttl") if item is not None else None
    return float(ttl) if isinstance(ttl, (int, float)) and not isinstance(ttl, bool) else None


def item_memory(namespace: str, key: object, value: object, index: object = None,
                fields: Sequence[str] | None = None, *, ttl: object = None, now: datetime | None = None) -> Memory:
    """The memory a put stores. Every check happens here, before anything is written. An item put
    with `index=False` (or whose index fields hold no text) is stored unindexed (`Memory.indexed`);
    one with a `ttl` (minutes) expires that long after `now` (the batch's write)."""
    minutes = _ttl_minutes(ttl)
    if not isinstance(key, str) or not key:
        raise InvalidMemory(f"key must be a non-empty string, got {key!r}")
    if not isinstance(value, Mapping):
        raise InvalidMemory(f"value must be a dict (a JSON object), got {type(value).__name__}: {value!r}"[:300])
    if index is not False:
        index = index_fields(index)
    paths = fields if index is None else index
    try:
        text = "" if index is False else (_paths_text(value, paths) if paths else _default_text(value))
        indexed = bool(text)
        whole = json.dumps(value, ensure_ascii=False) if not text else ""
        item = {"value": dict(value), **({} if indexed else {"indexed": False}),
                **({} if minutes is None else {"ttl": minutes})}
        expires = None if minutes is None else (now or datetime.now(timezone.utc)) + timedelta(minutes=minutes)
        return Memory(text=text or whole, namespace=namespace, id=key, metadata={ITEM_KEY: item}, indexed=indexed,
                      expires_at=expires, **_fields(value))
    except (TypeError, ValueError) as exc:
        if isinstance(exc, FusedMemoryError):
            raise InvalidMemory(str(exc).replace(f"metadata.{ITEM_KEY}.value", "value")) from None
        raise InvalidMemory(f"value must be JSON (str keys; strings, numbers, booleans, null, lists, objects): "
                            f"{exc}") from None


def _item(memory: Memory) -> Mapping[str, Any] | None:
    item = memory.metadata.get(ITEM_KEY)
    return item if isinstance(item, Mapping) and isinstance(item.get("value"), Mapping) else None


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


def item_value(memory: Memory) -> dict[str, Any]:
    """The item's value: as put, for a memory written through LangGraph; else built from the
    memory's fields (see the module docstring). A new dict on every call."""
    item = _item(memory)
    if item is not None:
        return _thaw(item["value"])
    value: dict[str, Any] = {"content": memory.text}
    if memory.type is not None:
        value["type"] = memory.type.value
    if memory.event_at is not None:
        value["event_at"] = memory.event_at.isoformat()
    if memory.entities:
        value["entities"] = list(memory.entities)
    if memory.session_id is not None:
        value["session_id"] = memory.session_id
    if memory.metadata:
        value["metadata"] = _thaw(memory.metadata)
    return value


def is_indexed(memory: Memory) -> bool:
    """False for an item put with `index=False` (or whose index fields held no text): a query does
    not rank it; it follows the ranked items with no score, as LangGraph's stores place it."""
    item = _item(memory)
    return item is None or item.get("indexed", True) is not False


def stored_at(memory: Memory) -> datetime:
    """The item's `created_at` and `updated_at`: when the memory was last written."""
    return memory.created_at or _EPOCH


# ---------------------------------------------------------------- filters
def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _operator(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if op in _ORDER:
        bound = _number(operand)
        if bound is None:
            raise ValueError(f"filter operator {op} needs a number, got {operand!r}")
        have = _number(value)
        return have is not None and _ORDER[op](have, bound)
    raise ValueError(f"filter operator {op!r} is not supported; use $eq, $ne, $gt, $gte, $lt or $lte")


def _compare(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, Mapping) and all(_compare(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(wanted)
                and all(_compare(a, b) for a, b in zip(value, wanted, strict=True)))
    return bool(value == wanted)


def check_filter(flt: object, path: str = "filter") -> None:
    """Refuse what no item could be matched against, before any item is: an operator outside the
    six, an order comparison with no number (`InMemoryStore` only fails once some item reaches it)."""
    if not isinstance(flt, Mapping):
        return
    for key, wanted in flt.items():
        if not isinstance(key, str):
            raise ValueError(f"{path} keys must be strings, got {key!r}")
        if key.startswith("$"):
            if key not in ("$eq", "$ne", *_ORDER):
                raise ValueError(f"filter operator {key!r} is not supported; use $eq, $ne, $gt, $gte, $lt or $lte")
            if key in _ORDER and _number(wanted) is None:
                raise ValueError(f"filter operator {key} at {path} needs a number, got {wanted!r}")
        elif isinstance(wanted, Mapping):
            check_filter(wanted, f"{path}.{key}")


def matches(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    """Whether an item's value passes a search's `filter` (see the module docstring)."""
    return not flt or all(_compare(_at(value, k), v) for k, v in flt.items())


def _at(value: Mapping[str, Any], key: str) -> Any:
    """The value under a filter key: the top-level key, else a dotted path ("user.access-level"),
    as LangGraph's SQL stores read a key (a key that exists at the top level wins)."""
    if key in value or "." not in key:
        return value.get(key)
    found: Any = value
    for part in key.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return None
        found = found[part]
    return found
