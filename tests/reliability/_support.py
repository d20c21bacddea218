"""Helpers shared by the reliability modules: real stores (qdrant-edge, rank-bm25, the embedded graph or
Cypher over FalkorDB), the fast deterministic `HashingEmbedder`, and a thin fault-injecting proxy that
wraps a *real* backend object (it forwards every call and raises or stalls only where told to)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fused_memory.backends.graph.cypher import CypherGraphStore
from fused_memory.backends.lexical.bm25 import BM25Index
from fused_memory.backends.vector.edge import QdrantEdgeBackend
from fused_memory.embeddings import HashingEmbedder
from fused_memory.store.ingest import EntityExtractor
from fused_memory.store.memory_store import MemoryStore

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
DIM = 64


def embedded(path: Path | str, *, dim: int = DIM, ner: bool = False) -> MemoryStore:
    """The embedded default (qdrant-edge + BM25 + SQLite graph), with the hashing embedder."""
    return MemoryStore.embedded(path, embedder=HashingEmbedder(dim=dim), ner=ner)


def with_cypher_graph(path: Path | str, uri: str, *, dim: int = DIM,
                      timeout_s: float = 2.0) -> MemoryStore:
    """Embedded vectors and BM25, with the graph on a Bolt server (FalkorDB here)."""
    root = Path(path)
    return MemoryStore(QdrantEdgeBackend(str(root / "vectors")), BM25Index(), HashingEmbedder(dim=dim),
                       graph=CypherGraphStore(uri, timeout_s=timeout_s),
                       extractor=EntityExtractor(enabled=False))


def counts(store: MemoryStore, namespace: str) -> tuple[int, int, int]:
    """(vector store, lexical index, graph) memory counts of one namespace."""
    assert store.graph is not None
    return (store.vectors.count(namespace), store.lexical.count(namespace),
            int(store.graph.stats(namespace)["memories"]))


def lexical_ids(store: MemoryStore, namespace: str, text: str, k: int = 10) -> list[str]:
    return [mid for mid, _ in store.lexical.search(namespace, text, k)]


class Injected(Exception):
    """Raised by `FaultProxy` where a fault was injected (not a FusedMemoryError on purpose: the
    code under test must cope with whatever a backend throws)."""


class FaultProxy:
    """Forwards everything to `inner`; `fail(method, times)` makes the next calls raise, `stall(method)`
    makes them block until `release()`, `after(method)` runs the real call and then raises."""

    def __init__(self, inner: Any) -> None:
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "_faults", {})
        object.__setattr__(self, "released", threading.Event())
        object.__setattr__(self, "calls", {})

    def fail(self, method: str, times: int = 1, exc: BaseException | None = None, *, after: bool = False
             ) -> FaultProxy:
        self._faults[method] = ["after" if after else "fail", times, exc or Injected(f"injected fault in {method}")]
        return self

    def stall(self, method: str, times: int = 1_000_000) -> FaultProxy:
        self._faults[method] = ["stall", times, None]
        return self

    def release(self) -> None:
        self.released.set()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr) or name not in self._faults:
            return attr

        def call(*args: Any, **kw: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            fault = self._faults.get(name)
            if fault is None or fault[1] <= 0:
                return attr(*args, **kw)
            fault[1] -= 1
            if fault[0] == "stall":
                self.released.wait(60)
                return attr(*args, **kw)
            if fault[0] == "after":
                attr(*args, **kw)
            raise fault[2]
        return call

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, value)


@contextmanager
def elapsed() -> Iterator[Callable[[], float]]:
    """`with elapsed() as took: ...; took()` -> seconds."""
    t0 = time.perf_counter()
    end: list[float] = []
    yield lambda: (end[0] if end else time.perf_counter()) - t0
    end.append(time.perf_counter())


def deadline(timeout_s: float) -> float:
    """What "within timeout + 10%" may take on a loaded 2-core box: 10% plus 0.5 s of slack."""
    return timeout_s * 1.1 + 0.5
