"""`MemoryStore`, the public store, and its write path: `ingest` (type and entity extraction),
`recovery` (open, rebuild, rollback), `factory` (which backends `embedded` / `connect` assemble),
`arguments` (the entry points' checks) and `versions` (a shared graph's entity version)."""

from __future__ import annotations

from .memory_store import MemoryStore

__all__ = ["MemoryStore"]
