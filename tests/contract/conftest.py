"""Fixtures of the graph contract: a factory that opens a new store object over the same data,
for the embedded store, for the Cypher store against a real FalkorDB Bolt server, and for the
engine graph in qdrant-client's local mode (`backends.graph.engine`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from graph_contract import Factory

from fused_memory.backends.graph.cypher import CypherGraphStore
from fused_memory.backends.graph.embedded import EmbeddedGraphStore
from fused_memory.backends.graph.engine import EngineGraphStore
from fused_memory.backends.vector.server import QdrantClientBackend

from falkordb_server import bolt_server  # noqa: F401 - session fixture shared with tests/integration


@pytest.fixture(params=["embedded", pytest.param("cypher", marks=pytest.mark.slow), "engine"])  # slow: a Bolt server
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """Each call opens a *new* store object over the same data (that is what reopen means)."""
    yield from _factories(request, tmp_path, request.param)


@pytest.fixture(params=["embedded", pytest.param("cypher", marks=pytest.mark.slow)])
def make_legacy(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """The backends an older fused-memory wrote stores with (the engine graph came later: no store
    of it predates garbage collection), for what such a store must still do."""
    yield from _factories(request, tmp_path, request.param)


@pytest.fixture
def make_cypher(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """The Cypher backend alone, for what only it has (dialect, payload limits)."""
    yield from _factories(request, tmp_path, "cypher")


def _factories(request: pytest.FixtureRequest, tmp_path: Path, backend: str) -> Iterator[Factory]:
    made: list[Any] = []
    if backend == "embedded":
        def new() -> Any:
            return EmbeddedGraphStore(str(tmp_path / "graph"))
    elif backend == "engine":  # qdrant-client local mode on a folder: a reopen is a new client on the same files
        hosts: list[QdrantClientBackend] = []

        def new() -> Any:
            for h in hosts:
                h.close()
            hosts.append(QdrantClientBackend(location=str(tmp_path / "qdrant")))
            return EngineGraphStore(hosts[-1])

        request.addfinalizer(lambda: [h.close() for h in hosts])
    else:
        uri = request.getfixturevalue("bolt_server")

        def new() -> Any:
            return CypherGraphStore(uri)

        wipe = new()  # FalkorDB maps every database name to one graph: start each test empty
        with wipe._work() as w:
            w.run("MATCH (n) DETACH DELETE n")
        wipe.close()

    def factory() -> Any:
        for g in made:
            g.close()
        made.append(new())
        made[-1].open()
        return made[-1]

    factory.backend = backend  # type: ignore[attr-defined]
    yield factory
    for g in made:
        g.close()
