"""Use any LangChain `Embeddings` or LlamaIndex `BaseEmbedding` as a fused-memory `Embedder`.

Why duck typing and no framework import: `import fused_memory` must stay framework-free (and fast). The
wrappers only call `embed_documents` / `embed_query` (LangChain) or `get_text_embedding_batch` /
`get_query_embedding` (LlamaIndex); `as_embedder` recognizes the framework base classes through
`sys.modules`, which holds them already whenever the caller has an instance of one.

What the wrappers add: float32 numpy output, L2 normalization (the stores search by cosine and the
fusion clamps cosine scores, so scale must not leak in), shape and finiteness checks, and an id
(`langchain:<Class>[:<model>]`, dim, weights) so a store pins the model it was written with. The dim is
discovered from the first embedding; asking for `dim` or `id` before any embedding embeds one short probe
text. Errors raised by the wrapped model (network, quota) propagate unchanged: only the caller knows
whether they are worth a retry.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import BackendError, ConfigurationError, EmbeddingMismatch
from .base import Embedder, EmbedderId, check_text, check_texts, is_embedder, l2_normalize

__all__ = ["LangChainEmbedder", "LlamaIndexEmbedder", "as_embedder", "UNVERIFIED_WEIGHTS"]

#: weights_hash of a wrapped model: we cannot see its weights. Pass `weights_hash=` to pin a version.
UNVERIFIED_WEIGHTS = "unverified"
_PROBE_TEXT = "fused-memory embedding dimension probe"
_MODEL_ATTRS = ("model", "model_name", "model_id", "deployment_name")


def _model_label(obj: Any) -> str | None:
    """The wrapped model's own name, if it exposes one (e.g. OpenAIEmbeddings.model)."""
    for attr in _MODEL_ATTRS:
        try:
            value = getattr(obj, attr, None)
        except Exception:  # exotic descriptors; a label is not worth an error
            continue
        if isinstance(value, str) and value.strip() and value.strip().lower() != "unknown":
            return value.strip()
    return None


class _WrappedEmbedder:
    """Shared machinery: lazy dim, normalization, checks. Subclasses map the two raw calls."""

    _framework = "wrapped"
    _doc_method = "embed_documents"
    _query_method = "embed_query"

    def __init__(self, model: Any, name: str | None = None, *, weights_hash: str | None = None) -> None:
        for method in (self._doc_method, self._query_method):
            if not callable(getattr(model, method, None)):
                raise ConfigurationError(f"{type(self).__name__} needs an object with a {method}() method; "
                                         f"{type(model).__name__} has none")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ConfigurationError("name must be a non-empty string")
        self.model = model
        label = _model_label(model)
        self._name = name or f"{self._framework}:{type(model).__name__}" + (f":{label}" if label else "")
        self._weights_hash = weights_hash or UNVERIFIED_WEIGHTS
        self._dim: int | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ raw calls (subclasses)
    def _raw_documents(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def _raw_query(self, text: str) -> Any:
        raise NotImplementedError

    # ------------------------------------------------------------------ identity
    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed_query(_PROBE_TEXT)
        assert self._dim is not None
        return self._dim

    @property
    def id(self) -> EmbedderId:
        return EmbedderId(name=self._name, dim=self.dim, weights_hash=self._weights_hash)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r}, dim={self._dim if self._dim is not None else '?'})"

    # ------------------------------------------------------------------ embedding
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """`(len(texts), dim)` float32, unit rows, in input order."""
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        raw = self._raw_documents(items)
        return l2_normalize(self._check(raw, rows=len(items)))

    def embed_query(self, text: str) -> np.ndarray:
        """`(dim,)` float32, unit norm."""
        raw = self._raw_query(check_text(text, "query"))
        return l2_normalize(self._check([raw], rows=1)[0])

    def _check(self, raw: Any, rows: int) -> np.ndarray:
        """Validate the wrapped model's answer and learn (then enforce) its dimension."""
        try:
            arr = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise BackendError(f"{self._name} returned something that is not a list of vectors: {exc}") from None
        if arr.ndim != 2 or arr.shape[0] != rows or arr.shape[1] == 0:
            raise BackendError(f"{self._name} returned an array of shape {arr.shape}; expected ({rows}, dim)")
        if not np.all(np.isfinite(arr)):
            raise BackendError(f"{self._name} returned non-finite values (NaN or inf)")
        dim = int(arr.shape[1])
        if self._dim is None:
            with self._lock:
                if self._dim is None:
                    self._dim = dim
        if dim != self._dim:
            raise EmbeddingMismatch(f"{self._name} returned {dim}-d vectors, earlier {self._dim}-d: "
                                    "the wrapped model changed under us")
        return arr


class LangChainEmbedder(_WrappedEmbedder):
    """Wraps a `langchain_core.embeddings.Embeddings` (sync `embed_documents` / `embed_query`)."""

    _framework = "langchain"

    def _raw_documents(self, texts: list[str]) -> Any:
        return self.model.embed_documents(texts)

    def _raw_query(self, text: str) -> Any:
        return self.model.embed_query(text)


class LlamaIndexEmbedder(_WrappedEmbedder):
    """Wraps a `llama_index.core` `BaseEmbedding` (`get_text_embedding_batch` / `get_query_embedding`,
    so query instructions the model defines still apply to queries only)."""

    _framework = "llamaindex"
    _doc_method = "get_text_embedding_batch"
    _query_method = "get_query_embedding"

    def _raw_documents(self, texts: list[str]) -> Any:
        return self.model.get_text_embedding_batch(texts)

    def _raw_query(self, text: str) -> Any:
        return self.model.get_query_embedding(text)


def _instance_of(obj: object, module: str, cls_name: str) -> bool:
    """isinstance against a class that is only looked up if its module is already loaded: an object of
    that class cannot exist otherwise, and we must never import a framework ourselves."""
    mod = sys.modules.get(module)
    cls = getattr(mod, cls_name, None) if mod is not None else None
    return isinstance(cls, type) and isinstance(obj, cls)


def as_embedder(obj: object) -> Embedder:
    """Return `obj` as an `Embedder`: an Embedder as is, a LangChain `Embeddings` or a LlamaIndex
    `BaseEmbedding` wrapped. Anything else is a `ConfigurationError` (no silent default)."""
    if is_embedder(obj):
        return obj  # type: ignore[return-value]
    if _instance_of(obj, "langchain_core.embeddings", "Embeddings"):
        return LangChainEmbedder(obj)
    if _instance_of(obj, "llama_index.core.base.embeddings.base", "BaseEmbedding"):
        return LlamaIndexEmbedder(obj)
    raise ConfigurationError(
        f"cannot use {type(obj).__name__} as an embedder: expected a fused_memory Embedder, a LangChain "
        "Embeddings or a LlamaIndex BaseEmbedding"
    )
