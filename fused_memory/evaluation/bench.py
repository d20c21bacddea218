"""`fused-memory bench`: ingest and query speed at several corpus sizes, every ratio side by side.

Why each number is measured the way it is:

* **Ingest** goes through `MemoryStore.add` with the real default embedder (NER, classification,
  embedding, vectors, BM25, graph), plus the first read that folds the BM25 write buffer in, since a
  read-after-write pays for it. The embedder alone is timed on a sample of the same texts in the
  same run, so `ingest_overhead` (ingest time / embedding-only time) shows what the store adds on
  top of the model on this machine, today, rather than against a number from another day.
* **Latency** is wall time of `EnsembleMemory.retrieve` with the query-embedding cache cleared
  before every call, so each measurement includes embedding the query, as a first-time question
  would. Each arm alone is `retrieve(arms=[arm])` on the same query, right after the ensemble, so
  the arm pays the same parse + embed + hydrate the ensemble does; an arm counts on the queries
  where the optimizer planned it (others never run it), except dense, the retriever a user would
  otherwise run: it runs on every query, before the ensemble on every other one (A/B).
* `vs_dense`: ensemble p50 / dense alone p50 and p99 / p99 over the same queries, and over those
  the ensemble embedded for (`embedding_plans`: like for like; the others need no embedding).
  `vs_dense_by_plan`: the same per query plan (`plan_label`), so a ratio above target says which
  plans carry it, in the unit a user compares against (dense alone is what they would otherwise run).
* `fanout_over_slowest` / `fanout_over_sum` are per-query ratios (ensemble / slowest planned arm
  alone, ensemble / sum of planned arms alone), medians over the query set.
* `fanout_cpu_floor` says how much of that fan-out the machine itself imposes: the ensemble's CPU
  time (every thread of the process) spread perfectly over all cores, over the slowest arm's wall
  time, median per query. No scheduler can beat it on this machine; the gap between it and
  `fanout_over_slowest` is time lost to serialization (the GIL, one arm waiting on another). It
  matters on small machines: at 100k one qdrant-edge search alone keeps ~1.5 of 2 cores busy
  (it searches segments in parallel), so whatever runs beside it slows it down.
* `arm_pooled`: on how many of the mixed queries each arm was read off dense's results instead of
  searching (`Retrieval.pooled`, `FusionConfig.pool_min`); an arm run alone never is, so the
  per-arm rows still price its own search.
* `fanout_by_plan`: the same ratio per query plan (the arms the optimizer planned, which of them
  were read off dense, and whether the temporal arm searched a time window), so a median above
  target says *which* queries carry it: typically those whose plan needs a second engine call (a
  filtered arm that could not be read off) or a windowed search beside dense's.
* `optimizer_p99_ratio`: p99 with the optimizer on / off over the seed's simple queries (a time, an
  identifier or a name alone, `synth.shape_queries`), alternating on / off per query so both see the
  same machine state; `optimizer` has it per shape, with the share answered in the top 10 on and
  off, and for plain topical queries (`optimizer_topical_p99_ratio`; `bench_optimizer`).
* `fanout_over_slowest_ci95` / `optimizer_p99_ratio_ci95`: 95% bootstrap intervals of those two
  ratios (`significance`), so a distance from a target can be told from query-sampling noise.
* `--store DIR` keeps each size's store in `DIR/n<size>-seed<seed>-<lexical>` and reuses it on the
  next run when it holds exactly that size's memories (a 100k ingest takes minutes; the latency
  ratios do not depend on it). A reused store reports no ingest numbers (`ingest_reused`).
* `lexical_vs_rank_bm25`: p50 of our lexical arm / p50 of `BM25Okapi.get_scores` + top-k over the
  same documents and tokens (< 1 means ours is faster). `lexical="engine"` benches the store with
  its lexical index in the engine (sparse vectors in the qdrant-edge shard) instead of BM25Index.
"""

from __future__ import annotations

import gc
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..results import ARMS
from .bench_optimizer import optimizer_rows
from .metrics import percentile
from .runner import Progress, quiet_progress
from .significance import bootstrap_ci, median_of
from .synth import SYNTH_NOW, SynthQuery, shape_queries, simple_queries, synth_memories, synth_queries

__all__ = ["run_bench", "bench_size", "rss_mb", "cpu_model", "percentile"]

_NS = "bench"


