"""A common term's postings as NumPy columns, so a query over common words scores few documents, exactly.

Why: a query of common words ("meeting production plan") matches a large share of a 100k
namespace, and scoring every candidate with rank-bm25 (a Python dict lookup per document and term)
costs tens of milliseconds. An approximate pruner (the intersections of the common terms'
postings, each batch cut to its 2048 shortest documents) still ran several rank-bm25 batches per
query and was wrong where the best documents repeat a common word; a threshold walk in length
order was slower still: lengths of chat-sized texts are too alike to separate documents early
(docs/decisions/0008-bm25-parameters-and-exact-top-k.md).

So each common term keeps its postings as two aligned arrays, positions and term frequencies.
A query adds up every common term's BM25 contribution, idf * tf * (k1 + 1) / (tf + k1 * (1 - b +
b * dl / avgdl)), over those arrays in NumPy (one vectorized pass per term, lengths read from the
live `doc_len`), which gives every candidate's common-term score; only the best of them are then
scored by rank-bm25 on the whole query. The arrays are a pre-selection, the scores rank-bm25's.

Writes: a document added after a term's column was built goes to the column's `recent`
positions, which every query scores with rank-bm25 directly; a removed one stays as a stale entry.
A stale entry can only make a position look better than it is (its old term frequency counted
for a document that no longer holds the term, or a freed slot), never worse, so it costs an extra
score, not a wrong result: a document whose score a column could understate is in `recent`.
Columns are dropped, to be rebuilt by the next query that needs them, once recent and stale
entries pass 1/32 of the term's documents (at least 256), so upkeep is amortized over the writes
while every query's `recent` stays short (each recent document costs a rank-bm25 score).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from ...types import MemoryType

__all__ = ["TermColumn", "common_scores", "TYPE_CODE", "TYPE_OF", "FREE_SLOT", "type_mask", "gather_tf", "RareArrays"]

#: A small integer per memory type (None: untyped), so a type filter is a mask over positions.
TYPE_CODE: dict[MemoryType | None, int] = {None: 0, **{t: i for i, t in enumerate(MemoryType, start=1)}}
#: The type each code stands for.
TYPE_OF: tuple[MemoryType | None, ...] = tuple(TYPE_CODE)
#: The code of a position that holds no document.
FREE_SLOT = -1


def type_mask(type_code: np.ndarray, types: Collection[MemoryType | None]) -> np.ndarray:
    """Per position, whether its document is of one of `types`: a table lookup, faster than
    `np.isin` on every type-filtered query."""
    table = np.zeros(len(TYPE_CODE) + 1, dtype=bool)  # the extra, last entry is FREE_SLOT's: False
    table[[TYPE_CODE[t] for t in types]] = True
    return table[type_code]


class TermColumn:
    """One term's documents (positions) and its frequency in each, as of the last build, plus the
    positions written since (`recent`, possibly repeated) and how many built entries went stale."""

    __slots__ = ("positions", "tfs", "recent", "stale")

    #: Recent plus stale entries tolerated before a rebuild: this many, or 1/32 of the term's
    #: documents if that is more (a rebuild is O(df) in Python, amortized over as many writes).
    REBUILD_MIN = 256

    def __init__(self, positions: np.ndarray, tfs: np.ndarray) -> None:
        self.positions, self.tfs = positions, tfs
        self.recent: list[int] = []
        self.stale = 0

    @classmethod
    def build(cls, term: str, posting: Collection[int], doc_freqs: Sequence[Mapping[str, float]]) -> TermColumn:
        """From the term's current posting and the documents' term frequencies."""
        positions = np.sort(np.fromiter(posting, dtype=np.int64, count=len(posting)))  # sorted: `gather_tf`
        tfs = np.fromiter((doc_freqs[p][term] for p in positions.tolist()), dtype=np.float64,
                          count=len(positions))
        return cls(positions, tfs)

    def exact(self) -> bool:
        """Whether the built arrays are the term's postings as they are now (no write since the
        build touched the term), so `gather_tf` may read frequencies off them."""
        return not self.recent and not self.stale

    def worn(self) -> bool:
        """Whether enough has been written since the build that rebuilding is the cheaper path."""
        return len(self.recent) + self.stale > max(self.REBUILD_MIN, len(self.positions) // 32)


def gather_tf(positions: np.ndarray, tfs: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
    """The term's frequency in each of `doc_ids` (0 where it is absent), from its postings as
    sorted `positions` and aligned `tfs`: a binary search per document in C, where rank-bm25 looks
    each (document, term) pair up in a Python dict."""
    if not len(positions):
        return np.zeros(len(doc_ids), dtype=np.float64)
    at = np.minimum(np.searchsorted(positions, doc_ids), len(positions) - 1)
    return np.where(positions[at] == doc_ids, tfs[at], 0.0)


class RareArrays:
    """Rare terms' postings as (sorted positions, term frequencies) for `gather_tf`, built by the
    first query that scores a term and dropped by any write that touches it. Bounded: past `LIMIT`
    positions in all (16 bytes each) it starts over."""

    __slots__ = ("arrays", "size")

    LIMIT = 1 << 20

    def __init__(self) -> None:
        self.arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.size = 0

    def drop(self, term: str) -> None:
        if (arrays := self.arrays.pop(term, None)) is not None:
            self.size -= len(arrays[0])

    def get(self, term: str, posting: Collection[int],
            doc_freqs: Sequence[Mapping[str, float]]) -> tuple[np.ndarray, np.ndarray]:
        arrays = self.arrays.get(term)
        if arrays is None:
            if self.size + len(posting) > self.LIMIT:
                self.arrays, self.size = {}, 0
            positions = np.sort(np.fromiter(posting, dtype=np.int64, count=len(posting)))
            tfs = np.fromiter((doc_freqs[p][term] for p in positions.tolist()), dtype=np.float64,
                              count=len(positions))
            arrays = self.arrays[term] = (positions, tfs)
            self.size += len(positions)
        return arrays


def common_scores(columns: Sequence[tuple[TermColumn, float]], doc_len: np.ndarray, k1: float, b: float,
                  avgdl: float) -> np.ndarray:
    """Per position, the sum over the (column, idf) pairs of the term's BM25 contribution: each
    document's score on the query's common terms (an overestimate only at stale entries)."""
    acc = np.zeros(len(doc_len), dtype=np.float64)
    for column, idf in columns:
        tf = column.tfs
        acc[column.positions] += idf * (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * doc_len[column.positions] / avgdl))
    return acc
