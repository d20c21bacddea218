"""Real `fused-memory mcp` servers for the tests, each a subprocess of `python -m fused_memory.cli`
(the embedded store, the default MiniLM embedder): stdio ones the MCP SDK's client launches
itself, HTTP ones on a loopback port the server picks (`--http 127.0.0.1:0`) and prints."""

from __future__ import annotations

import json
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

__all__ = ["stdio_params", "HttpServer", "write_tokens", "text_of", "STARTUP_S"]

#: Start-up (the embedder and spaCy load) on a busy 2-core host; a server slower than this failed.
STARTUP_S = 120


def stdio_params(path: Path, namespace: str = "alice", *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "fused_memory.cli", "mcp", "--path", str(path), "--namespace", namespace,
                                       *extra])


def write_tokens(path: Path, grants: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """A tokens file granting each label its entry; returns label -> a fresh random token."""
    tokens = {label: secrets.token_urlsafe(24) for label in grants}
    path.write_text(json.dumps({tokens[label]: {**grant, "label": label} for label, grant in grants.items()}),
                    encoding="utf-8")
    return tokens


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


class HttpServer:
    """`fused-memory mcp --http 127.0.0.1:0` as a subprocess; `url` once it listens."""

    def __init__(self, path: Path, tokens_file: Path, *extra: str) -> None:
        self.log = path.parent / f"{path.name}-server.log"
        self._log = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fused_memory.cli", "mcp", "--path", str(path), "--http", "127.0.0.1:0",
             "--tokens", str(tokens_file), *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log)
        self.url = self._wait_listening()

    def _wait_listening(self) -> str:
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+/mcp)", self.log.read_text())
            if found:
                return found.group(1)
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}): {self.log.read_text()}")
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the server did not listen within {STARTUP_S} s: {self.log.read_text()}")

    def output(self) -> str:
        return self.log.read_text()

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as when the machine's OOM killer or a crash ends it."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._log.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()