def _proc_field(path: str, key: str) -> str | None:
    """The value after `key:` on the first such line of a Linux /proc file; None where there is none."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                name, sep, value = line.partition(":")
                if sep and name.strip() == key:
                    return value.strip()
    except OSError:
        pass
    return None


def rss_mb() -> float:
    """Resident set size now (Linux /proc), else the peak from getrusage."""
    rss = _proc_field("/proc/self/status", "VmRSS")  # "123456 kB"
    if rss:
        return int(rss.split()[0]) / 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def cpu_model() -> str | None:
    """The CPU's name (Linux /proc/cpuinfo), so runs on different hardware are not compared blindly:
    the int8 embedder alone ran 370 texts/s on one host of this workplace and 133 on another."""
    return _proc_field("/proc/cpuinfo", "model name")


def _ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000, out


def _ms_cpu(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall ms, process CPU ms (all threads: the arms run on pool threads) and the result."""
    c0 = time.process_time()
    wall, out = _ms(fn)
    return wall, (time.process_time() - c0) * 1000, out


def _clear_query_cache(store: Any) -> None:
    cache = getattr(store.embedder, "cache", None)
    if cache is not None and hasattr(cache, "clear"):
        cache.clear()


def _r(x: float, digits: int = 2) -> float:
    return round(float(x), digits)


def _embed_rate(embedder: Any, texts: Sequence[str]) -> float:
    """Texts/s of the embedder alone, in the store's chunk size, after a warm-up batch."""
    embedder.embed_documents(list(texts[:32]))
    t0 = time.perf_counter()
    for i in range(0, len(texts), 256):
        embedder.embed_documents(list(texts[i:i + 256]))
    return len(texts) / max(1e-9, time.perf_counter() - t0)


def _ner_rate(store: Any, memories: Sequence[Any]) -> float:
    """Memories/s of entity extraction alone (spaCy NER), on a sample."""
    store.extractor.extract(list(memories[:32]))
    t0 = time.perf_counter()
    store.extractor.extract(list(memories))
    return len(memories) / max(1e-9, time.perf_counter() - t0)


def _latencies(ens: Any, store: Any, queries: Sequence[SynthQuery]) -> dict[str, Any]:
    """Ensemble and per-arm wall times, side by side per query."""
    per_arm: dict[str, list[float]] = {a: [] for a in ARMS}
    ensemble: list[float] = []
    over_slowest: list[float] = []
    over_sum: list[float] = []
    floor: list[float] = []
    ensemble_cpu: list[float] = []
    cores = os.cpu_count() or 1
    stages: dict[str, list[float]] = {}
    pooled: dict[str, int] = {}
    by_plan: dict[str, list[float]] = {}
    plan_pairs: dict[str, list[tuple[float, float]]] = {}
    embedded: list[bool] = []
    for i, q in enumerate(queries):
        def dense_alone(q: SynthQuery = q) -> float:
            _clear_query_cache(store)
            return _ms(lambda: ens.retrieve(q.text, namespace=_NS, k=10, now=SYNTH_NOW, arms=["dense"]))[0]

        d_ms = dense_alone() if i % 2 else 0.0  # dense alone first on every other query: A/B, not A then B
        _clear_query_cache(store)
        e_ms, e_cpu, result = _ms_cpu(partial(ens.retrieve, q.text, namespace=_NS, k=10, now=SYNTH_NOW))
        d_ms = d_ms if i % 2 else dense_alone()
        ensemble.append(e_ms)
        ensemble_cpu.append(e_cpu)
        per_arm["dense"].append(d_ms)
        embedded.append(result.plan.shortcut is None)
        plan_pairs.setdefault(plan_label(result), []).append((e_ms, d_ms))
        for stage, ms in result.timings_ms.items():
            stages.setdefault(stage, []).append(float(ms))
        for arm in result.pooled:
            pooled[arm] = pooled.get(arm, 0) + 1
        alone: list[float] = [d_ms] if "dense" in result.plan.arms else []
        for arm in (a for a in result.plan.arms if a != "dense"):
            _clear_query_cache(store)
            a_ms, _ = _ms(partial(ens.retrieve, q.text, namespace=_NS, k=10, now=SYNTH_NOW, arms=[arm]))
            per_arm[arm].append(a_ms)
            alone.append(a_ms)
        if alone:
            over_slowest.append(e_ms / max(alone))
            over_sum.append(e_ms / sum(alone))
            floor.append(e_cpu / cores / max(alone))
            by_plan.setdefault(plan_label(result), []).append(e_ms / max(alone))
    p50 = {"ensemble": _r(statistics.median(ensemble))}
    p99 = {"ensemble": _r(percentile(ensemble, 0.99))}
    for arm, values in per_arm.items():
        if values:
            p50[arm], p99[arm] = _r(statistics.median(values)), _r(percentile(values, 0.99))
    return {"p50_ms": p50, "p99_ms": p99, "vs_dense": _vs_dense(ensemble, per_arm["dense"], embedded),
            "vs_dense_by_plan": {label: _ratios(pairs) for label, pairs in
                                 sorted(plan_pairs.items(), key=lambda kv: (-len(kv[1]), kv[0]))},
            "fanout_over_slowest": _r(statistics.median(over_slowest), 3) if over_slowest else None,
            "fanout_over_slowest_ci95": _interval(over_slowest, stat=median_of) if over_slowest else None,
            "fanout_over_sum": _r(statistics.median(over_sum), 3) if over_sum else None,
            "fanout_cpu_floor": _r(statistics.median(floor), 3) if floor else None,
            "ensemble_cpu_p50_ms": _r(statistics.median(ensemble_cpu)),
            "arm_runs": {a: len(v) for a, v in per_arm.items()},
            "arm_pooled": pooled,
            "fanout_by_plan": {label: {"queries": len(v), "fanout_over_slowest": _r(statistics.median(v), 3)}
                               for label, v in sorted(by_plan.items(), key=lambda kv: (-len(kv[1]), kv[0]))},
            "ensemble_stages_p50_ms": {k: _r(statistics.median(v)) for k, v in stages.items()}}


