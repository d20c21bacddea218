"""The entity version of a graph that other processes write too, as the store's query matcher keys on it."""

from __future__ import annotations

import threading
import time

from ..backends.protocols import GraphStore, VersionPolled

__all__ = ["SharedVersions"]


class SharedVersions:
    """The entity version of a graph other processes write too (a Bolt server), read at most once
    per `ttl_s` per namespace. A store rebuilt its query matcher only after its *own* writes, so on
    a shared graph another process's new entity was never matched here, and a name another process
    deleted (`backends.graph.gc`) was still planned; keying the matcher on this as well costs one small read
    a second. An in-process graph has no other writers: 0, no read."""

    def __init__(self, ttl_s: float = 1.0) -> None:
        self.ttl_s = ttl_s
        self._seen: dict[str, tuple[int, float]] = {}  # namespace -> (version, read at)
        self._lock = threading.Lock()

    def __call__(self, graph: GraphStore | None, namespace: str) -> int:
        if graph is None or not graph.remote:
            return 0
        now = time.monotonic()
        ttl = float(graph.version_ttl_s) if isinstance(graph, VersionPolled) else self.ttl_s
        with self._lock:
            seen = self._seen.get(namespace)
        if seen is not None and now - seen[1] < ttl:
            return seen[0]
        version = int(graph.entity_version(namespace))
        with self._lock:
            self._seen[namespace] = (version, now)
        return version
