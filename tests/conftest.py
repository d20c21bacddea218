"""Shared fixtures. Stores are real: qdrant-edge or qdrant-client local mode, rank-bm25, the
embedded graph; the fast HashingEmbedder stands in for MiniLM only where the test is about the
store's plumbing rather than semantic quality (tests marked `slow` use the real model)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType

import pytest

from fused_memory.embeddings import HashingEmbedder
from fused_memory.store.memory_store import MemoryStore

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)  # a Wednesday
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_example(name: str) -> ModuleType:
    """`examples/<name>.py` as a module, the way a user runs it, for the tests that run the examples."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=["edge", "client"])
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
