"""Shared fixtures. Stores are real: qdrant-edge or qdrant-client local mode, rank-bm25, the
embedded graph; the fast HashingEmbedder stands in for MiniLM only where the test is about the
store's plumbing rather than semantic quality (tests that use the real model are marked `slow`)."""

from __future__ import annotations

import gc
import importlib.util
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType

import pytest

from fused_memory.embeddings import HashingEmbedder
from fused_memory.store.memory_store import MemoryStore

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)  # a Wednesday
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@contextmanager
def cpu_time() -> Iterator[Callable[[], float]]:
    """`with cpu_time() as took: ...; took()` -> seconds of this thread's CPU inside the block, with
    the garbage collector paused there: for the tests that bound a parse's or a match's cost. CPU,
    not wall time, so a busy test machine does not count; no collection, so a collection of the
    whole suite's heap landing in the block does not either (a stressed full run counted 0.65 s of
    one against a 63 ms parse)."""
    gc.collect()
    gc.disable()
    t0, end = time.thread_time(), []
    try:
        yield lambda: (end[0] if end else time.thread_time()) - t0
    finally:
        end.append(time.thread_time())
        gc.enable()


def load_example(name: str) -> ModuleType:
    """`examples/<name>.py` as a module, the way a user runs it, for the tests that run the examples."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=["edge", pytest.param("client", marks=pytest.mark.slow)])  # the fast lane: one backend
def store_factory(request, tmp_path):
    """Builds stores on either vector backend, all closed at teardown."""
    made: list[MemoryStore] = []

    def make(sub: str = "s", embedder=None, ner: bool = False) -> MemoryStore:
        emb = embedder or HashingEmbedder(dim=128)
        if request.param == "edge":
            s = MemoryStore.embedded(tmp_path / sub, embedder=emb, ner=ner)
        else:
            s = MemoryStore.connect(qdrant_location=str(tmp_path / f"{sub}-qdrant"), embedder=emb, ner=ner,
                                    graph_path=str(tmp_path / f"{sub}-graph"))
        made.append(s)
        return s

    make.backend = request.param  # type: ignore[attr-defined]
    yield make
    for s in made:
        s.close()


@pytest.fixture
def store(store_factory) -> Iterator[MemoryStore]:
    s = store_factory()
    yield s.open()
