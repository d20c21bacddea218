"""`fused-memory mcp` over stdio, driven by the MCP SDK's own client with the server as a
subprocess (what Claude Desktop and Cursor do): the tools as a model sees them, save then search,
delete, paging, and every bad argument answered as an error result naming it, after which the
server still serves."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from fused_memory import Memory, MemoryStore

from ._servers import STARTUP_S, stdio_params, text_of

pytestmark = pytest.mark.slow


@asynccontextmanager
async def session(path: Path, namespace: str = "alice", *extra: str) -> AsyncIterator[ClientSession]:
    with anyio.fail_after(STARTUP_S + 60):
        async with stdio_client(stdio_params(path, namespace, *extra)) as (read, write), \
                ClientSession(read, write) as client:
            await client.initialize()
            yield client


async def test_the_tools_are_described_for_a_model_and_take_no_unlisted_argument(tmp_path: Path) -> None:
    async with session(tmp_path / "store") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"search_memory", "save_memory", "delete_memory", "list_memories"}
    assert "long-term memory" in tools["search_memory"].description
    assert "why it matched" in tools["search_memory"].description
    assert "newest first" in tools["list_memories"].description
    assert "ISO 8601 with a zone" in tools["save_memory"].description
    for tool in tools.values():
        assert tool.inputSchema["additionalProperties"] is False
    assert tools["search_memory"].inputSchema["required"] == ["query"]
    assert set(tools["search_memory"].inputSchema["properties"]) == {"query", "k", "types", "after", "before",
                                                                     "namespace"}


async def test_save_then_search_finds_it_with_its_type_time_id_and_why(tmp_path: Path) -> None:
    async with session(tmp_path / "store") as client:
        saved = await client.call_tool("save_memory", {"text": "I moved to Munich in March.", "type": "event",
                                                       "time": "2024-03-01T09:00:00+01:00"})
        await client.call_tool("save_memory", {"text": "My badge ID is E-47821", "type": "fact"})
        found = await client.call_tool("search_memory", {"query": "where did I move to?", "k": 1})
    assert not saved.isError and not found.isError
    memory_id = saved.structuredContent["memory"]["id"]
    assert text_of(saved).startswith(f"Saved to memory: [event, 2024-03-01T09:00:00+01:00, id={memory_id}]")
    [hit] = found.structuredContent["memories"]
    assert hit["id"] == memory_id and hit["type"] == "event"
    assert datetime.fromisoformat(hit["time"]) == datetime.fromisoformat("2024-03-01T09:00:00+01:00")  # one instant
    assert hit["text"] == "I moved to Munich in March." and "dense#1" in hit["explain"]
    assert text_of(found).startswith(f"[event, {hit['time']}, id={memory_id}] I moved to Munich")
    assert "(why: dense#1" in text_of(found)


async def test_search_filters_by_type_and_time_window(tmp_path: Path) -> None:
    async with session(tmp_path / "store") as client:
        for text, kind, when in (("Lunch with Tom at the Vietnamese place.", "event", "2024-03-05T12:00:00+00:00"),
                                 ("Dinner with Tom at the Greek place.", "event", "2024-04-05T19:00:00+00:00"),
                                 ("Tom prefers Greek food.", "preference", None)):
            await client.call_tool("save_memory", {"text": text, "type": kind, **({"time": when} if when else {})})
        april = await client.call_tool("search_memory", {"query": "meals with Tom", "after": "2024-04-01T00:00:00Z",
                                                         "before": "2024-05-01T00:00:00Z"})
        prefs = await client.call_tool("search_memory", {"query": "Tom's meals", "types": ["preference"], "k": 5})
    assert [m["text"] for m in april.structuredContent["memories"]] == ["Dinner with Tom at the Greek place."]
    assert [m["text"] for m in prefs.structuredContent["memories"]] == ["Tom prefers Greek food."]  # only that type


async def test_delete_by_id_removes_it_and_an_unknown_id_is_an_error(tmp_path: Path) -> None:
    async with session(tmp_path / "store") as client:
        saved = await client.call_tool("save_memory", {"text": "My locker code is 4417."})
        memory_id = saved.structuredContent["memory"]["id"]
        deleted = await client.call_tool("delete_memory", {"memory_id": memory_id})
        again = await client.call_tool("delete_memory", {"memory_id": memory_id})
        found = await client.call_tool("search_memory", {"query": "locker code"})
    assert not deleted.isError and text_of(deleted).startswith("Deleted from memory:")
    assert again.isError and "memory_id" in text_of(again) and "is not the id of any memory" in text_of(again)
    assert found.structuredContent["memories"] == []


async def test_list_memories_pages_newest_first(tmp_path: Path) -> None:
    async with session(tmp_path / "store") as client:
        for n in range(5):
            await client.call_tool("save_memory", {"text": f"Note number {n} about the garden.",
                                                   "time": f"2024-03-0{n + 1}T09:00:00+00:00"})
        pages, offset = [], 0
        while offset is not None:
            page = await client.call_tool("list_memories", {"limit": 2, "offset": offset})
            assert not page.isError
            pages.append([m["text"] for m in page.structuredContent["memories"]])
            offset = page.structuredContent["next_offset"]
            if offset is not None:
                assert f"offset={offset}" in text_of(page)
    listed = [text for page in pages for text in page]
    assert listed == [f"Note number {n} about the garden." for n in (4, 3, 2, 1, 0)]
    assert [len(p) for p in pages] == [2, 2, 1]



async def test_list_memories_says_more_only_when_there_is_more(tmp_path: Path) -> None:
    """One memory and `{"limit": 1}` answered "(more: call again with offset=1)", and the next page was empty."""
    async with session(tmp_path / "store") as client:
        await client.call_tool("save_memory", {"text": "My badge ID is E-47821"})
        one = await client.call_tool("list_memories", {"limit": 1})
        await client.call_tool("save_memory", {"text": "My locker code is 4417."})
        first = await client.call_tool("list_memories", {"limit": 1})
        last = await client.call_tool("list_memories", {"limit": 1, "offset": 1})
        whole = await client.call_tool("list_memories", {"limit": 2})
    for page in (one, last, whole):
        assert page.structuredContent["next_offset"] is None and "(more" not in text_of(page)
        assert text_of(page).endswith("(that is all)")
    assert first.structuredContent["next_offset"] == 1
    assert text_of(first).endswith("(more: call again with offset=1)")

BAD_CALLS = [
    ("search_memory", {"query": "badge", "kk": 3}, "unknown argument 'kk'"),
    ("search_memory", {"query": "badge", "k": 0}, "k must be an integer from 1 to 50"),
    ("search_memory", {"query": "badge", "k": 500}, "k must be an integer from 1 to 50"),
    ("search_memory", {"query": "badge", "k": "five"}, "k must be an integer"),
    ("search_memory", {"query": "badge", "types": ["feelings"]}, "types must be memory types"),
    ("search_memory", {"query": "badge", "after": "last week"}, "after must be an ISO 8601 time"),
    ("search_memory", {"query": "badge", "before": "2024-03-01T09:00:00"}, "before '2024-03-01T09:00:00' has no"),
    ("search_memory", {"query": 42}, "query must be a non-empty question"),
    ("search_memory", {"query": "x" * 10_001}, "10000"),
    ("search_memory", {}, "missing argument 'query'"),
    ("save_memory", {"text": ""}, "text must be a non-empty statement"),
    ("save_memory", {"text": "Lunch", "time": "2024-03-01T12:00:00"}, "time '2024-03-01T12:00:00' has no time zone"),
    ("save_memory", {"text": "Lunch", "type": "feeling"}, "type must be one of"),
    ("save_memory", {"text": "Lunch", "when": "2024-03-01T12:00:00Z"}, "unknown argument 'when'"),
    ("delete_memory", {"id": "m-1"}, "unknown argument 'id'"),
    ("list_memories", {"limit": 1000}, "limit must be an integer from 1 to 100"),
    ("list_memories", {"offset": -1}, "offset must be an integer from 0"),
    ("forget_everything", {}, "unknown tool 'forget_everything'"),
    ("search_memory", {"query": "badge", "namespace": "bob"}, "namespace 'bob' is not one this connection may use"),
]


async def test_bad_arguments_are_error_results_naming_them_and_the_server_keeps_serving(tmp_path: Path) -> None:
    async with session(tmp_path / "store") as client:
        for name, arguments, expected in BAD_CALLS:
            result = await client.call_tool(name, arguments)
            assert result.isError, (name, arguments)
            assert expected in text_of(result), (name, arguments, text_of(result))
        stored = await client.call_tool("list_memories", {})
        saved = await client.call_tool("save_memory", {"text": "My badge ID is E-47821"})
        found = await client.call_tool("search_memory", {"query": "badge ID"})
    assert stored.structuredContent["memories"] == []  # no bad save wrote anything
    assert not saved.isError and "E-47821" in text_of(found)


async def test_an_empty_query_is_an_error_result(tmp_path: Path) -> None:
    async with session(tmp_path / "store") as client:
        for query in ("", "   \n"):
            result = await client.call_tool("search_memory", {"query": query})
            assert result.isError and "query must be a non-empty question" in text_of(result)


async def test_the_namespace_is_the_command_lines_whatever_the_arguments_say(tmp_path: Path) -> None:
    path = tmp_path / "store"
    with MemoryStore.embedded(path) as store:
        store.add([Memory(text="Bob's bank PIN is 9931.", namespace="bob"),
                   Memory(text="Alice's bank is in Lisbon.", namespace="alice")])
    async with session(path, "alice", "--read-only") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        found = await client.call_tool("search_memory", {"query": "bank PIN 9931"})
        listed = await client.call_tool("list_memories", {"limit": 100})
        asked = await client.call_tool("search_memory", {"query": "bank PIN 9931", "namespace": "bob"})
        write = await client.call_tool("save_memory", {"text": "I like tea."})
    assert tools == {"search_memory", "list_memories"}  # --read-only: no write tool offered
    assert [m["text"] for m in found.structuredContent["memories"]] == ["Alice's bank is in Lisbon."]
    assert [m["text"] for m in listed.structuredContent["memories"]] == ["Alice's bank is in Lisbon."]
    assert asked.isError and "9931" not in text_of(asked)
    assert write.isError and re.search(r"may not write", text_of(write))


async def test_the_server_backend_through_connect_serves_the_same_tools(tmp_path: Path) -> None:
    """`--backend qdrant-local`: `MemoryStore.connect()` (the code a Qdrant server runs through, on
    qdrant-client's local mode), as `eval --backend` takes it."""
    path = tmp_path / "store"
    async with session(path, "alice", "--backend", "qdrant-local") as client:
        saved = await client.call_tool("save_memory", {"text": "My badge ID is E-47821", "type": "fact"})
        found = await client.call_tool("search_memory", {"query": "E-47821"})
    assert not saved.isError
    assert [m["id"] for m in found.structuredContent["memories"]] == [saved.structuredContent["memory"]["id"]]
    assert (path / "qdrant").is_dir() and not (path / "vectors").exists()
