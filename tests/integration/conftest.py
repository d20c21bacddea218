"""Integration fixtures: a real FalkorDB Bolt server (see tests/falkordb_server.py), and the demo's
memories in a real embedded store for the tests that only read it.

`bolt_server` (session scope) yields the bolt:// URI of a shared server; `falkordb_server` yields
the server object. A test that stops the server must start its own `FalkorDBServer` instead, as
test_graph_bolt_down.py does, so the shared one stays up for everyone else. `demo_ensemble`
(session scope) is an `EnsembleMemory` over the demo's memories (no NER at ingest, no relations):
tests must not write to it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fused_memory.demo import demo_memories
from fused_memory.ensemble import EnsembleMemory
from fused_memory.store.memory_store import MemoryStore

from falkordb_server import FalkorDBServer, bolt_server, falkordb_server  # noqa: F401 - fixtures

__all__ = ["FalkorDBServer", "bolt_server", "falkordb_server", "demo_ensemble"]


@pytest.fixture(scope="session")
def demo_ensemble(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EnsembleMemory]:
    store = MemoryStore.embedded(tmp_path_factory.mktemp("demo") / "store", ner=False)
    store.add(demo_memories())
    ens = EnsembleMemory(store)
    yield ens
    ens.close()
    store.close()
