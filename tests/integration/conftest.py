"""Integration fixtures: a real FalkorDB Bolt server (see tests/falkordb_server.py).

`bolt_server` (session scope) yields the bolt:// URI of a shared server; `falkordb_server` yields
the server object. A test that stops the server must start its own `FalkorDBServer` instead, as
test_graph_bolt_down.py does, so the shared one stays up for everyone else.
"""

from __future__ import annotations

from falkordb_server import FalkorDBServer, bolt_server, falkordb_server  # noqa: F401 - fixtures

__all__ = ["FalkorDBServer", "bolt_server", "falkordb_server"]