def _vs_dense(ensemble: Sequence[float], dense: Sequence[float], embedded: Sequence[bool]) -> dict[str, Any]:
    """The ensemble against dense alone on the same queries (p50 / p50, p99 / p99), over all of them
    and over those the ensemble embedded for (like for like: the others skip the embedding)."""
    pairs = list(zip(ensemble, dense, strict=True))
    return {**_ratios(pairs), "embedding_plans": _ratios([p for p, emb in zip(pairs, embedded, strict=True) if emb])}


def _ratios(pairs: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """p50 / p50 and p99 / p99 of (ensemble ms, dense alone ms) pairs of the same queries, with the parts."""
    if not pairs:
        return {"n": 0}
    e, d = [a for a, _ in pairs], [b for _, b in pairs]
    return {"n": len(pairs), "p50_ratio": _r(statistics.median(e) / statistics.median(d), 3),
            "p99_ratio": _r(percentile(e, 0.99) / percentile(d, 0.99), 3),
            "ensemble_p50_ms": _r(statistics.median(e)), "dense_p50_ms": _r(statistics.median(d)),
            "ensemble_p99_ms": _r(percentile(e, 0.99)), "dense_p99_ms": _r(percentile(d, 0.99))}


def _interval(*samples: Sequence[float], stat: Any) -> list[float]:
    """The 95% bootstrap interval of a ratio the bench reports, so "1.29 against a target of 1.2"
    says whether the gap is larger than what another 200 queries would show."""
    lo, hi = bootstrap_ci(*samples, stat=stat)
    return [_r(lo, 3), _r(hi, 3)]


def plan_label(result: Any) -> str:
    """A query plan as the fan-out sees it: "dense+lexical+type, type read off dense", or
    "dense+temporal+type, temporal windowed" (its window is a range: always a search of its own)."""
    label = "+".join(result.plan.arms)
    if result.pooled:
        label += f", {'+'.join(result.pooled)} read off dense"
    if "temporal" in result.plan.arms and result.parsed.temporal_window is not None:
        label += ", temporal windowed"
    return label


def _lexical(store: Any, ens: Any, memories: Sequence[Any], queries: Sequence[SynthQuery],
             max_full: int) -> dict[str, Any]:
    """Our lexical arm vs a plain rank-bm25 full scan over the same documents and tokens."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    from ..backends.lexical.bm25 import BM25Index, doc_terms
    from ..backends.lexical.engine import EngineLexicalIndex
    from ..backends.protocols import LexicalDoc
    from ..retrievers.base import ArmRequest
    from ..text import tokenize

    arm = store.retriever("lexical")
    lex = store.lexical
    if isinstance(lex, EngineLexicalIndex):
        lex = BM25Index(lex.encoder.predicate_weight, lex.encoder.k1, lex.encoder.b)  # its parameters, for rank-bm25
    if not isinstance(lex, BM25Index):
        raise ConfigurationError(f"the lexical benchmark compares rank-bm25 with BM25Index, not {type(lex).__name__}")
    corpus = [doc_terms(LexicalDoc(m.id, m.namespace, m.text, m.predicate, m.type), lex.predicate_weight)
              for m in memories]
    t0 = time.perf_counter()
    full = BM25Okapi(corpus, k1=lex.k1, b=lex.b, epsilon=lex.epsilon)
    build_s = time.perf_counter() - t0
    ours: list[float] = []
    theirs: list[float] = []
    for i, q in enumerate(queries):
        parsed, _ = ens.plan(q.text, namespace=_NS, now=SYNTH_NOW)
        req = ArmRequest(query=parsed, namespace=_NS, k=10)
        ours.append(_ms(partial(arm.search, req))[0])
        if i < max_full:
            tokens = list(dict.fromkeys(tokenize(q.text)))

            def scan(tokens: list[str] = tokens, full: BM25Okapi = full) -> Any:
                scores = full.get_scores(tokens)
                top = np.argpartition(-scores, min(10, len(scores) - 1))[:10]
                return top[np.argsort(-scores[top])]

            theirs.append(_ms(scan)[0])
    del full, corpus
    o50, t50 = statistics.median(ours), statistics.median(theirs)
    return {"ours_p50_ms": _r(o50, 3), "ours_p99_ms": _r(percentile(ours, 0.99), 3),
            "rank_bm25_p50_ms": _r(t50, 3), "rank_bm25_p99_ms": _r(percentile(theirs, 0.99), 3),
            "rank_bm25_build_s": _r(build_s), "ratio": _r(o50 / t50, 4) if t50 else None}


@contextmanager
def _store_dir(store_dir: str | None, name: str) -> Iterator[str]:
    """Where one size's store lives: a temporary directory (removed afterwards), or a kept one
    under `store_dir`, called `name` (named by what decides its content), so a later run can reuse it."""
    if store_dir is None:
        with tempfile.TemporaryDirectory(prefix="fused-memory-bench-") as tmp:
            yield tmp
        return
    path = Path(store_dir) / name
    path.mkdir(parents=True, exist_ok=True)
    yield str(path)


def bench_size(n: int, *, n_queries: int = 200, n_simple: int = 150, seed: int = 7, embedder: Any = None,
               embed_sample: int = 2000, progress: Progress = quiet_progress, lexical: str | None = None,
               store_dir: str | None = None) -> dict[str, Any]:
    """Every measurement for one corpus size, in a fresh store that is removed afterwards, or in
    one kept under `store_dir` and reused when it already holds this size's memories (the ingest
    is then not measured). A kept store holding anything else is refused, never added to."""
    from ..embeddings import default_embedder
    from ..ensemble import EnsembleMemory
    from ..store.memory_store import MemoryStore

    load_1m = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    memories = synth_memories(n, seed=seed, namespace=_NS)
    queries = synth_queries(memories, n_queries, seed=seed + 4)
    simple = shape_queries(memories, n_simple, seed=seed + 10)
    topical = simple_queries(memories, n_simple, seed=seed + 6)
    emb = embedder if embedder is not None else default_embedder()
    ingest_s: float | None = None
    embed_per_s = ner_per_s = None
    with _store_dir(store_dir, f"n{n}-seed{seed}-{lexical or 'bm25'}") as tmp:
        store = MemoryStore.embedded(tmp, embedder=emb, show_progress=False, lexical=lexical)
        with store:
            held = {ns: store.count(ns) for ns in store.namespaces()}
            reused = held == {_NS: n}
            if held and not reused:
                raise ConfigurationError(f"the bench store at {tmp} holds {held}, not {n} bench memories; "
                                         "remove it or give another --store")
            rss_before = rss_mb()
            if reused:
                store.lexical.count(_NS)
                progress(f"[n={n}] reusing the store at {tmp}; querying")
            else:
                # exactly the texts ingest embeds (predicate-prefixed), so the ratio compares like with like
                sample = [MemoryStore.embed_text(m) for m in memories[:embed_sample]]
                embed_per_s = _embed_rate(store.embedder, sample)
                ner_per_s = _ner_rate(store, memories[:min(len(memories), 1000)])
                progress(f"[n={n}] embedder alone: {embed_per_s:.0f}/s, NER alone: {ner_per_s:.0f}/s; ingesting")
                t0 = time.perf_counter()
                store.add(memories, show_progress=False)
                store.lexical.count(_NS)  # fold the BM25 write buffer in: the first read would pay it
                ingest_s = time.perf_counter() - t0
                progress(f"[n={n}] ingested in {ingest_s:.1f}s ({n / ingest_s:.0f}/s); querying")
            gc.collect()
            rss_after = rss_mb()
            on = EnsembleMemory(store)
            off = EnsembleMemory(store, optimizer=False)
            try:
                for q in queries[:10]:  # warm-up: lazy indexes, matchers, thread pool, allocator
                    on.retrieve(q.text, namespace=_NS, k=10, now=SYNTH_NOW)
                    off.retrieve(q.text, namespace=_NS, k=10, now=SYNTH_NOW)
                lat = _latencies(on, store, queries)
                opt = optimizer_rows(on, off, simple, topical, lambda: _clear_query_cache(store))
                lex = _lexical(store, on, memories, queries, max_full=100 if n < 50_000 else 50)
            finally:
                on.close()
                off.close()
    out = {
        "ingest_per_s": _r(n / ingest_s, 1) if ingest_s else None, "rss_mb": _r(rss_after, 1),
        "ingest_reused": ingest_s is None,
        "p50_ms": lat["p50_ms"], "p99_ms": lat["p99_ms"],
        "fanout_over_slowest": lat["fanout_over_slowest"], "fanout_over_sum": lat["fanout_over_sum"],
        "fanout_cpu_floor": lat["fanout_cpu_floor"], "ensemble_cpu_p50_ms": lat["ensemble_cpu_p50_ms"],
        "optimizer_p99_ratio": opt["mix"]["p99_ratio"], "lexical_vs_rank_bm25": lex["ratio"],
        "fanout_over_slowest_ci95": lat["fanout_over_slowest_ci95"],
        "optimizer_p99_ratio_ci95": opt["mix"].get("p99_ratio_ci95"),
        "optimizer_topical_p99_ratio": opt["topical"]["p99_ratio"], "vs_dense": lat["vs_dense"],
        # extras: the parts the ratios are made of
        "ingest_s": _r(ingest_s) if ingest_s else None,
        "embed_per_s": _r(embed_per_s, 1) if embed_per_s else None,
        "ner_per_s": _r(ner_per_s, 1) if ner_per_s else None,
        "ingest_overhead": _r((ingest_s * embed_per_s) / n, 2) if ingest_s and embed_per_s else None,
        "rss_growth_mb": _r(rss_after - rss_before, 1),
        "n_queries": len(queries), "loadavg_1m": _r(load_1m) if load_1m is not None else None,
        "cpus": os.cpu_count(), "cpu_model": cpu_model(), "arm_runs": lat["arm_runs"],
        "embedder_activations": getattr(emb, "activations", None),
        "arm_pooled": lat["arm_pooled"], "fanout_by_plan": lat["fanout_by_plan"], "optimizer": opt, "lexical": lex,
        "ensemble_stages_p50_ms": lat["ensemble_stages_p50_ms"], "lexical_index": store.config.lexical,
    }
    progress(f"[n={n}] ensemble p50 {out['p50_ms']['ensemble']} ms, p99 {out['p99_ms']['ensemble']} ms")
    return out


def run_bench(sizes: Sequence[int], *, n_queries: int = 200, n_simple: int = 150, seed: int = 7,
              progress: Progress = quiet_progress, lexical: str | None = None,
              store_dir: str | None = None) -> dict[str, Any]:
    """`{"<n>": {...}}` for each size, smallest first, one embedder shared (loaded once). Every
    count is checked before the first ingest: a percentile of no queries is not a number.
    `store_dir`: keep each size's store there and reuse it on the next run (`bench_size`)."""
    from ..embeddings import default_embedder

    for what, value in (("sizes (--n)", min(sizes) if sizes else list(sizes)), ("n_queries (--queries)", n_queries),
                        ("n_simple (--simple-queries)", n_simple)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigurationError(f"{what} must be a positive integer, got {value!r}")

    emb = default_embedder()
    return {str(n): bench_size(n, n_queries=n_queries, n_simple=n_simple, seed=seed, embedder=emb,
                               progress=progress, lexical=lexical, store_dir=store_dir)
            for n in sorted(set(sizes))}
