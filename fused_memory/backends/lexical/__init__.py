"""BM25 behind `LexicalIndex`: `bm25` (the index), `docs` (a memory's terms and weights),
`columns` (NumPy postings of the common terms) and `topk` (exact top-k by pruning)."""

from __future__ import annotations

__all__: list[str] = []
