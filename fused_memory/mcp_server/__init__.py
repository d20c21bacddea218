"""fused-memory as a Model Context Protocol server: `fused-memory mcp` (see `cli.serve`).

`access` (grants, bearer tokens, the rate limit) and `tools` (the four tools, their schemas and
argument rules) import no part of the MCP SDK; `server` puts them on the protocol and is imported
only when a server starts, so this package loads without the `[mcp]` extra.
"""

from __future__ import annotations

from .access import Grant, RateLimiter, TokenTable
from .tools import Limits, MemoryTools, ToolAnswer, ToolSpec

__all__ = ["Grant", "RateLimiter", "TokenTable", "Limits", "MemoryTools", "ToolAnswer", "ToolSpec"]
