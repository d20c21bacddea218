"""A database name on a server that has only one graph is refused, not silently shared.

FalkorDB's Bolt listener maps every database name to the same graph. Two stores given
`neo4j_database="app1"` and `"app2"` on one server would read each other's entities, and a
delete in one would unlink the other's memory of the same id (ids derive from namespace + text):
its graph arm would then miss it, with no error anywhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fused_memory.backends.graph.cypher import CypherGraphStore
from fused_memory.embeddings.hashing import HashingEmbedder
from fused_memory.errors import ConfigurationError
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory

pytestmark = pytest.mark.slow  # the Bolt server


def test_a_database_name_is_refused_where_the_server_has_one_graph(bolt_server: str) -> None:
    graph = CypherGraphStore(bolt_server, database="app1")  # no I/O yet: the constructor cannot know
    with pytest.raises(ConfigurationError, match="serves one graph"):
        graph.open()
    CypherGraphStore(bolt_server).open()  # the server is fine without one


def test_connect_with_a_database_fails_before_writing_anything(bolt_server: str, tmp_path: Path) -> None:
    store = MemoryStore.connect(qdrant_location=str(tmp_path / "q"), neo4j_uri=bolt_server, neo4j_database="app2",
                                embedder=HashingEmbedder(dim=64), ner=False)
    with pytest.raises(ConfigurationError, match="database='app2'"):
        store.add([Memory(text="Sarah Chen leads Kestrel", namespace="db-refused")])
    plain = CypherGraphStore(bolt_server)
    plain.open()
    assert plain.stats("db-refused")["memories"] == 0
