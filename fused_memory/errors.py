"""The error tree. Every error the library raises on purpose is a `FusedMemoryError`.

Callers catch one base class; the subclasses say *what kind* of thing went wrong so an agent can
decide whether to retry (BackendUnavailable), fix its input (QueryError, InvalidMemory) or fix its
setup (ConfigurationError, EmbeddingMismatch, MissingDependency).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "FusedMemoryError",
    "ConfigurationError",
    "BackendError",
    "BackendUnavailable",
    "EmbeddingMismatch",
    "QueryError",
    "InvalidMemory",
    "MissingDependency",
    "StoreClosed",
    "NotPicklable",
    "AccessDenied",
    "RateLimited",
]


class FusedMemoryError(Exception):
    """Base class of every error raised deliberately by fused-memory."""


class ConfigurationError(FusedMemoryError, ValueError):
    """The store, ensemble or an arm was configured with values that cannot work."""


class BackendError(FusedMemoryError):
    """A storage backend answered with an error (not merely unreachable)."""


class BackendUnavailable(BackendError):
    """A backend could not be reached or did not answer in time.

    When every arm of an ensemble fails, `causes` maps each arm to the reason it failed.
    """

    def __init__(self, message: str, causes: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.causes: dict[str, str] = dict(causes or {})


class EmbeddingMismatch(FusedMemoryError):
    """The store was written with a different embedder than the one now in use.

    Mixing vectors from two models silently destroys ranking quality, so we refuse instead.
    """


class QueryError(FusedMemoryError, ValueError):
    """The query or its parameters are invalid (empty text, k <= 0, unknown type, naive datetime...)."""


class InvalidMemory(FusedMemoryError, ValueError):
    """A memory given to `MemoryStore.add` is invalid; nothing of the batch is written."""


class MissingDependency(FusedMemoryError, ImportError):
    """An optional package needed for the requested feature is not installed."""


class StoreClosed(FusedMemoryError, RuntimeError):
    """The store was closed with `close()`. It is not reopened behind the caller's back (the lock
    on its files was given up on purpose, perhaps for another process); `open()` reopens it."""


class NotPicklable(FusedMemoryError, TypeError):
    """A store or ensemble stands for open storage and threads, which cannot cross a process or
    be written to disk. Pickle what builds it (its path or URLs) and open it again on the other side."""


class AccessDenied(FusedMemoryError, PermissionError):
    """A caller of the MCP server asked for what its token does not grant: another namespace, or a
    write with a read-only token. Said to the caller; nothing is read or written."""


class RateLimited(FusedMemoryError):
    """A caller of the MCP server made more tool calls than its per-token rate allows; the message
    says the rate and when to try again. One client cannot use up the server for the others."""
