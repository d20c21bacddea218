"""Checks of the arguments the store's entry points take (a namespace, memory ids, an explicit
relation), kept apart from `memory_store` so that every entry point reads them the same way."""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ..errors import InvalidMemory, QueryError
from ..types import MAX_NAME_BYTES, memory_id_text, require_clean
from ..validation import require_storable

__all__ = ["check_mentions", "check_namespace", "check_relation", "memory_ids"]

_KINDS = ("structural", "semantic", "lifecycle")


def check_mentions(memory: Any) -> None:
    """A memory's own entity names as the graph will check them (also once normalized: NFKC can grow
    a name past the limit), so `add` refuses the batch before writing any of it. A name that grew
    past 16 KB was refused by the graph write of its chunk, after earlier chunks were stored."""
    from .graph_values import clean_mentions

    try:
        clean_mentions(memory.entities)
    except QueryError as exc:
        raise InvalidMemory(f"memory {memory.id!r}: {exc}") from None


def check_relation(kind: str, confidence: Any, valid_from: datetime | None, valid_to: datetime | None) -> float:
    """`relate()`'s settings; returns the confidence as a float. True and "0.5" were taken as 1.0
    and 0.5, and a validity that ends before it starts was stored (found by probing the API)."""
    if kind not in _KINDS:
        raise QueryError(f"relation kind must be structural, semantic or lifecycle, not {kind!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0.0 <= float(confidence) <= 1.0:
        raise QueryError(f"relation confidence must be a number in [0, 1], got {confidence!r}")
    for name, value in (("valid_from", valid_from), ("valid_to", valid_to)):
        if value is not None:
            require_storable(value, name)
    if valid_from is not None and valid_to is not None and valid_from > valid_to:
        raise QueryError(f"relation valid_from {valid_from} is after valid_to {valid_to}")
    return float(confidence)


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
