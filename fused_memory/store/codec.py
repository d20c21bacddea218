"""Memory <-> payload. The vector store's payload is the source of truth (BM25 and the embedded
graph are rebuilt from it), so this is the one place that knows the on-disk shape."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from ..types import Memory, MemoryType, thaw

__all__ = ["LAYOUT_VERSION", "to_payload", "from_payload"]

#: Bumped when the payload shape changes; a store of another layout is refused on open.
LAYOUT_VERSION = 1


def _ts(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def _dt(value: Any) -> datetime | None:
    if value is None:
        return None
    return datetime.fromtimestamp(float(value), tz=timezone.utc)


def to_payload(m: Memory) -> dict[str, Any]:
    """Epoch floats for times (range filters in both Qdrant engines and FalkorDB all take floats)."""
    return {
        "memory_id": m.id,
        "namespace": m.namespace,
        "text": m.text,
        "predicate": m.predicate,
        "type": m.type.value if m.type else None,
        "event_at": _ts(m.event_at),
        "event_at_iso": m.event_at.isoformat() if m.event_at else None,
        "created_at": _ts(m.created_at),
        "entities": list(m.entities),
        "session_id": m.session_id,
        "metadata": thaw(m.metadata),
    }


def from_payload(p: Mapping[str, Any]) -> Memory:
    """Rebuild a Memory. Times come back in UTC; the instant is preserved exactly."""
    return Memory(
        id=str(p["memory_id"]), namespace=str(p["namespace"]), text=str(p["text"]),
        predicate=p.get("predicate"),
        type=MemoryType(p["type"]) if p.get("type") else None,
        event_at=_dt(p.get("event_at")), created_at=_dt(p.get("created_at")),
        entities=tuple(p.get("entities") or ()), session_id=p.get("session_id"),
        metadata=p.get("metadata") or {},
    )
