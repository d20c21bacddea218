"""What the two Qdrant backends share, so that the embedded shard and the server agree exactly.

Both backends turn the same neutral values into their engine's own types: point ids, the payload
indexes to create, the filter of a query (as engine-free `Condition`s), the payloads to write, the
order of `get` results and the clamping of scores all live here. A backend only translates.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ...errors import BackendError, EmbeddingMismatch, FusedMemoryError, InvalidMemory, QueryError
from ..codec import SLOT_KEYS, STATED, UNRANKED
from ..protocols import SparseVector, VectorFilter, VectorQuery, VectorRecord

__all__ = [
    "POINT_ID_NAMESPACE", "SCROLL_PAGE", "META_POINT_ID",
    "IndexSpec", "PAYLOAD_INDEXES",
    "MatchOne", "MatchAnyOf", "Between", "Overlaps", "AnyOf", "Not", "alive", "Condition", "time_conditions",
    "EXPIRES_AT", "NEVER_BEFORE",
    "split_conditions", "filter_conditions", "can_match", "has_overlaps", "overlaps_hold",
    "PreparedPoint", "point_id", "dense_of", "prepare_points", "check_query", "in_requested_order", "unique", "plain",
    "check_sparse", "clamp_score", "paginate", "chunks", "encode_meta", "engine_errors", "WRITE_CHUNK",
]

_T = TypeVar("_T")

#: Fixed uuid5 namespace for point ids. Changing it would orphan every stored point: never do.
POINT_ID_NAMESPACE = uuid.UUID("6f1c1f0e-4d8a-5b59-9a57-3e0f1d5c2b7a")
#: Id of the single point that holds the store's meta in the client backend's meta collection.
META_POINT_ID = str(uuid.uuid5(POINT_ID_NAMESPACE, "fused-memory/meta"))
#: Payloads fetched per scroll page: large enough to amortize a round trip, small enough that one
#: engine call (which holds the GIL on qdrant-edge) stays in the low milliseconds.
SCROLL_PAGE = 256
#: Points per write call: bounds one call's GIL hold on qdrant-edge (docs/decisions/0014-embedded-vector-index.md)
#: and one request's body on a server (Qdrant refuses bodies over 32 MB by default).
WRITE_CHUNK = 512


# ---------------------------------------------------------------- payload indexes
@dataclass(frozen=True)
class IndexSpec:
    """One payload index. `tenant` marks the field Qdrant should co-locate points by."""

    field: str
    kind: Literal["keyword", "float"]
    tenant: bool = False


#: Created on `open` by both backends: every filter below runs on an index, never a payload scan.
PAYLOAD_INDEXES: tuple[IndexSpec, ...] = (
    IndexSpec("namespace", "keyword", tenant=True),
    IndexSpec("type", "keyword"),
    IndexSpec("event_at", "float"),
    IndexSpec("created_at", "float"),
    IndexSpec(f"{STATED}[].start", "float"),
    IndexSpec(f"{STATED}[].end", "float"),
    IndexSpec("memory_id", "keyword"),
    IndexSpec("answers", "keyword"),
    IndexSpec(SLOT_KEYS, "keyword"),
    IndexSpec("entities", "keyword"),
    IndexSpec("expires_at", "float"),
    IndexSpec(UNRANKED[0], "keyword"),
)
#: The payload key of a memory's expiry (epoch seconds), absent when it never expires.
EXPIRES_AT = "expires_at"
#: The lower bound of "expired by": earlier than any expiry a write can set (JSON has no -inf).
NEVER_BEFORE = -1e18


# ---------------------------------------------------------------- filters
@dataclass(frozen=True)
class MatchOne:
    key: str
    value: str


@dataclass(frozen=True)
class MatchAnyOf:
    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Between:
    """Inclusive float range; a point without the field never matches (Qdrant range semantics)."""

    key: str
    gte: float
    lte: float


@dataclass(frozen=True)
class Overlaps:
    """Some object of the list `key` holds has `start <= lte` and `end >= gte` (both of one object:
    a nested condition, so the start of one window and the end of another never pass together)."""

    key: str
    gte: float
    lte: float


@dataclass(frozen=True)
class AnyOf:
    """At least one of `conds` (a `should`)."""

    conds: tuple[MatchOne | Between | Overlaps, ...]


@dataclass(frozen=True)
class Not:
    """A `must_not`: points matching `inner` are left out; a point without the field is kept."""

    inner: MatchOne | Between


Condition = MatchOne | MatchAnyOf | Between | Overlaps | AnyOf | Not


def time_conditions(window: Any, times: frozenset[str]) -> list[Condition]:
    """A memory has a time of `times` ("event": `event_at`, "said": `created_at`, "stated": a time its
    text states) inside `window`: one condition, an `AnyOf` when several kinds are asked."""
    lo, hi = window.start.timestamp(), window.end.timestamp()
    conds: list[MatchOne | Between | Overlaps] = []
    if "event" in times:
        conds.append(Between("event_at", lo, hi))
    if "stated" in times:
        conds.append(Overlaps(STATED, lo, hi))
    if "said" in times:
        conds.append(Between("created_at", lo, hi))
    if not conds:
        return []
    return [conds[0]] if len(conds) == 1 else [AnyOf(tuple(conds))]


def alive(at: float) -> Not:
    """Not expired at `at`: an expiry at or before it is gone; a memory without one never expires."""
    return Not(Between(EXPIRES_AT, NEVER_BEFORE, float(at)))


def split_conditions(conds: Sequence[Condition]) -> tuple[list[Condition], list[MatchOne | Between]]:
    """(the `must` conditions, the `must_not` ones) as both engines take them."""
    return [c for c in conds if not isinstance(c, Not)], [c.inner for c in conds if isinstance(c, Not)]


def _require_namespace(namespace: object) -> str:
    if not isinstance(namespace, str) or not namespace:
        raise QueryError(f"namespace must be a non-empty string, got {namespace!r}")
    return namespace


def filter_conditions(f: VectorFilter) -> tuple[Condition, ...]:
    """All `must` conditions of a filter. The namespace comes first and is never optional, so
    no query can see another tenant's points whatever else the filter says."""
    conds: list[Condition] = [MatchOne("namespace", _require_namespace(f.namespace))]
    if f.types is not None:
        conds.append(MatchAnyOf("type", tuple(sorted(str(getattr(t, "value", t)) for t in f.types))))
    if f.event_window is not None:
        conds.append(Between("event_at", f.event_window.start.timestamp(), f.event_window.end.timestamp()))
    if f.time_window is not None:
        conds.extend(time_conditions(f.time_window, f.times))
    if f.memory_ids is not None:
        conds.append(MatchAnyOf("memory_id", unique(f.memory_ids)))
    if f.answers is not None:
        conds.append(MatchOne("answers", f.answers))  # `answers` is a list: matches any element
    if f.entities is not None:
        conds.append(MatchAnyOf("entities", unique(f.entities)))  # a list too: any shared element
    if f.session_id is not None:
        conds.append(MatchOne("session_id", f.session_id))
    if f.slot_keys is not None:
        conds.append(MatchAnyOf(SLOT_KEYS, unique(f.slot_keys)))  # a list too: any shared element
    if f.alive_at is not None:
        conds.append(alive(f.alive_at))
    if f.expired_at is not None:
        conds.append(Between(EXPIRES_AT, NEVER_BEFORE, float(f.expired_at)))
    if f.indexed_only:
        conds.append(Not(MatchOne(*UNRANKED)))
    return tuple(conds)


