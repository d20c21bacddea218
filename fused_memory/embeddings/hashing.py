"""`HashingEmbedder`: a deterministic, model-free embedder for fast unit tests. Never a fallback.

Signed feature hashing of lowercase word unigrams and character trigrams (of each word, padded with
boundary markers so prefixes and suffixes count), L2-normalized. Texts that share words or word pieces
land close together, which is enough to exercise the dense arm's plumbing without loading a model.

Why blake2b and not `hash()`: Python salts `str.__hash__` per process (PYTHONHASHSEED), so a store
written by one process would be unreadable by the next. blake2b is stable everywhere.

Its id is named "hashing-..." so a store written with it refuses MiniLM (and vice versa): the two spaces
are unrelated. Nothing in the library picks it implicitly; the store's default is MiniLM and no error
path falls back to this.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ..errors import ConfigurationError
from .base import EmbedderId, check_text, check_texts, l2_normalize

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+", re.UNICODE)
_VERSION = "v1"  # bump if the feature recipe changes: it changes every vector, so it changes the id
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5


@lru_cache(maxsize=65536)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    """Bucket and sign of one feature. Cached: test corpora repeat features constantly."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


def _features(text: str) -> list[tuple[str, float]]:
    feats: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        feats.append(("w:" + word, _WORD_WEIGHT))
        padded = f"<{word}>"
        feats.extend(("c:" + padded[i:i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return feats


class HashingEmbedder:
    """Feature-hashing embedder (tests only). `dim` defaults to 256.

    A text with no word characters embeds to the zero vector (it has no features), which matches
    nothing; every other vector has unit norm.
    """

    def __init__(self, dim: int = 256) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ConfigurationError(f"HashingEmbedder dim must be an int >= 8, got {dim!r}")
        self._dim = dim
        self._id = EmbedderId(name=f"hashing-{_VERSION}", dim=dim, weights_hash=f"blake2b-w1-c3-{_VERSION}")

    @property
    def id(self) -> EmbedderId:
        return self._id

    @property
    def dim(self) -> int:
        return self._dim

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self._dim})"

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self._dim, dtype=np.float32)
        for feature, weight in _features(text):
            idx, sign = _slot(feature, self._dim)
            vec[idx] += sign * weight
        return vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """`(len(texts), dim)` float32, unit rows (zero rows for featureless texts)."""
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self._dim), dtype=np.float32)
        return l2_normalize(np.stack([self._vector(t) for t in items]))

    def embed_query(self, text: str) -> np.ndarray:
        """`(dim,)` float32; identical to the same text's row from `embed_documents`."""
        return l2_normalize(self._vector(check_text(text, "query")))
