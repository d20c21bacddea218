"""Checks of the arguments the store's entry points take (a namespace, memory ids, a batch's entity
names), kept apart from `memory_store` so that every entry point reads them the same way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InvalidMemory, QueryError
from ..types import MAX_NAME_BYTES, memory_id_text, require_clean

__all__ = ["check_mentions", "check_namespace", "memory_ids"]


def check_mentions(memory: Any) -> None:
    """A memory's own entity names as the graph will check them (also once normalized: NFKC can grow
    a name past the limit), so `add` refuses the batch before writing any of it. A name that grew
    past 16 KB was refused by the graph write of its chunk, after earlier chunks were stored."""
    from .graph_values import clean_mentions

    try:
        clean_mentions(memory.entities)
    except QueryError as exc:
        raise InvalidMemory(f"memory {memory.id!r}: {exc}") from None



def memory_ids(ids: Any) -> list[str]:
    """Ids as `add` keyed them, for every backend alike ("123" for 123); one id may be given bare."""
    one = isinstance(ids, str) or not isinstance(ids, Iterable)  # memory_id_text decides what an id may be
    return [memory_id_text(i, QueryError) for i in ([ids] if one else list(ids))]


def check_namespace(namespace: str) -> str:
    if not isinstance(namespace, str) or not namespace.strip():
        raise QueryError("namespace must be a non-empty string")
    require_clean(namespace, "namespace", QueryError)
    if len(namespace.encode("utf-8")) > MAX_NAME_BYTES:
        raise QueryError(f"namespace is longer than {MAX_NAME_BYTES} bytes of UTF-8")
    return namespace
