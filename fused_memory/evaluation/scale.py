"""`fused-memory bench --embedder hashing` or `--vectors FILE.npy`: the scale mode, for 1M memories
on one small machine.

Why a mode of its own: the default bench embeds every memory with the real model and runs NER on it,
which is what an ingest costs but takes hours at 1M on two cores (MiniLM int8 embeds ~370 texts/s).
What changes with scale is the store (open, the first query, the steady-state query, RSS, disk), not
the model, so the memories' vectors come from elsewhere:

* `--embedder hashing`: `HashingEmbedder` at MiniLM's dimension (384), so the vector index, its
  disk and its RSS are sized as the default's. Its vectors say little about meaning, so its rankings
  mean nothing and its query embedding is nearly free: every output says so (`SCALE_ONLY_NOTE`).
  Latency ratios against dense alone are then ratios against a search with no model in front of it.
* `--vectors FILE.npy`: the default embedder's vectors of the synthetic memories, computed once
  (`--write-vectors`, `write_synth_vectors`): row i is memory i of the seed's corpus. Documents read
  their row; queries embed with the default embedder, as a user's would, so latencies and rankings
  are the real ones. The first n memories of a larger corpus are the corpus of n, so one 1M file
  serves every n up to 1M; a file with fewer rows, another dimension, or rows that are not these
  memories' embeddings (checked on three rows) is refused.

NER is off unless `--ner` is given: spaCy over 1M texts costs more than everything else together.

What is measured, and why this way:

* `build_s`: `MemoryStore.add` of every memory in order (the store's own batching: 256 a chunk, an
  HNSW segment built every 20k points), plus the first read of each namespace's BM25 buffer.
  `synth_s`, the corpus's generation, is apart. `build_peak_rss_mb` is the building process's peak
  so far (sizes run smallest first, so it is this size's). A kept store (`--store`) reused by a
  later run reports the numbers its build recorded (`bench-build.json`, with `built_at`), with
  `ingest_reused` true.
* Everything else is measured in a *new process* (multiprocessing, spawn) that opens the kept store
  as the MCP server or the CLI would: the building process holds the corpus and its allocator's
  arenas, which would count in RSS and would have warmed every cache the open needs.
  `embedder_load_s` (model load, apart from the open), `open_s` (`open()` of the store),
  `first_query_ms` (the first `retrieve` after open: every lazy start-up cost plus the queried
  namespace's planning state), `first_query_new_namespace_ms` (then the first query in another
  namespace: its planning state alone; needs `--namespaces` >= 2), then the default bench's
  latencies (`bench._latencies`: each plan against dense alone on the same queries).
* `rss_mb`: the measuring process after the queries; `rss_over_models_mb`: that minus its RSS
  before the open (interpreter, imports, the embedder); `kb_per_memory`: the latter per memory.
  `rss_after_open_mb`, taken right after the open, tells what the open holds from what queries add.
* `disk_mb`: the store directory's allocated blocks (`du`), `disk_kb_per_memory` per memory.
* `--namespaces K` spreads memory i to namespace i mod K (`bench`, `bench-1`, ...), a store of K
  users; latencies are measured in `bench`, which holds n / K of them (`queried_namespace_n`).
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigurationError, FusedMemoryError
from .bench import _clear_query_cache, _latencies, _ms, _r, cpu_model, rss_mb
from .runner import Progress, quiet_progress
from .synth import SYNTH_NOW, SynthQuery, synth_memories, synth_queries

__all__ = ["SCALE_ONLY_NOTE", "HASHING_DIM", "ScaleSpec", "PrecomputedEmbedder", "load_vectors",
           "write_synth_vectors", "disk_mb", "scale_size", "run_scale"]

#: Said in the table, the JSON and the plot whenever the hashing embedder made the vectors.
SCALE_ONLY_NOTE = "scale-only: hashing embedder, rankings not meaningful"
#: The hashing embedder's dimension in scale runs: MiniLM's, so the index is sized as the default's.
HASHING_DIM = 384
_NS = "bench"
_EMBEDDERS = ("hashing", "vectors")
#: Memories handed to one `add` call: the store cuts it in its own chunks; this only paces progress.
_ADD_BATCH = 10_000
#: Written beside a kept store once its build completed: the build's numbers and what it holds.
_MARKER = "bench-build.json"
#: Cosine under which a row of a vectors file is not the embedding of its memory. The int8 model
#: reproduces its own vectors to ~1e-6; another seed's memory scores well under 0.9.
_ALIGNED_COSINE = 0.98


@dataclass(frozen=True)
class ScaleSpec:
    """What a scale run builds: where the memories' vectors come from (`embedder` "hashing", or
    "vectors" with `vectors` the .npy file), whether NER runs at ingest, and into how many
    namespaces the memories are spread."""

    embedder: str = "hashing"
    vectors: str | None = None
    ner: bool = False
    namespaces: int = 1

    def __post_init__(self) -> None:
        if self.embedder not in _EMBEDDERS:
            raise ConfigurationError(f"the scale bench's embedder is one of {', '.join(_EMBEDDERS)}, "
                                     f"got {self.embedder!r}")
        if (self.embedder == "vectors") != (self.vectors is not None):
            raise ConfigurationError("a vectors file goes with embedder 'vectors', and only with it")
        if isinstance(self.namespaces, bool) or not isinstance(self.namespaces, int) or self.namespaces < 1:
            raise ConfigurationError(f"--namespaces must be a positive integer, got {self.namespaces!r}")

    @property
    def scale_only(self) -> bool:
        """True when rankings mean nothing (the hashing embedder made the vectors)."""
        return self.embedder == "hashing"

    @property
    def note(self) -> str:
        """What the numbers are, in one line for the table, the JSON and the plot."""
        if self.scale_only:
            return SCALE_ONLY_NOTE
        return (f"memory vectors precomputed in {Path(self.vectors or '').name} (the default embedder's); "
                "queries embed with the default embedder")

    def namespace_names(self) -> tuple[str, ...]:
        """`bench` (where latencies are measured), then `bench-1` ... `bench-<K-1>`."""
        return (_NS, *(f"{_NS}-{i}" for i in range(1, self.namespaces)))

    def dir_name(self, n: int, seed: int, lexical: str | None) -> str:
        """A kept store's directory under `--store`, named by everything that decides its content
        (the default bench's stores keep their own names: these never collide with them)."""
        return (f"n{n}-seed{seed}-{lexical or 'bm25'}-{self.embedder}-ns{self.namespaces}-"
                f"{'ner' if self.ner else 'noner'}")

    def query_embedder(self) -> Any:
        """A new embedder for queries: the hashing embedder, or the default one the vectors came from."""
        from ..embeddings import HashingEmbedder, default_embedder

        return HashingEmbedder(HASHING_DIM) if self.scale_only else default_embedder()


class PrecomputedEmbedder:
    """Documents embed to their rows of a precomputed table; queries embed with `base`, the embedder
    that made the table (its id is `base`'s: the store pins the same model either way).

    Why look rows up by text and not by position: the store embeds `MemoryStore.embed_text` of each
    memory in chunks of its own choosing; a vector is a function of its text, so the text's row is
    its embedding whichever memory asks (equal texts have equal rows). A text with no row is refused,
    never embedded by the model behind the caller's back."""

    def __init__(self, base: Any, rows: Mapping[str, int], vectors: np.ndarray) -> None:
        self.base = base
        self.rows = rows
        self.vectors = vectors

    @property
    def id(self) -> Any:
        return self.base.id

    @property
    def dim(self) -> int:
        return int(self.base.dim)

    def __repr__(self) -> str:
        return f"PrecomputedEmbedder({self.base!r}, {len(self.rows)} texts)"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """`(len(texts), dim)` float32: each text's precomputed row."""
        try:
            index = [self.rows[t] for t in texts]
        except KeyError as exc:
            raise ConfigurationError(f"no precomputed vector for {str(exc.args[0])[:80]!r}: the vectors file "
                                     "holds the synthetic memories' vectors only") from None
        return np.asarray(self.vectors[index], dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self.base.embed_query(text), dtype=np.float32)


def load_vectors(path: str, n: int, *, seed: int, base: Any) -> np.ndarray:
    """The first `n` rows of a .npy file of the synthetic memories' vectors (memory-mapped: a 1M x
    384 file is 1.5 GB), checked before any store is touched: readable, a 2-d float array, at least
    `n` rows, `base`'s dimension, and rows 0, n/2 and n-1 equal (cosine >= 0.98) to `base`'s
    embedding of those memories, so a file made from another seed or model is refused, not benched."""
    from ..store.memory_store import MemoryStore

    try:
        table = np.load(path, mmap_mode="r", allow_pickle=False)
    except OSError as exc:
        raise ConfigurationError(f"--vectors {path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ConfigurationError(f"--vectors {path}: not a .npy array file ({exc})") from None
    if not isinstance(table, np.ndarray) or table.ndim != 2 or table.dtype.kind != "f":
        shape = getattr(table, "shape", None)
        raise ConfigurationError(f"--vectors {path}: holds {getattr(table, 'dtype', type(table).__name__)} of shape "
                                 f"{shape}; want a 2-d float array, one row per synthetic memory")
    rows, dim = table.shape
    if rows < n:
        raise ConfigurationError(f"--vectors {path} has {rows:,} rows; the bench needs {n:,}, one per synthetic "
                                 f"memory (seed {seed}): make them with --write-vectors")
    if dim != base.dim:
        raise ConfigurationError(f"--vectors {path} has {dim}-dimensional rows; the embedder they must come from "
                                 f"({base.id.name}) makes {base.dim}-dimensional vectors")
    memories = synth_memories(n, seed=seed)
    check = sorted({0, n // 2, n - 1})
    expected = np.asarray(base.embed_documents([MemoryStore.embed_text(memories[i]) for i in check]), dtype=np.float32)
    for i, want in zip(check, expected, strict=True):
        got = np.asarray(table[i], dtype=np.float32)
        cosine = float(got @ want / max(1e-12, float(np.linalg.norm(got) * np.linalg.norm(want))))
        if not cosine >= _ALIGNED_COSINE:
            raise ConfigurationError(f"--vectors {path}: row {i} is not the embedding of synthetic memory {i} "
                                     f"(cosine {cosine:.3f} with {base.id.name}'s): the file was made from another "
                                     "seed, order or embedder")
    return table[:n]


def write_synth_vectors(path: str, n: int, *, seed: int = 7, embedder: Any = None,
                        progress: Progress = quiet_progress) -> str:
    """Embed the seed's first `n` synthetic memories with `embedder` (default: the default embedder)
    and save them as `path` (.npy, float32, row i = memory i), for `--vectors`. Written beside the
    target and renamed into place, so an interrupted run leaves no half file that looks whole."""
    from numpy.lib.format import open_memmap

    from ..embeddings import default_embedder
    from ..store.memory_store import MemoryStore

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigurationError(f"the vectors file needs a positive number of rows, got {n!r}")
    emb = embedder if embedder is not None else default_embedder()
    target = path if path.endswith(".npy") else path + ".npy"
    partial = f"{target}.partial.npy"
    memories = synth_memories(n, seed=seed)
    try:
        out = open_memmap(partial, mode="w+", dtype=np.float32, shape=(n, emb.dim))
    except OSError as exc:
        raise ConfigurationError(f"--write-vectors {path}: cannot be written ({exc.strerror or exc})") from None
    t0 = time.perf_counter()
    for i in range(0, n, 256):
        out[i:i + 256] = emb.embed_documents([MemoryStore.embed_text(m) for m in memories[i:i + 256]])
        if i and i % 50_000 == 0:
            progress(f"[vectors] {i:,}/{n:,} ({i / (time.perf_counter() - t0):.0f}/s)")
    out.flush()
    del out
    os.replace(partial, target)
    return target


def disk_mb(path: str | Path) -> float:
    """MB the files under `path` occupy on disk (allocated blocks, as `du` counts: sparse files and
    preallocated WAL segments count what they hold, not their length)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            total += getattr(st, "st_blocks", 0) * 512 or st.st_size
    return total / (1024 * 1024)


@dataclass(frozen=True)
class _Measure:
    """What the measuring process is given: the kept store and the queries (made by the parent, so
    the child never holds the corpus)."""

    path: str
    n: int
    spec: ScaleSpec
    lexical: str | None
    queries: tuple[SynthQuery, ...]
    expected: dict[str, int]
    new_namespace_query: SynthQuery | None = None
    new_namespace: str | None = None


def _measure(task: _Measure) -> dict[str, Any]:
    """In a new process: load the embedder, open the store, the first queries, then the latencies."""
    from ..ensemble import EnsembleMemory
    from ..store.memory_store import MemoryStore

    emb = task.spec.query_embedder()
    load = getattr(emb, "load", None)
    load_s = _ms(load)[0] / 1000 if callable(load) else 0.0
    emb.embed_query("warm up")  # onnxruntime's first run allocates its arena: not the store's cost
    gc.collect()
    rss_before = rss_mb()
    store = MemoryStore.embedded(task.path, embedder=emb, ner=task.spec.ner, show_progress=False,
                                 lexical=task.lexical)
    open_ms, _ = _ms(store.open)
    gc.collect()
    rss_open = rss_mb()  # what the open itself holds, apart from what the queries add
    ens = EnsembleMemory(store)
    try:
        with store:
            q0 = task.queries[0]
            _clear_query_cache(store)
            first_ms, first = _ms(lambda: ens.retrieve(q0.text, namespace=_NS, k=10, now=SYNTH_NOW))
            new_ms = new_plan = None
            if task.new_namespace_query is not None and task.new_namespace is not None:
                qn, ns = task.new_namespace_query, task.new_namespace
                _clear_query_cache(store)
                new_ms, new = _ms(lambda: ens.retrieve(qn.text, namespace=ns, k=10, now=SYNTH_NOW))
                new_plan = new.timings_ms.get("plan")
            for q in task.queries[:10]:  # warm-up, as the default bench does
                ens.retrieve(q.text, namespace=_NS, k=10, now=SYNTH_NOW)
            lat = _latencies(ens, store, task.queries)
            gc.collect()
            rss_after = rss_mb()
            lexical_index = store.config.lexical
            held = {ns: store.count(ns) for ns in store.namespaces()}  # last: counting warms nothing timed
            if held != task.expected:
                raise ConfigurationError(_other_store(task.path, held, task.expected))
    finally:
        ens.close()
    over = rss_after - rss_before
    return {"embedder_load_s": _r(load_s, 3), "open_s": _r(open_ms / 1000, 3), "first_query_ms": _r(first_ms),
            "first_query_plan_ms": _r(first.timings_ms.get("plan", 0.0)),
            "first_query_new_namespace_ms": _r(new_ms) if new_ms is not None else None,
            "first_query_new_namespace_plan_ms": _r(new_plan) if new_plan is not None else None,
            "open_plus_first_query_s": _r(open_ms / 1000 + first_ms / 1000, 3),
            "rss_mb": _r(rss_after, 1), "rss_before_open_mb": _r(rss_before, 1),
            "rss_after_open_mb": _r(rss_open, 1), "rss_over_models_mb": _r(over, 1),
            "kb_per_memory": _r(over * 1024 / task.n, 2), "lat": lat, "lexical_index": lexical_index}


def _in_new_process(task: _Measure) -> dict[str, Any]:
    """`_measure(task)` in a spawned process (a fork would inherit the parent's heap and RSS). A
    process pool, not `multiprocessing.Pool`: a child killed (by the OOM killer at 1M, say) is an
    error here, where Pool would wait for its result forever."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            result: dict[str, Any] = pool.submit(_measure, task).result()
        except BrokenProcessPool:
            raise FusedMemoryError(f"the measuring process for {task.path} died (out of memory?); "
                                     "nothing was measured") from None
    return result


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _build(store: Any, memories: Sequence[Any], names: Sequence[str], progress: Progress) -> dict[str, Any]:
    """Add every memory to the open, empty `store`, fold each namespace's BM25 buffer in; the build's numbers."""
    n = len(memories)
    t0 = time.perf_counter()
    for i in range(0, n, _ADD_BATCH):
        store.add(memories[i:i + _ADD_BATCH], show_progress=False)
        done = min(n, i + _ADD_BATCH)
        if done % 100_000 == 0 and done < n:
            took = time.perf_counter() - t0
            progress(f"[n={n:,}] {done:,} in {took:.0f}s ({done / took:.0f}/s)")
    for ns in names:
        store.lexical.count(ns)  # fold the BM25 write buffer in: the first read would pay it
    build_s = time.perf_counter() - t0
    progress(f"[n={n:,}] built in {build_s:.1f}s ({n / build_s:.0f}/s)")
    return {"build_s": _r(build_s), "ingest_per_s": _r(n / build_s, 1),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def _other_store(path: str, held: Mapping[str, int], expected: Mapping[str, int]) -> str:
    return (f"the bench store at {path} holds {len(held)} namespaces and {sum(held.values()):,} memories, not this "
            f"size's {len(expected)} and {sum(expected.values()):,}; remove it or give another --store")


def _recorded_build(marker: Path, expected: Mapping[str, int]) -> dict[str, Any] | None:
    """The numbers of the build that completed this store (`_MARKER`), when it built exactly these
    namespaces and counts; None otherwise (no marker, another size, unreadable: the store is then
    opened and counted). Why a marker: checking a kept 1M store by opening it costs this process
    ~100 s and ~5 GB before the measuring process opens it again; the measuring process still
    counts every namespace after its open and refuses a store that does not match."""
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("namespaces") != dict(expected):
        return None
    return data


def _write_marker(marker: Path, data: Mapping[str, Any]) -> None:
    """Write `_MARKER` beside the store, whole or not at all (written aside, then renamed)."""
    aside = marker.with_name(marker.name + ".partial")
    aside.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(aside, marker)


def scale_size(n: int, spec: ScaleSpec, *, n_queries: int = 200, seed: int = 7, lexical: str | None = None,
               store_dir: str | None = None, vectors: np.ndarray | None = None,
               progress: Progress = quiet_progress) -> dict[str, Any]:
    """Build (or reuse, under `store_dir`) a store of `n` synthetic memories, then measure it in a
    new process. `vectors`: the checked table for `spec.embedder == "vectors"` (`load_vectors`)."""
    from ..store.memory_store import MemoryStore
    from .bench import _store_dir

    names = spec.namespace_names()
    if n < len(names):
        raise ConfigurationError(f"--namespaces {len(names)} needs at least {len(names)} memories, got --n {n}")
    load_1m = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    t0 = time.perf_counter()
    memories = synth_memories(n, seed=seed, namespaces=names)
    synth_s = time.perf_counter() - t0
    queries = synth_queries([m for m in memories if m.namespace == _NS], n_queries, seed=seed + 4)
    new_ns = names[1] if len(names) > 1 else None
    new_q = synth_queries([m for m in memories if m.namespace == new_ns], 1, seed=seed + 5)[0] if new_ns else None
    expected = dict(Counter(m.namespace for m in memories))
    if spec.scale_only:
        build_emb: Any = spec.query_embedder()
    else:
        if vectors is None or len(vectors) < n:
            raise ConfigurationError("the vectors mode needs the checked vectors table (load_vectors)")
        base = spec.query_embedder()
        build_emb = PrecomputedEmbedder(base, {MemoryStore.embed_text(m): i for i, m in enumerate(memories)}, vectors)
    reused = True
    with _store_dir(store_dir, spec.dir_name(n, seed, lexical)) as path:
        marker = Path(path) / _MARKER
        built = _recorded_build(marker, expected)
        if built is not None:  # its counts are checked by the measuring process, after its open
            progress(f"[n={n:,}] reusing the store at {path} (built {built.get('built_at')})")
        else:
            store = MemoryStore.embedded(path, embedder=build_emb, ner=spec.ner, show_progress=False,
                                         lexical=lexical)
            with store:
                held = {ns: store.count(ns) for ns in store.namespaces()}
                if held and held != expected:
                    raise ConfigurationError(_other_store(path, held, expected))
                if held:
                    progress(f"[n={n:,}] reusing the store at {path}")
                    built = {}
                else:
                    progress(f"[n={n:,}] building ({spec.embedder}, NER {'on' if spec.ner else 'off'}, "
                             f"{len(names)} namespace(s)); corpus made in {synth_s:.1f}s")
                    built, reused = _build(store, memories, names, progress), False
            if not reused:
                built["build_peak_rss_mb"] = _r(_peak_rss_mb(), 1)
                _write_marker(marker, {**built, "namespaces": expected})
        del memories, build_emb
        gc.collect()
        disk = disk_mb(path)
        progress(f"[n={n:,}] measuring in a new process")
        got = _in_new_process(_Measure(path, n, spec, lexical, tuple(queries), expected, new_q, new_ns))
    lat = got.pop("lat")
    out: dict[str, Any] = {
        "mode": "scale", "embedder": spec.embedder, "scale_only": spec.scale_only, "note": spec.note,
        "vectors_file": spec.vectors, "ner": spec.ner, "namespaces": len(names),
        "queried_namespace_n": expected[_NS],
        "build_s": built.get("build_s"), "ingest_per_s": built.get("ingest_per_s"),
        "build_peak_rss_mb": built.get("build_peak_rss_mb"), "built_at": built.get("built_at"),
        "ingest_reused": reused, "synth_s": _r(synth_s),
        "disk_mb": _r(disk, 1), "disk_kb_per_memory": _r(disk * 1024 / n, 2),
        **got,
        "p50_ms": lat["p50_ms"], "p99_ms": lat["p99_ms"], "vs_dense": lat["vs_dense"],
        "vs_dense_by_plan": lat["vs_dense_by_plan"],
        "fanout_over_slowest": lat["fanout_over_slowest"], "fanout_cpu_floor": lat["fanout_cpu_floor"],
        "ensemble_cpu_p50_ms": lat["ensemble_cpu_p50_ms"], "arm_runs": lat["arm_runs"],
        "arm_pooled": lat["arm_pooled"], "fanout_by_plan": lat["fanout_by_plan"],
        "ensemble_stages_p50_ms": lat["ensemble_stages_p50_ms"],
        "n_queries": len(queries), "first_query": queries[0].text, "loadavg_1m": _r(load_1m) if load_1m else None,
        "cpus": os.cpu_count(), "cpu_model": cpu_model(),
    }
    progress(f"[n={n:,}] open {out['open_s']}s, first query {out['first_query_ms']} ms, "
             f"ensemble p50 {out['p50_ms']['ensemble']} ms, RSS {out['rss_mb']} MB")
    return out


def run_scale(sizes: Sequence[int], spec: ScaleSpec, *, n_queries: int = 200, seed: int = 7,
              lexical: str | None = None, store_dir: str | None = None,
              progress: Progress = quiet_progress) -> dict[str, Any]:
    """`{"<n>": {...}}` for each size, smallest first. Every input is checked (and a vectors file
    read and checked against the largest size) before the first build."""
    for what, value in (("sizes (--n)", min(sizes) if sizes else list(sizes)), ("n_queries (--queries)", n_queries)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigurationError(f"{what} must be a positive integer, got {value!r}")
    ordered = sorted(set(sizes))
    if ordered[0] < spec.namespaces:
        raise ConfigurationError(f"--namespaces {spec.namespaces} needs at least {spec.namespaces} memories a size, "
                                 f"got --n {ordered[0]}")
    table = None
    if spec.vectors is not None:
        table = load_vectors(spec.vectors, ordered[-1], seed=seed, base=spec.query_embedder())
    if spec.scale_only:
        progress(f"fused-memory bench: {SCALE_ONLY_NOTE}")
    return {str(n): scale_size(n, spec, n_queries=n_queries, seed=seed, lexical=lexical, store_dir=store_dir,
                               vectors=table, progress=progress)
            for n in ordered}
