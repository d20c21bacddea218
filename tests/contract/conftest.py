"""Fixtures of the graph contract: a factory that opens a new store object over the same data,
for the embedded store and for the Cypher store against a real FalkorDB Bolt server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from graph_contract import Factory

from fused_memory.backends.graph.cypher import CypherGraphStore
from fused_memory.backends.graph.embedded import EmbeddedGraphStore

from falkordb_server import bolt_server  # noqa: F401 - session fixture shared with tests/integration


@pytest.fixture(params=["embedded", "cypher"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """Each call opens a *new* store object over the same data (that is what reopen means)."""
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
