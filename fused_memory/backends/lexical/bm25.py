"""The embedded lexical index: rank-bm25's BM25Okapi per namespace, scored over candidates only.

Why not `BM25Okapi(corpus).get_scores(query)`: it scans every document (~0.1-0.3 s at 100k) and
must be rebuilt from scratch (~1 s at 100k) after any write. Each namespace here keeps an inverted
index (term -> document positions) and BM25Okapi's statistics (term frequencies, `doc_len`,
document frequencies, N, total length). A query scores only documents sharing a query term, with
rank-bm25's own `get_batch_scores` on a supplied state; of those that share only common terms,
only the best by their score on those terms, which NumPy columns of the common terms' postings
give without rank-bm25 (`columns`, `topk`).

Two layers per namespace (`_Shard`): a *base*, immutable arrays (`segment.Segment`: postings,
lengths, types, ids), and an *overlay* of the writes since, a dict of term frequencies per
document and a position list per term. A delete of a base document marks its slot free and
counts, per term, how many base documents holding it are gone. Once the overlay passes a share of
the namespace it is folded into a new base (`_Shard.merge`), so the overlay stays small and the
postings that queries read stay arrays: no per-document Python objects, nothing for the garbage
collector to walk, and a base that `stored.StoredBM25Index` maps from a file instead of building.

Exactness: the per-term IDF is rank-bm25's formula, `log(N - df + 0.5) - log(df + 0.5)`, with its
floor `epsilon * average_idf` for non-positive values, where the average runs over the whole
vocabulary (a df histogram makes it O(distinct df values), summed in df order so it does not
depend on the order of the writes). Scores equal a fresh `BM25Okapi(corpus).get_scores` (to float
summation order in the average) with two deliberate deviations, both so that every matching
document scores > 0:
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ...errors import ConfigurationError
from ...text import tokenize
from ...types import MemoryType, parse_memory_type
from ..protocols import LexicalDoc
from .columns import FREE_SLOT, TYPE_CODE, TYPE_OF, TermColumn, gather_tf, type_mask
from .docs import DEFAULT_CONTEXT_WEIGHT, doc_terms, doc_weights
from .scorer import SuppliedBM25
from .segment import Segment, SegmentBuilder
from .topk import Pruner, top_k

__all__ = ["BM25Index", "doc_terms", "doc_weights", "DEFAULT_CONTEXT_WEIGHT"]

_R = TypeVar("_R")
_UNSEEN = object()


@dataclass(frozen=True)
class _Entry:
    """A tokenized document waiting to be applied."""

    freqs: dict[str, float]
    length: float
    type: MemoryType | None


class _Ids(Sequence[str | None]):
    """Position -> memory id (None: a free slot), over the base and the overlay, for `top_k`."""

    def __init__(self, shard: _Shard) -> None:
        self._shard = shard

    def __len__(self) -> int:
        return self._shard.size

    def __getitem__(self, pos: int) -> str | None:  # type: ignore[override]  # positions only, no slices
        return self._shard.memory_id(pos)


class _Freqs(Sequence[Mapping[str, float]]):
    """Position -> its document's term frequencies, as rank-bm25 keeps them (`doc_freqs`): only
    rank-bm25's own `get_batch_scores` reads it, in the tests that compare the two."""

    def __init__(self, shard: _Shard) -> None:
        self._shard = shard
        self._seen: dict[int, Mapping[str, float]] = {}

    def __len__(self) -> int:
        return self._shard.size

    def __getitem__(self, pos: int) -> Mapping[str, float]:  # type: ignore[override]  # positions only
        got = self._seen.get(pos)
        if got is None:
            got = self._seen[pos] = self._shard.freqs(pos)
        return got


