"""Who may touch which memories through the MCP server, and how often.

* A `Grant` is what one caller may do: the namespaces it reads (and writes, if `write`), the first
  being its default. Over stdio the command line gives the one grant; over HTTP the bearer token
  picks it from a `TokenTable`, before any tool runs, so no argument a model writes can widen it.
* Tokens are compared in constant time (`hmac.compare_digest` against every token, no early exit),
  kept only as SHA-256 digests once loaded, and never printed: a grant is named by its `label`.
* `RateLimiter` is a token bucket per grant: one client cannot use up the server's threads for
  the others, and a refused call says the rate and when to retry.

Nothing here imports the MCP SDK: the rules are testable without a server.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import AccessDenied, ConfigurationError, FusedMemoryError, RateLimited
from ..validation import check_namespace

__all__ = ["Grant", "TokenTable", "RateLimiter", "MIN_TOKEN_CHARS", "is_loopback"]

#: A shorter token is refused when the file is read: a bearer token is the only secret between a
#: network and the memories, and a short one can be guessed.
MIN_TOKEN_CHARS = 16


def is_loopback(host: str) -> bool:
    """Whether a bind address is reachable from this machine only."""
    return host in ("localhost", "::1") or host.startswith("127.")


@dataclass(frozen=True)
class Grant:
    """What one caller may do: read the `namespaces` (the first is its default) and, with `write`,
    save and delete in them. `label` names the grant in logs and errors, never the token."""

    namespaces: tuple[str, ...]
    write: bool
    label: str

    def namespace(self, asked: object) -> str:
        """The namespace a call acts on: the one asked for if this grant holds it, else the
        default. Asking for another is refused by name, whatever it is."""
        if asked is None:
            return self.namespaces[0]
        if not isinstance(asked, str) or asked not in self.namespaces:
            raise AccessDenied(f"namespace {asked!r} is not one this connection may use; it may use "
                               f"{', '.join(map(repr, self.namespaces))}")
        return asked

    def require_write(self, tool: str) -> None:
        if not self.write:
            raise AccessDenied(f"{tool}: this connection may read memories but not change them")


class TokenTable:
    """Bearer tokens -> grants, read from a JSON file of the form
    `{"<token>": {"namespaces": ["alice"], "write": true, "label": "alice's laptop"}}`
    (`write` defaults to false, `label` to "token N")."""

    def __init__(self, grants: Mapping[str, Grant]) -> None:
        if not grants:
            raise ConfigurationError("the token table is empty: no request could be served")
        labels = [grant.label for grant in grants.values()]
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:  # the rate limit counts by label: two tokens under one label would share it
            raise ConfigurationError(f"label {', '.join(map(repr, repeated))} names more than one token")
        self._digests = [(hashlib.sha256(token.encode()).digest(), grant) for token, grant in grants.items()]

    @classmethod
    def from_file(cls, path: str | Path) -> TokenTable:
        where = f"--tokens {path}"
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigurationError(f"{where}: cannot read it ({exc.strerror})") from None
        except ValueError as exc:
            raise ConfigurationError(f"{where}: not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise ConfigurationError(f"{where}: must map each token to its grant, "
                                     '{"<token>": {"namespaces": ["alice"], "write": true}}')
        return cls({token: _grant(token, entry, f"{where}: token #{n}", f"token {n}")
                    for n, (token, entry) in enumerate(data.items(), 1)})

    def lookup(self, token: str | None) -> Grant | None:
        """The grant of `token`, or None. Every stored digest is compared, in constant time each,
        so how long this takes says nothing about which token nearly matched."""
        if not token:
            return None
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        found = None
        for stored, grant in self._digests:
            if hmac.compare_digest(stored, digest):
                found = grant
        return found

    def grants(self) -> list[Grant]:
        return [grant for _, grant in self._digests]


def _grant(token: object, entry: object, where: str, default_label: str) -> Grant:
    """One entry of the tokens file, checked; errors name the entry by number, never by token."""
    if not isinstance(token, str) or len(token) < MIN_TOKEN_CHARS or token != token.strip():
        raise ConfigurationError(f"{where}: a token must be at least {MIN_TOKEN_CHARS} characters without "
                                 "surrounding spaces (e.g. python -c 'import secrets; print(secrets.token_urlsafe())')")
    if not isinstance(entry, dict):
        raise ConfigurationError(f"{where}: its grant must be an object with namespaces and write")
    unknown = sorted(set(entry) - {"namespaces", "write", "label"})
    if unknown:
        raise ConfigurationError(f"{where}: unknown field(s) {', '.join(unknown)} (allowed: namespaces, write, label)")
    spaces = entry.get("namespaces")
    if isinstance(spaces, str):
        spaces = [spaces]
    if not isinstance(spaces, list) or not spaces:
        raise ConfigurationError(f"{where}: namespaces must be a non-empty list of namespace names")
    for space in spaces:
        try:
            check_namespace(space)
        except FusedMemoryError as exc:
            raise ConfigurationError(f"{where}: namespace {space!r}: {exc}") from None
    write = entry.get("write", False)
    label = entry.get("label", default_label)
    if not isinstance(write, bool):
        raise ConfigurationError(f"{where}: write must be true or false, got {write!r}")
    if not isinstance(label, str) or not label.strip():
        raise ConfigurationError(f"{where}: label must be a non-empty string")
    return Grant(tuple(dict.fromkeys(spaces)), write, label)


class RateLimiter:
    """At most `per_minute` tool calls per grant, in bursts of up to `per_minute` (a token bucket
    refilled continuously). `per_minute` None: no limit."""

    def __init__(self, per_minute: int | None, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute is not None and (isinstance(per_minute, bool) or not isinstance(per_minute, int)
                                       or per_minute <= 0):
            raise ConfigurationError(f"the rate limit must be a positive number of calls a minute, got {per_minute!r}")
        self.per_minute = per_minute
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, grant: Grant) -> None:
        """Count one call of `grant`, or raise `RateLimited` saying when the next one fits."""
        if self.per_minute is None:
            return
        rate = self.per_minute / 60.0
        with self._lock:
            now = self._clock()
            tokens, then = self._buckets.get(grant.label, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - then) * rate)
            if tokens < 1.0:
                self._buckets[grant.label] = (tokens, now)
                wait = (1.0 - tokens) / rate
                raise RateLimited(f"rate limit: this connection may make {self.per_minute} tool calls a minute; "
                                  f"try again in {wait:.1f} s")
            self._buckets[grant.label] = (tokens - 1.0, now)
