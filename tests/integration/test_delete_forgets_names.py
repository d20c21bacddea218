"""`MemoryStore.delete` forgets the names only the deleted memories mentioned: gone from the
graph's entities, from the query-time matcher, and from the graph's files once closed
(`fused_memory.backends.graph.gc`; the contract suite checks both graph backends directly)."""

from __future__ import annotations

from pathlib import Path

from fused_memory import Memory

ZELDA = [
    Memory(text="Zelda Quist called about the lease.", namespace="alice", entities=["Zelda Quist"], id="z1"),
    Memory(text="Zelda Quist sent Acme the signed lease.", namespace="alice", entities=["Zelda Quist", "Acme"],
           id="z2"),
    Memory(text="Acme renewed the contract.", namespace="alice", entities=["Acme"], id="a1"),
]


def graph_files_hold(path: str, word: bytes) -> bool:
    return any(word in f.read_bytes().lower() for f in Path(path).iterdir() if f.is_file())


def test_delete_removes_the_name_from_the_graph(store_factory) -> None:
    s = store_factory("forget").open()
    s.add(ZELDA)
    assert {e.id for e in s.graph.entities("alice")} == {"acme", "zelda quist"}
    assert "zelda quist" in {e.id for e in s.entity_matcher("alice").entities}
    s.delete("alice", ["z1", "z2"])
    assert [(e.id, e.mentions) for e in s.graph.entities("alice")] == [("acme", 1)]
    assert s.graph.resolve("alice", "Zelda Quist") == [] and s.graph.resolve("alice", "Zelda") == []
    assert {e.id for e in s.entity_matcher("alice").entities} == {"acme"}
    path = s.graph.path
    s.close()
    assert not graph_files_hold(path, b"zelda")
    s = store_factory("forget").open()  # reopened (and reconciled): still gone, the rest intact
    assert [(e.id, e.mentions) for e in s.graph.entities("alice")] == [("acme", 1)]
    assert [m.id for m in s.get_many("alice", ["a1", "z1"])] == ["a1"]
