"""The sparse lexical vector on qdrant-edge: the shard's config, the batch of searches and IDF
probes (`sparse`), and the backfill of memories written before the shard had it. Functions over a
shard, called by `edge.QdrantEdgeBackend` under its lock; they take its filter translation as
`to_filter`.

Whether an existing shard has the sparse vector must be known before it is loaded: qdrant-edge
0.9 refuses to load a shard with a config naming a vector its segments lack ("Incompatible
configs: expected vector storages with keys ..."), and loading one with a config that leaves the
vector out would rewrite the stored config. The shard's own `edge_config.json` says which vectors
it has; it is read, never written, here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from ...errors import BackendError
from ..protocols import SparseAnswer, SparseQuery, SparseVector
from .common import SCROLL_PAGE, Condition, check_sparse, chunks, paginate, point_id
from .sparse import SPARSE_VECTOR, EngineHit, SparseRequest, sparse_answers, sparse_requests

__all__ = ["SPARSE_CONFIG", "shard_has_sparse", "add_sparse", "point_vector", "search", "lacks_sparse",
           "missing", "set_vectors"]

Filter = Callable[[Sequence[Condition]], Any]

#: The shard's sparse vectors when it keeps ours: with the engine's IDF.
SPARSE_CONFIG = {SPARSE_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
_CONFIG_FILE = "edge_config.json"


def shard_has_sparse(shard_path: Path) -> bool:
    """Whether the shard at `shard_path` (existing) has our sparse vector, from its stored config."""
    try:
        config = json.loads((shard_path / _CONFIG_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError) as exc:
        raise BackendError(f"cannot read the shard config {shard_path / _CONFIG_FILE}: {exc}") from exc
    return SPARSE_VECTOR in (config.get("sparse_vectors") or {})


def add_sparse(shard: Any) -> None:
    """Give a loaded shard the sparse vector (its memories then lack it until backfilled)."""
    shard.update(qe.UpdateOperation.create_sparse_vector(SPARSE_VECTOR, modifier=qe.Modifier.Idf))


def _sparse(v: SparseVector) -> Any:
    return qe.SparseVector(list(v.indices), list(v.values))


def point_vector(dense: list[float], sparse: SparseVector | None) -> Any:
    """A point's vectors: the unnamed dense one, with the sparse one beside it when given."""
    return dense if sparse is None else {"": dense, SPARSE_VECTOR: _sparse(sparse)}


def _request(r: SparseRequest, to_filter: Filter) -> Any:
    """IDF over `r.corpus` (the namespace) whatever the filter: see `sparse` for why."""
    return qe.QueryRequest(
        limit=r.limit, query=qe.Query.Nearest(_sparse(r.vector), using=SPARSE_VECTOR), filter=to_filter(r.conds),
        params=qe.SearchParams(idf=qe.IdfParams(corpus=to_filter(r.corpus))),
        with_payload=False if r.probe else qe.PayloadSelector.Include(["memory_id"]),
        with_vector=[SPARSE_VECTOR] if r.probe else False)


def _hit(p: Any) -> EngineHit:
    stored = p.vector.get(SPARSE_VECTOR) if isinstance(p.vector, dict) else None
    vector = SparseVector(tuple(stored.indices), tuple(stored.values)) if stored is not None else None
    mid = (p.payload or {}).get("memory_id")
    return EngineHit(str(mid) if mid is not None else None, float(p.score), vector)


def search(shard: Any, queries: Sequence[SparseQuery], to_filter: Filter) -> list[SparseAnswer]:
    """Every search and its probes in one `EdgeShard.query_batch` call."""
    requests, slots = sparse_requests(queries)
    results: list[list[EngineHit]] = []
    if requests:
        answers = shard.query_batch(qe.QueryBatchRequest([_request(r, to_filter) for r in requests]))
        results = [[_hit(p) for p in points] for points in answers]
    return sparse_answers(queries, slots, results)


def lacks_sparse() -> Any:
    """The condition of a point without the sparse vector (a `must_not` of this)."""
    return qe.HasVectorCondition(SPARSE_VECTOR)


def missing(scroll: Callable[[Callable[[Any], Any]], Any], conditions: list[Any]) -> Iterator[Mapping[str, Any]]:
    """Payloads of the points matching `conditions` without the sparse vector, a page per call of
    `scroll(fn)`, which runs `fn(shard)` under the backend's lock and error translation."""
    flt = qe.Filter(must=conditions, must_not=[lacks_sparse()])

    def fetch(offset: Any) -> tuple[list[Mapping[str, Any]], Any]:
        records, nxt = scroll(lambda shard: shard.scroll(qe.ScrollRequest(
            offset=offset, limit=SCROLL_PAGE, filter=flt, with_payload=True, with_vector=False)))
        return [r.payload or {} for r in records], nxt

    return paginate(fetch)


def set_vectors(shard: Any, namespace: str, vectors: Sequence[tuple[str, SparseVector]]) -> None:
    """Give memories their sparse vector, dense vector and payload untouched, where it is still
    missing (a memory rewritten meanwhile has its new text's); a deleted memory is skipped."""
    by_id = {point_id(namespace, m): check_sparse(v, f"sparse vector of memory {m!r}", BackendError)
             for m, v in vectors}
    still_missing = qe.Filter(must_not=[lacks_sparse()])
    for part in chunks(list(by_id)):
        alive = [str(r.id) for r in shard.retrieve(list(part), False, False)]
        if alive:
            shard.update(qe.UpdateOperation.update_vectors(
                [qe.PointVectors(i, {SPARSE_VECTOR: _sparse(by_id[i])}) for i in alive], still_missing))
