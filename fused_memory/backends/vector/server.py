"""The scale-out vector backend: a Qdrant server or cluster through `qdrant-client`.

`location=":memory:"` or a folder path runs qdrant-client's local mode instead. That mode is
pure-Python brute force (slow at scale, payload indexes ignored) and exists so
the same code and the same contract suite run in CI without a server; do not use it for real data.

The store's meta lives as one point in a tiny side collection `<collection>__meta` (JSON text in
its payload), so a server deployment needs nothing but Qdrant.

Threading: against a server, calls go straight to qdrant-client's HTTP client, which is safe to
share and lets the arms' requests overlap. Local mode keeps plain Python dicts (and, with a path,
a SQLite file opened with check_same_thread disabled), so there every call takes one lock.
"""

from __future__ import annotations

import json
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from ...errors import BackendError, BackendUnavailable, ConfigurationError, EmbeddingMismatch, FusedMemoryError
from ..protocols import ScoredPayload, SparseAnswer, SparseQuery, SparseVector, VectorFilter, VectorQuery, VectorRecord
from . import client_sparse
from .common import (
    META_POINT_ID,
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
    in_requested_order,
    paginate,
    point_id,
    prepare_points,
    split_conditions,
)
from .sparse import check_server_version

__all__ = ["QdrantClientBackend", "DEFAULT_TIMEOUT_S", "create_points_collection"]

#: Seconds before a request to the server gives up: an unreachable server must fail the arm fast
#: (the ensemble drops a late arm anyway), not hang the caller.
DEFAULT_TIMEOUT_S = 5
_UNAVAILABLE_STATUS = frozenset({408, 429, 502, 503, 504})
#: Distinct values a `facet` reads: memory types are a handful (`MemoryType`).
_FACET_LIMIT = 64


def create_points_collection(client: QdrantClient, name: str) -> None:
    """Create `name` for points that are payloads only (a one-dimensional vector the engine
    requires), unless it exists; another worker creating it at the same time is not an error."""
    if client.collection_exists(name):
        return
    try:
        client.create_collection(name, vectors_config=models.VectorParams(size=1, distance=models.Distance.DOT))
    except Exception:  # another worker created it first
        if not client.collection_exists(name):
            raise


def _classify(exc: Exception) -> FusedMemoryError:
    """Transport failures and overload answers are `BackendUnavailable` (worth a retry); every
    other engine complaint is a plain `BackendError`."""
    if isinstance(exc, ResponseHandlingException):
        return BackendUnavailable(f"Qdrant server unreachable: {exc.source!r}")
    if isinstance(exc, UnexpectedResponse):
        if exc.status_code in _UNAVAILABLE_STATUS:
            return BackendUnavailable(f"Qdrant server unavailable: {exc}")
        return BackendError(str(exc))
    try:
        import httpx
        if isinstance(exc, httpx.TransportError):
            return BackendUnavailable(f"Qdrant server unreachable: {exc!r}")
    except ImportError:  # pragma: no cover - httpx is a qdrant-client dependency
        pass
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return BackendUnavailable(f"Qdrant server unreachable: {exc!r}")
    return BackendError(f"{type(exc).__name__}: {exc}")


def _client_index(spec: IndexSpec) -> Any:
    if spec.kind == "keyword":
        if spec.tenant:
            return models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
        return models.PayloadSchemaType.KEYWORD
    return models.PayloadSchemaType.FLOAT


def _client_condition(c: Condition) -> models.FieldCondition | models.NestedCondition | models.Filter:
    if isinstance(c, MatchOne):
        return models.FieldCondition(key=c.key, match=models.MatchValue(value=c.value))
    if isinstance(c, MatchAnyOf):
        return models.FieldCondition(key=c.key, match=models.MatchAny(any=list(c.values)))
    if isinstance(c, Between):
        return models.FieldCondition(key=c.key, range=models.Range(gte=c.gte, lte=c.lte))
    if isinstance(c, Overlaps):
        return models.NestedCondition(nested=models.Nested(key=c.key, filter=models.Filter(must=[
            models.FieldCondition(key="start", range=models.Range(lte=c.lte)),
            models.FieldCondition(key="end", range=models.Range(gte=c.gte))])))
    if isinstance(c, AnyOf):
        return models.Filter(should=[_client_condition(x) for x in c.conds])
    raise TypeError(f"unknown condition {c!r}")


