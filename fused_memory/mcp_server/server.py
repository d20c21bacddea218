"""The memory tools (`tools.MemoryTools`) on the Model Context Protocol, over stdio or streamable HTTP.

The low-level `mcp.server.lowlevel.Server` is used rather than FastMCP: the tools' schemas and
argument rules are ours (`tools`), so an argument the schema lacks is refused by name instead of
being dropped by a generated model, and the list of tools depends on the caller (a read-only token
is not offered the write tools).

* **stdio** (what desktop clients launch): one caller, whose grant the command line fixed.
* **HTTP** (`/mcp`, streamable HTTP): `BearerGate` reads `Authorization: Bearer <token>` and
  answers 401 before the MCP layer sees the request when the token is missing or unknown; the
  grant it found rides in the ASGI scope, and each tool call reads it from *its own* request (the
  SDK hands the Starlette request to the handler), so a session id replayed under another token
  gets that token's rights, not the first one's. Request bodies over the limit are refused by the
  SDK's session manager (413); tokens never reach a log line (uvicorn's access log is off, and
  every message names a grant by its label).
* **A client that hangs up is no error.** When a session ends (the client's DELETE, or a dropped
  connection) the SDK closes its streams, and whatever still reads or writes them raises a
  closed-stream error that the SDK logs at ERROR with a traceback ("Error in standalone SSE writer
  ... ClosedResourceError", on every normal disconnect). `QuietDisconnects`, on the loggers of the
  SDK and the server stack under it, logs such a record at DEBUG instead, whichever layer raised
  it; every other record, a failing tool's included, keeps its level.

Importing this module imports the MCP SDK (the `[mcp]` extra); `import fused_memory` never does.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import MissingDependency

try:
    import anyio
    import mcp.types as types
    import uvicorn
    from mcp.server.lowlevel import NotificationOptions, Server
    from mcp.server.stdio import stdio_server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - the message is the point
    raise MissingDependency(f"the MCP server needs the mcp extra: pip install 'fused-memory[mcp]' ({exc})") from exc

from .access import Grant, TokenTable, is_loopback
from .tools import MemoryTools

__all__ = ["build_server", "run_stdio", "http_app", "run_http", "BearerGate", "QuietDisconnects", "quiet_disconnects",
           "DISCONNECTS", "SERVER_NAME", "GRANT_KEY"]

log = logging.getLogger("fused_memory.mcp")

SERVER_NAME = "fused-memory"
#: Where `BearerGate` leaves the caller's grant in the ASGI scope.
GRANT_KEY = "fused_memory.grant"
INSTRUCTIONS = ("Long-term memory of the user: search it before answering questions about the user's past, "
                "plans, preferences or people; save what the user asks you to remember.")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: What a client that hangs up leaves behind: the streams of its session are closed under whatever
#: was still reading or writing them (anyio's memory streams, Starlette's request, the socket).
DISCONNECTS: tuple[type[BaseException], ...] = (anyio.ClosedResourceError, anyio.BrokenResourceError,
                                                anyio.EndOfStream, ClientDisconnect, ConnectionError)
#: The packages whose loggers report a disconnect: the SDK and the HTTP stack it runs on.
_STACK = ("mcp", "sse_starlette", "starlette", "uvicorn")


@runtime_checkable
class _Grouped(Protocol):
    """An exception group (`BaseExceptionGroup`, or its backport on Python 3.10): a task group
    raises the disconnects of its tasks together."""

    exceptions: Sequence[BaseException]


def _is_disconnect(error: BaseException | None) -> bool:
    if isinstance(error, _Grouped) and isinstance(error, BaseException):
        return bool(error.exceptions) and all(_is_disconnect(e) for e in error.exceptions)
    return isinstance(error, DISCONNECTS)


class QuietDisconnects(logging.Filter):
    """Logs a record whose exception is a client's hang-up (`DISCONNECTS`, alone or grouped) at
    DEBUG, kept only where the logger takes DEBUG; every other record passes as it is."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno <= logging.DEBUG or record.exc_info is None or not _is_disconnect(record.exc_info[1]):
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


_QUIET = QuietDisconnects()


def quiet_disconnects() -> None:
    """Put `QuietDisconnects` on every logger of the SDK and the HTTP stack (`_STACK`). A logger's
    filters see only its own records, not those of the loggers below it, hence each one; the
    modules are imported by now, so their loggers exist. Calling it again adds nothing."""
    names = [name for name, item in logging.Logger.manager.loggerDict.items()
             if isinstance(item, logging.Logger) and name.split(".")[0] in _STACK]
    for name in {*_STACK, *names}:
        logger = logging.getLogger(name)
        if _QUIET not in logger.filters:
            logger.addFilter(_QUIET)


