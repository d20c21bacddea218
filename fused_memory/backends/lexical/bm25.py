"""The embedded lexical index: rank-bm25's BM25Okapi per namespace, scored over candidates only.

Why not `BM25Okapi(corpus).get_scores(query)`: it scans every document (~0.1-0.3 s at 100k) and
must be rebuilt from scratch (~1 s at 100k) after any write. Each namespace here keeps an inverted
index (term -> doc positions) and BM25Okapi's statistics (`doc_freqs`, `doc_len`, document
frequencies, N, total length), updated incrementally when writes are applied. A query scores only
documents sharing a query term, with rank-bm25's own `get_batch_scores` on a supplied state; of
those that share only common terms, only the best by their score on those terms, which NumPy
columns of the common terms' postings give without rank-bm25 (`columns`, `topk`).

Exactness: the per-term IDF is rank-bm25's formula, `log(N - df + 0.5) - log(df + 0.5)`, with its
floor `epsilon * average_idf` for non-positive values, where the average runs over the whole
vocabulary (a df histogram makes it O(distinct df values)). Scores equal a fresh
`BM25Okapi(corpus).get_scores` (to float summation order in the average) with two deliberate
deviations, both so that every matching document scores > 0:
* rank-bm25 floors only *negative* IDFs, so a term in exactly half the documents gets 0 while a
  commoner one gets the positive floor; we floor zero as well.
* in tiny or homogeneous namespaces the average IDF itself is <= 0 (1-2 documents: every term is
  in "more than half"), which makes rank-bm25's floor, and its scores, negative; there we floor
  at `epsilon` instead. Normalization divides by a score built from the same IDFs, so the
  constant largely cancels.

Normalization to [0, 1]: raw / the score of an *ideal* document of average length holding every
query term once, which for BM25 is exactly sum(idf(q)) (tf = 1 at avgdl: idf * (k1+1)/(1+k1)),
clipped to 1. So 1.0 means "a full, ordinary match"; a document matching one common term of a
multi-term query gets about that term's share of the query's IDF mass (low); predicate or
repeated matches saturate at 1. A query term no document holds counts at the IDF it would have
if the ideal document were its only holder (df = 1), so a query whose specific terms are absent
cannot make a weak partial match look complete. Unlike score/max, the top hit is not forced to
1.0: the fusion's w * sqrt(s) / (k + rank) can tell a decisive identifier hit from a lucky word.

Concurrency: writers only append to a per-namespace pending buffer under a short lock; the next
read applies it and scores under the namespace's index lock, so no reader sees a half-applied
write. Scoring holds the GIL anyway, so serializing readers of one namespace costs little.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ...errors import ConfigurationError
from ...text import tokenize
from ...types import MemoryType, parse_memory_type
from ..protocols import LexicalDoc
from .columns import FREE_SLOT, TYPE_CODE, TYPE_OF, RareArrays, TermColumn, gather_tf, type_mask
from .docs import DEFAULT_CONTEXT_WEIGHT, doc_terms, doc_weights
from .scorer import SuppliedBM25
from .topk import Pruner, top_k

__all__ = ["BM25Index", "doc_terms", "doc_weights", "DEFAULT_CONTEXT_WEIGHT"]

_R = TypeVar("_R")


@dataclass(frozen=True)
class _Entry:
    """A tokenized document waiting to be applied."""

    freqs: dict[str, float]
    length: float
    type: MemoryType | None


class _Shard:
    """One namespace: pending writes, the inverted index and BM25 statistics."""

    def __init__(self) -> None:
        self.index_lock = threading.Lock()     # guards everything below `pending`
        self.pending_lock = threading.Lock()   # guards `pending` only (writers hold it briefly)
        self.pending: dict[str, _Entry | None] = {}  # memory id -> entry, or None = delete
        self.reset()

    def reset(self) -> None:
        self.ids: list[str | None] = []          # position -> memory id (None = free slot)
        self.pos_of: dict[str, int] = {}
        self.free: list[int] = []
        self.doc_freqs: list[dict[str, float]] = []
        self.doc_len = np.zeros(16, dtype=np.float64)
        self.type_code = np.full(16, FREE_SLOT, dtype=np.int8)  # position -> TYPE_CODE of its document
        # df(term) == len(postings[term]). A rare term's posting is a tuple, a common one's a set:
        # the garbage collector stops walking a tuple of ints after its first pass over it
        # (docs/decisions/0008-bm25-parameters-and-exact-top-k.md).
        self.postings: dict[str, tuple[int, ...] | set[int]] = {}
        self.df_hist: Counter[int] = Counter()   # df value -> number of terms with that df
        self.by_type: dict[MemoryType | None, set[int]] = {}
        self.columns: dict[str, TermColumn] = {}  # common terms' postings as arrays, built on demand
        self.rare = RareArrays()  # rare terms' postings as arrays, for `term_tf`
        self.n_docs = 0
        self.total_len = 0.0
        self._avg_idf: float | None = None

    # ------------------------------------------------------------ applying writes
    def apply_pending(self) -> None:
        """Fold the pending buffer into the index. Caller holds `index_lock`.

        Cost is proportional to the terms of the written documents, plus O(vocabulary) only
        for a batch large enough that recounting the df histogram beats tracking it."""
        with self.pending_lock:
            if not self.pending:
                return
            batch, self.pending = self.pending, {}
        bulk = len(batch) > max(64, self.n_docs // 8)
        old_df: dict[str, int] | None = None if bulk else {}
        for memory_id, entry in batch.items():
            pos = self.pos_of.get(memory_id)
            if pos is not None:
                self._remove(memory_id, pos, old_df)
            if entry is not None:
                self._insert(memory_id, entry, old_df)
        if old_df is None:
            for term in [t for t, p in self.postings.items() if not p]:
                del self.postings[term]
            for term, p in self.postings.items():  # the bulk path grew sets; rare ones become tuples
                if len(p) <= Pruner.SCAN_LIMIT and isinstance(p, set):
                    self.postings[term] = tuple(p)
            self.df_hist = Counter(len(p) for p in self.postings.values())
            self.rare = RareArrays()
            # A bulk write touches most columns: rebuilt here, in time proportional to the write,
            # rather than by the first query of each common term, which would pay for it.
            self.columns = {t: TermColumn.build(t, p, self.doc_freqs) for t, p in self.postings.items()
                            if len(p) > Pruner.SCAN_LIMIT}
        else:
            self._update_hist(old_df)
        self._avg_idf = None

    def _update_hist(self, old_df: dict[str, int]) -> None:
        for term, before in old_df.items():
            after = len(self.postings[term])
            if not after:
                del self.postings[term]
                self.columns.pop(term, None)
            if before != after:
                self.df_hist[before] -= 1  # a new term's df = 0 bucket goes negative ...
                self.df_hist[after] += 1   # ... and a vanished term's goes positive
        self.df_hist = +self.df_hist       # drops counts <= 0
        self.df_hist.pop(0, None)          # and the df = 0 bucket: only live terms count

    def _remove(self, memory_id: str, pos: int, old_df: dict[str, int] | None) -> None:
        for term in self.doc_freqs[pos]:
            posting = self.postings[term]
            if old_df is not None:
                old_df.setdefault(term, len(posting))
            if isinstance(posting, set):
                posting.discard(pos)
            else:
                self.postings[term] = tuple(p for p in posting if p != pos)
            if (column := self.columns.get(term)) is not None:
                column.stale += 1
            self.rare.drop(term)
        self.by_type[TYPE_OF[self.type_code[pos]]].discard(pos)
        self.total_len -= float(self.doc_len[pos])
        self.n_docs -= 1
        self.doc_freqs[pos], self.doc_len[pos], self.ids[pos] = {}, 0.0, None
        self.type_code[pos] = FREE_SLOT
        del self.pos_of[memory_id]
        self.free.append(pos)

    def _insert(self, memory_id: str, entry: _Entry, old_df: dict[str, int] | None) -> None:
        if self.free:
            pos = self.free.pop()
        else:
            pos = len(self.ids)
            self.ids.append(None)
            self.doc_freqs.append({})
            if pos >= len(self.doc_len):  # amortized growth; unused slots stay 0
                self.doc_len = np.concatenate([self.doc_len, np.zeros_like(self.doc_len)])
                self.type_code = np.concatenate([self.type_code, np.full_like(self.type_code, FREE_SLOT)])
        self.ids[pos], self.doc_freqs[pos] = memory_id, entry.freqs
        self.doc_len[pos] = entry.length
        self.type_code[pos] = TYPE_CODE[entry.type]
        self.pos_of[memory_id] = pos
        postings = self.postings
        for term in entry.freqs:
            posting = postings.get(term, ())
            if old_df is not None:
                old_df.setdefault(term, len(posting))
            if isinstance(posting, set):
                posting.add(pos)
            elif old_df is not None and len(posting) < Pruner.SCAN_LIMIT:
                postings[term] = (*posting, pos)  # O(df) for df <= SCAN_LIMIT
            else:  # a term turning common, or any term during a bulk apply (tuples come after)
                postings[term] = {*posting, pos}
            self.rare.drop(term)
            if (column := self.columns.get(term)) is not None:
                column.recent.append(pos)
                if column.worn():  # dropped, not rebuilt: the next query that needs it rebuilds
                    del self.columns[term]
        self.by_type.setdefault(entry.type, set()).add(pos)
        self.total_len += entry.length
        self.n_docs += 1

    def term_tf(self, term: str, ids: np.ndarray) -> np.ndarray:
        """The term's frequency in each document of `ids` (0 where absent), exactly as `doc_freqs`
        holds it now: off the term's column when no write has touched it since its build, off its
        posting as sorted arrays for a rare term (cached until a write touches the term), else
        looked up per document. Caller holds `index_lock`."""
        column = self.columns.get(term)
        if column is not None and column.exact():
            return gather_tf(column.positions, column.tfs, ids)
        posting = self.postings.get(term)
        if not posting:
            return np.zeros(len(ids), dtype=np.float64)
        if len(posting) <= Pruner.SCAN_LIMIT:
            return gather_tf(*self.rare.get(term, posting, self.doc_freqs), ids)
        freqs = self.doc_freqs  # a common term whose column is worn: as rank-bm25 does it
        return np.array([(freqs[d].get(term) or 0) for d in ids.tolist()], dtype=np.float64)

    def column(self, term: str) -> TermColumn:
        """The term's column (`columns`), built now if missing or worn. Caller holds `index_lock`."""
        column = self.columns.get(term)
        if column is None or column.worn():
            column = self.columns[term] = TermColumn.build(term, self.postings[term], self.doc_freqs)
        return column

    # ------------------------------------------------------------ IDF, rank-bm25's formula
    def average_idf(self) -> float:
        """rank-bm25's `average_idf` (mean raw IDF over the vocabulary) from the df histogram."""
        if self._avg_idf is None:
            n, vocab = self.n_docs, len(self.postings)
            total = sum(count * (math.log(n - df + 0.5) - math.log(df + 0.5))
                        for df, count in self.df_hist.items())
            self._avg_idf = total / vocab if vocab else 0.0
        return self._avg_idf

    def idf(self, df: int, epsilon: float) -> float:
        """IDF of a term in `df` documents; always > 0 (see the module docstring)."""
        raw = math.log(self.n_docs - df + 0.5) - math.log(df + 0.5)
        if raw > 0:
            return raw
        floor = epsilon * self.average_idf()
        return floor if floor > 0 else epsilon


