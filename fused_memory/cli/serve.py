"""`fused-memory mcp`: the store as a Model Context Protocol server (`fused_memory.mcp_server`).

Over stdio (the default; what Claude Desktop, Cursor and Claude Code launch) the namespace is the
one `--namespace` names. With `--http HOST:PORT --tokens FILE` it serves streamable HTTP at `/mcp`,
each bearer token reaching only its own namespaces. The store is the embedded one at `--path`, or a
Qdrant server (`--qdrant-url`, its key from `QDRANT_API_KEY`) with a Bolt graph (`--neo4j-uri`,
`NEO4J_USER` / `NEO4J_PASSWORD`), so several servers can share one Qdrant; secrets come from the
environment, never the command line (where `ps` shows them).

Nothing is ever written to stdout except the protocol: in stdio mode stdout *is* the protocol.
This module imports only argparse at load time; the SDK loads when the command runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any

from ..errors import ConfigurationError, FusedMemoryError
from ..terminal import terminal_safe
from .helptext import DefaultsShown

__all__ = ["add_command", "cmd_mcp", "parse_bind", "listening_notice"]


def parse_bind(text: str) -> tuple[str, int]:
    """ "127.0.0.1:8765" -> ("127.0.0.1", 8765); "[::1]:8765" for IPv6; a port alone binds
    127.0.0.1 (loopback unless told otherwise); port 0 picks a free one."""
    host, sep, port = text.rpartition(":") if ":" in text else ("127.0.0.1", ":", text)
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not sep or not host or not 0 <= number <= 65535:
        raise ConfigurationError(f"--http takes [HOST:]PORT, e.g. 127.0.0.1:8765, got {text!r}")
    return host, number


def listening_notice(host: str, port: int, n_tokens: int) -> list[str]:
    """What the server says on stderr once it listens: where, and a warning when the address is
    not loopback (other machines can reach it)."""
    from ..mcp_server.access import is_loopback

    where = f"[{host}]" if ":" in host else host
    lines = [f"fused-memory mcp: listening on http://{where}:{port}/mcp ({n_tokens} tokens)"]
    if not is_loopback(host):
        lines.append(f"fused-memory mcp: warning: bound to {host}, not loopback: reachable from other machines "
                     "(every request still needs a token; put TLS in front of it)")
    return lines


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value!r}")
    return n


def _store(args: argparse.Namespace) -> Any:
    from ..store.memory_store import MemoryStore
    from .paths import store_path

    if args.qdrant_url and args.backend != "embedded":
        raise ConfigurationError("--qdrant-url is a server; --backend qdrant-local is qdrant-client's local mode: "
                                 "give one")
    if args.backend == "qdrant-local":  # the server backend's code on local files, as `eval --backend` has it
        path = store_path(args.path, must_exist=False)
        return MemoryStore.connect(qdrant_location=f"{path}/qdrant", graph_path=f"{path}/graph", lexical=args.lexical)
    if args.qdrant_url:
        user, password = os.environ.get("NEO4J_USER"), os.environ.get("NEO4J_PASSWORD")
        return MemoryStore.connect(qdrant_url=args.qdrant_url, qdrant_api_key=os.environ.get("QDRANT_API_KEY"),
                                   collection=args.collection, neo4j_uri=args.neo4j_uri,
                                   neo4j_auth=(user, password) if user and password else None,
                                   graph_path=store_path(args.path, must_exist=False), lexical=args.lexical)
    if args.neo4j_uri:
        raise ConfigurationError("--neo4j-uri goes with --qdrant-url (the embedded store keeps its own graph)")
    return MemoryStore.embedded(store_path(args.path, must_exist=False), lexical=args.lexical)


def cmd_mcp(args: argparse.Namespace) -> int:
    import anyio

    from ..ensemble import EnsembleMemory
    from ..mcp_server import Grant, Limits, MemoryTools, RateLimiter, TokenTable
    from ..validation import check_namespace

    if args.tokens and not args.http:
        raise ConfigurationError("--tokens goes with --http (over stdio the namespace is --namespace)")
    if args.http and not args.tokens:
        raise ConfigurationError("--http needs --tokens FILE: every HTTP request must carry a bearer token")
    if args.http and (args.namespace is not None or args.read_only):
        raise ConfigurationError(f"{'--namespace' if args.namespace is not None else '--read-only'} is for stdio; "
                                 "over HTTP each token's namespaces and write right come from --tokens")
    bind = parse_bind(args.http) if args.http else None
    tokens = TokenTable.from_file(args.tokens) if args.tokens else None
    namespace = args.namespace or "default"
    try:
        check_namespace(namespace)
    except FusedMemoryError as exc:
        raise ConfigurationError(f"--namespace {namespace!r}: {exc}") from None
    from ..mcp_server import server as mcp  # the SDK: refused with the install line if it is missing

    limits = Limits(max_k=args.max_k)
    if threading.current_thread() is threading.main_thread():  # SIGTERM (a supervisor's stop) closes the store
        signal.signal(signal.SIGTERM, _exit_on_signal)
    store = _store(args)
    with store:
        store.open()  # the cost of opening is paid now, not by the first call
        ensemble = EnsembleMemory(store)
        tools = MemoryTools(store, ensemble, limits, RateLimiter(args.rate))
        try:
            if bind is None:
                print(terminal_safe(f"fused-memory mcp: serving namespace {namespace!r} over stdio"), file=sys.stderr)
                anyio.run(mcp.run_stdio, tools, Grant((namespace,), not args.read_only, "stdio"))
            else:
                host, port = bind
                assert tokens is not None

                def ready(bound: int) -> None:
                    for line in listening_notice(host, bound, len(tokens.grants())):
                        print(terminal_safe(line), file=sys.stderr, flush=True)

                if threading.current_thread() is threading.main_thread():
                    # uvicorn stops gracefully on SIGTERM and then raises it again for the handler it
                    # found: that one must let run_http return, so the store closes below
                    signal.signal(signal.SIGTERM, signal.SIG_IGN)
                anyio.run(lambda: mcp.run_http(tools, tokens, host, port, max_request_bytes=args.max_request_bytes,
                                               ready=ready))
        except KeyboardInterrupt:
            pass  # Ctrl-C: a normal way to stop a server (every acknowledged save is already stored)
        finally:
            ensemble.close()
    print("fused-memory mcp: stopped", file=sys.stderr)
    return 0


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(0)


def add_command(subparsers: Any) -> None:
    """Add `mcp` to the `fused-memory` subcommands."""
    m = subparsers.add_parser(
        "mcp", help="serve the store to MCP clients (Claude Desktop, Cursor, agent SDKs) over stdio or HTTP",
        formatter_class=DefaultsShown,
        description="Serve search_memory, save_memory, delete_memory and list_memories over the Model Context "
                    "Protocol: on stdio for one namespace, or on streamable HTTP at /mcp where each bearer "
                    "token of --tokens reaches only its own namespaces. Needs the mcp extra.",
        epilog='--tokens FILE: {"<token>": {"namespaces": ["alice"], "write": true, "label": "alice"}, ...}; '
               "tokens of at least 16 characters. Secrets for --qdrant-url / --neo4j-uri come from "
               "QDRANT_API_KEY, NEO4J_USER and NEO4J_PASSWORD.")
    m.add_argument("--path", default="./memdata", help="store directory (created if new); with --qdrant-url, "
                                                       "where the embedded graph lives")
    m.add_argument("--namespace", help="stdio: the namespace every call uses (default: 'default')")
    m.add_argument("--read-only", action="store_true", help="stdio: offer no save or delete tool")
    m.add_argument("--http", metavar="[HOST:]PORT", help="serve streamable HTTP at http://HOST:PORT/mcp instead of "
                                                         "stdio (HOST 127.0.0.1 unless given: loopback only)")
    m.add_argument("--tokens", metavar="FILE", help="HTTP: JSON file mapping each bearer token to its namespaces")
    m.add_argument("--rate", type=_positive, default=600, help="tool calls a minute per token (or for stdio)")
    m.add_argument("--max-k", type=_positive, default=50, help="most results one search may ask for")
    m.add_argument("--max-request-bytes", type=_positive, default=1 << 20, help="HTTP: largest request body")
    m.add_argument("--backend", choices=("embedded", "qdrant-local"), default="embedded",
                   help="the embedded store, or the server backend's code on qdrant-client's local mode (as eval's)")
    m.add_argument("--qdrant-url", help="a Qdrant server instead of the embedded store (MemoryStore.connect)")
    m.add_argument("--collection", default="fused_memory", help="the Qdrant collection, with --qdrant-url")
    m.add_argument("--neo4j-uri", help="a Bolt graph (Neo4j, FalkorDB), with --qdrant-url")
    m.add_argument("--lexical", choices=("engine", "bm25"), help="the lexical index (default: the backend's)")
    m.set_defaults(fn=cmd_mcp)
