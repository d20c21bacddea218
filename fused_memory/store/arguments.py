"""Checks of the arguments the store's entry points take (a namespace, memory ids, a batch's entity
names), kept apart from `memory_store` so that every entry point reads them the same way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..backends.graph.values import clean_mentions
from ..errors import InvalidMemory, QueryError
from ..types import Memory
from ..validation import memory_id_text

__all__ = ["check_mentions", "memory_ids"]


def check_mentions(memory: Any) -> None:
    """A memory's own entity names as the graph will check them (also once normalized: NFKC can grow
    a name past the limit), so `add` refuses the batch before writing any of it. A name that grew
    past 16 KB was refused by the graph write of its chunk, after earlier chunks were stored."""
    try:
        clean_mentions(memory.entities)
    except QueryError as exc:
        raise InvalidMemory(f"memory {memory.id!r}: {exc}") from None


def memory_ids(ids: Any, namespace: str | None = None) -> list[str]:
    """Ids as `add` keyed them, for every backend alike ("123" for 123); one id may be given bare.
    A `Memory` (as `add` returns them) stands for its id: `delete(ns, memory)` refused it with the
    whole memory's repr as the bad id. One from another namespace than `namespace` is refused."""
    one = isinstance(ids, (str, Memory)) or not isinstance(ids, Iterable)  # memory_id_text decides the rest
    return [_memory_id(i, namespace) for i in ([ids] if one else list(ids))]


def _memory_id(item: Any, namespace: str | None) -> str:
    if not isinstance(item, Memory):
        return memory_id_text(item, QueryError)
    if namespace is not None and item.namespace != namespace:
        raise QueryError(f"memory {item.id!r} is in namespace {item.namespace!r}, not {namespace!r}")
    return item.id
