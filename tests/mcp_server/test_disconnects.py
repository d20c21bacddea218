"""A client that hangs up is no error: `fused-memory mcp --http` served in this process (the same
`run_http` the command runs, over a real store on a loopback port), the MCP SDK's own client
connects, calls a tool and disconnects, and no log record above DEBUG tells of it. The SDK logged
"Error in standalone SSE writer" with a `ClosedResourceError` traceback at ERROR on every such
disconnect; a real failure in a tool is still logged at ERROR (`tools.MemoryTools.call`)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from fused_memory import EnsembleMemory, MemoryStore
from fused_memory.embeddings import HashingEmbedder
from fused_memory.mcp_server import MemoryTools, TokenTable
from fused_memory.mcp_server.server import QuietDisconnects, run_http

from ._servers import write_tokens

if sys.version_info >= (3, 11):
    from builtins import BaseExceptionGroup
else:  # anyio's backport
    from exceptiongroup import BaseExceptionGroup


@pytest.mark.slow  # a real HTTP server
async def test_a_client_that_disconnects_leaves_nothing_above_debug_in_the_log(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    tokens = write_tokens(tmp_path / "tokens.json", {"alice": {"namespaces": ["alice"], "write": True}})
    store = MemoryStore.embedded(tmp_path / "store", embedder=HashingEmbedder(dim=64), ner=False)
    ensemble = EnsembleMemory(store)
    listening, stop = anyio.Event(), anyio.Event()
    ports: list[int] = []

    def ready(port: int) -> None:
        ports.append(port)
        listening.set()

    try:
        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: run_http(MemoryTools(store, ensemble), TokenTable.from_file(
                    tmp_path / "tokens.json"), "127.0.0.1", 0, ready=ready, stop=stop))
                await listening.wait()
                url = f"http://127.0.0.1:{ports[0]}/mcp"
                for _ in range(2):  # each session ends as a client ends it: DELETE, then the streams close
                    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {tokens['alice']}"},
                                                 timeout=60) as http, \
                            streamable_http_client(url, http_client=http) as (read, write, _), \
                            ClientSession(read, write) as client:
                        await client.initialize()
                        saved = await client.call_tool("save_memory", {"text": "My badge ID is E-47821"})
                        assert not saved.isError
                await anyio.sleep(0.5)  # what the server does after the client left
                stop.set()
    finally:
        ensemble.close()
        store.close()
    loud = [r for r in caplog.records if r.levelno > logging.DEBUG and r.exc_info is not None]
    assert loud == [], [f"{r.levelname} {r.name}: {r.getMessage()} {r.exc_info[1]!r}" for r in loud]
    assert not [r for r in caplog.records if r.levelno > logging.DEBUG and r.name.startswith("mcp.server")
                and "Error" in r.getMessage()]
    # still there for whoever debugs the server
    assert [r for r in caplog.records if r.levelno == logging.DEBUG and r.name == "mcp.server.streamable_http"
            and r.getMessage() == "Error in standalone SSE writer"]


def _logged(error: BaseException, logger: str = "mcp.server.streamable_http") -> logging.LogRecord:
    record = logging.LogRecord(logger, logging.ERROR, __file__, 1, "Error in a writer", None,
                               (type(error), error, None))
    QuietDisconnects().filter(record)
    return record


@pytest.mark.parametrize(("error", "level"), [
    (anyio.ClosedResourceError(), logging.DEBUG),
    (anyio.BrokenResourceError(), logging.DEBUG),
    (BrokenPipeError(), logging.DEBUG),
    (BaseExceptionGroup("tasks", [anyio.ClosedResourceError(), ConnectionResetError()]), logging.DEBUG),
    (BaseExceptionGroup("tasks", [anyio.ClosedResourceError(), ValueError("a bug")]), logging.ERROR),
    (ValueError("a bug"), logging.ERROR),
    (RuntimeError("the store is gone"), logging.ERROR),
])
def test_only_a_hang_up_is_moved_to_debug(error: BaseException, level: int) -> None:
    assert _logged(error).levelno == level
