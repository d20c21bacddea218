"""Checks of the arguments the store's read and delete entry points take (a namespace, memory
ids), kept apart from `memory_store` so that every entry point reads them the same way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import QueryError
from ..types import MAX_NAME_BYTES, memory_id_text, require_clean

__all__ = ["check_namespace", "memory_ids"]


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
