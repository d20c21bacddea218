"""Input checks and JSON helpers shared by the value types and the stores: what every backend
needs refused before it sees a value (naive datetimes, NUL, lone surrogates, oversized names,
metadata that is not JSON), in one place so the rules cannot drift apart."""

from __future__ import annotations

import json
import math
import numbers
import uuid
from collections.abc import Mapping
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any

from .errors import InvalidMemory, QueryError

__all__ = ["require_aware", "require_storable", "is_storable", "FIRST_STORABLE", "LAST_STORABLE", "require_clean",
           "check_size", "json_safe", "thaw", "utcnow", "stable_json", "MAX_NAME_BYTES", "memory_id_text",
           "name_or_int", "check_namespace"]


def require_aware(value: datetime, what: str, error: type[Exception] = QueryError) -> datetime:
    """Refuse naive datetimes: a memory store shared across zones cannot guess what they meant."""
    if not isinstance(value, datetime):
        raise error(f"{what} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise error(f"{what} must be timezone-aware (got naive {value.isoformat()}); "
                    "use datetime(..., tzinfo=timezone.utc)")
    return value


def is_storable(value: datetime) -> bool:
    """Whether an aware time survives the stores' round trip: epoch seconds (what range filters
    compare) and back, in UTC."""
    try:
        datetime.fromtimestamp(value.timestamp(), tz=timezone.utc)
    except (OverflowError, ValueError, OSError):
        return False
    return True


#: The first and last instants every store can hold (`is_storable`); a stored time outside them,
#: written before such times were refused, reads back as the nearer one instead of failing the read.
FIRST_STORABLE = datetime(1, 1, 1, tzinfo=timezone.utc)
LAST_STORABLE = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)


def require_storable(value: datetime, what: str, error: type[Exception] = QueryError) -> datetime:
    """`require_aware`, and `is_storable`. A time near year 1 or 9999 can pass Python's checks in
    its own zone yet fall outside years 1-9999 in UTC; written, it made every later open of the
    store fail on reading it back, so it is refused before anything is written."""
    require_aware(value, what, error)
    if not is_storable(value):
        raise error(f"{what} {value.isoformat()} is outside the range a store can hold "
                    "(years 1 to 9999 in UTC)")
    return value


def json_safe(value: Any, path: str, depth: int = 0) -> Any:
    """Copy metadata into plain JSON types, refusing what a payload store could not round-trip."""
    if depth > 32:
        raise InvalidMemory(f"metadata nested deeper than 32 levels at {path}")
    if value is None or isinstance(value, (bool, int, str)):
        if isinstance(value, str):
            require_clean(value, path)
        elif isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
            # the payload stores read such an integer back as a float, silently changing it
            raise InvalidMemory(f"metadata integer at {path} does not fit in 64 bits; store it as a string")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidMemory(f"metadata value at {path} is not a finite number")
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidMemory(f"metadata key {k!r} at {path} is not a string")
            require_clean(k, f"{path}.{k}")
            out[k] = json_safe(v, f"{path}.{k}", depth + 1)
        return MappingProxyType(out)
    if isinstance(value, (list, tuple)):
        return tuple(json_safe(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value))
    raise InvalidMemory(f"metadata value at {path} has type {type(value).__name__}, not JSON-safe")


def require_clean(value: str, what: str, error: type[Exception] = InvalidMemory) -> str:
    """Strings must encode as UTF-8 (no lone surrogates) and hold no NUL: every backend chokes on those
    (SQLite and the Bolt driver raise UnicodeEncodeError; FalkorDB silently cuts a value at a NUL)."""
    if "\x00" in value:
        raise error(f"{what} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise error(f"{what} is not valid Unicode text ({exc.reason})") from None
    return value



#: Longest memory id, namespace or entity name (UTF-8 bytes). The graph stores them, and FalkorDB's Bolt
#: listener hangs a connection on any record over 64 KB; an entity record carries its id and its name.
MAX_NAME_BYTES = 16_384


def check_size(value: str, what: str) -> None:
    if len(value) * 4 > MAX_NAME_BYTES and len(value.encode("utf-8")) > MAX_NAME_BYTES:
        raise InvalidMemory(f"{what} is longer than {MAX_NAME_BYTES} bytes of UTF-8 ({value[:40]!r}...)")


def thaw(value: Any) -> Any:
    """Turn frozen metadata (MappingProxyType / tuples) back into plain dicts and lists for JSON."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def stable_json(value: Any) -> str:
    return json.dumps(thaw(value), sort_keys=True, separators=(",", ":"))


def memory_id_text(value: object, error: type[Exception] = InvalidMemory) -> str:
    """A memory id as every store keys it (see `Memory.id`): text as given, an integer or UUID as text."""
    return name_or_int(value, "memory id", error)


def name_or_int(value: object, what: str, error: type[Exception] = InvalidMemory) -> str:
    """A name given as text, or as an integer (numpy's too) or UUID, read as its text, as every store
    keys it. Anything else would be stored as whatever the payload engine makes of it, or keyed
    differently by each backend, so it is refused."""
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, uuid.UUID):
        return str(value)
    raise error(f"{what} must be a string (or an integer or UUID), got {type(value).__name__}: {value!r}")


def check_namespace(namespace: str) -> str:
    """A namespace as every entry point takes it (store, ensemble, adapters, CLI): a non-empty clean
    string of at most `MAX_NAME_BYTES` of UTF-8; anything else is a `QueryError`."""
    if not isinstance(namespace, str) or not namespace.strip():
        raise QueryError("namespace must be a non-empty string")
    require_clean(namespace, "namespace", QueryError)
    if len(namespace.encode("utf-8")) > MAX_NAME_BYTES:
        raise QueryError(f"namespace is longer than {MAX_NAME_BYTES} bytes of UTF-8")
    return namespace
