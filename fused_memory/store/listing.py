"""A namespace's memories as a list, newest first: what a key-value view of the store (LangGraph's
`BaseStore.search` without a query) and a conversation's earlier turns are read from.

The order is `created_at` descending (the time `add` stored the memory), ties by memory id, so it
is the same on every call and on both vector backends: the engines' own scroll order is by point
id, a hash of (namespace, id) that means nothing to a caller. Newest first is the order LangGraph's
SQL stores give (`updated_at DESC`), and the one an agent wants when it asks what it knows.

The backend filters (the namespace, and a conversation's `session_id`) when it is a
`PayloadLister`; a backend that is not is read namespace by namespace and filtered here, with the
same result. Sorting needs every matching payload, so listing costs one pass over what matches
(`benchmarks/bench_listing.py` measures it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from typing import Any

from ..backends.codec import from_payload
from ..backends.protocols import PayloadLister, VectorBackend, VectorFilter
from ..errors import QueryError
from ..types import Memory
from ..validation import name_or_int, require_clean

__all__ = ["list_memories", "newest_first"]

_NEVER = datetime.min.replace(tzinfo=timezone.utc)


def _payloads(vectors: VectorBackend, namespace: str, session_id: str | None) -> Iterator[Mapping[str, Any]]:
    if isinstance(vectors, PayloadLister):
        return vectors.scroll_where(VectorFilter(namespace, session_id=session_id))
    return (p for p in vectors.scroll(namespace) if session_id is None or p.get("session_id") == session_id)


def newest_first(memories: list[Memory]) -> list[Memory]:
    """`memories` sorted as `list_memories` returns them: `created_at` descending, ties by id."""
    memories.sort(key=lambda m: m.id)
    memories.sort(key=lambda m: m.created_at or _NEVER, reverse=True)  # stable: ties keep id order
    return memories


def list_memories(vectors: VectorBackend, namespace: str, session_id: object = None) -> list[Memory]:
    """Every memory of `namespace` (of one conversation, given `session_id`), newest first. A session
    id is read as `Memory.session_id` reads it (an integer is its text)."""
    if session_id is not None:
        session_id = require_clean(name_or_int(session_id, "session_id", QueryError), "session_id", QueryError)
    return newest_first([from_payload(p) for p in _payloads(vectors, namespace, session_id)])
