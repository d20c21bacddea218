"""`MemoryStore.memories`: a namespace (or one conversation of it) listed newest first, the same on
both vector backends, and the same whether the backend filters (`PayloadLister`) or not."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from fused_memory import Memory, QueryError
from fused_memory.backends import PayloadLister, VectorBackend, VectorQuery, VectorRecord
from fused_memory.store.listing import list_memories

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


class _ScrollOnly:
    """The store's real backend with only the required `VectorBackend` methods, as a third-party
    backend without the optional `PayloadLister` would be."""

    def __init__(self, inner: VectorBackend) -> None:
        self.inner, self.name = inner, inner.name

    def scroll(self, namespace: str | None = None) -> Iterator[Mapping[str, Any]]:
        return self.inner.scroll(namespace)

    def open(self, dim: int) -> None: ...
    def upsert(self, records: Sequence[VectorRecord]) -> None: ...
    def delete(self, namespace: str, memory_ids: Sequence[str]) -> None: ...
    def get(self, namespace: str, memory_ids: Sequence[str]) -> list[Mapping[str, Any]]: return []
    def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[Any]]: return []
    def count(self, namespace: str) -> int: return 0
    def namespaces(self) -> list[str]: return []
    def read_meta(self) -> dict[str, Any] | None: return None
    def write_meta(self, meta: Mapping[str, Any]) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


def _memories() -> list[Memory]:
    return [
        Memory(text="oldest", namespace="u1", id="a", created_at=T0, session_id="s1"),
        Memory(text="middle", namespace="u1", id="c", created_at=T0 + timedelta(hours=1), session_id="s1"),
        Memory(text="tie-b", namespace="u1", id="b2", created_at=T0 + timedelta(hours=2), session_id="s2"),
        Memory(text="tie-a", namespace="u1", id="b1", created_at=T0 + timedelta(hours=2)),
        Memory(text="another user", namespace="u10", id="z", created_at=T0 + timedelta(hours=3), session_id="s1"),
    ]


def test_newest_first_with_ties_by_id_on_both_backends(store: Any) -> None:
    store.add(_memories())
    assert [m.id for m in store.memories("u1")] == ["b1", "b2", "c", "a"]
    assert [m.id for m in store.memories("u1", session_id="s1")] == ["c", "a"]
    assert [m.id for m in store.memories("u10")] == ["z"] and store.memories("u") == []
    assert store.memories("u1")[0] == store.get_many("u1", ["b1"])[0]  # whole memories, as get_many reads them
    assert [m.id for m in store.memories("u1", limit=2, offset=1)] == ["b2", "c"]
    assert store.memories("u1", limit=0) == [] and [m.id for m in store.memories("u1", offset=3)] == ["a"]


def test_a_backend_without_the_capability_lists_the_same(store: Any) -> None:
    store.add(_memories())
    assert isinstance(store.vectors, PayloadLister) and not isinstance(_ScrollOnly(store.vectors), PayloadLister)
    for session in (None, "s1", "s2", "nobody"):
        assert list_memories(_ScrollOnly(store.vectors), "u1", session) == store.memories("u1", session_id=session)


def test_bad_arguments_are_query_errors(store: Any) -> None:
    with pytest.raises(QueryError, match="namespace"):
        store.memories("")
    with pytest.raises(QueryError, match="session_id"):
        store.memories("u1", session_id=["s1"])
    with pytest.raises(QueryError, match="limit must be an integer >= 0"):
        store.memories("u1", limit=-1)
    with pytest.raises(QueryError, match="offset must be an integer >= 0"):
        store.memories("u1", limit=1, offset="2")
    store.add(Memory(text="numbered", namespace="u1", session_id=7))
    assert [m.text for m in store.memories("u1", session_id=7)] == ["numbered"]  # 7 is stored as "7"
