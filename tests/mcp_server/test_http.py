"""`fused-memory mcp --http` through the MCP SDK's streamable HTTP client, the server a subprocess
on a loopback port it picks: every request needs a known bearer token (401 before any tool runs),
a token reaches only its own namespaces whatever the arguments say (a hypothesis test over several
tokens and namespaces: zero foreign hits), a read-only token cannot write, the limits answer
clearly, tokens never reach the log, and a server killed mid-write loses nothing it acknowledged."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from fused_memory import MemoryStore

from ._servers import HttpServer, text_of, write_tokens

pytestmark = pytest.mark.slow

GRANTS = {
    "alice": {"namespaces": ["alice"], "write": True},
    "bob": {"namespaces": ["bob", "shared"], "write": True},
    "carol": {"namespaces": ["carol", "shared"], "write": True},
    "reader": {"namespaces": ["alice"], "write": False},
}
SPACES = ("alice", "bob", "carol", "shared", "mallory")
WRONG_TOKEN = "not-a-real-token-but-long-enough"


class Deployment:
    def __init__(self, server: HttpServer, tokens: dict[str, str], path: Path) -> None:
        self.server, self.tokens, self.path = server, tokens, path

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("mcp-http")
    tokens = write_tokens(root / "tokens.json", GRANTS)
    server = HttpServer(root / "store", root / "tokens.json", "--rate", "100000", "--max-request-bytes", "65536")
    yield Deployment(server, tokens, root / "store")
    server.stop()


@asynccontextmanager
async def connect(url: str, token: str) -> AsyncIterator[ClientSession]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                 timeout=httpx.Timeout(60, read=120)) as http, \
            streamable_http_client(url, http_client=http) as (read, write, _), ClientSession(read, write) as client:
        await client.initialize()
        yield client


def _call_body(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


async def test_no_token_or_an_unknown_one_is_refused_401_before_any_tool_runs(deployment: Deployment) -> None:
    body = _call_body("save_memory", {"text": "Planted by a stranger."})
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(timeout=30) as http:
        for auth in (None, f"Bearer {WRONG_TOKEN}", "Bearer", f"Basic {deployment.tokens['alice']}",
                     f"Bearer {deployment.tokens['alice']}x"):
            response = await http.post(deployment.url, json=body,
                                       headers={**headers, **({"Authorization": auth} if auth else {})})
            assert response.status_code == 401, auth
            assert response.headers["www-authenticate"] == "Bearer"
            assert "unauthorized" in response.json()["error"]
    with anyio.fail_after(60), pytest.raises(Exception):  # noqa: B017 - the SDK's client fails as its transport does
        async with connect(deployment.url, WRONG_TOKEN) as client:
            await client.list_tools()
    async with connect(deployment.url, deployment.tokens["alice"]) as client:
        found = await client.call_tool("search_memory", {"query": "planted by a stranger", "k": 50})
    assert "stranger" not in text_of(found)


async def test_save_then_search_over_http(deployment: Deployment) -> None:
    async with connect(deployment.url, deployment.tokens["alice"]) as client:
        saved = await client.call_tool("save_memory", {"text": "My badge ID is E-47821", "type": "fact"})
        found = await client.call_tool("search_memory", {"query": "what is my badge ID?", "k": 1})
    assert not saved.isError
    assert found.structuredContent["memories"][0]["id"] == saved.structuredContent["memory"]["id"]


async def test_list_memories_says_more_only_when_there_is_more_over_http(deployment: Deployment) -> None:
    """The last page says "(that is all)"; a full last page said "more" and pointed past the end."""
    async with connect(deployment.url, deployment.tokens["alice"]) as client:
        for text in ("My parking spot is P-12.", "My desk is 4.07."):
            await client.call_tool("save_memory", {"text": text})
        total, offset = 0, 0
        while offset is not None:  # however many other tests left here
            page = await client.call_tool("list_memories", {"limit": 100, "offset": offset})
            total, offset = total + len(page.structuredContent["memories"]), page.structuredContent["next_offset"]
        last = await client.call_tool("list_memories", {"limit": 1, "offset": total - 1})
        before = await client.call_tool("list_memories", {"limit": 1, "offset": total - 2})
    assert len(last.structuredContent["memories"]) == 1 and last.structuredContent["next_offset"] is None
    assert text_of(last).endswith("(that is all)")
    assert text_of(before).endswith(f"(more: call again with offset={total - 1})")


async def test_one_token_cannot_reach_another_tokens_namespace(deployment: Deployment) -> None:
    tokens = deployment.tokens
    async with connect(deployment.url, tokens["bob"]) as bob:
        await bob.call_tool("save_memory", {"text": "Bob's safe combination is 31-17-44."})
        await bob.call_tool("save_memory", {"text": "The team offsite is in Porto.", "namespace": "shared"})
    async with connect(deployment.url, tokens["alice"]) as alice:
        attempts = [await alice.call_tool("search_memory", {"query": "safe combination", "namespace": "bob"}),
                    await alice.call_tool("list_memories", {"namespace": "shared"}),
                    await alice.call_tool("save_memory", {"text": "Planted in Bob's space.", "namespace": "bob"}),
                    await alice.call_tool("search_memory", {"query": "offsite", "namespace": ["alice", "shared"]})]
        own = await alice.call_tool("search_memory", {"query": "safe combination offsite Porto", "k": 50})
    for attempt in attempts:
        assert attempt.isError and "is not one this connection may use" in text_of(attempt)
        assert "31-17-44" not in text_of(attempt) and "Porto" not in text_of(attempt)
    assert "31-17-44" not in text_of(own) and "Porto" not in text_of(own)
    async with connect(deployment.url, tokens["carol"]) as carol:  # carol shares "shared" with bob
        shared = await carol.call_tool("search_memory", {"query": "offsite", "namespace": "shared"})
        mine = await carol.call_tool("search_memory", {"query": "safe combination", "k": 50})
    assert "Porto" in text_of(shared) and "31-17-44" not in text_of(mine)
    async with connect(deployment.url, tokens["bob"]) as bob:
        planted = await bob.call_tool("search_memory", {"query": "planted", "k": 50})
    assert "Planted" not in text_of(planted)


async def test_a_read_only_token_is_offered_no_write_tool_and_cannot_write(deployment: Deployment) -> None:
    async with connect(deployment.url, deployment.tokens["reader"]) as reader:
        tools = {t.name for t in (await reader.list_tools()).tools}
        save = await reader.call_tool("save_memory", {"text": "I like tea."})
        listed = await reader.call_tool("list_memories", {"limit": 100})
        delete = await reader.call_tool("delete_memory", {"memory_id": listed.structuredContent["memories"][0]["id"]})
        after = await reader.call_tool("list_memories", {"limit": 100})
    assert tools == {"search_memory", "list_memories"}
    assert save.isError and "may not write" in text_of(save)
    assert delete.isError and listed.structuredContent == after.structuredContent


async def test_a_request_over_the_size_limit_is_refused(deployment: Deployment) -> None:
    body = _call_body("save_memory", {"text": "x " * 40_000})  # 80 kB against --max-request-bytes 65536
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(deployment.url, json=body, headers={
            "Authorization": f"Bearer {deployment.tokens['alice']}", "Accept": "application/json, text/event-stream"})
    assert response.status_code == 413


WORDS = ("apples", "invoice", "Lisbon", "piano", "E-1234")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(sorted(GRANTS)), st.sampled_from((*SPACES, None)), st.sampled_from(WORDS)),
                min_size=1, max_size=6))
def test_no_token_ever_sees_a_memory_of_a_namespace_it_was_not_granted(
        deployment: Deployment, writes: list[tuple[str, str | None, str]]) -> None:
    """Whatever tokens write wherever they ask, every search and listing of every token in each of
    its namespaces holds only memories of that namespace: zero foreign hits."""
    anyio.run(_isolation_example, deployment, writes)


async def _isolation_example(deployment: Deployment, writes: list[tuple[str, str | None, str]]) -> None:
    refused: set[str] = set()
    with anyio.fail_after(300):
        for label, space, word in writes:
            grant = GRANTS[label]
            target = space or grant["namespaces"][0]
            text = f"{word} note {uuid.uuid4().hex[:8]} [{target}]"
            async with connect(deployment.url, deployment.tokens[label]) as client:
                asked = {"namespace": space} if space else {}
                result = await client.call_tool("save_memory", {"text": text, **asked})
            allowed = grant["write"] and target in grant["namespaces"]
            assert result.isError is (not allowed), (label, space, text_of(result))
            if not allowed:
                refused.add(text)
        foreign = []
        for label, grant in GRANTS.items():
            async with connect(deployment.url, deployment.tokens[label]) as client:
                for space in grant["namespaces"]:
                    for word in {w for _, _, w in writes}:
                        found = await client.call_tool("search_memory", {"query": word, "k": 50, "namespace": space})
                        assert not found.isError
                        texts = [m["text"] for m in found.structuredContent["memories"]]
                        listed = await client.call_tool("list_memories", {"limit": 100, "namespace": space})
                        texts += [m["text"] for m in listed.structuredContent["memories"]]
                        for text in texts:
                            marker = re.search(r"\[(\w+)\]$", text)
                            if (marker and marker.group(1) != space) or text in refused:
                                foreign.append((label, space, text))
    assert foreign == []


def test_no_token_reaches_the_servers_log(deployment: Deployment) -> None:
    log = deployment.server.output()
    assert "listening on http://127.0.0.1:" in log
    for token in (*deployment.tokens.values(), WRONG_TOKEN):
        assert token not in log


async def test_the_rate_limit_answers_with_a_clear_error_per_token(tmp_path: Path) -> None:
    tokens = write_tokens(tmp_path / "tokens.json", {"busy": {"namespaces": ["a"], "write": True},
                                                     "calm": {"namespaces": ["b"], "write": True}})
    server = HttpServer(tmp_path / "store", tmp_path / "tokens.json", "--rate", "3")
    try:
        with anyio.fail_after(120):
            async with connect(server.url, tokens["busy"]) as busy:
                answers = [await busy.call_tool("list_memories", {}) for _ in range(4)]
            async with connect(server.url, tokens["calm"]) as calm:
                other = await calm.call_tool("list_memories", {})
    finally:
        server.stop()
    assert [a.isError for a in answers] == [False, False, False, True]
    assert re.search(r"rate limit: this connection may make 3 tool calls a minute; try again in \d+\.\d s",
                     text_of(answers[-1]))
    assert not other.isError  # one client's burst does not spend another's allowance
    assert server.proc.returncode == 0 and "fused-memory mcp: stopped" in server.output()  # SIGTERM closes it


async def test_a_server_killed_mid_write_loses_nothing_it_acknowledged(tmp_path: Path) -> None:
    tokens = write_tokens(tmp_path / "tokens.json", {"writer": {"namespaces": ["w"], "write": True}})
    path = tmp_path / "store"
    server = HttpServer(path, tmp_path / "tokens.json")
    acknowledged: dict[str, str] = {}
    killed = anyio.Event()

    async def writer(client: ClientSession, lane: int) -> None:
        for n in range(40):
            text = f"Lane {lane} entry {n}: the shipment code is S-{lane}{n:03d}."
            try:
                with anyio.move_on_after(20):
                    result = await client.call_tool("save_memory", {"text": text})
                    if not result.isError:
                        acknowledged[result.structuredContent["memory"]["id"]] = text
            except Exception:
                return  # the connection died with the server: this save was never acknowledged
            if killed.is_set():
                return
            if len(acknowledged) >= 8 and not killed.is_set():
                killed.set()
                server.kill()  # while the other lanes' saves are in flight

    try:
        with anyio.fail_after(240):
            async with connect(server.url, tokens["writer"]) as client, anyio.create_task_group() as group:
                for lane in range(3):
                    group.start_soon(writer, client, lane)
    except Exception:
        pass  # closing a session whose server is gone fails; what matters is below
    finally:
        server.stop()
    assert killed.is_set() and len(acknowledged) >= 8
    with MemoryStore.embedded(path) as store:
        stored = {m.id: m.text for m in store.get_many("w", list(acknowledged))}
    assert stored == acknowledged