def has_overlaps(conds: Sequence[Condition]) -> bool:
    """Whether a filter asks for an `Overlaps` (a time its text states, inside a window), alone or
    as one branch of an `AnyOf`."""
    return any(isinstance(c, Overlaps) or (isinstance(c, AnyOf) and any(isinstance(x, Overlaps) for x in c.conds))
               for c in conds)


def _numbers(value: Any) -> list[float]:
    """A payload value as the engine ranges over it: a number, or each number of a list."""
    items = value if isinstance(value, list) else [value]
    return [float(x) for x in items if isinstance(x, (int, float)) and not isinstance(x, bool)]


def _holds(c: MatchOne | Between | Overlaps, payload: Mapping[str, Any]) -> bool:
    value = payload.get(c.key)
    if isinstance(c, MatchOne):
        return value == c.value or (isinstance(value, list) and c.value in value)
    if isinstance(c, Between):
        return any(c.gte <= x <= c.lte for x in _numbers(value))
    spans = value if isinstance(value, list) else []
    return any(isinstance(o, Mapping) and any(x <= c.lte for x in _numbers(o.get("start")))
               and any(x >= c.gte for x in _numbers(o.get("end"))) for o in spans)


def overlaps_hold(conds: Sequence[Condition], payload: Mapping[str, Any]) -> bool:
    """Whether `payload` passes the conditions of `conds` that hold an `Overlaps`, read exactly as the
    engine's nested condition reads them (one object's start and end together). The other conditions
    are not looked at: this checks what a coarser engine filter may have let through."""
    for c in conds:
        if isinstance(c, Overlaps) and not _holds(c, payload):
            return False
        if (isinstance(c, AnyOf) and any(isinstance(x, Overlaps) for x in c.conds)
                and not any(_holds(x, payload) for x in c.conds)):
            return False
    return True


