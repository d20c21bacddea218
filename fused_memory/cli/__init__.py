"""`fused-memory` command line: demo | ingest | query (`commands`) and eval | bench (`evaluation`)."""

from __future__ import annotations

from .commands import build_parser, main

__all__ = ["main", "build_parser"]
