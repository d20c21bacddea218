"""Embedders: text -> L2-normalized float32 vectors, behind one small `Embedder` protocol.

`MiniLMEmbedder` (all-MiniLM-L6-v2 int8 ONNX, no torch, nothing downloaded) is the default everywhere.
`HashingEmbedder` exists for fast unit tests and is never chosen implicitly. `LangChainEmbedder` and
`LlamaIndexEmbedder` (or `as_embedder`) bring any framework embedding model, without this package
importing either framework.
"""

from __future__ import annotations

from .adapters import LangChainEmbedder, LlamaIndexEmbedder, as_embedder
from .base import Embedder, EmbedderId, is_embedder
from .hashing import HashingEmbedder
from .minilm import MiniLMEmbedder

__all__ = [
    "Embedder",
    "EmbedderId",
    "MiniLMEmbedder",
    "HashingEmbedder",
    "LangChainEmbedder",
    "LlamaIndexEmbedder",
    "as_embedder",
    "is_embedder",
    "default_embedder",
]


def default_embedder() -> MiniLMEmbedder:
    """A new `MiniLMEmbedder` with default settings (loads lazily, on first use)."""
    return MiniLMEmbedder()
