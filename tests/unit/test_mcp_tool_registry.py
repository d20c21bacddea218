"""The MCP tools' registry (`tools.TOOLS`) decides who may call what: every tool that writes is
neither offered to nor callable by a read-only grant, every tool that reads is both, and the flag
tells the truth (a tool flagged as reading leaves the store as it was; one flagged as writing
changes it for a grant that may write). Iterates the registry, so a new tool is covered once it
gives an example call here; on a real store, without a server."""

from __future__ import annotations

from typing import Any

from fused_memory.ensemble import EnsembleMemory
from fused_memory.mcp_server import Grant, MemoryTools
from fused_memory.mcp_server.tools import DELETE, LIST, SAVE, SEARCH, TOOLS
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory

#: One valid call per registered tool; `{id}` is replaced by the id of a memory in the namespace.
EXAMPLE_CALLS: dict[str, dict[str, Any]] = {
    SEARCH: {"query": "Where does Alice live?"},
    LIST: {"limit": 5},
    SAVE: {"text": "Alice moved to Porto in May.", "type": "fact"},
    DELETE: {"memory_id": "{id}"},
}


def _contents(store: MemoryStore, namespace: str) -> list[tuple[str, str]]:
    return sorted((m.id, m.text) for m in store.memories(namespace))


def test_every_registered_tool_has_an_example_call_and_the_writers_are_save_and_delete() -> None:
    assert set(EXAMPLE_CALLS) == set(TOOLS), "give each tool in TOOLS an example call in EXAMPLE_CALLS"
    assert {entry.name for entry in TOOLS.values() if entry.writes} == {SAVE, DELETE}
    assert all(name == entry.name for name, entry in TOOLS.items())


async def test_a_read_only_grant_is_refused_every_writing_tool_and_allowed_every_reading_one(
        store: MemoryStore) -> None:
    tools = MemoryTools(store, EnsembleMemory(store))
    readers = [entry.name for entry in TOOLS.values() if not entry.writes]
    for n, entry in enumerate(TOOLS.values()):
        namespace = f"registry-{n}"
        [kept] = store.add(Memory(text="Alice lives in Lisbon.", namespace=namespace))
        arguments = {k: v.format(id=kept.id) if isinstance(v, str) else v for k, v in EXAMPLE_CALLS[entry.name].items()}
        reader, writer = Grant((namespace,), False, "reader"), Grant((namespace,), True, "writer")
        before = _contents(store, namespace)

        offered = [spec.name for spec in tools.specs(reader)]
        answer = await tools.call(entry.name, dict(arguments), reader)
        assert _contents(store, namespace) == before, f"{entry.name} changed the store for a read-only grant"
        if entry.writes:
            assert entry.name not in offered
            assert answer.error and answer.text == (f"{entry.name}: unknown tool {entry.name!r} (this connection may "
                                                    f"not write); the tools are {', '.join(readers)}"), answer.text
        else:
            assert entry.name in offered
            assert not answer.error, answer.text

        assert entry.name in [spec.name for spec in tools.specs(writer)]
        answer = await tools.call(entry.name, dict(arguments), writer)
        assert not answer.error, answer.text
        changed = _contents(store, namespace) != before
        assert changed == entry.writes, f"{entry.name} is registered with writes={entry.writes} but changed={changed}"
