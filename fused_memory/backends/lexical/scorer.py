"""BM25Okapi over statistics kept elsewhere (`bm25._Shard`): rank-bm25's own formula, without its corpus scan."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from rank_bm25 import BM25Okapi

__all__ = ["SuppliedBM25"]


class SuppliedBM25(BM25Okapi):  # rank-bm25 ships no type hints: read as Any (pyproject, [tool.mypy])
    """A BM25Okapi whose statistics are handed in rather than computed from a corpus.

    Only `get_batch_scores` is used: rank-bm25's own formula, term by term in the query's order,
    with the same NumPy expression, so the scores are bit for bit rank-bm25's (the unit tests
    compare them with `BM25Okapi(corpus).get_scores`). What differs is where each document's term
    frequency comes from: rank-bm25 looks up every (document, term) pair in a Python dict, which
    was most of the lexical arm's time and all of it under the GIL, beside the query embedding and
    the engine search; here `tf_of(term, doc_ids)` reads them off the term's postings as arrays
    (`_Shard.term_tf`). `doc_len` is a NumPy array; `doc_freqs` is only read by rank-bm25's own
    `get_batch_scores` (without `tf_of`), which the tests compare against."""

    def __init__(self, doc_freqs: Sequence[Mapping[str, float]], doc_len: np.ndarray, corpus_size: int,
                 avgdl: float, idf: dict[str, float], k1: float, b: float, epsilon: float,
                 tf_of: Callable[[str, np.ndarray], np.ndarray] | None = None) -> None:
        # Deliberately not calling super().__init__: that would rebuild everything from a corpus.
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.doc_freqs, self.doc_len, self.corpus_size = doc_freqs, doc_len, corpus_size
        self.avgdl, self.idf, self.tokenizer = avgdl, idf, None
        self.tf_of = tf_of

    def get_batch_scores(self, query: Sequence[str], doc_ids: Sequence[int]) -> list[float]:
        """rank-bm25's `get_batch_scores`, term frequencies from `tf_of`."""
        if self.tf_of is None:
            return super().get_batch_scores(query, doc_ids)
        ids = np.asarray(doc_ids, dtype=np.int64).reshape(-1)
        if len(ids) and (ids.min() < 0 or ids.max() >= len(self.doc_len)):
            raise IndexError("document position out of range")
        score = np.zeros(len(ids))
        doc_len = np.asarray(self.doc_len)[ids]
        norm = self.k1 * (1 - self.b + self.b * doc_len / self.avgdl)  # rank-bm25 computes it per term: same floats
        for q in query:
            q_freq = self.tf_of(q, ids)
            score += (self.idf.get(q) or 0) * (q_freq * (self.k1 + 1) / (q_freq + norm))
        return score.tolist()