class _Shard:
    """One namespace: pending writes, a base segment and the overlay of writes since it, with the
    BM25 statistics of both (module docstring)."""

    #: Overlay entries (documents written or deleted since the base) a merge waits for at least ...
    MERGE_MIN = 1024
    #: ... or this fraction of the namespace, whichever is more: each merge is O(namespace) in
    #: NumPy, so amortized over at least 1/16 of it in writes, while a query's `recent`
    #: positions (scored one by one) stay a small share of a common term's postings.
    MERGE_SHARE = 16

    def __init__(self, base: Segment | None = None, *, merges: bool = True) -> None:
        self.index_lock = threading.Lock()     # guards everything below `pending`
        self.pending_lock = threading.Lock()   # guards `pending` only (writers hold it briefly)
        self.pending: dict[str, tuple[int, _Entry | None]] = {}  # memory id -> (write seq, entry or None = delete)
        #: Whether applying writes folds the overlay into a new base when it grows (an index kept on
        #: disk merges when it writes, so that the new base is also written: `stored`).
        self.merges = merges
        self.reset(base)

    def reset(self, base: Segment | None = None) -> None:
        base = base if base is not None else Segment.empty()
        self.base = base
        n = base.docs
        cap = max(16, n + n // 8)
        self.doc_len = np.zeros(cap, dtype=np.float64)
        self.doc_len[:n] = base.doc_len
        self.type_code = np.full(cap, FREE_SLOT, dtype=np.int8)  # position -> TYPE_CODE of its document
        self.type_code[:n] = base.type_code
        self.size = n                            # positions in use: the base's, then the overlay's
        self.o_ids: list[str | None] = []        # overlay position - base.docs -> memory id (None: freed)
        self.o_freqs: list[dict[str, float]] = []
        self.o_pos: dict[str, int] = {}
        self.o_post: dict[str, list[int]] = {}   # term -> overlay positions holding it, ascending
        self.dead: dict[str, int] = {}           # term -> deleted base documents holding it
        self.df_hist: Counter[int] = Counter(base.df_histogram())  # df value -> number of terms with it
        counts = np.bincount(np.asarray(base.type_code, dtype=np.int64), minlength=len(TYPE_CODE)) if n else \
            np.zeros(len(TYPE_CODE), dtype=np.int64)
        self.type_counts = [int(c) for c in counts.tolist()]  # TYPE_CODE -> live documents of that type
        self.n_docs = n
        self.total_len = base.total_len
        self.seq = base.seq                      # the last write (`stored`'s log) applied here
        self.changes = 0                         # overlay entries: documents written or deleted since the base
        self._base_terms: dict[str, tuple[int, int] | None] = {}  # term -> (index, df) in the base; a cache
        self._avg_idf: float | None = None

    # ------------------------------------------------------------ the two layers
    def memory_id(self, pos: int) -> str | None:
        if pos < self.base.docs:
            return None if self.type_code[pos] == FREE_SLOT else self.base.memory_id(pos)
        return self.o_ids[pos - self.base.docs]

    def position(self, memory_id: str) -> int | None:
        pos = self.o_pos.get(memory_id)
        if pos is None:
            pos = self.base.position_of(memory_id)
            if pos is not None and self.type_code[pos] == FREE_SLOT:
                return None
        return pos

    def memory_ids(self) -> Iterator[str]:
        """Every memory held, base first."""
        for pos in np.flatnonzero(self.type_code[:self.base.docs] != FREE_SLOT).tolist():
            yield self.base.memory_id(pos)
        yield from (mid for mid in self.o_ids if mid is not None)

    def base_term(self, term: str) -> tuple[int, int] | None:
        """(index, df) of `term` in the base, or None; cached until the next merge."""
        got = self._base_terms.get(term, _UNSEEN)
        if got is _UNSEEN:
            i = self.base.term_index(term)
            got = None if i is None else (i, self.base.df(i))
            if len(self._base_terms) >= 1 << 17:
                self._base_terms.clear()
            self._base_terms[term] = got
        return got  # type: ignore[return-value]

    def _prefetch(self, terms: Sequence[str]) -> None:
        """`base_term` of many terms, their binary searches in one NumPy call."""
        todo = [t for t in dict.fromkeys(terms) if t not in self._base_terms]
        if not todo or not self.base.terms:
            return
        if len(self._base_terms) + len(todo) >= 1 << 17:
            self._base_terms.clear()
        for term, i in zip(todo, self.base.term_indices(todo), strict=True):
            self._base_terms[term] = None if i is None else (i, self.base.df(i))

    def df(self, term: str) -> int:
        """Documents holding `term` now."""
        b = self.base_term(term)
        held = 0 if b is None else b[1] - self.dead.get(term, 0)
        return held + len(self.o_post.get(term, ()))

    def freqs(self, pos: int) -> dict[str, float]:
        """The term frequencies of the document at `pos` ({} for a free slot)."""
        if pos >= self.base.docs:
            return self.o_freqs[pos - self.base.docs]
        if self.type_code[pos] == FREE_SLOT:
            return {}
        out = {}
        a, b = int(self.base.doc_off[pos]), int(self.base.doc_off[pos + 1])
        for i in self.base.doc_term[a:b].tolist():
            positions, tfs = self.base.posting(i)
            out[self.base.term_at(i)] = float(tfs[int(np.searchsorted(positions, pos))])
        return out

    def candidates(self, term: str) -> list[int]:
        """Every live position holding `term`."""
        out: list[int] = []
        b = self.base_term(term)
        if b is not None:
            positions, _ = self.base.posting(b[0])
            if self.dead.get(term):
                positions = positions[self.type_code[positions] != FREE_SLOT]
            out = positions.tolist()
        out.extend(self.o_post.get(term, ()))
        return out

    def column(self, term: str) -> TermColumn:
        """The term's base postings as a column, with the overlay's positions as `recent`."""
        b = self.base_term(term)
        positions, tfs = self.base.posting(b[0]) if b is not None else (np.zeros(0, np.int32), np.zeros(0))
        return TermColumn(positions, tfs, self.o_post.get(term, ()))

    # ------------------------------------------------------------ applying writes
    def apply_pending(self) -> None:
        """Fold the pending buffer into the overlay (and, past its size, the overlay into a new
        base). Caller holds `index_lock`. Cost is proportional to the terms of the written
        documents; a merge, O(namespace) in NumPy, is amortized over a share of it in writes."""
        with self.pending_lock:
            if not self.pending:
                return
            batch, self.pending = self.pending, {}
        self._prefetch([t for _, e in batch.values() if e is not None for t in e.freqs])
        old_df: dict[str, int] = {}
        for memory_id, (seq, entry) in batch.items():
            pos = self.position(memory_id)
            if pos is not None:
                self._remove(memory_id, pos, old_df)
            if entry is not None:
                self._insert(memory_id, entry, old_df)
            self.seq = max(self.seq, seq)
        self._update_hist(old_df)
        self._avg_idf = None
        if self.merges and (len(batch) > max(64, self.n_docs // 8) or self.overlay_full()):
            self.merge()  # a bulk write: its arrays now, rather than an overlay as large as the base

    def overlay_full(self) -> bool:
        return self.changes > max(self.MERGE_MIN, self.n_docs // self.MERGE_SHARE)

    def merge(self) -> Segment:
        """Fold the overlay into a new base (the base's live documents in order, then the
        overlay's) and return it. Caller holds `index_lock`, pending writes applied."""
        builder = SegmentBuilder()
        first = self.base.docs
        for i, memory_id in enumerate(self.o_ids):
            if memory_id is not None:
                pos = first + i
                builder.add(memory_id, self.o_freqs[i], float(self.doc_len[pos]), int(self.type_code[pos]))
        segment = builder.build(self.base, self.type_code[:first] != FREE_SLOT, self.seq)
        self.reset(segment)
        return segment

    def _update_hist(self, old_df: dict[str, int]) -> None:
        for term, before in old_df.items():
            after = self.df(term)
            if before != after:
                self.df_hist[before] -= 1  # a new term's df = 0 bucket goes negative ...
                self.df_hist[after] += 1   # ... and a vanished term's goes positive
        self.df_hist = +self.df_hist       # drops counts <= 0
        self.df_hist.pop(0, None)          # and the df = 0 bucket: only live terms count

    def _remove(self, memory_id: str, pos: int, old_df: dict[str, int]) -> None:
        first = self.base.docs
        if pos >= first:
            for term in self.o_freqs[pos - first]:
                if term not in old_df:
                    old_df[term] = self.df(term)
                holders = self.o_post[term]
                holders.remove(pos)
                if not holders:
                    del self.o_post[term]
            self.o_freqs[pos - first], self.o_ids[pos - first] = {}, None
            del self.o_pos[memory_id]
        else:
            a, b = int(self.base.doc_off[pos]), int(self.base.doc_off[pos + 1])
            for i in self.base.doc_term[a:b].tolist():
                term = self.base.term_at(i)
                self._base_terms.setdefault(term, (i, self.base.df(i)))
                if term not in old_df:
                    old_df[term] = self.df(term)
                self.dead[term] = self.dead.get(term, 0) + 1
        self.type_counts[self.type_code[pos]] -= 1
        self.total_len -= float(self.doc_len[pos])
        self.n_docs -= 1
        self.changes += 1
        self.doc_len[pos] = 0.0
        self.type_code[pos] = FREE_SLOT

    def _insert(self, memory_id: str, entry: _Entry, old_df: dict[str, int]) -> None:
        pos = self.size
        if pos >= len(self.doc_len):  # amortized growth; unused slots stay 0 / free
            self.doc_len = np.concatenate([self.doc_len, np.zeros_like(self.doc_len)])
            self.type_code = np.concatenate([self.type_code, np.full_like(self.type_code, FREE_SLOT)])
        self.size += 1
        self.o_ids.append(memory_id)
        self.o_freqs.append(entry.freqs)
        self.o_pos[memory_id] = pos
        code = TYPE_CODE[entry.type]
        self.doc_len[pos] = entry.length
        self.type_code[pos] = code
        for term in entry.freqs:
            if term not in old_df:
                old_df[term] = self.df(term)
            self.o_post.setdefault(term, []).append(pos)
        self.type_counts[code] += 1
        self.total_len += entry.length
        self.n_docs += 1
        self.changes += 1

    def term_tf(self, term: str, ids: np.ndarray) -> np.ndarray:
        """The term's frequency in each document of `ids` (0 where absent), as float64: off its
        base postings by binary search, and for overlay positions off their dicts. Caller holds
        `index_lock`."""
        b = self.base_term(term)
        if b is not None:
            positions, tfs = self.base.posting(b[0])
            out = gather_tf(positions, tfs, ids)
            if self.dead.get(term):  # a deleted base document holds nothing (its slot is free)
                out[self.type_code[ids] == FREE_SLOT] = 0.0
        else:
            out = np.zeros(len(ids), dtype=np.float64)
        if term in self.o_post:
            first = self.base.docs
            over = np.flatnonzero(ids >= first)
            if len(over):
                freqs = self.o_freqs
                out[over] = [freqs[p - first].get(term) or 0.0 for p in ids[over].tolist()]
        return out

    # ------------------------------------------------------------ IDF, rank-bm25's formula
    def average_idf(self) -> float:
        """rank-bm25's `average_idf` (mean raw IDF over the vocabulary) from the df histogram."""
        if self._avg_idf is None:
            n, vocab = self.n_docs, sum(self.df_hist.values())
            total = sum(count * (math.log(n - df + 0.5) - math.log(df + 0.5))
                        for df, count in sorted(self.df_hist.items()))
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
    less (docs/decisions/0008-bm25-parameters-and-exact-top-k.md). Everything lives in the
    process: `stored.StoredBM25Index` is the same index kept in files.
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

    def _entries(self, docs: Sequence[LexicalDoc]) -> dict[str, dict[str, _Entry]]:
        """Tokenized documents by namespace and memory id (the last of a repeated id wins)."""
        by_ns: dict[str, dict[str, _Entry]] = {}
        for doc in docs:
            freqs, length = doc_weights(doc, self.predicate_weight, self.context_weight)
            kind = None if doc.type is None else parse_memory_type(doc.type)
            by_ns.setdefault(doc.namespace, {})[str(doc.memory_id)] = _Entry(freqs, length, kind)
        return by_ns

    # ------------------------------------------------------------ writes
    def add(self, docs: Sequence[LexicalDoc]) -> None:
        """Upsert by (namespace, memory id). Tokenizes here, in the writer's thread, so the read
        that applies the write only pays for index updates."""
        for namespace, entries in self._entries(docs).items():
            shard = self._shard(namespace, create=True)
            assert shard is not None
            with shard.pending_lock:
                shard.pending.update((mid, (0, e)) for mid, e in entries.items())

    def delete(self, namespace: str, ids: Sequence[str]) -> None:
        """Remove memories; unknown ids and namespaces are ignored."""
        shard = self._shard(namespace, create=False)
        if shard is None:
            return
        with shard.pending_lock:
            for memory_id in ids:
                shard.pending[str(memory_id)] = (0, None)

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
            return {TYPE_OF[code]: n for code, n in enumerate(shard.type_counts) if n > 0}

    def memory_ids(self, namespace: str) -> list[str]:
        """Every memory id the namespace holds, writes so far included (for checks and tests)."""
        shard = self._shard(namespace, create=False)
        if shard is None:
            return []
        with shard.index_lock:
            shard.apply_pending()
            return list(shard.memory_ids())

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
            present = [t for t in query if shard.df(t) > 0]
            if not present or not shard.n_docs:
                return {}
            positions = sorted(set().union(*(shard.candidates(t) for t in present)))
            raw = self._scorer(shard, present).get_batch_scores(present, positions)
            return {str(shard.memory_id(p)): float(r) for p, r in zip(positions, raw, strict=True)}
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
        idf = {t: shard.idf(shard.df(t), self.epsilon) for t in present}
        return SuppliedBM25(_Freqs(shard), shard.doc_len, shard.n_docs, shard.total_len / shard.n_docs,
                            idf, self.k1, self.b, self.epsilon, shard.term_tf)

    def _search_locked(self, shard: _Shard, query: list[str], k: int,
                       allowed: frozenset[MemoryType] | None) -> list[tuple[str, float]]:
        shard._prefetch(query)
        dfs = {t: shard.df(t) for t in query}
        present = [t for t in query if dfs[t] > 0]
        if not present or not shard.n_docs:
            return []
        idf = (scorer := self._scorer(shard, present)).idf
        # The ideal document holds every query term once; an unseen term would have df = 1 there.
        ideal = sum(idf.get(t) or shard.idf(1, self.epsilon) for t in query)
        mask = None if allowed is None else type_mask(shard.type_code, allowed)
        pruner = Pruner(scorer, present, k, mask)
        rare = [shard.candidates(t) for t in present if dfs[t] <= Pruner.SCAN_LIMIT]
        columns = [(shard.column(t), idf[t]) for t in present if dfs[t] > Pruner.SCAN_LIMIT]
        pruner.run(rare, columns)
        if not pruner.positions:
            return []
        return top_k(np.asarray(pruner.scores, dtype=np.float64), pruner.positions, _Ids(shard), k, ideal)