def _client_filter(conds: Sequence[Condition]) -> models.Filter:
    must, must_not = split_conditions(conds)
    return models.Filter(must=[_client_condition(c) for c in must],
                         must_not=[_client_condition(c) for c in must_not] or None)


class QdrantClientBackend:
    """`VectorBackend` on qdrant-client. Give `url` (server/cluster), `location` (local mode:
    ":memory:" or a folder), or `client`, a `QdrantClient` you already configured (TLS, gRPC, auth,
    a pool shared with the rest of your app): it is used as it is and never closed here, since the
    store did not open it. The constructor does no I/O; a client of our own is made on first use.

    `sparse=True` gives the collection the named sparse vector of the lexical arm (`SparseSearch`):
    with a new collection, or added to an existing one on open (a server older than 1.19, which
    would count IDF over every tenant, is refused). A collection that has it keeps it complete
    whatever `sparse` says: every write then carries it."""

    name = "qdrant-client"

    def __init__(self, url: str | None = None, api_key: str | None = None, location: str | None = None,
                 collection: str = "fused_memory", *, timeout: int = DEFAULT_TIMEOUT_S,
                 client: QdrantClient | None = None, sparse: bool = False) -> None:
        if sum(x is not None for x in (url, location, client)) != 1:
            raise ConfigurationError("QdrantClientBackend needs exactly one of url (server), location "
                                     "(':memory:' or a folder for local mode) or client (a QdrantClient)")
        if client is not None and not isinstance(client, QdrantClient):
            raise ConfigurationError(f"client must be a qdrant_client.QdrantClient, got {type(client).__name__}")
        if not collection:
            raise ConfigurationError("collection name must not be empty")
        self.url, self.api_key, self.location = url, api_key, location
        self.collection = collection
        self.meta_collection = f"{collection}__meta"
        self.timeout = timeout
        self._given = client  # the caller's: used, never closed
        self._client: QdrantClient | None = client
        self._dim: int | None = None
        self._lock = threading.RLock()
        self.sparse = sparse
        self._sparse = False  # the open collection has the sparse vector
        self.sparse_added = False  # this open added it: the memories written before lack it

    @property
    def local(self) -> bool:
        """qdrant-client's local mode (":memory:" or a folder), whose calls must not overlap."""
        if self._given is not None:
            options = self._given.init_options
            return options.get("location") is not None or options.get("path") is not None
        return self.location is not None

    def _guard(self) -> AbstractContextManager[Any]:
        """Serialize calls in local mode only; a server client is safe to share between threads."""
        return self._lock if self.local else nullcontext()

    def _connect(self) -> QdrantClient:
        with self._lock:
            if self._client is None and self._given is not None:  # reopened after close()
                self._client = self._given
            if self._client is None:
                with engine_errors("cannot create Qdrant client", _classify):
                    if self.url is not None:
                        # check_compatibility would do a request here; open() does the first one
                        self._client = QdrantClient(url=self.url, api_key=self.api_key, timeout=self.timeout,
                                                    check_compatibility=False)
                    elif self.location == ":memory:":
                        self._client = QdrantClient(location=":memory:")
                    else:
                        self._client = QdrantClient(path=self.location, force_disable_check_same_thread=True)
            return self._client

    def engine(self) -> QdrantClient:
        """The client, for the engine graph beside this collection (`backends.graph.engine`): one
        client, since a local-mode folder admits only one. Works before `open`."""
        return self._connect()

    @contextmanager
    def engine_call(self, what: str) -> Iterator[None]:
        """One call of the engine graph: serialized in local mode, failures as `BackendError`s."""
        with self._guard(), engine_errors(what, _classify):
            yield

    def _require(self) -> QdrantClient:
        if self._dim is None:
            raise BackendError(f"qdrant-client backend for {self.collection!r} is not open (call open(dim))")
        return self._connect()

    # ------------------------------------------------------------------ lifecycle
    def open(self, dim: int) -> None:
        """Create the collection (cosine, `dim`) and its payload indexes, or check an existing one."""
        if not isinstance(dim, int) or dim <= 0:
            raise ConfigurationError(f"vector dimension must be a positive integer, got {dim!r}")
        client = self._connect()
        with self._lock:
            if self._dim is not None:
                if dim != self._dim:
                    raise EmbeddingMismatch(f"backend is open with {self._dim}-d vectors, not {dim}-d")
                return
            with engine_errors(f"cannot open Qdrant collection {self.collection!r}", _classify):
                if self.sparse:
                    check_server_version(client.info().version, self)
                sparse, added = self.sparse, False
                if client.collection_exists(self.collection):
                    info = client.get_collection(self.collection)
                    self._check_vectors(info.config.params.vectors, dim)
                    have = set(info.payload_schema or {})
                    present = client_sparse.sparse_present(self.collection, info.config.params.sparse_vectors)
                    if sparse and not present:
                        client_sparse.add_sparse(client, self.collection)
                        added = True
                    sparse = sparse or present
                else:
                    client.create_collection(self.collection, vectors_config=models.VectorParams(
                        size=dim, distance=models.Distance.COSINE),
                        sparse_vectors_config=client_sparse.SPARSE_CONFIG if sparse else None)
                    have = set()
                with warnings.catch_warnings():  # local mode warns that indexes have no effect there
                    warnings.simplefilter("ignore", UserWarning)
                    for spec in PAYLOAD_INDEXES:
                        if spec.field not in have:
                            client.create_payload_index(self.collection, spec.field,
                                                        field_schema=_client_index(spec), wait=True)
            self._dim, self._sparse, self.sparse_added = dim, sparse, added

    @property
    def sparse_enabled(self) -> bool:
        """Whether the open collection keeps the sparse lexical vector (every write then carries it)."""
        return self._sparse

    def _check_vectors(self, vectors: Any, dim: int) -> None:
        if not isinstance(vectors, models.VectorParams):
            raise ConfigurationError(f"collection {self.collection!r} uses named vectors; "
                                     "fused-memory needs a single unnamed cosine vector")
        if vectors.size != dim:
            raise EmbeddingMismatch(f"collection {self.collection!r} holds {vectors.size}-d vectors; "
                                    f"the embedder in use makes {dim}-d vectors")
        if vectors.distance != models.Distance.COSINE:
            raise ConfigurationError(f"collection {self.collection!r} uses {vectors.distance} distance, "
                                     "not cosine")

    def close(self) -> None:
        """Release the client (and, in local mode with a path, its folder lock); a client the caller
        passed in is left open for them. Idempotent."""
        with self._lock:
            client, self._client, self._dim = self._client, None, None
            if client is not None and client is not self._given:
                with engine_errors("closing Qdrant client", _classify):
                    client.close()

    def flush(self) -> None:
        """Nothing to do: the server persists on its own and local mode writes through on every call."""
        self._require()

    # ------------------------------------------------------------------ writes
    def upsert(self, records: Sequence[VectorRecord]) -> None:
        if not records:
            return
        client = self._require()
        points = prepare_points(records, self._dim or 0)
        with self._guard(), engine_errors("upsert", _classify):
            for chunk in chunks(points):
                client.upsert(self.collection, wait=True, points=[models.PointStruct(
                    id=p.id, vector=client_sparse.point_vector(p.vector, p.sparse if self._sparse else None),
                    payload=p.payload) for p in chunk])

    def delete(self, namespace: str, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        client = self._require()
        ids: list[Any] = [point_id(namespace, m) for m in dict.fromkeys(memory_ids)]
        with self._guard(), engine_errors("delete", _classify):
            client.delete(self.collection, points_selector=models.PointIdsList(points=ids), wait=True)

    def set_payload(self, namespace: str, memory_ids: Sequence[str], payload: Mapping[str, Any]) -> None:
        """Merge `payload`'s keys into these memories' payloads (`PayloadWriter`); vectors untouched."""
        client = self._require()
        ids: list[Any] = [point_id(namespace, m) for m in dict.fromkeys(memory_ids)]
        with self._guard(), engine_errors("set_payload", _classify):
            for part in chunks(ids):
                client.set_payload(self.collection, payload=dict(payload), points=list(part), wait=True)

    # ------------------------------------------------------------------ reads
    def get(self, namespace: str, memory_ids: Sequence[str]) -> list[Mapping[str, Any]]:
        if not memory_ids:
            return []
        client = self._require()
        ids: list[Any] = [point_id(namespace, m) for m in dict.fromkeys(memory_ids)]
        with self._guard(), engine_errors("get", _classify):
            records = client.retrieve(self.collection, ids, with_payload=True, with_vectors=False)
        payloads = [r.payload for r in records if r.payload and r.payload.get("namespace") == namespace]
        return in_requested_order(payloads, memory_ids)

    def vectors(self, namespace: str, memory_ids: Sequence[str]) -> dict[str, list[float]]:
        """`VectorReader`: the stored vectors by memory id, in one request without payloads."""
        by_point = {point_id(namespace, m): m for m in dict.fromkeys(memory_ids)}
        if not by_point:
            return {}
        client = self._require()
        with self._guard(), engine_errors("get", _classify):
            records = client.retrieve(self.collection, list(by_point), with_payload=False, with_vectors=True)
        dense = ((by_point.get(str(r.id)), dense_of(r.vector)) for r in records)
        return {mid: vector for mid, vector in dense if mid is not None and vector is not None}

    def query_batch(self, queries: Sequence[VectorQuery]) -> list[list[ScoredPayload]]:
        """All searches in one `query_batch_points` request; impossible filters are answered []."""
        results: list[list[ScoredPayload]] = [[] for _ in queries]
        if not queries:
            return results
        client = self._require()
        asked: list[int] = []
        requests: list[models.QueryRequest] = []
        for i, q in enumerate(queries):
            vector = check_query(q, self._dim or 0)
            conds = filter_conditions(q.filter)
            if can_match(conds):
                asked.append(i)
                requests.append(models.QueryRequest(query=vector, filter=_client_filter(conds),
                                                    limit=q.limit, with_payload=True))
        if not requests:
            return results
        with self._guard(), engine_errors("query", _classify):
            answers = client.query_batch_points(self.collection, requests=requests)
        for i, answer in zip(asked, answers, strict=True):
            results[i] = [ScoredPayload(p.payload or {}, clamp_score(p.score)) for p in answer.points]
        return results

    def scan_ordered(self, flt: VectorFilter, key: str, limit: int,
                     descending: bool = True) -> list[Mapping[str, Any]]:
        """`OrderedScan`: one ordered scroll (`order_by` needs the range index `open` makes for `key`)."""
        client = self._require()
        conds = filter_conditions(flt)
        if not can_match(conds):
            return []
        order = models.OrderBy(key=key, direction=models.Direction.DESC if descending else models.Direction.ASC)
        with self._guard(), engine_errors("scan", _classify):
            records, _ = client.scroll(self.collection, scroll_filter=_client_filter(conds), limit=limit,
                                       order_by=order, with_payload=True, with_vectors=False)
        return [r.payload or {} for r in records]


    # ------------------------------------------------------------------ the lexical arm (SparseSearch)
    def _require_sparse(self) -> QdrantClient:
        client = self._require()
        if not self._sparse:
            raise BackendError(f"collection {self.collection!r} has no sparse lexical vector (open with sparse=True)")
        return client

    def sparse_search(self, queries: Sequence[SparseQuery]) -> list[SparseAnswer]:
        """Lexical searches and their IDF probes (`sparse`) in one `query_batch_points` request."""
        client = self._require_sparse()
        with self._guard(), engine_errors("sparse query", _classify):
            return client_sparse.search(client, self.collection, queries, _client_filter)

    def missing_sparse(self, namespace: str) -> Iterator[Mapping[str, Any]]:
        """Payloads of this namespace's memories that have no sparse vector (written before it)."""
        client = self._require_sparse()

        def guarded(call: Any) -> Any:
            with self._guard(), engine_errors("scroll", _classify):
                return call()

        return client_sparse.missing(client, self.collection, namespace, _client_filter, guarded)

    def set_sparse(self, namespace: str, vectors: Sequence[tuple[str, SparseVector]]) -> None:
        """Give memories their sparse vector; dense vector and payload untouched."""
        client = self._require_sparse()
        with self._guard(), engine_errors("update_vectors", _classify):
            client_sparse.set_vectors(client, self.collection, namespace, vectors)

    def facet(self, namespace: str, key: str) -> dict[str, int]:
        """Memories of the namespace per value of keyword field `key` (`FacetCounter`), exact."""
        client = self._require()
        flt = _client_filter(filter_conditions(VectorFilter(namespace)))
        with self._guard(), engine_errors("facet", _classify):
            hits = client.facet(self.collection, key, facet_filter=flt, limit=_FACET_LIMIT, exact=True).hits
        return {str(h.value): int(h.count) for h in hits if h.count > 0}

    def scroll(self, namespace: str | None = None) -> Iterator[Mapping[str, Any]]:
        flt = _client_filter(filter_conditions(VectorFilter(namespace))) if namespace is not None else None
        return self._pages(flt)

    def scroll_where(self, flt: VectorFilter) -> Iterator[Mapping[str, Any]]:
        """The payloads `flt` matches, filtered by the engine (`PayloadLister`)."""
        conds = filter_conditions(flt)
        return self._pages(_client_filter(conds)) if can_match(conds) else iter(())

    def _pages(self, flt: models.Filter | None) -> Iterator[Mapping[str, Any]]:
        client = self._require()

        def fetch(offset: Any) -> tuple[list[Mapping[str, Any]], Any]:
            with self._guard(), engine_errors("scroll", _classify):
                records, nxt = client.scroll(self.collection, scroll_filter=flt, limit=SCROLL_PAGE,
                                             offset=offset, with_payload=True, with_vectors=False)
            return [r.payload or {} for r in records], nxt

        return paginate(fetch)

    def count(self, namespace: str) -> int:
        client = self._require()
        flt = _client_filter(filter_conditions(VectorFilter(namespace)))
        with self._guard(), engine_errors("count", _classify):
            return int(client.count(self.collection, count_filter=flt, exact=True).count)

    def namespaces(self) -> list[str]:
        """Distinct namespaces from the keyword index (facet), sorted."""
        client = self._require()
        with self._guard(), engine_errors("namespaces", _classify):
            limit = max(1, client.count(self.collection, exact=True).count)
            hits = client.facet(self.collection, "namespace", limit=limit, exact=True).hits
        return sorted(str(h.value) for h in hits if h.count > 0)

    def live_namespaces(self, alive_at: float) -> list[str]:
        """`LiveNamespaces`: the facet of the memories not expired at `alive_at`."""
        flt = models.Filter(must_not=[_client_condition(alive(alive_at).inner)])
        client = self._require()
        with self._guard(), engine_errors("namespaces", _classify):
            limit = max(1, client.count(self.collection, exact=True).count)
            hits = client.facet(self.collection, "namespace", limit=limit, exact=True, facet_filter=flt).hits
        return sorted(str(h.value) for h in hits if h.count > 0)

    # ------------------------------------------------------------------ meta
    def read_meta(self) -> dict[str, Any] | None:
        """Works before `open`: the meta collection does not depend on the vector dimension."""
        client = self._connect()
        with self._guard(), engine_errors("read meta", _classify):
            if not client.collection_exists(self.meta_collection):
                return None
            records = client.retrieve(self.meta_collection, [META_POINT_ID], with_payload=True)
        if not records:
            return None
        try:
            meta = json.loads((records[0].payload or {})["json"])
        except (KeyError, TypeError, ValueError) as exc:
            raise BackendError(f"meta in {self.meta_collection!r} is unreadable: {exc!r}") from exc
        if not isinstance(meta, dict):
            raise BackendError(f"meta in {self.meta_collection!r} is not a JSON object")
        return meta

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        """One point, stored as JSON text so it reads back exactly; a single upsert replaces it."""
        text = encode_meta(meta)
        client = self._connect()
        with self._guard(), engine_errors("write meta", _classify):
            create_points_collection(client, self.meta_collection)
            client.upsert(self.meta_collection, wait=True, points=[
                models.PointStruct(id=META_POINT_ID, vector=[1.0], payload={"json": text})])

    def __repr__(self) -> str:
        where = f"url={self.url!r}" if self.url is not None else f"location={self.location!r}"
        return f"QdrantClientBackend({where}, collection={self.collection!r})"
