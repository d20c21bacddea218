"""Lexical arm latency: our candidate-only BM25Index vs rank-bm25's full scan, and write-then-read cost.

Why: the design bets that scoring only the documents sharing a query term (inverted index ->
`BM25Okapi.get_batch_scores`) keeps BM25 usable at 100k documents, and that applying writes
incrementally keeps read-after-write cheap. This measures both claims on a synthetic corpus:
a Zipfian vocabulary (as in real text, a few words are everywhere and most are rare), some
identifiers ("E-47821", "JIRA-1234", "v2.3.1"), predicates on a third of the documents.

    python benchmarks/bench_lexical.py [--sizes 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from rank_bm25 import BM25Okapi

from fused_memory.backends.lexical.bm25 import BM25Index, doc_terms
from fused_memory.backends.protocols import LexicalDoc
from fused_memory.evaluation.metrics import percentile
from fused_memory.text import tokenize
from fused_memory.types import MemoryType

__all__ = ["make_corpus", "make_queries", "main"]

_SYLLABLES = ["ka", "lo", "mi", "ren", "tor", "va", "sel", "dun", "pi", "gar", "fen", "shi", "bor", "quo",
              "zan", "el", "mor", "tin", "ca", "rud"]
_FILLER = ["what", "is", "my", "the", "did", "I", "tell", "you", "about", "remember", "when"]


def _vocabulary(size: int, rng: random.Random) -> list[str]:
    """Distinct pronounceable pseudo-words, so tokenization behaves as on real words."""
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


def _identifier(rng: random.Random) -> str:
    kind = rng.randrange(3)
    if kind == 0:
        return f"E-{rng.randint(10000, 99999)}"
    if kind == 1:
        return f"JIRA-{rng.randint(100, 9999)}"
    return f"v{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 30)}"


def make_corpus(n: int, seed: int = 7, vocab_size: int = 50_000, zipf_s: float = 1.07,
                head_skip: int = 0) -> tuple[list[LexicalDoc], list[str]]:
    """`n` memory-sized documents (8-30 words) over a Zipfian vocabulary; 5% carry an identifier.

    `head_skip` drops the most frequent Zipf ranks. With 0 the top pseudo-words are in 50-90% of
    the documents, like stopwords left in (the worst case for candidate scoring: almost every query
    shares a term with most of the namespace). With ~150, the head is gone as it is from real text
    after stopword removal."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    vocab = _vocabulary(vocab_size, rng)
    weights = 1.0 / np.arange(1 + head_skip, vocab_size + 1 + head_skip) ** zipf_s
    weights /= weights.sum()
    lengths = nprng.integers(8, 31, size=n)
    draws = nprng.choice(vocab_size, size=int(lengths.sum()) + 5 * n, p=weights)
    types = list(MemoryType)
    docs, cursor = [], 0
    for i in range(n):
        words = [vocab[j] for j in draws[cursor: cursor + lengths[i]]]
        cursor += int(lengths[i])
        if rng.random() < 0.05:
            words.insert(rng.randrange(len(words) + 1), _identifier(rng))
        predicate = None
        if rng.random() < 0.33:
            predicate = " ".join(vocab[j] for j in draws[cursor: cursor + 4])
            cursor += 4
        docs.append(LexicalDoc(f"m{i}", "bench", " ".join(words), predicate, rng.choice(types)))
    return docs, vocab


def make_queries(docs: Sequence[LexicalDoc], count: int, seed: int = 11) -> list[str]:
    """Queries the way agents ask: 2-5 words of a real memory plus filler, some with its identifier."""
    rng = random.Random(seed)
    queries = []
    for _ in range(count):
        doc = rng.choice(docs)
        words = doc.text.split()
        picked = rng.sample(words, min(len(words), rng.randint(2, 5)))
        queries.append(" ".join(rng.sample(_FILLER, 3) + picked))
    return queries


def _percentiles(samples_ms: list[float]) -> tuple[float, float]:
    return statistics.median(samples_ms), percentile(samples_ms, 0.99)


_CLOCK: Callable[[], float] = time.perf_counter


