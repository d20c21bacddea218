"""What the two Qdrant backends share for the lexical arm on sparse vectors (`SparseSearch`).

One `SparseQuery` becomes several engine requests in the same batch: the search itself (the
caller's filter, IDF counted over the namespace), and one probe per query term. The engine applies
its IDF inside the score and does not return it, but the normalization `BM25Index` uses needs
`sum(idf(t))` over the query's terms (`backends.lexical.sparse`). A probe asks for the single best
memory of the namespace holding that one term at weight 1, with its stored sparse vector: its score
is `idf(t) * w(t, d)`, and `w(t, d)` is in the vector, so `idf(t) = score / w(t, d)` exactly (the
engine's own number, with its own statistics). A term no memory holds returns nothing (idf None).
The probes ride in the search's own engine batch (docs/decisions/0010-lexical-index-placement.md).

IDF is always counted over the namespace (`IdfCorpusParams(corpus=namespace)`), never the whole
collection, whose statistics another tenant's vocabulary would move. Qdrant servers before 1.19 do
not know the parameter and would ignore it silently (their `SearchParams` has no `idf` field), so
the server backend refuses them
(`check_server_version`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import ConfigurationError, QueryError
from ..protocols import SparseAnswer, SparseQuery, SparseVector, VectorFilter
from .common import Condition, can_match, check_sparse, filter_conditions

__all__ = ["SPARSE_VECTOR", "SparseRequest", "EngineHit", "sparse_requests", "sparse_answers", "check_server_version",
           "MIN_SPARSE_SERVER"]

#: The named sparse vector every memory carries beside its (unnamed) dense one. The name stands
#: for the weights' format (`backends.lexical.sparse`): weights of another format get another name.
SPARSE_VECTOR = "bm25"
#: The first Qdrant server that counts IDF over a filter (`IdfCorpusParams`, qdrant/qdrant#9661);
#: it also has `create_vector_name` (1.18), which adds the sparse vector to an older collection.
MIN_SPARSE_SERVER = (1, 19)


@dataclass(frozen=True)
class SparseRequest:
    """One engine request: `vector` under `conds`, IDF over `corpus`. A `probe` asks for one point
    with its sparse vector and no payload; a search asks for `limit` points with their memory id."""

    vector: SparseVector
    conds: tuple[Condition, ...]
    corpus: tuple[Condition, ...]
    limit: int
    probe: bool


@dataclass(frozen=True)
class EngineHit:
    """One point an engine returned, in neutral form: its memory id (searches), its score, and its
    stored sparse vector (probes)."""

    memory_id: str | None
    score: float
    vector: SparseVector | None = None


def sparse_requests(queries: Sequence[SparseQuery]) -> tuple[list[SparseRequest], list[list[int]]]:
    """All requests of a batch, and per query the positions of its search and then of its probes
    (empty when its filter cannot match: answered without the engine)."""
    requests: list[SparseRequest] = []
    slots: list[list[int]] = []
    for q in queries:
        if not isinstance(q.limit, int) or q.limit <= 0:
            raise QueryError(f"query limit must be a positive integer, got {q.limit!r}")
        vector = check_sparse(q.vector, "sparse query", QueryError)
        conds = filter_conditions(q.filter)
        if not can_match(conds) or not vector.indices:
            slots.append([])
            continue
        corpus = filter_conditions(VectorFilter(q.filter.namespace))
        mine = [len(requests)]
        requests.append(SparseRequest(vector, conds, corpus, q.limit, probe=False))
        for tid in vector.indices:
            mine.append(len(requests))
            requests.append(SparseRequest(SparseVector((tid,), (1.0,)), corpus, corpus, 1, probe=True))
        slots.append(mine)
    return requests, slots


def _probed_idf(tid: int, hits: Sequence[EngineHit]) -> float | None:
    if not hits or hits[0].vector is None:
        return None
    stored = dict(zip(hits[0].vector.indices, hits[0].vector.values, strict=True))
    weight = stored.get(tid)
    return float(hits[0].score) / weight if weight else None


def sparse_answers(queries: Sequence[SparseQuery], slots: Sequence[Sequence[int]],
                   results: Sequence[Sequence[EngineHit]]) -> list[SparseAnswer]:
    """Each query's hits (ties broken by memory id, as `BM25Index` breaks them) and term IDFs."""
    out: list[SparseAnswer] = []
    for q, mine in zip(queries, slots, strict=True):
        if not mine:
            out.append(SparseAnswer((), tuple(None for _ in q.vector.indices)))
            continue
        found = {h.memory_id: float(h.score) for h in results[mine[0]] if h.memory_id is not None}
        hits = tuple(sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))
        idf = tuple(_probed_idf(tid, results[at]) for tid, at in zip(q.vector.indices, mine[1:], strict=True))
        out.append(SparseAnswer(hits, idf))
    return out


def check_server_version(version: str | None, where: object) -> None:
    """Refuse a server that would silently count IDF over the whole collection (see the module
    docstring); an unparsable version (a development build) is given the benefit of the doubt."""
    try:
        major, minor = (int(part) for part in str(version).split("-")[0].split(".")[:2])
    except ValueError:
        return
    if (major, minor) < MIN_SPARSE_SERVER:
        need = ".".join(map(str, MIN_SPARSE_SERVER))
        raise ConfigurationError(
            f"Qdrant server {version} at {where} is older than {need}: it cannot count BM25's IDF per "
            f"namespace (it would ignore the request and count every tenant's memories). Upgrade the server "
            f"to {need} or later, or keep the lexical index in this process with lexical=\"bm25\" "
            "(rebuilt from every payload on open, and blind to other processes' writes until they reopen).")
