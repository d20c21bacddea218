"""The store's meta (layout, embedder pin, session ends, upgrades done), as several processes
sharing one Qdrant server write it: each write merges what the backend holds now, so no process
writes back a copy that has lost another's news."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..backends.protocols import VectorBackend

__all__ = ["merged_sessions", "merged_upgrades", "write_merged"]


def merged_sessions(*copies: Mapping[str, Any] | None) -> dict[str, float]:
    """The latest session end of every namespace over several copies of the meta's `sessions`
    (what the backend holds now, what this process read at open, the end being recorded): a store
    sharing a Qdrant server with other processes must not write back a copy that has lost their
    session ends. No default of 0.0: a first end before 1970 is kept as given."""
    out: dict[str, float] = {}
    for copy in copies:
        for namespace, ts in (copy or {}).items():
            out[namespace] = max(out.get(namespace, float(ts)), float(ts))
    return out


def merged_upgrades(*copies: Iterable[str] | None) -> list[str]:
    """The union of several copies of the meta's `upgraded` (`store.upgrade`): an upgrade, once
    recorded, is never lost to another writer's older copy."""
    return sorted({name for copy in copies for name in (copy or ())})


def write_merged(vectors: VectorBackend, mine: Mapping[str, Any]) -> dict[str, Any]:
    """Write `mine` merged with the meta the backend holds now; returns what was written."""
    stored = vectors.read_meta() or {}
    meta = {**stored, **mine, "sessions": merged_sessions(stored.get("sessions"), mine.get("sessions")),
            "upgraded": merged_upgrades(stored.get("upgraded"), mine.get("upgraded"))}
    vectors.write_meta(meta)
    return meta
