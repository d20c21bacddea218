"""Small helpers several test modules share (importable as `helpers`: tests/ is on the path, as
`falkordb_server` is)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

__all__ = ["fused_memory_cli", "damage_sqlite_pages"]


def fused_memory_cli() -> list[str]:
    """The installed `fused-memory` script next to this interpreter, else `python -m`."""
    script = Path(sys.executable).with_name("fused-memory")
    if script.exists():
        return [str(script)]
    found = shutil.which("fused-memory")
    return [found] if found else [sys.executable, "-m", "fused_memory.cli"]


def damage_sqlite_pages(path: Path, pages: list[int]) -> None:
    """Overwrite these pages of a SQLite file (1-based, as SQLite numbers them) with garbage."""
    data = bytearray(path.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    for page in pages:
        data[(page - 1) * size:page * size] = b"\xab" * size
    path.write_bytes(bytes(data))
