"""Checks of the directories the commands write stores into, shared by every command."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigurationError

__all__ = ["require_fresh_dir", "store_path"]


def require_fresh_dir(path: str, flag: str, why: str) -> None:
    """A directory a command will write a store into must be new or empty: `demo --path` added its
    sample to a real store, and memories `eval --store` found from an earlier run changed the
    scores. Nothing of the user's is ever deleted to make room."""
    p = Path(path)
    if p.exists() and (not p.is_dir() or any(p.iterdir())):
        raise ConfigurationError(f"{flag} {path} is not a new or empty directory; {why}")


def store_path(path: str, *, must_exist: bool) -> str:
    """The store directory `--path` names, checked before anything opens it: a mistyped path to
    `query` would otherwise create an empty store there and answer nothing, without a word."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ConfigurationError(f"--path {path} is a file; give the store's directory")
    if must_exist and not (p / "vectors").is_dir():
        raise ConfigurationError(f"--path {path}: no store there "
                                 f"(make one with: fused-memory ingest FILE --path {path})")
    return path
