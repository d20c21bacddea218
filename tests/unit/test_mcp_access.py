"""The MCP server's access rules without a server: the tokens file is checked entry by entry
(errors name the entry by number, never the token), a lookup finds exactly the token given, a
grant refuses any namespace it does not hold, and the rate limit is a token bucket per grant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fused_memory.errors import AccessDenied, ConfigurationError, RateLimited
from fused_memory.mcp_server import Grant, RateLimiter, TokenTable

TOKEN = "s3cret-token-for-alice"


def _table(tmp_path: Path, data: object) -> TokenTable:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return TokenTable.from_file(path)


def test_a_lookup_finds_exactly_the_token_given(tmp_path: Path) -> None:
    table = _table(tmp_path, {TOKEN: {"namespaces": ["alice", "shared"], "write": True},
                              "read-only-token-for-bob": {"namespaces": "bob", "label": "bob"}})
    assert table.lookup(TOKEN) == Grant(("alice", "shared"), True, "token 1")
    assert table.lookup("read-only-token-for-bob") == Grant(("bob",), False, "bob")
    for wrong in (None, "", TOKEN[:-1], TOKEN + "x", TOKEN.upper(), f" {TOKEN}"):
        assert table.lookup(wrong) is None


@pytest.mark.parametrize(("data", "expected"), [
    ([], "must map each token to its grant"),
    ({}, "the token table is empty"),
    ({"short": {"namespaces": ["a"]}}, "token #1: a token must be at least 16 characters"),
    ({TOKEN: ["a"]}, "token #1: its grant must be an object"),
    ({TOKEN: {"namespaces": []}}, "token #1: namespaces must be a non-empty list"),
    ({TOKEN: {"namespaces": ["a"], "write": "yes"}}, "token #1: write must be true or false"),
    ({TOKEN: {"namespaces": ["a"], "admin": True}}, "token #1: unknown field(s) admin"),
    ({TOKEN: {"namespaces": [""]}}, "token #1: namespace ''"),
    ({TOKEN: {"namespaces": ["a"], "label": "x"}, TOKEN + "2": {"namespaces": ["b"], "label": "x"}},
     "label 'x' names more than one token"),
])
def test_a_bad_tokens_file_is_refused_naming_the_entry_never_the_token(tmp_path: Path, data: object,
                                                                       expected: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        _table(tmp_path, data)
    assert expected in str(refused.value)
    assert TOKEN not in str(refused.value)


def test_an_unreadable_or_non_json_tokens_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read it"):
        TokenTable.from_file(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="not JSON"):
        TokenTable.from_file(tmp_path / "bad.json")


def test_a_grant_refuses_every_namespace_it_does_not_hold() -> None:
    grant = Grant(("alice", "shared"), False, "alice")
    assert grant.namespace(None) == "alice" and grant.namespace("shared") == "shared"
    for asked in ("bob", "Alice", "alice ", ["alice"], 1, ""):
        with pytest.raises(AccessDenied, match="is not one this connection may use"):
            grant.namespace(asked)
    with pytest.raises(AccessDenied, match="may read memories but not change them"):
        grant.require_write("save_memory")


def test_the_rate_limit_is_a_bucket_per_grant_refilled_over_the_minute() -> None:
    now = [0.0]
    limiter = RateLimiter(60, clock=lambda: now[0])
    a, b = Grant(("a",), True, "a"), Grant(("b",), True, "b")
    for _ in range(60):
        limiter.take(a)
    with pytest.raises(RateLimited, match=r"60 tool calls a minute; try again in 1\.0 s"):
        limiter.take(a)
    limiter.take(b)  # another grant's allowance is its own
    now[0] = 2.0  # one call a second comes back
    limiter.take(a)
    limiter.take(a)
    with pytest.raises(RateLimited):
        limiter.take(a)
    RateLimiter(None).take(a)
    with pytest.raises(ConfigurationError):
        RateLimiter(0)
