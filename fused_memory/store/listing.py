"""A namespace's memories as a list, newest first: what a key-value view of the store (LangGraph's
`BaseStore.search` without a query) and a conversation's earlier turns are read from.

The order is `created_at` descending (the time `add` stored the memory), ties by memory id, so it
is the same on every call and on both vector backends: the engines' own scroll order is by point
id, a hash of (namespace, id) that means nothing to a caller. Newest first is the order LangGraph's
SQL stores give (`updated_at DESC`), and the one an agent wants when it asks what it knows.

The backend filters (the namespace, and a conversation's `session_id`) when it is a
`PayloadLister`; a backend that is not is read namespace by namespace and filtered here, with the
same result. Sorting needs every matching payload, so listing reads all of what matches; the payloads
are sorted first and only the page asked for is decoded (decoding re-checks each memory and is most
of the cost). Measured with `benchmarks/bench_listing.py`
(docs/decisions/0039-langgraph-search-without-a-query.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..backends.codec import from_payload
from ..backends.protocols import PayloadLister, VectorBackend, VectorFilter
from ..errors import QueryError
from ..types import Memory
from ..validation import name_or_int, require_clean

__all__ = ["list_memories"]


def _payloads(vectors: VectorBackend, namespace: str, session_id: str | None,
              alive_at: float | None) -> Iterator[Mapping[str, Any]]:
    if isinstance(vectors, PayloadLister):
        return vectors.scroll_where(VectorFilter(namespace, session_id=session_id, alive_at=alive_at))
    return (p for p in vectors.scroll(namespace) if (session_id is None or p.get("session_id") == session_id)
            and (alive_at is None or not _gone(p.get("expires_at"), alive_at)))


def _gone(expires_at: Any, now: float) -> bool:
    return isinstance(expires_at, (int, float)) and expires_at <= now


def _count(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise QueryError(f"{what} must be an integer >= 0, got {value!r}")
    return value


def list_memories(vectors: VectorBackend, namespace: str, session_id: object = None, limit: int | None = None,
                  offset: int = 0, *, alive_at: float | None = None) -> list[Memory]:
    """Every memory of `namespace` (of one conversation, given `session_id`), newest first, or the
    page `[offset:offset + limit]` of that list. A session id is read as `Memory.session_id` reads it
    (an integer is its text). The payloads are sorted before they are decoded, so a page decodes
    only its own memories (decoding, which re-checks each memory, is most of the cost)."""
    if session_id is not None:
        session_id = require_clean(name_or_int(session_id, "session_id", QueryError), "session_id", QueryError)
    end = None if limit is None else _count(offset, "offset") + _count(limit, "limit")
    payloads = list(_payloads(vectors, namespace, session_id, alive_at))
    payloads.sort(key=lambda p: str(p.get("memory_id")))
    payloads.sort(key=_written, reverse=True)
    return [from_payload(p) for p in payloads[_count(offset, "offset"):end]]


def _written(payload: Mapping[str, Any]) -> float:
    """When a payload's memory was stored (epoch seconds; what `created_at` decodes from)."""
    at = payload.get("created_at")
    return float(at) if isinstance(at, (int, float)) else float("-inf")
