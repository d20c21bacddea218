"""BM25 as sparse vectors: the term weights the engine stores beside each memory's dense vector.

Why: a server-backed store shares one Qdrant collection between many worker processes. A BM25
index kept in each process (`bm25.BM25Index`) must be refilled from every payload on open and
never sees the other workers' writes; the engine's sparse vectors with the IDF modifier keep the
lexical index where the data is. One upsert carries the dense and the sparse vector, so there is
no second index to keep in step.

The split of BM25 between the two sides (Qdrant's `Modifier.IDF`):

* **document side, here:** each term's BM25 saturation with length normalization,
  `w(t, d) = tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))`, from the same fields and
  weights as `BM25Index` (`docs.doc_weights`: text, predicate x4, context at 0.5). `avgdl` is a
  constant (`DEFAULT_AVGDL`): a stored weight cannot follow a moving average, and on LoCoMo a
  frozen avgdl near the real mean ranks like the exact one (docs/decisions/0010-lexical-index-placement.md);
* **query side, the engine:** `score(d) = sum over query terms t of q(t) * idf(t) * w(t, d)`,
  with `idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))` counted over the query's namespace
  (`IdfCorpusParams`) and `q(t) = 1` per distinct query term, as `BM25Index` reads a query.

The IDF differs from rank-bm25's `ln((N - df + 0.5) / (df + 0.5))` (floored at `epsilon` times
the mean): Qdrant's is Lucene's, always > 0, so no floor is needed.

Scores are normalized as `BM25Index` normalizes them: raw / the score of an ideal document of
average length holding every query term once, which is `sum(idf(t))` over the query's terms,
with a term no memory of the namespace holds counted at `idf(N, df=1)`; clipped to 1.
The engine does not return its IDFs, so the backend asks for them in the same batch as the
search (one single-term probe per query term, `SparseAnswer.idf`).

Term ids are the first 4 bytes of blake2b of the term (a u32, what Qdrant's sparse indices are):
about one colliding pair per 100k distinct terms, in which case both terms count as one. The
function and every parameter here are part of the stored format: changing any of them means
rewriting every sparse vector (under a new vector name, `vector.sparse.SPARSE_VECTOR`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...text import tokenize
from ..protocols import LexicalDoc, SparseVector
from .docs import DEFAULT_CONTEXT_WEIGHT, doc_weights

__all__ = ["SparseBM25", "term_id", "engine_idf", "DEFAULT_AVGDL"]

#: Document length (in weighted terms: text, predicate x4, context at 0.5) that length
#: normalization treats as average. The mean on public LoCoMo is 27.8 with two turns of
#: context and 14.2 without; see `SparseBM25` for what the choice moves.
DEFAULT_AVGDL = 24.0


def term_id(term: str) -> int:
    """The sparse index of a term: a fixed 32-bit hash (never change it: stored vectors use it)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "little")


def engine_idf(n: int, df: int) -> float:
    """Qdrant's IDF (`Modifier.IDF`, both engines): ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _pack(weights: dict[int, float]) -> SparseVector:
    ordered = sorted(weights.items())
    return SparseVector(tuple(i for i, _ in ordered), tuple(float(w) for _, w in ordered))


@dataclass(frozen=True)
class SparseBM25:
    """The document-side BM25 weights and the query-side terms and normalization.

    k1 = 0.9, b = 0.4 and the field weights are `BM25Index`'s (see its docstring for why);
    `avgdl` is frozen (see the module docstring). With b = 0.4 the length factor
    `1 - b + b * dl / avgdl` moves little across plausible values, so the choice is a mild one
    (docs/decisions/0010-lexical-index-placement.md); 256 (fastembed's default, for chunks of
    documents) would switch length normalization off for chat-sized memories."""

    k1: float = 0.9
    b: float = 0.4
    avgdl: float = DEFAULT_AVGDL
    predicate_weight: int = 4
    context_weight: float = DEFAULT_CONTEXT_WEIGHT

    def encode(self, doc: LexicalDoc) -> SparseVector:
        """A memory's sparse vector: each term's BM25 weight, by term id (colliding terms add up)."""
        freqs, length = doc_weights(doc, self.predicate_weight, self.context_weight)
        norm = self.k1 * (1.0 - self.b + self.b * length / self.avgdl)
        weights: dict[int, float] = {}
        for term, tf in freqs.items():
            tid = term_id(term)
            weights[tid] = weights.get(tid, 0.0) + tf * (self.k1 + 1.0) / (tf + norm)
        return _pack(weights)

    def query(self, text: str) -> SparseVector | None:
        """The query's distinct terms at weight 1 (None: no term survives tokenizing)."""
        if not isinstance(text, str):
            return None
        weights: dict[int, float] = {}
        for term in dict.fromkeys(tokenize(text)):
            tid = term_id(term)
            weights[tid] = weights.get(tid, 0.0) + 1.0
        return _pack(weights) if weights else None

    @staticmethod
    def ideal(query: SparseVector, idf: Sequence[float | None], n_docs: int) -> float:
        """The raw score of an ideal document of average length holding every query term once:
        sum of weight x idf, an absent term (idf None) at the IDF it would have if that document
        were its only holder (df = 1)."""
        absent = engine_idf(n_docs, 1)
        return sum(w * (absent if i is None else i) for w, i in zip(query.values, idf, strict=True))

    @staticmethod
    def normalized(raw: float, ideal: float) -> float:
        """A raw engine score in [0, 1], as `BM25Index` reports it."""
        return min(1.0, max(0.0, raw / ideal)) if ideal > 0 else 0.0
