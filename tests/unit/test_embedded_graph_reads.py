"""EmbeddedGraphStore: a read of a namespace the file holds nothing of asks SQLite once, not on
every read (a store's graph arm reads it for each query of a namespace without entities)."""

from __future__ import annotations

from pathlib import Path

from fused_memory.backends.graph.embedded import EmbeddedGraphStore
from fused_memory.types import EntityMention


def test_reads_of_an_empty_namespace_run_no_select_after_the_first(tmp_path: Path) -> None:
    graph = EmbeddedGraphStore(str(tmp_path / "graph"))
    graph.open()
    try:
        graph.link("full", [("m1", [EntityMention("Tom", "person")], None)])
        statements: list[str] = []
        assert graph._db is not None
        graph._db.set_trace_callback(statements.append)
        assert graph.entities("empty") == [] and graph.mentions_of("empty", "m1") == []
        first = len(statements)
        assert first > 0  # the first read asks the file
        assert graph.entities("empty") == [] and graph.resolve("empty", "tom") == []
        assert graph.entity_version("empty") == 0
        assert len(statements) == first, statements[first:]
        graph.link("empty", [("m2", [EntityMention("Tom", "person")], None)])  # a write: no longer empty
        assert [e.name for e in graph.entities("empty")] == ["Tom"]
    finally:
        graph.close()
    again = EmbeddedGraphStore(str(tmp_path / "graph"))  # and it is in the file
    again.open()
    try:
        assert [e.name for e in again.entities("empty")] == ["Tom"]
    finally:
        again.close()
