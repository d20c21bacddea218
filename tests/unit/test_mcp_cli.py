"""`fused-memory mcp` refuses a command line that cannot work, naming the flag, before it opens a
store or loads a model: HTTP without tokens, tokens without HTTP, a stdio namespace beside HTTP, a
malformed HOST:PORT, a bad namespace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fused_memory.cli import main
from fused_memory.cli.serve import listening_notice, parse_bind


@pytest.mark.parametrize(("extra", "expected"), [
    (["--http", "127.0.0.1:8765"], "--http needs --tokens FILE"),
    (["--tokens", "TOKENS"], "--tokens goes with --http"),
    (["--http", "127.0.0.1:8765", "--tokens", "TOKENS", "--namespace", "alice"], "--namespace is for stdio"),
    (["--http", "127.0.0.1:8765", "--tokens", "TOKENS", "--read-only"], "--read-only is for stdio"),
    (["--http", "port", "--tokens", "TOKENS"], "--http takes [HOST:]PORT"),
    (["--http", "127.0.0.1:99999", "--tokens", "TOKENS"], "--http takes [HOST:]PORT"),
    (["--http", ":8765", "--tokens", "TOKENS"], "--http takes [HOST:]PORT"),
    (["--namespace", " "], "--namespace ' '"),
    (["--neo4j-uri", "bolt://127.0.0.1:7687"], "--neo4j-uri goes with --qdrant-url"),
    (["--qdrant-url", "http://127.0.0.1:6333", "--backend", "qdrant-local"], "give one"),
])
def test_a_command_line_that_cannot_work_is_refused_naming_the_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], expected: str) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"a-token-of-enough-length": {"namespaces": ["a"]}}), encoding="utf-8")
    store = tmp_path / "store"
    argv = ["mcp", "--path", str(store), *[str(tokens) if a == "TOKENS" else a for a in extra]]
    assert main(argv) == 2
    assert expected in capsys.readouterr().err
    assert not store.exists()


def test_bind_addresses() -> None:
    assert parse_bind("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_bind("8765") == ("127.0.0.1", 8765)  # loopback unless told otherwise
    assert parse_bind("[::1]:0") == ("::1", 0)
    assert parse_bind("0.0.0.0:80") == ("0.0.0.0", 80)


def test_the_server_says_where_it_listens_and_warns_off_loopback() -> None:
    assert listening_notice("127.0.0.1", 8765, 2) == ["fused-memory mcp: listening on http://127.0.0.1:8765/mcp "
                                                      "(2 tokens)"]
    assert len(listening_notice("::1", 8765, 1)) == 1
    [where, warning] = listening_notice("0.0.0.0", 8765, 1)
    assert "warning: bound to 0.0.0.0, not loopback: reachable from other machines" in warning
