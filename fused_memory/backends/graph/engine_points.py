"""The points of the engine graph (`engine`) and the engine calls that read and write them.

Split from `engine.py` because it is a separate concern: that module decides what a `GraphStore`
write or read means (alias plans, garbage collection, the public view of entities); this one owns
the sibling collection (its creation and payload indexes), the point ids and payload shapes, and
every call to the engine, each through the host's guard (local mode serialized, failures as
`BackendError`s). `engine_walk` reads through it too.
"""

from __future__ import annotations

import json
import threading
import uuid
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from qdrant_client import QdrantClient, models

from ...errors import StoreClosed
from ..vector.server import create_points_collection
from .aliases import NewEntity, name_parts, person_like

__all__ = ["EngineHost", "GraphPoints", "GRAPH_SUFFIX", "FACET_LIMIT", "point_id", "entity_payload", "name_toks",
           "match", "any_of"]

#: The graph collection is named after the memories' one: `<collection>__graph`.
GRAPH_SUFFIX = "__graph"
_PAGE = 1024
_CHUNK = 512
#: Values one facet read asks for; a facet that fills it is re-counted per entity instead.
FACET_LIMIT = 4096
_POINT_NS = uuid.UUID("0b6f8a52-3c1d-5e7f-9a4b-2d8c6e1f7a35")
_KEYWORDS = ("k", "ns", "id", "canon", "toks", "mid", "ents", "src", "dst", "rel", "type")


@runtime_checkable
class EngineHost(Protocol):
    """What the engine graph needs of the vector backend it lives beside (`QdrantClientBackend`):
    its client (shared: a local-mode folder admits one client) and a guard for each call, which
    serializes local mode and turns engine failures into `BackendError`s."""

    collection: str

    def engine(self) -> QdrantClient: ...
    def engine_call(self, what: str) -> AbstractContextManager[Any]: ...


def point_id(kind: str, ns: str, *parts: str) -> str:
    return str(uuid.uuid5(_POINT_NS, json.dumps([kind, ns, *parts])))


def match(key: str, value: Any) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def any_of(key: str, values: Collection[str]) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchAny(any=sorted(values)))


def name_toks(eid: str, kind: str | None, canon: str) -> list[str]:
    """The tokens a single name resolves through (`aliases.plan_entities`): first and last of a
    canonical multi-token person-like name, else none."""
    parts = name_parts(eid)
    return sorted(set(parts)) if parts is not None and canon == eid and person_like(kind) else []


def entity_payload(ns: str, e: NewEntity) -> dict[str, Any]:
    return {"k": "entity", "ns": ns, "id": e.id, "name": e.name, "ekind": e.kind, "canon": e.canon,
            "asserted": False, "toks": name_toks(e.id, e.kind, e.canon)}