def build_server(tools: MemoryTools, grant_of: Callable[[Server[Any, Any]], Grant]) -> Server[Any, Any]:
    """An MCP server offering `tools`; `grant_of(server)` says whose call is being served (the
    stdio grant, or the one `BearerGate` put in the current request's scope)."""
    server: Server[Any, Any] = Server(SERVER_NAME, instructions=INSTRUCTIONS)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [types.Tool(name=s.name, description=s.description, inputSchema=dict(s.input_schema))
                for s in tools.specs(grant_of(server))]

    @server.call_tool(validate_input=False)  # the rules are `tools`', with messages that name the argument
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        answer = await tools.call(name, arguments, grant_of(server))
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer.text)],
                                    structuredContent=dict(answer.data) if answer.data is not None else None,
                                    isError=answer.error)

    return server


def _options(server: Server[Any, Any]) -> Any:
    return server.create_initialization_options(NotificationOptions())


async def run_stdio(tools: MemoryTools, grant: Grant) -> None:
    """Serve `tools` on stdin / stdout for the one caller `grant` describes, until stdin closes."""
    quiet_disconnects()
    server = build_server(tools, lambda _s: grant)
    async with stdio_server() as (read, write):
        await server.run(read, write, _options(server))


def _request_grant(server: Server[Any, Any]) -> Grant:
    request = server.request_context.request
    grant = request.scope.get(GRANT_KEY) if request is not None else None
    if not isinstance(grant, Grant):  # BearerGate admits no request without one; never serve one
        raise PermissionError("no grant on this request")
    return grant


class BearerGate:
    """ASGI app in front of the MCP endpoint: `Authorization: Bearer <token>` must name a known
    token, else 401 (with `WWW-Authenticate: Bearer`) and the request goes no further."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], tokens: TokenTable) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        grant = self.tokens.lookup(token.strip()) if scheme.lower() == "bearer" else None
        if grant is None:
            why = "missing bearer token" if not header else "unknown bearer token"
            body = json.dumps({"error": f"unauthorized: {why}; send Authorization: Bearer <token>"}).encode()
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app({**scope, GRANT_KEY: grant}, receive, send)


def http_app(tools: MemoryTools, tokens: TokenTable, *, host: str = "127.0.0.1", port: int = 8765,
             max_request_bytes: int = 1 << 20) -> Starlette:
    """The Starlette app serving `tools` at `/mcp` behind `BearerGate`. On a loopback address the
    SDK's DNS-rebinding protection admits only loopback Host headers. A client's normal hang-up is
    logged at DEBUG (`quiet_disconnects`), whoever serves the app."""
    quiet_disconnects()
    server = build_server(tools, _request_grant)
    security = (TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                          allowed_hosts=[f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"],
                                          allowed_origins=[f"http://127.0.0.1:{port}", f"http://localhost:{port}"])
                if is_loopback(host) else None)
    manager = StreamableHTTPSessionManager(server, security_settings=security, max_request_body_size=max_request_bytes)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(routes=[Route("/mcp", endpoint=BearerGate(manager.handle_request, tokens))], lifespan=lifespan)


async def run_http(tools: MemoryTools, tokens: TokenTable, host: str, port: int, *,
                   max_request_bytes: int = 1 << 20, ready: Callable[[int], None] | None = None,
                   stop: anyio.Event | None = None) -> None:
    """Serve over streamable HTTP until interrupted, or until `stop` is set (then it shuts down as
    on SIGTERM: open requests finish, the sessions close). Port 0 picks a free port; `ready(port)`
    is called with the bound port once the server listens."""
    app = http_app(tools, tokens, host=host, port=port, max_request_bytes=max_request_bytes)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    if port == 0:  # the Host header check needs the real port: bind first, then build the app for it
        sock = config.bind_socket()
        port = sock.getsockname()[1]
        config.app = http_app(tools, tokens, host=host, port=port, max_request_bytes=max_request_bytes)
        config.loaded = False

        async def serve() -> None:
            await server.serve(sockets=[sock])
    else:
        async def serve() -> None:
            await server.serve()

    async with anyio.create_task_group() as group:
        group.start_soon(serve)
        while not server.started:
            await anyio.sleep(0.02)
        if ready is not None:
            ready(port)
        if stop is not None:
            await stop.wait()
            server.should_exit = True
