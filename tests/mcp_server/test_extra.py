"""The MCP SDK is the `[mcp]` extra's: `import fused_memory`, its CLI's parser and the server's
rules (`fused_memory.mcp_server`) load none of it, and without it `fused-memory mcp` says which
extra to install instead of a traceback. Checked in fresh interpreters (sys.modules is per process)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # fresh interpreters

SERVER_STACK = ("mcp", "uvicorn", "starlette", "sse_starlette", "langchain_mcp_adapters")


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def test_import_fused_memory_loads_no_part_of_the_mcp_sdk() -> None:
    proc = _run(f"""
        import sys
        import fused_memory, fused_memory.cli, fused_memory.mcp_server, fused_memory.cli.serve
        fused_memory.cli.build_parser().parse_args(["mcp", "--namespace", "alice"])
        print(sorted(m for m in sys.modules if m.split(".")[0] in {SERVER_STACK!r}))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_without_the_extra_the_command_names_it(tmp_path) -> None:
    proc = _run(f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "mcp" or name.startswith("mcp."):
                    raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the test)", name=name)
        sys.meta_path.insert(0, Block())
        from fused_memory.cli import main
        sys.exit(main(["mcp", "--path", {str(tmp_path / "store")!r}, "--namespace", "alice"]))
    """)
    assert proc.returncode == 2
    assert "fused-memory[mcp]" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "store").exists()  # refused before any store was made
