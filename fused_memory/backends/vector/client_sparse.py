"""The sparse lexical vector on qdrant-client (a server, or local mode): the collection's config,
the batch of searches and IDF probes (`sparse`), and the backfill of memories written before the
collection had it. Functions over a client, called by `server.QdrantClientBackend`, which owns
the client, its lock and the error classification; they take its filter translation as `to_filter`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from qdrant_client import QdrantClient, models

from ...errors import BackendError, ConfigurationError
from ..protocols import SparseAnswer, SparseQuery, SparseVector, VectorFilter
from .common import SCROLL_PAGE, Condition, check_sparse, chunks, filter_conditions, paginate, point_id
from .sparse import SPARSE_VECTOR, EngineHit, SparseRequest, sparse_answers, sparse_requests

__all__ = ["SPARSE_CONFIG", "sparse_present", "add_sparse", "point_vector", "search", "missing", "set_vectors"]

Filter = Callable[[Sequence[Condition]], models.Filter]

#: A new collection's sparse vectors: ours, with the engine's IDF.
SPARSE_CONFIG = {SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)}


def sparse_present(collection: str, sparse_vectors: Any) -> bool:
    """Whether a collection's config has our sparse vector, refusing one without the IDF modifier."""
    params = (sparse_vectors or {}).get(SPARSE_VECTOR)
    if params is not None and params.modifier != models.Modifier.IDF:
        raise ConfigurationError(f"collection {collection!r} has a sparse vector {SPARSE_VECTOR!r} without the "
                                 "IDF modifier; fused-memory cannot score BM25 with it")
    return params is not None


def add_sparse(client: QdrantClient, collection: str) -> None:
    """Give an existing collection the sparse vector (server >= 1.18; its memories then lack it)."""
    client.create_vector_name(collection, SPARSE_VECTOR, models.SparseVectorNameConfig(
        sparse=models.SparseVectorConfig(modifier=models.Modifier.IDF)))


def _sparse(v: SparseVector) -> models.SparseVector:
    return models.SparseVector(indices=list(v.indices), values=list(v.values))


def point_vector(dense: list[float], sparse: SparseVector | None) -> Any:
    """A point's vectors: the unnamed dense one, with the sparse one beside it when given."""
    return dense if sparse is None else {"": dense, SPARSE_VECTOR: _sparse(sparse)}


def _request(r: SparseRequest, to_filter: Filter) -> models.QueryRequest:
    """IDF over `r.corpus` (the namespace) whatever the filter: see `sparse` for why."""
    return models.QueryRequest(
        query=_sparse(r.vector), using=SPARSE_VECTOR, filter=to_filter(r.conds), limit=r.limit,
        params=models.SearchParams(idf=models.IdfCorpusParams(corpus=to_filter(r.corpus))),
        with_payload=False if r.probe else ["memory_id"], with_vector=[SPARSE_VECTOR] if r.probe else False)


def _hit(p: models.ScoredPoint) -> EngineHit:
    stored = p.vector.get(SPARSE_VECTOR) if isinstance(p.vector, dict) else None
    vector = SparseVector(tuple(stored.indices), tuple(stored.values)) if isinstance(stored, models.SparseVector) \
        else None
    mid = (p.payload or {}).get("memory_id")
    return EngineHit(str(mid) if mid is not None else None, float(p.score), vector)


def search(client: QdrantClient, collection: str, queries: Sequence[SparseQuery], to_filter: Filter
           ) -> list[SparseAnswer]:
    """Every search and its probes in one `query_batch_points` request."""
    requests, slots = sparse_requests(queries)
    results: list[list[EngineHit]] = []
    if requests:
        answers = client.query_batch_points(collection, requests=[_request(r, to_filter) for r in requests])
        results = [[_hit(p) for p in a.points] for a in answers]
    return sparse_answers(queries, slots, results)


def missing(client: QdrantClient, collection: str, namespace: str, to_filter: Filter,
            guarded: Callable[[Callable[[], Any]], Any]) -> Iterator[Mapping[str, Any]]:
    """Payloads of the namespace's memories without the sparse vector, a page per call of `guarded`
    (the backend's lock and error translation)."""
    flt = to_filter(filter_conditions(VectorFilter(namespace)))
    flt.must_not = [models.HasVectorCondition(has_vector=SPARSE_VECTOR)]

    def fetch(offset: Any) -> tuple[list[Mapping[str, Any]], Any]:
        records, nxt = guarded(lambda: client.scroll(collection, scroll_filter=flt, limit=SCROLL_PAGE, offset=offset,
                                                     with_payload=True, with_vectors=False))
        return [r.payload or {} for r in records], nxt

    return paginate(fetch)


def set_vectors(client: QdrantClient, collection: str, namespace: str,
                vectors: Sequence[tuple[str, SparseVector]]) -> None:
    """Give memories their sparse vector, dense vector and payload untouched. A memory deleted
    meanwhile (by another process) is skipped, not re-created, and one rewritten meanwhile (so
    with its new text's sparse vector) is left alone: the update only applies where the vector is
    still missing."""
    by_id = {point_id(namespace, m): check_sparse(v, f"sparse vector of memory {m!r}", BackendError)
             for m, v in vectors}
    still_missing = models.Filter(must_not=[models.HasVectorCondition(has_vector=SPARSE_VECTOR)])
    for part in chunks(list(by_id)):
        alive: list[Any] = [r.id for r in client.retrieve(collection, list(part), with_payload=False,
                                                          with_vectors=False)]
        if alive:
            client.update_vectors(collection, wait=True, update_filter=still_missing, points=[
                models.PointVectors(id=i, vector={SPARSE_VECTOR: _sparse(by_id[str(i)])}) for i in alive])
