"""A common term's postings as NumPy columns, so a query over common words scores few documents, exactly.

Why: a query of common words ("meeting production plan") matches a large share of a 100k
namespace, and scoring every candidate with rank-bm25 (a Python dict lookup per document and term)
costs tens of milliseconds. An approximate pruner (the intersections of the common terms'
postings, each batch cut to its 2048 shortest documents) still ran several rank-bm25 batches per
query and was wrong where the best documents repeat a common word; a threshold walk in length
order was slower still: lengths of chat-sized texts are too alike to separate documents early
(docs/decisions/0008-bm25-parameters-and-exact-top-k.md).

So each common term's postings are two aligned arrays, positions and term frequencies: its slice
of the namespace's base segment (`segment`), read as it is, never copied or rebuilt. A query adds
up every common term's BM25 contribution, idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl /
avgdl)), over those arrays in NumPy (one vectorized pass per term, lengths read from the live
`doc_len`), which gives every candidate's common-term score; only the best of them are then
scored by rank-bm25 on the whole query. The arrays are a pre-selection, the scores rank-bm25's.

Writes since the base was built: a document added since is one of the column's `recent`
positions, which every query scores with rank-bm25 directly; a deleted one stays in the slice as a
stale entry (its slot's length is 0 and it is skipped). A stale entry can only make a position
look better than it is, never worse, so it costs an extra score, not a wrong result: a document
whose score a column could understate is in `recent`. The overlay of writes is folded into a new
base once it passes a share of the namespace (`bm25._Shard.MERGE_SHARE`), so `recent` stays short.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from ...types import MemoryType

__all__ = ["TermColumn", "common_scores", "TYPE_CODE", "TYPE_OF", "FREE_SLOT", "type_mask", "gather_tf"]

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
    """One term's documents in the base (positions, ascending) and its frequency in each, plus the
    positions written since (`recent`). Entries of documents deleted since stay in the arrays
    (module docstring): the scorer skips them by their slot's length, 0."""

    __slots__ = ("positions", "tfs", "recent")

    def __init__(self, positions: np.ndarray, tfs: np.ndarray, recent: Sequence[int] = ()) -> None:
        self.positions, self.tfs = positions, tfs
        self.recent = list(recent)


def gather_tf(positions: np.ndarray, tfs: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
    """The term's frequency in each of `doc_ids` (0 where it is absent), as float64, from its
    postings as sorted `positions` and aligned `tfs`: a binary search per document in C, where
    rank-bm25 looks each (document, term) pair up in a Python dict."""
    if not len(positions):
        return np.zeros(len(doc_ids), dtype=np.float64)
    at = np.minimum(np.searchsorted(positions, doc_ids), len(positions) - 1)
    return np.where(positions[at] == doc_ids, np.asarray(tfs[at], dtype=np.float64), 0.0)


def common_scores(columns: Sequence[tuple[TermColumn, float]], doc_len: np.ndarray, k1: float, b: float,
                  avgdl: float) -> np.ndarray:
    """Per position, the sum over the (column, idf) pairs of the term's BM25 contribution: each
    document's score on the query's common terms (an overestimate only at stale entries), in
    float64 whatever the stored frequencies' width, so the pruning bound is never rounded down."""
    acc = np.zeros(len(doc_len), dtype=np.float64)
    for column, idf in columns:
        tf = np.asarray(column.tfs, dtype=np.float64)
        acc[column.positions] += idf * (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * doc_len[column.positions] / avgdl))
    return acc
