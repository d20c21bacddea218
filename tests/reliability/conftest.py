"""Reliability fixtures: the FalkorDB Bolt server of tests/falkordb_server.py (shared, session scope);
tests that kill a server start their own `FalkorDBServer`. Helpers live in `_support.py`."""

from __future__ import annotations

from falkordb_server import FalkorDBServer, bolt_server, falkordb_server  # noqa: F401 - fixtures

__all__ = ["FalkorDBServer", "bolt_server", "falkordb_server"]
