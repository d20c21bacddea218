"""One real embedded store for every adapter test: the default MiniLM ONNX embedder, spaCy NER at
ingest, the built-in demo sample (people, projects, preferences, dated events, relations) plus a
second tenant. Seeded once per session: ingest is the slow part (model loads, NER), queries are
milliseconds, and the adapters only read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fused_memory.demo import DEMO_RELATIONS, demo_memories
from fused_memory.ensemble import EnsembleMemory
from fused_memory.store.memory_store import MemoryStore

from ._seed import NS, OTHER_MEMORIES


@pytest.fixture(scope="session")
def seeded_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    store = MemoryStore.embedded(tmp_path_factory.mktemp("adapters") / "store")
    store.open()
    store.add(demo_memories())
    store.add(OTHER_MEMORIES)
    for src, rel, dst, kind, confidence in DEMO_RELATIONS:
        store.relate(src, rel, dst, namespace=NS, kind=kind, confidence=confidence)
    yield store
    store.close()


@pytest.fixture(scope="session")
def core(seeded_store: MemoryStore) -> Iterator[EnsembleMemory]:
    """The core ensemble the adapters are compared against."""
    ens = EnsembleMemory(seeded_store)
    yield ens
    ens.close()


@pytest.fixture(scope="session")
def core_all_arms(seeded_store: MemoryStore) -> Iterator[EnsembleMemory]:
    """The core with the optimizer off: what a single-arm adapter class runs, restricted to its arm."""
    ens = EnsembleMemory(seeded_store, optimizer=False)
    yield ens
    ens.close()
