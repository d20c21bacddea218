"""The embedded vector backend: Qdrant's Rust engine in process through `qdrant-edge-py` 0.9.

Layout under `path`: `shard/` (the EdgeShard: WAL + segments) and `meta.json` next to it.

Index-build policy (docs/decisions/0014-embedded-vector-index.md)
------------------
* qdrant-edge never builds HNSW by itself: writes land in an appendable segment that is searched
  by brute force until `EdgeShard.optimize()` runs. There is no background optimizer.
* Every EdgeShard call holds the GIL for its whole duration, `optimize()` included, and no query is
  answered during a build. A build cannot be hidden in a background thread: whenever it runs, the
  whole process waits, queries included.
* Brute force is exact and cheap at agent scale, where HNSW buys nothing. Random vectors
  (benchmarks/bench_vector_backends.py) are HNSW's worst case, so that benchmark is pessimistic.
* With default optimizer settings each `optimize()` merges everything into one segment and redoes
  old work.
* `prevent_unoptimized=True` hides points written past the indexing threshold until the next
  optimize. That breaks read-after-write, so it stays off.

The policy: the write path is a plain append. After an upsert, when the unindexed points reach
`index_after` (default 20,000), that same writer call runs `optimize()`. Queries never do.
`indexing_threshold` is the same size, so the optimizer turns the appendable segment into one HNSW
segment of about `index_after` points. `max_segment_size` of the same size stops it merging
finished segments. `full_scan_threshold` (a quarter of it) keeps small filtered subsets
(under ~5k points in a segment) exact through the payload index. Each pause is one chunk build;
several segments are slower to search than one big segment, but no pause grows with the store. A
store under 20k points never builds anything and is always exact. `auto_optimize=False` plus an
explicit `optimize()` lets an application choose its own quiet moment.

Open time is mostly the payload indexes, not the vectors or HNSW. At 1M memories (51 segments, 12
indexed fields) `EdgeShard.load` took 3.8 s on a quiet 2-core machine; a profile put ~80% of it in
opening the payload indexes: ~40% in the null-value index the engine keeps for every indexed field
(two bitmaps of at least 1 MiB per field per segment: ~1.2 GB read and scanned; the engine drops
segment files from the page cache with posix_fadvise, so each open reads them from disk again), ~30%
building the in-RAM keyword and float indexes, ~10% reading the vectors into RAM. The same shard
with its payload indexes deleted loaded in 1.6-2.1 s (on a busy machine), but then a namespace
filter reads every payload. Moving the payload indexes to disk (`Memory.Cold`) saved ~20% of the
load for a 70 s rebuild of a 1M shard; merging segments to 200k points ran one `optimize()` for over
5 minutes (2 shared cores) without finishing, and the same shard merged into one segment
(`optimize()` after every point was rewritten: 692 s) still loaded in 4.2 s: the load follows the
points, not the segments. Neither is done: the first is small against the null indexes, the second
breaks the pause bound above and does not shorten the load.

Thread safety: the engine survived concurrent upsert/query/scroll/count from four threads, and
since it holds the GIL its calls are serialized anyway, so one lock costs no parallelism. The
lock exists so that `close()` cannot pull the shard from under an in-flight query (the engine
then raises "Shard is not initialized"), and so only one writer decides to optimize. Large
upserts are cut into chunks of `WRITE_CHUNK` (512) points so a large write does not starve
readers; a batch is therefore not atomic to concurrent readers. `query_batch` still sends one
engine call per batch, as the protocol asks, though it measured no faster than separate calls.

Windowed filters: "a time its text states falls in the window" is a nested condition (one stated
object's start and end together), and the engine checks a nested condition by reading the point's
payload; the payload indexes are not used. Inside a namespace of 50k memories that cost 50-300 ms a
search at 1M memories, against 2-5 ms for the event and said times (range indexes). So vector
searches and ordered scans send a coarse filter over the flattened `stated[].start` and
`stated[].end` range indexes, a superset, and check the answers in Python against the exact
condition (`common.overlaps_hold`, `_passing`). The exact matches are a subset of the coarse ones,
in the same order, so the first k coarse answers that pass are the exact top k (on segments
searched by brute force, as every namespace under ~5k points a segment is; where HNSW answers,
both filters are approximate and may differ as two HNSW searches can). When fewer than k pass (a
memory whose stated times straddle the window, one starting before its end and another ending
after its start), the coarse search is asked again four times as deep, and only if that still
falls short, with the exact nested filter: re-asking the exact filter at once doubled a windowed
query's cost whenever one straddling memory came back. Counts, facets and scrolls keep the exact
filter.

Persistence: updates go through the shard's WAL, so they survive a crash without `flush()` (checked
with os._exit after an upsert). `EdgeShard.load` needs no config, but we pass ours: the engine
then checks the vector size (a mismatch becomes `EmbeddingMismatch`) and stores the current
policy. A second open of the same path fails on the WAL lock ("Can't init WAL: WouldBlock"),
reported as a `BackendError` naming the store and what to do (`already_open`).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import qdrant_edge as qe

from ...errors import BackendError, ConfigurationError, EmbeddingMismatch, FusedMemoryError
from ..protocols import ScoredPayload, SparseAnswer, SparseQuery, SparseVector, VectorFilter, VectorQuery, VectorRecord
from . import edge_sparse
from .common import (
    PAYLOAD_INDEXES,
    SCROLL_PAGE,
    AnyOf,
    Between,
    Condition,
    IndexSpec,
    MatchAnyOf,
    MatchOne,
    Overlaps,
    alive,
    can_match,
    check_query,
    chunks,
    clamp_score,
    dense_of,
    encode_meta,
    engine_errors,
    filter_conditions,
    has_overlaps,
    in_requested_order,
    overlaps_hold,
    paginate,
    point_id,
    prepare_points,
    split_conditions,
)

__all__ = ["QdrantEdgeBackend", "IndexStatus", "DEFAULT_INDEX_AFTER"]

#: Unindexed points that trigger an index build, and the size of each HNSW segment.
DEFAULT_INDEX_AFTER = 20_000
#: HNSW build parameters: Qdrant's defaults, kept for recall on real embeddings.
HNSW_M = 16
HNSW_EF_CONSTRUCT = 100


@dataclass(frozen=True)
class IndexStatus:
    """How much of the shard HNSW covers: `unindexed` points are searched by brute force."""

    points: int
    indexed: int
    segments: int

    @property
    def unindexed(self) -> int:
        return max(0, self.points - self.indexed)


def _classify(exc: Exception) -> FusedMemoryError:
    """qdrant-edge raises bare `Exception`s; the message is all there is to go on."""
    msg = str(exc)
    if "vector size" in msg or "Incompatible config for vector" in msg:
        return EmbeddingMismatch(msg)
    if "WouldBlock" in msg:
        return BackendError(f"the shard is already open (in this or another process): {msg}")
    return BackendError(msg)


def already_open(store: Path) -> BackendError:
    """A second owner of an embedded store, in the user's words: which path, and what to do (the
    engine says "Can't init WAL: Kind(WouldBlock)" about a shard inside it)."""
    return BackendError(f"the store at {store} is already open (by another process, or another MemoryStore in "
                        "this one): an embedded store has one owner at a time. close it there (store.close(), or "
                        "end that process) and retry, or let several processes share one Qdrant server "
                        "(MemoryStore.connect)")


def _kb(points: int, dim: int) -> int:
    """Qdrant sizes thresholds in KB of float32 vectors; we think in points."""
    return max(1, points * dim * 4 // 1024)


def _edge_index(spec: IndexSpec) -> Any:
    if spec.kind == "keyword":
        return qe.KeywordIndexParams(is_tenant=True) if spec.tenant else qe.PayloadSchemaType.Keyword
    return qe.PayloadSchemaType.Float


def _edge_condition(c: Condition, exact: bool = True) -> Any:
    """`exact=False` turns an `Overlaps` into its coarse form (see `_edge_filter`)."""
    if isinstance(c, MatchOne):
        return qe.FieldCondition(c.key, match=qe.MatchValue(c.value))
    if isinstance(c, MatchAnyOf):
        return qe.FieldCondition(c.key, match=qe.MatchAny(list(c.values)))
    if isinstance(c, Between):
        return qe.FieldCondition(c.key, range=qe.RangeFloat(gte=c.gte, lte=c.lte))
    if isinstance(c, Overlaps) and not exact:
        return qe.Filter(must=[qe.FieldCondition(f"{c.key}[].start", range=qe.RangeFloat(lte=c.lte)),
                               qe.FieldCondition(f"{c.key}[].end", range=qe.RangeFloat(gte=c.gte))])
    if isinstance(c, Overlaps):
        return qe.NestedCondition(c.key, qe.Filter(must=[qe.FieldCondition("start", range=qe.RangeFloat(lte=c.lte)),
                                                         qe.FieldCondition("end", range=qe.RangeFloat(gte=c.gte))]))
    if isinstance(c, AnyOf):
        return qe.Filter(should=[_edge_condition(x, exact) for x in c.conds])
    raise TypeError(f"unknown condition {c!r}")


def _edge_filter(conds: Sequence[Condition], exact: bool = True) -> Any:
    """The engine's filter. `exact=False` is the coarse filter of a search that checks its answers
    (`_checked`): an `Overlaps` becomes "some stated start <= window end and some stated end >=
    window start" over the flattened `stated[].start` / `stated[].end` indexes, a superset of the
    nested condition (the start of one stated time and the end of another may pass together)."""
    must, must_not = split_conditions(conds)
    return qe.Filter(must=[_edge_condition(c, exact) for c in must],
                     must_not=[_edge_condition(c) for c in must_not] or None)


_T = TypeVar("_T")

#: How much deeper a coarse search is asked again when too few of its answers pass the exact check,
#: before the exact (nested) filter is asked instead.
_DEEPER = 4


def _passing(conds: Sequence[Condition], answer: Sequence[_T], limit: int, asked: int,
             payload: Callable[[_T], Mapping[str, Any] | None]) -> list[_T] | None:
    """The first `limit` answers of a coarse search asked `asked` deep (in the engine's order) that
    pass the exact check, or None when fewer pass and the engine held more. They are the exact
    search's answers: the exact matches are a subset of the coarse ones in the same order, so the
    first `limit` of them in the coarse order are the exact top `limit` (and when the coarse search
    came back short, it holds every match)."""
    kept = [a for a in answer if overlaps_hold(conds, payload(a) or {})]
    if len(kept) >= limit or len(answer) < asked:
        return kept[:limit]
    return None


class QdrantEdgeBackend:
    """`VectorBackend` on an in-process qdrant-edge shard. The constructor does no I/O. `sparse=True`
    gives the shard the lexical arm's sparse vector (`SparseSearch`), added on open to a shard
    without it; a shard that has it keeps it complete whatever `sparse` says."""

    name = "qdrant-edge"

    def __init__(self, path: str, *, index_after: int = DEFAULT_INDEX_AFTER, auto_optimize: bool = True,
                 sparse: bool = False) -> None:
        if not isinstance(index_after, int) or index_after <= 0:
            raise ConfigurationError(f"index_after must be a positive integer, got {index_after!r}")
        self.path = Path(path)
        self.index_after = index_after
        self.auto_optimize = auto_optimize
        self._shard: Any = None
        self._dim: int | None = None
        self._lock = threading.RLock()
        self.sparse, self._sparse = sparse, False  # asked for; the open shard has it
        self.sparse_added = False  # this open added it: the memories written before lack it

    # ------------------------------------------------------------------ lifecycle
    @property
    def shard_path(self) -> Path:
        return self.path / "shard"

    @property
    def meta_path(self) -> Path:
        return self.path / "meta.json"

    def _config(self, dim: int, sparse: bool) -> Any:
        """Passed on create *and* load: on load the engine checks it against the segments (a wrong
        dim fails there) and rewrites the stored config, so policy changes reach old shards."""
        kb = _kb(self.index_after, dim)
        return qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine),
            sparse_vectors=edge_sparse.SPARSE_CONFIG if sparse else None,
            hnsw_config=qe.HnswIndexConfig(m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT,
                                           full_scan_threshold=max(1, kb // 4)),
            optimizers=qe.EdgeOptimizersConfig(indexing_threshold=kb, max_segment_size=kb,
                                               prevent_unoptimized=False),
        )

    @contextlib.contextmanager
    def _refused_if_open(self) -> Iterator[None]:
        """The engine's "already open" (a WAL lock held elsewhere) as `already_open`, naming the
        store (the directory holding `vectors/`), not the shard inside it."""
        try:
            yield
        except BackendError as exc:
            if "WouldBlock" not in str(exc):
                raise
            raise already_open(self.path.parent if self.path.name == "vectors" else self.path) from exc.__cause__

    def open(self, dim: int) -> None:
        """Create the shard, or load it (checking its dimension), and make sure the indexes exist."""
        if not isinstance(dim, int) or dim <= 0:
            raise ConfigurationError(f"vector dimension must be a positive integer, got {dim!r}")
        with self._lock:
            if self._shard is not None:
                if dim != self._dim:
                    raise EmbeddingMismatch(f"backend is open with {self._dim}-d vectors, not {dim}-d")
                return
            with self._refused_if_open(), engine_errors(f"cannot open qdrant-edge shard at {self.shard_path}",
                                                        _classify):
                self.path.mkdir(parents=True, exist_ok=True)
                existing = self.shard_path.is_dir() and any(self.shard_path.iterdir())
                present = existing and edge_sparse.shard_has_sparse(self.shard_path)
                sparse, added = self.sparse or present, self.sparse and existing and not present
                shard = (qe.EdgeShard.load(str(self.shard_path), self._config(dim, present)) if existing
                         else qe.EdgeShard.create(str(self.shard_path), self._config(dim, sparse)))
                try:
                    if added:
                        edge_sparse.add_sparse(shard)
                    have = set(shard.info().payload_schema)
                    for spec in PAYLOAD_INDEXES:
                        if spec.field not in have:
                            shard.update(qe.UpdateOperation.create_field_index(spec.field, _edge_index(spec)))
                except BaseException:
                    shard.close()
                    raise
            self._shard, self._dim, self._sparse, self.sparse_added = shard, dim, sparse, added

    @property
    def sparse_enabled(self) -> bool:
        """Whether the open shard keeps the sparse lexical vector (every write then carries it)."""
        return self._sparse

    def close(self) -> None:
        """Flush and release the shard (and its WAL lock). Idempotent."""
        with self._lock:
            shard, self._shard = self._shard, None
            if shard is not None:
                with engine_errors("closing qdrant-edge shard", _classify):
                    try:
                        shard.flush()
                    finally:
                        shard.close()

    def flush(self) -> None:
        with self._lock, engine_errors("flush", _classify):
            self._require().flush()

    def _require(self) -> Any:
        if self._shard is None:
            raise BackendError(f"qdrant-edge backend at {self.path} is not open (call open(dim) first)")
        return self._shard

    # ------------------------------------------------------------------ writes
    def upsert(self, records: Sequence[VectorRecord]) -> None:
        if not records:
            return
        with self._lock:
            shard = self._require()
            points = prepare_points(records, self._dim or 0)
            with engine_errors("upsert", _classify):
                for chunk in chunks(points):
                    shard.update(qe.UpdateOperation.upsert_points([qe.Point(
                        p.id, edge_sparse.point_vector(p.vector, p.sparse if self._sparse else None), p.payload)
                        for p in chunk]))
            if self.auto_optimize and self.index_status().unindexed >= self.index_after:
                self.optimize()

    def delete(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Point ids derive from (namespace, id), so another namespace's points cannot be hit."""
        if not memory_ids:
            return
        ids: list[Any] = [point_id(namespace, m) for m in dict.fromkeys(memory_ids)]
        with self._lock, engine_errors("delete", _classify):
            self._require().update(qe.UpdateOperation.delete_points(ids))

    def set_payload(self, namespace: str, memory_ids: Sequence[str], payload: Mapping[str, Any]) -> None:
        """Merge `payload`'s keys into these memories' payloads (`PayloadWriter`); vectors untouched."""
        ids = [point_id(namespace, m) for m in dict.fromkeys(memory_ids)]
        with self._lock, engine_errors("set_payload", _classify):
            shard = self._require()
            for part in chunks(ids):
                shard.update(qe.UpdateOperation.set_payload(list(part), dict(payload)))

    def optimize(self) -> bool:
        """Build HNSW for the unindexed segment now. Blocks the whole process (the engine keeps
        the GIL) for roughly the build time of `index_after` points. True if anything was built."""
        with self._lock, engine_errors("optimize", _classify):
            return bool(self._require().optimize())

    def index_status(self) -> IndexStatus:
        with self._lock, engine_errors("info", _classify):
            info = self._require().info()
            return IndexStatus(info.points_count, info.indexed_vectors_count, info.segments_count)

    # ------------------------------------------------------------------ reads
    def get(self, namespace: str, memory_ids: Sequence[str]) -> list[Mapping[str, Any]]:
        if not memory_ids:
            return []
        ids = [point_id(namespace, m) for m in dict.fromkeys(memory_ids)]
        with self._lock, engine_errors("get", _classify):
            records = self._require().retrieve(ids, True, False)
        payloads = [r.payload for r in records if r.payload and r.payload.get("namespace") == namespace]
        return in_requested_order(payloads, memory_ids)

    def vectors(self, namespace: str, memory_ids: Sequence[str]) -> dict[str, list[float]]:
        """`VectorReader`: the stored vectors by memory id, without payloads (points are keyed by
        namespace and id, so another namespace's memory cannot be read by its id)."""
        by_point = {point_id(namespace, m): m for m in dict.fromkeys(memory_ids)}
        if not by_point:
            return {}
        with self._lock, engine_errors("get", _classify):
            records = self._require().retrieve(list(by_point), False, True)
        dense = ((by_point.get(str(r.id)), dense_of(r.vector)) for r in records)
        return {mid: vector for mid, vector in dense if mid is not None and vector is not None}

    def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPayload]]:
        """All searches in one `EdgeShard.query_batch` call; impossible filters are answered [].
        A search for a stated time in a window goes out with the coarse filter (`_edge_filter`),
        keeps the answers that pass the exact check, and is asked again deeper, then exactly, only
        when too few pass (module docstring, "Windowed filters")."""
        results: list[list[ScoredPayload]] = [[] for _ in queries]
        asked: list[tuple[int, tuple[Condition, ...], list[float], int]] = []
        with self._lock:
            self._require()
            for i, q in enumerate(queries):
                vector = check_query(q, self._dim or 0)
                conds = filter_conditions(q.filter)
                if can_match(conds):
                    asked.append((i, conds, vector, q.limit))
            if not asked:
                return results

            def request(conds: tuple[Condition, ...], vector: list[float], limit: int, exact: bool) -> Any:
                return qe.QueryRequest(limit=limit, query=qe.Query.Nearest(vector),
                                       filter=_edge_filter(conds, exact), with_payload=True)

            with engine_errors("query", _classify):
                answers = self._shard.query_batch(qe.QueryBatchRequest([request(c, v, n, False)
                                                                        for _, c, v, n in asked]))
                # a coarse answer with a memory the exact condition refuses: its passing answers
                # when enough pass, else asked `_DEEPER` times as deep, else with the exact filter
                pending = [k for k, (_, conds, _, _) in enumerate(asked) if has_overlaps(conds)]
                deep = {k: asked[k][3] for k in pending}
                for last in (False, True):
                    again = []
                    for k in pending:
                        kept = _passing(asked[k][1], answers[k], asked[k][3], deep[k], lambda p: p.payload)
                        if kept is None:
                            again.append(k)
                        else:
                            answers[k] = kept
                    if not again:
                        break
                    for k in again:
                        deep[k] = asked[k][3] * _DEEPER
                    more = self._shard.query_batch(qe.QueryBatchRequest(
                        [request(asked[k][1], asked[k][2], asked[k][3] if last else deep[k], last) for k in again]))
                    for k, points in zip(again, more, strict=True):
                        answers[k] = points
                    pending = again
        for (i, _, _, _), points in zip(asked, answers, strict=True):
            results[i] = [ScoredPayload(p.payload or {}, clamp_score(p.score)) for p in points]
        return results

    # ------------------------------------------------------------------ the lexical arm (SparseSearch)
    def _require_sparse(self) -> Any:
        if not self._sparse:
            raise BackendError(f"the shard at {self.shard_path} has no sparse lexical vector (open with sparse=True)")
        return self._require()

    def sparse_search(self, queries: Sequence[SparseQuery]) -> list[SparseAnswer]:
        """Lexical searches and their IDF probes (`sparse`) in one `EdgeShard.query_batch` call."""
        with self._lock, engine_errors("sparse query", _classify):
            return edge_sparse.search(self._require_sparse(), queries, _edge_filter)

    def missing_sparse(self, namespace: str) -> Iterator[Mapping[str, Any]]:
        """Payloads of this namespace's memories that have no sparse vector (written before it)."""
        conds = [_edge_condition(c) for c in filter_conditions(VectorFilter(namespace))]
        return edge_sparse.missing(lambda scroll: self._under_lock("scroll", lambda: scroll(self._require_sparse())),
                                   conds)

    def _under_lock(self, what: str, call: Any) -> Any:
        with self._lock, engine_errors(what, _classify):
            return call()

    def set_sparse(self, namespace: str, vectors: Sequence[tuple[str, SparseVector]]) -> None:
        """Give memories their sparse vector; dense vector and payload untouched."""
        with self._lock, engine_errors("update_vectors", _classify):
            edge_sparse.set_vectors(self._require_sparse(), namespace, vectors)

    def facet(self, namespace: str, key: str) -> dict[str, int]:
        """Memories of the namespace per value of keyword field `key` (`FacetCounter`), exact."""
        flt = _edge_filter(filter_conditions(VectorFilter(namespace)))
        with self._lock, engine_errors("facet", _classify):
            hits = self._require().facet(qe.FacetRequest(key, limit=64, exact=True, filter=flt)).hits
        return {str(h.value): int(h.count) for h in hits if h.count > 0}

    def scan_ordered(self, flt: VectorFilter, key: str, limit: int,
                     descending: bool = True) -> list[Mapping[str, Any]]:
        """`OrderedScan`: one ordered scroll over the payload index of `key` (no vector search)."""
        conds = filter_conditions(flt)
        if not can_match(conds):
            return []
        order = qe.OrderBy(key, direction=qe.Direction.Desc if descending else qe.Direction.Asc)

        def scan(exact: bool, deep: int) -> list[Mapping[str, Any]]:
            records, _ = self._require().scroll(qe.ScrollRequest(
                limit=deep, filter=_edge_filter(conds, exact), with_payload=True, with_vector=False, order_by=order))
            return [r.payload or {} for r in records]

        with self._lock, engine_errors("scan", _classify):
            if not has_overlaps(conds):
                return scan(True, limit)
            for deep in (limit, limit * _DEEPER):  # as `query_batch`: the coarse scan, deeper, then exact
                kept = _passing(conds, scan(False, deep), limit, deep, lambda p: p)
                if kept is not None:
                    return kept
            return scan(True, limit)

    def scroll(self, namespace: str | None = None) -> Iterator[Mapping[str, Any]]:
        """All payloads, one page per engine call (the lock is not held between pages)."""
        flt = _edge_filter(filter_conditions(VectorFilter(namespace))) if namespace is not None else None
        return self._pages(flt)

    def scroll_where(self, flt: VectorFilter) -> Iterator[Mapping[str, Any]]:
        """The payloads `flt` matches, filtered by the engine (`PayloadLister`)."""
        conds = filter_conditions(flt)
        return self._pages(_edge_filter(conds)) if can_match(conds) else iter(())

    def _pages(self, flt: Any) -> Iterator[Mapping[str, Any]]:
        def fetch(offset: Any) -> tuple[list[Mapping[str, Any]], Any]:
            with self._lock, engine_errors("scroll", _classify):
                records, nxt = self._require().scroll(qe.ScrollRequest(
                    offset=offset, limit=SCROLL_PAGE, filter=flt, with_payload=True, with_vector=False))
            return [r.payload or {} for r in records], nxt

        return paginate(fetch)

    def count(self, namespace: str) -> int:
        flt = _edge_filter(filter_conditions(VectorFilter(namespace)))
        with self._lock, engine_errors("count", _classify):
            return int(self._require().count(qe.CountRequest(exact=True, filter=flt)))

    def namespaces(self) -> list[str]:
        """Distinct namespaces from the keyword index (facet), sorted."""
        with self._lock, engine_errors("namespaces", _classify):
            shard = self._require()
            limit = max(1, shard.info().points_count)
            hits = shard.facet(qe.FacetRequest("namespace", limit=limit, exact=True)).hits
        return sorted(str(h.value) for h in hits if h.count > 0)

    def live_namespaces(self, alive_at: float) -> list[str]:
        """`LiveNamespaces`: the facet of the memories not expired at `alive_at`."""
        flt = qe.Filter(must_not=[_edge_condition(alive(alive_at).inner)])
        with self._lock, engine_errors("namespaces", _classify):
            shard = self._require()
            limit = max(1, shard.info().points_count)
            hits = shard.facet(qe.FacetRequest("namespace", limit=limit, exact=True, filter=flt)).hits
        return sorted(str(h.value) for h in hits if h.count > 0)

    # ------------------------------------------------------------------ meta
    def read_meta(self) -> dict[str, Any] | None:
        """Works before `open`: the store may need the meta to learn what it is opening."""
        try:
            text = self.meta_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise BackendError(f"cannot read {self.meta_path}: {exc}") from exc
        try:
            meta = json.loads(text)
        except ValueError as exc:
            raise BackendError(f"{self.meta_path} is not valid JSON: {exc}") from exc
        if not isinstance(meta, dict):
            raise BackendError(f"{self.meta_path} does not hold a JSON object")
        return meta

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        """Atomic: write a temp file in the same directory, fsync, then os.replace over meta.json,
        so a crash leaves either the old or the new meta, never half of one."""
        text = encode_meta(meta)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path, prefix=".meta.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.meta_path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise BackendError(f"cannot write {self.meta_path}: {exc}") from exc

    def __repr__(self) -> str:
        state = f"open dim={self._dim}" if self._shard is not None else "closed"
        return f"QdrantEdgeBackend({str(self.path)!r}, {state})"
