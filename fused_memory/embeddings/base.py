"""The `Embedder` protocol and the small pieces every embedder shares.

Contract (what the store and the dense arm rely on):

* `embed_documents(texts)` returns a `numpy.ndarray` of shape `(len(texts), dim)`, dtype float32, every
  row L2-normalized (an all-zero row stays zero: a text with no features has no direction). Row `i` is
  the embedding of `texts[i]`, whatever batching or reordering happens inside.
* `embed_query(text)` returns a 1-D float32 array of shape `(dim,)`, normalized the same way.
  numpy rather than tuples because the hot path (query -> vector -> Qdrant) and batch ingest both want
  contiguous float32; the store converts to `tuple[float, ...]` with `.tolist()` at the backend edge.
* `id` is an `EmbedderId` (name, dim, weights hash). The store records it when it is created and refuses
  to open or query with an embedder whose id differs, because vectors from two models are not comparable.
* Constructors do no I/O: models load lazily on first use, once, under a lock, so building a store (or
  importing the package) is cheap and thread-safe.
"""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

import numpy as np

from ..errors import ConfigurationError, QueryError

__all__ = [
    "EmbedderId",
    "Embedder",
    "LoadsLazily",
    "is_embedder",
    "l2_normalize",
    "check_texts",
    "check_text",
    "Lazy",
    "QueryCache",
]

T = TypeVar("T")


@dataclass(frozen=True)
class EmbedderId:
    """Identity of an embedding space. Two embedders are compatible iff their ids are equal.

    `weights_hash` pins the exact weights (sha256 of the model file for MiniLM); an adapter around a
    third-party model cannot see its weights and says so (`"unverified"`) unless the caller pins one.
    """

    name: str
    dim: int
    weights_hash: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigurationError("EmbedderId.name must be a non-empty string")
        if isinstance(self.dim, bool) or not isinstance(self.dim, int) or self.dim <= 0:
            raise ConfigurationError(f"EmbedderId.dim must be a positive int, got {self.dim!r}")
        if not isinstance(self.weights_hash, str):
            raise ConfigurationError("EmbedderId.weights_hash must be a string")

    def to_json(self) -> dict[str, Any]:
        """What the store writes into its metadata."""
        return {"name": self.name, "dim": self.dim, "weights_hash": self.weights_hash}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EmbedderId:
        """Read back what `to_json` wrote; a malformed record is a configuration problem, not a crash."""
        try:
            return cls(name=str(data["name"]), dim=int(data["dim"]), weights_hash=str(data["weights_hash"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"malformed embedder id record {dict(data)!r}: {exc}") from None

    def __str__(self) -> str:
        return f"{self.name} (dim={self.dim}, weights={self.weights_hash[:12] or '-'})"


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalized float32 vectors (see the module docstring for the full contract).

    Note: on Python < 3.12 `isinstance(x, Embedder)` evaluates `x.id` / `x.dim`, which for an adapter may
    call the wrapped model once; use `is_embedder` to check without side effects.
    """

    @property
    def id(self) -> EmbedderId: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


@runtime_checkable
class LoadsLazily(Protocol):
    """Optional: an embedder whose model is loaded on its first embedding (`MiniLMEmbedder`: ~0.3 s
    from a warm disk, ~1.7 s from a cold one, over 2 s on a busy host). `load()` loads it now, so a
    caller can pay that where a timeout does not count it (the ensemble, before the arms start)."""

    @property
    def loaded(self) -> bool: ...

    def load(self) -> object: ...


_EMBEDDER_ATTRS = ("id", "dim", "embed_documents", "embed_query")


def is_embedder(obj: object) -> bool:
    """True if `obj` structurally satisfies `Embedder`, checked statically (no property is evaluated,
    so no model is loaded and no remote API is called just to answer the question)."""
    for attr in _EMBEDDER_ATTRS:
        try:
            inspect.getattr_static(obj, attr)
        except AttributeError:
            return False
    found: Any = obj  # every attribute is known to exist now
    return callable(found.embed_documents) and callable(found.embed_query)


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalization to float32. Zero rows stay zero (no NaN): dividing by a floor, as
    sentence-transformers does, keeps the function total."""
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.ndim == 1:
        norm = float(np.linalg.norm(arr))
        return arr / max(norm, 1e-12)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return arr / np.maximum(norms, 1e-12)


def check_text(text: object, what: str = "text") -> str:
    """One text to embed must be a str of valid Unicode; anything else is a caller bug best reported
    here, as a `QueryError`, rather than as a TypeError from deep inside a tokenizer."""
    if not isinstance(text, str):
        raise QueryError(f"{what} must be a str, got {type(text).__name__}")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise QueryError(f"{what} is not valid Unicode text ({exc.reason})") from None
    return text


def check_texts(texts: Sequence[str]) -> list[str]:
    """A batch must be a sequence of str. A bare str is refused: iterating it would silently embed
    one character per row, a classic mistake."""
    if isinstance(texts, (str, bytes)):
        raise QueryError("embed_documents expects a sequence of strings, not a single string; "
                         "use embed_query for one text")
    try:
        items = list(texts)
    except TypeError:
        raise QueryError(f"embed_documents expects a sequence of strings, got {type(texts).__name__}") from None
    for i, t in enumerate(items):
        check_text(t, f"texts[{i}]")
    return items


class Lazy(Generic[T]):
    """A value built once, on first use, under a lock (double-checked).

    If the factory raises, nothing is cached and the next call tries again: a transient failure (or a
    file fixed by the user) must not poison the embedder for the life of the process.
    """

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._value: T | None = None
        self._ready = False

    @property
    def ready(self) -> bool:
        return self._ready

    def get(self) -> T:
        if self._ready:
            return cast(T, self._value)
        with self._lock:
            if not self._ready:
                self._value = self._factory()
                self._ready = True
        return cast(T, self._value)


class QueryCache:
    """A bounded, thread-safe LRU of query text -> vector.

    Agents repeat queries (retries, multi-step plans), and a MiniLM query costs milliseconds while a
    lookup costs microseconds. Stored arrays are read-only and callers get copies, so nobody can corrupt
    a cached vector by mutating what they were handed.
    """

    def __init__(self, maxsize: int = 256) -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 0:
            raise ConfigurationError(f"query cache size must be an int >= 0, got {maxsize!r}")
        self.maxsize = maxsize
        self._data: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> np.ndarray | None:
        if self.maxsize == 0:
            return None
        with self._lock:
            vec = self._data.get(key)
            if vec is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
        return vec.copy()

    def put(self, key: str, vector: np.ndarray) -> None:
        if self.maxsize == 0:
            return
        stored = np.array(vector, dtype=np.float32, copy=True)
        stored.setflags(write=False)
        with self._lock:
            self._data[key] = stored
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)