def can_match(conds: Sequence[Condition]) -> bool:
    """False when an explicit empty set (types=frozenset(), memory_ids=()) rules out every point.
    Such a query is answered with [] without asking the engine: "any of nothing" matches nothing
    (both engines agree, checked), so the round trip would be wasted."""
    return all(not (isinstance(c, MatchAnyOf) and not c.values) for c in conds)


# ---------------------------------------------------------------- points
@dataclass(frozen=True)
class PreparedPoint:
    """A record ready for either engine: deterministic id, plain-list vector, plain-JSON payload."""

    id: str
    vector: list[float]
    payload: dict[str, Any]
    sparse: SparseVector | None = None


def point_id(namespace: str, memory_id: str) -> str:
    """uuid5 of (namespace, memory_id): the same memory id in two namespaces is two points, and an
    upsert of a known id overwrites it. JSON-encoding the pair keeps ("a:b", "c") != ("a", "b:c"),
    and its ASCII escapes make any Python string hashable (even one no engine could store).

    The same string as `str(uuid.uuid5(POINT_ID_NAMESPACE, json.dumps([namespace, memory_id])))`
    (tested on random and hostile ids), built without `json.dumps` and `uuid.UUID`: a query maps
    ten to twenty ids (hydration, stored vectors), and those two took most of an id's time
    (docs/decisions/0016-read-ahead-and-fixed-costs.md)."""
    if not (isinstance(namespace, str) and isinstance(memory_id, str)):  # a backend called with another type
        return str(uuid.uuid5(POINT_ID_NAMESPACE, json.dumps([namespace, memory_id])))
    name = "[" + _json_str(namespace) + ", " + _json_str(memory_id) + "]"  # json.dumps' own output
    digest = bytearray(hashlib.sha1(_POINT_ID_PREFIX + name.encode("ascii")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_POINT_ID_PREFIX = POINT_ID_NAMESPACE.bytes
#: json.dumps' encoder for one str under its defaults (ensure_ascii): the C function when present.
_json_str: Callable[[str], str] = json.encoder.encode_basestring_ascii


def unique(items: Sequence[str]) -> tuple[str, ...]:
    """Deduplicate, keeping first occurrences in order."""
    return tuple(dict.fromkeys(items))


def _vector(values: Sequence[float], dim: int, what: str, bad: type[Exception]) -> list[float]:
    """A wrong length means another embedder wrote or asked: refuse rather than mix models."""
    if len(values) != dim:
        raise EmbeddingMismatch(f"{what} has {len(values)} dimensions; this store holds {dim}-d vectors")
    out = [float(v) for v in values]
    if not all(math.isfinite(v) for v in out):
        raise bad(f"{what} contains NaN or infinity")
    return out


def check_sparse(v: SparseVector, what: str, bad: type[Exception]) -> SparseVector:
    """Distinct ascending u32 indices, one finite positive weight each: what both engines store
    (qdrant-edge refuses unsorted indices, a server sorts them; neither takes a duplicate)."""
    if not isinstance(v, SparseVector) or len(v.indices) != len(v.values):
        raise bad(f"{what} must be a SparseVector with one value per index, got {v!r}")
    if any(not 0 <= i < 2 ** 32 for i in v.indices) or list(v.indices) != sorted(set(v.indices)):
        raise bad(f"{what} needs distinct ascending indices in [0, 2^32)")
    if not all(0 < w < math.inf for w in v.values):
        raise bad(f"{what} needs finite positive weights")
    return v


def prepare_points(records: Sequence[VectorRecord], dim: int) -> list[PreparedPoint]:
    """Validate a batch before anything is written. The record's namespace and memory id are
    authoritative for filtering, so the payload must agree with them (or leave them out). A point
    given twice keeps its last version, as two upserts in a row would."""
    out: dict[str, PreparedPoint] = {}
    for rec in records:
        ns = _require_namespace(rec.namespace)
        if not isinstance(rec.memory_id, str) or not rec.memory_id:
            raise InvalidMemory(f"memory_id must be a non-empty string, got {rec.memory_id!r}")
        payload = plain(rec.payload)
        for key, want in (("namespace", ns), ("memory_id", rec.memory_id)):
            if payload.setdefault(key, want) != want:
                raise InvalidMemory(f"payload {key} {payload[key]!r} differs from the record's {want!r}")
        pid = point_id(ns, rec.memory_id)
        out.pop(pid, None)
        sparse = None if rec.sparse is None else check_sparse(
            rec.sparse, f"sparse vector of memory {rec.memory_id!r}", InvalidMemory)
        out[pid] = PreparedPoint(pid, _vector(rec.vector, dim, f"vector of memory {rec.memory_id!r}",
                                              InvalidMemory), payload, sparse)
    return list(out.values())


def check_query(q: VectorQuery, dim: int) -> list[float]:
    """Validate one query and return its vector as a plain list."""
    if not isinstance(q.limit, int) or q.limit <= 0:
        raise QueryError(f"query limit must be a positive integer, got {q.limit!r}")
    return _vector(q.vector, dim, "query vector", QueryError)


def plain(value: Any) -> Any:
    """Deep copy into dict/list/scalars: the engines' converters take neither MappingProxyType
    (frozen metadata) nor tuples at every depth, and the caller's objects must not be aliased."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def in_requested_order(payloads: Sequence[Mapping[str, Any]], memory_ids: Sequence[str]
                       ) -> list[Mapping[str, Any]]:
    """`get` answers in the order asked, each id once, missing ids left out."""
    by_id = {p.get("memory_id"): p for p in payloads}
    return [by_id[m] for m in unique(memory_ids) if m in by_id]


def clamp_score(score: float) -> float:
    """Cosine of float32 vectors can land a hair outside [-1, 1]; the protocol promises the range."""
    return max(-1.0, min(1.0, float(score)))


def paginate(fetch: Callable[[Any], tuple[Sequence[Mapping[str, Any]], Any]]) -> Iterator[Mapping[str, Any]]:
    """Drive a scroll: `fetch(offset)` returns one page and the next offset (None at the end)."""
    offset: Any = None
    while True:
        page, offset = fetch(offset)
        yield from page
        if offset is None:
            return


def chunks(items: Sequence[_T], size: int = WRITE_CHUNK) -> Iterator[Sequence[_T]]:
    """Consecutive slices of at most `size` points or ids (see WRITE_CHUNK for why writes are sliced)."""
    for i in range(0, len(items), size):
        yield items[i:i + size]


def encode_meta(meta: Mapping[str, Any]) -> str:
    """The meta dict as JSON text; refuse what would not read back identically."""
    try:
        return json.dumps(plain(meta), ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise BackendError(f"store meta is not JSON-serializable: {exc}") from exc


@contextmanager
def engine_errors(what: str, classify: Callable[[Exception], FusedMemoryError]) -> Iterator[None]:
    """Let our own errors through; turn anything an engine raises into a `BackendError` subclass
    chosen by `classify`, keeping the original as `__cause__`."""
    try:
        yield
    except FusedMemoryError:
        raise
    except Exception as exc:  # engines raise bare Exception (qdrant-edge) or many client types
        err = classify(exc)
        raise type(err)(f"{what}: {err}") from exc


def dense_of(stored: object) -> list[float] | None:
    """The dense vector of a stored point: the vector itself, or the unnamed ("") entry when the
    collection also holds the named sparse vector of the engine lexical index (both engines then
    return every vector of the point by name)."""
    if isinstance(stored, Mapping):
        stored = stored.get("")
    return list(stored) if isinstance(stored, list) else None