class BM25Index:
    """`LexicalIndex` over rank-bm25's BM25Okapi: per namespace, candidate-only, lazily applied.

    `predicate_weight` is how many times a predicate's terms count (0 ignores predicates);
    `context_weight` how much a context term counts (0 ignores context, see `doc_weights`);
    `k1`, `b`, `epsilon` are BM25Okapi's parameters. k1 = 0.9, b = 0.4 are Lucene/Anserini's
    defaults rather than rank-bm25's 1.5 / 0.75: chat turns are short, and a turn indexed with its
    context is longer without being less about its subject, so length normalization should bite
    less (docs/decisions/0008-bm25-parameters-and-exact-top-k.md).
    """

    def __init__(self, predicate_weight: int = 4, k1: float = 0.9, b: float = 0.4,
                 epsilon: float = 0.25, context_weight: float = DEFAULT_CONTEXT_WEIGHT) -> None:
        if not isinstance(predicate_weight, int) or predicate_weight < 0:
            raise ConfigurationError(f"predicate_weight must be an int >= 0, got {predicate_weight!r}")
        if not isinstance(context_weight, (int, float)) or not 0 <= context_weight <= 1:
            raise ConfigurationError(f"context_weight must be a number in [0, 1], got {context_weight!r}")
        self.context_weight = float(context_weight)
        if not k1 > 0 or not 0 <= b <= 1 or not epsilon > 0:
            raise ConfigurationError(f"need k1 > 0, 0 <= b <= 1, epsilon > 0; got k1={k1}, b={b}, "
                                     f"epsilon={epsilon}")
        self.predicate_weight, self.k1, self.b, self.epsilon = predicate_weight, float(k1), float(b), float(epsilon)
        self._shards: dict[str, _Shard] = {}
        self._registry_lock = threading.Lock()

    def _shard(self, namespace: str, create: bool) -> _Shard | None:
        if (shard := self._shards.get(namespace)) is None and create:
            with self._registry_lock:
                shard = self._shards.setdefault(namespace, _Shard())
        return shard

    # ------------------------------------------------------------ writes
    def add(self, docs: Sequence[LexicalDoc]) -> None:
        """Upsert by (namespace, memory id). Tokenizes here, in the writer's thread, so the read
        that applies the write only pays for index updates."""
        by_ns: dict[str, dict[str, _Entry]] = {}
        for doc in docs:
            freqs, length = doc_weights(doc, self.predicate_weight, self.context_weight)
            kind = None if doc.type is None else parse_memory_type(doc.type)
            entry = _Entry(freqs, length, kind)
            by_ns.setdefault(doc.namespace, {})[str(doc.memory_id)] = entry
        for namespace, entries in by_ns.items():
            shard = self._shard(namespace, create=True)
            assert shard is not None
            with shard.pending_lock:
                shard.pending.update(entries)

    def delete(self, namespace: str, ids: Sequence[str]) -> None:
        """Remove memories; unknown ids and namespaces are ignored."""
        shard = self._shard(namespace, create=False)
        if shard is None:
            return
        with shard.pending_lock:
            for memory_id in ids:
                shard.pending[str(memory_id)] = None

    def clear(self, namespace: str | None = None) -> None:
        """Forget one namespace, or all of them (the store rebuilds from payloads on open)."""
        shards = list(self._shards.values()) if namespace is None else [self._shards.get(namespace)]
        for shard in shards:
            if shard is None:
                continue
            with shard.index_lock, shard.pending_lock:
                shard.pending.clear()
                shard.reset()

    # ------------------------------------------------------------ reads
    def count(self, namespace: str) -> int:
        """Documents in the namespace, writes so far included."""
        shard = self._shard(namespace, create=False)
        if shard is None:
            return 0
        with shard.index_lock:
            shard.apply_pending()
            return shard.n_docs

    def type_counts(self, namespace: str) -> dict[MemoryType | None, int]:
        """Documents per memory type (None: untyped), writes so far included. O(types): the
        optimizer asks on every query how much of a namespace a type filter would keep."""
        shard = self._shard(namespace, create=False)
        if shard is None:
            return {}
        with shard.index_lock:
            shard.apply_pending()
            return {t: len(ps) for t, ps in shard.by_type.items() if ps}

    def search(self, namespace: str, text: str, k: int,
               types: frozenset[MemoryType] | None = None) -> list[tuple[str, float]]:
        """Top `k` (memory id, score in [0, 1]) for `text`, best first, ties by memory id.

        `types` restricts to documents of those types (None or empty: no restriction, so a plan
        without type hints cannot silently empty the arm). Empty or all-stopword text, k <= 0 and
        unknown namespaces give []."""
        if not isinstance(k, int) or k <= 0:
            return []
        allowed = frozenset(parse_memory_type(t) for t in types) if types else None
        return self._read(namespace, text, lambda shard, query: self._search_locked(shard, query, k, allowed), [])

    def raw_scores(self, namespace: str, text: str) -> dict[str, float]:
        """Unnormalized BM25 of every document sharing a query term, unpruned: for tests that
        check equality with `BM25Okapi(corpus).get_scores`, and for debugging a ranking."""
        def score_all(shard: _Shard, query: list[str]) -> dict[str, float]:
            present = [t for t in query if t in shard.postings]
            if not present or not shard.n_docs:
                return {}
            positions = list(set().union(*(shard.postings[t] for t in present)))
            raw = self._scorer(shard, present).get_batch_scores(present, positions)
            return {str(shard.ids[p]): float(r) for p, r in zip(positions, raw, strict=True)}
        return self._read(namespace, text, score_all, {})

    def _read(self, namespace: str, text: str, fn: Callable[[_Shard, list[str]], _R], empty: _R) -> _R:
        """Tokenize outside the lock, then apply pending writes and run `fn` under the index lock."""
        query = list(dict.fromkeys(tokenize(text))) if isinstance(text, str) else []  # a set, in order
        shard = self._shard(namespace, create=False)
        if shard is None or not query:
            return empty
        with shard.index_lock:
            shard.apply_pending()
            return fn(shard, query)

    def _scorer(self, shard: _Shard, present: list[str]) -> SuppliedBM25:
        idf = {t: shard.idf(len(shard.postings[t]), self.epsilon) for t in present}
        return SuppliedBM25(shard.doc_freqs, shard.doc_len, shard.n_docs, shard.total_len / shard.n_docs,
                             idf, self.k1, self.b, self.epsilon, shard.term_tf)

    def _search_locked(self, shard: _Shard, query: list[str], k: int,
                       allowed: frozenset[MemoryType] | None) -> list[tuple[str, float]]:
        present = [t for t in query if t in shard.postings]
        if not present or not shard.n_docs:
            return []
        idf = (scorer := self._scorer(shard, present)).idf
        # The ideal document holds every query term once; an unseen term would have df = 1 there.
        ideal = sum(idf.get(t) or shard.idf(1, self.epsilon) for t in query)
        type_sets = None if allowed is None else [shard.by_type[t] for t in allowed if t in shard.by_type]
        pruner = Pruner(scorer, present, k, type_sets)
        rare = [shard.postings[t] for t in present if len(shard.postings[t]) <= Pruner.SCAN_LIMIT]
        columns = [(shard.column(t), idf[t]) for t in present if len(shard.postings[t]) > Pruner.SCAN_LIMIT]
        pruner.run(rare, columns, None if allowed is None or not columns else type_mask(shard.type_code, allowed))
        if not pruner.positions:
            return []
        return top_k(np.asarray(pruner.scores, dtype=np.float64), pruner.positions, shard.ids, k, ideal)