class GraphPoints:
    """The graph collection beside `host`'s: lifecycle, engine calls, catalogue reads by id or
    filter. The constructor does no I/O; `open` creates the collection and its indexes or finds them."""

    def __init__(self, host: EngineHost, collection: str | None = None) -> None:
        self.host = host
        self.collection = collection or f"{host.collection}{GRAPH_SUFFIX}"
        self._lock = threading.RLock()
        self._opened = False
        self._closed = False

    # ------------------------------------------------------------------ lifecycle
    def open(self) -> None:
        with self._lock:
            self._closed = False
            self._open_collection()

    def _open_collection(self) -> None:
        if self._opened:
            return
        client = self.host.engine()
        with self.host.engine_call(f"cannot open the graph collection {self.collection!r}"):
            create_points_collection(client, self.collection)
            have = set(client.get_collection(self.collection).payload_schema or {})
            with warnings.catch_warnings():  # local mode warns that indexes have no effect there
                warnings.simplefilter("ignore", UserWarning)
                for key in _KEYWORDS:
                    if key not in have:
                        schema: Any = models.KeywordIndexParams(
                            type=models.KeywordIndexType.KEYWORD, is_tenant=True) if key == "ns" \
                            else models.PayloadSchemaType.KEYWORD
                        client.create_payload_index(self.collection, key, field_schema=schema, wait=True)
                if "seq" not in have:
                    client.create_payload_index(self.collection, "seq", field_schema=models.PayloadSchemaType.FLOAT,
                                                wait=True)
        self._opened = True

    def exists(self) -> bool:
        """Whether the graph collection is there already (written by an earlier open); creates nothing."""
        client = self.host.engine()
        with self.host.engine_call(f"cannot look for the graph collection {self.collection!r}"):
            return bool(client.collection_exists(self.collection))

    def close(self) -> None:
        """Forget the client (the vector backend owns and closes it)."""
        with self._lock:
            self._opened, self._closed = False, True

    def _client(self) -> QdrantClient:
        with self._lock:
            if not self._opened:
                if self._closed:
                    raise StoreClosed(f"the engine graph {self.collection!r} was closed; call open() to use it again")
                self._open_collection()
        return self.host.engine()

    # ------------------------------------------------------------------ engine calls
    def filter(self, ns: str, kind: str, *conds: models.Condition,
                should: Sequence[models.Condition] = ()) -> models.Filter:
        # the narrowest condition first: qdrant-client's local mode checks them in order on every point
        return models.Filter(must=[*conds, match("ns", ns), match("k", kind)], should=list(should) or None)

    def retrieve(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """Payloads of the points with these ids (missing ones left out)."""
        client, out = self._client(), list[dict[str, Any]]()
        ids = list(dict.fromkeys(ids))
        for i in range(0, len(ids), _CHUNK):
            with self.host.engine_call("graph retrieve"):
                recs = client.retrieve(self.collection, ids[i:i + _CHUNK], with_payload=True, with_vectors=False)
            out.extend(dict(r.payload or {}) for r in recs)
        return out

    def scroll(self, flt: models.Filter, fields: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
        client, offset = self._client(), None
        payload: Any = list(fields) if fields is not None else True
        while True:
            with self.host.engine_call("graph scroll"):
                recs, offset = client.scroll(self.collection, scroll_filter=flt, limit=_PAGE, offset=offset,
                                             with_payload=payload, with_vectors=False)
            yield from (dict(r.payload or {}) for r in recs)
            if offset is None:
                return

    def count(self, flt: models.Filter) -> int:
        client = self._client()
        with self.host.engine_call("graph count"):
            return int(client.count(self.collection, count_filter=flt, exact=True).count)

    def facet(self, flt: models.Filter, limit: int) -> list[tuple[str, int]]:
        """Values of `ents` among the memories `flt` keeps, with how many hold each, most first."""
        client = self._client()
        with self.host.engine_call("graph facet"):
            hits = client.facet(self.collection, "ents", facet_filter=flt, limit=limit, exact=True).hits
        return [(str(h.value), int(h.count)) for h in hits]

    def mention_counts(self, ns: str, ids: Collection[str], limit: int = FACET_LIMIT) -> dict[str, int]:
        """Memories linked to each entity id (a facet over `ents`; exact): one read, or one per id
        when the memories' other names fill the facet's `limit`."""
        if not ids:
            return {}
        hits = self.facet(self.filter(ns, "memory", any_of("ents", ids)), limit)
        if len(hits) < limit:
            counts = dict(hits)
            return {i: counts.get(i, 0) for i in ids}
        return {i: self.count(self.filter(ns, "memory", match("ents", i))) for i in ids}

    def query_batch(self, requests: Sequence[models.QueryRequest]) -> list[models.QueryResponse]:
        if not requests:
            return []
        client = self._client()
        with self.host.engine_call("graph query"):
            return list(client.query_batch_points(self.collection, requests=list(requests)))

    def _upsert(self, points: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        client = self._client()
        for i in range(0, len(points), _CHUNK):
            with self.host.engine_call("graph upsert"):
                client.upsert(self.collection, wait=True, points=[
                    models.PointStruct(id=pid, vector=[1.0], payload=dict(p)) for pid, p in points[i:i + _CHUNK]])

    def _delete(self, ids: Sequence[str]) -> None:
        client = self._client()
        for i in range(0, len(ids), _CHUNK):
            with self.host.engine_call("graph delete"):
                client.delete(self.collection, points_selector=models.PointIdsList(points=list(ids[i:i + _CHUNK])),
                              wait=True)

    def _set(self, ids: Sequence[str], payload: Mapping[str, Any]) -> None:
        if not ids:
            return
        client = self._client()
        with self.host.engine_call("graph set_payload"):
            client.set_payload(self.collection, payload=dict(payload), points=list(ids), wait=True)

    # ------------------------------------------------------------------ catalogue reads
    def entity_points(self, ns: str, ids: Collection[str]) -> dict[str, dict[str, Any]]:
        return {str(p["id"]): p for p in self.retrieve([point_id("entity", ns, i) for i in ids]) if p.get("ns") == ns}

    def members(self, ns: str, groups: Collection[str]) -> dict[str, list[dict[str, Any]]]:
        """The entity points of each group (canonical id -> points, sorted by id)."""
        out: dict[str, list[dict[str, Any]]] = {g: [] for g in groups}
        if groups:
            for p in self.scroll(self.filter(ns, "entity", any_of("canon", groups))):
                out.setdefault(str(p["canon"]), []).append(p)
        return {g: sorted(ps, key=lambda p: str(p["id"])) for g, ps in out.items()}

    def lookup_in(self, ns: str, ids: Collection[str]) -> dict[str, tuple[str, str | None]]:
        """`CatalogView.lookup`: existing ids -> (their group, the kind of its canonical entity)."""
        found = self.entity_points(ns, ids)
        canons = {str(p["canon"]) for p in found.values()}
        more = self.entity_points(ns, canons - found.keys())
        kinds = {i: p.get("ekind") for i, p in {**found, **more}.items()}
        return {i: (str(p["canon"]), kinds.get(str(p["canon"]))) for i, p in found.items()}

    def person_tokens_in(self, ns: str, tokens: Collection[str]) -> dict[str, list[str]]:
        out: dict[str, set[str]] = {}
        if tokens:
            for p in self.scroll(self.filter(ns, "entity", any_of("toks", tokens)), ["id", "toks"]):
                for t in p.get("toks") or ():
                    if t in tokens:
                        out.setdefault(t, set()).add(str(p["id"]))
        return {t: sorted(v) for t, v in out.items()}