def _timed(fn: Callable[[], object]) -> float:
    """Milliseconds on the chosen clock: wall time, or this thread's CPU time (`--clock cpu`),
    which shared or overloaded machines do not inflate."""
    start = _CLOCK()
    fn()
    return (_CLOCK() - start) * 1000


PROFILES = {"heavy-head": 0, "text-like": 150}


def _full_top10(full: BM25Okapi, query_tokens: list[str]) -> np.ndarray:
    """The baseline: rank-bm25's own full scan, then the top 10."""
    return np.argsort(full.get_scores(query_tokens))[::-1][:10]


def run(n: int, n_queries: int, n_full: int, profile: str) -> None:
    docs, _ = make_corpus(n, head_skip=PROFILES[profile])
    queries = make_queries(docs, n_queries)
    print(f"\n== {n:,} docs, one namespace, {profile} vocabulary ==")

    index = BM25Index()
    load_ms = _timed(lambda: index.add(docs)) + _timed(lambda: index.count("bench"))
    print(f"bulk load (tokenize + index {n:,} docs): {load_ms:,.0f} ms")

    corpus = [doc_terms(d, index.predicate_weight) for d in docs]
    built: list[BM25Okapi] = []
    full_build_ms = _timed(lambda: built.append(BM25Okapi(corpus, k1=index.k1, b=index.b, epsilon=index.epsilon)))
    full = built[0]

    for q in queries[:20]:  # warm caches (stemmer, allocator)
        index.search("bench", q, 10)
    ours = [_timed(partial(index.search, "bench", q, 10)) for q in queries]
    qtoks = [list(dict.fromkeys(tokenize(q))) for q in queries[:n_full]]
    theirs = [_timed(partial(_full_top10, full, t)) for t in qtoks]
    shard = index._shards["bench"]
    cand = [len(set().union(*(shard.candidates(t) for t in toks))) for toks in qtoks]

    o50, o99 = _percentiles(ours)
    t50, t99 = _percentiles(theirs)
    print(f"{'search, k=10':<34}{'p50 ms':>10}{'p99 ms':>10}")
    print(f"{'BM25Index.search (candidates)':<34}{o50:>10.2f}{o99:>10.2f}   ({len(ours)} queries)")
    print(f"{'BM25Okapi.get_scores + argsort':<34}{t50:>10.2f}{t99:>10.2f}   ({len(theirs)} queries)")
    print(f"{'speed-up (full / ours)':<34}{t50 / o50:>10.1f}x{t99 / o99:>9.1f}x")
    print(f"candidates per query: median {statistics.median(cand):,.0f}, max {max(cand):,} of {n:,}")

    # read-after-write: one upsert + one delete; `count` applies them without scoring anything
    apply_ms, write_then_read = [], []
    for i in range(50):
        index.add([LexicalDoc(f"new{i}", "bench", f"fresh memory {i} about JIRA-{i}", "new fact", None)])
        index.delete("bench", [f"m{i}"])
        apply_ms.append(_timed(lambda: index.count("bench")))
        index.add([LexicalDoc(f"new{i}", "bench", f"fresh memory {i} about JIRA-{i} again", None, None)])
        write_then_read.append(_timed(partial(index.search, "bench", queries[i % len(queries)], 10)))
    a50, a99 = _percentiles(apply_ms)
    w50, w99 = _percentiles(write_then_read)
    print(f"apply a write (1 upsert + 1 delete, incremental): p50 {a50:.2f} ms, p99 {a99:.2f} ms")
    print(f"search right after an upsert (apply + search):    p50 {w50:.2f} ms, p99 {w99:.2f} ms")
    print(f"full BM25Okapi(corpus) rebuild, the naive alternative per write: {full_build_ms:,.0f} ms")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--full-queries", type=int, default=None,
                        help="run the slow full-scan baseline on only the first N queries (default: all)")
    parser.add_argument("--profiles", nargs="+", choices=sorted(PROFILES), default=["text-like", "heavy-head"])
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    args = parser.parse_args(argv)
    global _CLOCK
    _CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    print(f"clock: {args.clock}")
    for profile in args.profiles:
        for n in args.sizes:
            run(n, args.queries, min(args.full_queries or args.queries, args.queries), profile)


if __name__ == "__main__":
    main()
