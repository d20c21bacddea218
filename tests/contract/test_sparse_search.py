"""`SparseSearch` and the engine lexical index on both engines: qdrant-edge (embedded) and qdrant-client
(local mode, the server backend's code). Each score is checked against BM25 computed by hand on a tiny
corpus: IDF counted over the query's namespace only (`IdfCorpusParams`), the type filter in the same
search, deletes at once, and the normalization `BM25Index` uses."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient

from fused_memory.backends.lexical.engine import EngineLexicalIndex
from fused_memory.backends.lexical.sparse import DEFAULT_AVGDL, SparseBM25, engine_idf, term_id
from fused_memory.backends.protocols import (
    FacetCounter,
    LexicalDoc,
    SparseQuery,
    SparseSearch,
    SparseVector,
    TypeCounter,
    VectorFilter,
    VectorRecord,
)
from fused_memory.backends.vector.edge import QdrantEdgeBackend
from fused_memory.backends.vector.server import QdrantClientBackend
from fused_memory.backends.vector.sparse import check_server_version
from fused_memory.errors import BackendError, ConfigurationError, InvalidMemory
from fused_memory.types import MemoryType

FACT, EVENT = MemoryType.FACT, MemoryType.EVENT
DIM = 4
ENC = SparseBM25()
# namespace "a": three memories; namespace "b" floods the terms "kestrel" and "budget"
CORPUS = [
    ("a", "d1", "kestrel launch slipped", EVENT),
    ("a", "d2", "kestrel budget review", FACT),
    ("a", "d3", "lunch with tom", FACT),
    *[("b", f"b{i}", "kestrel budget kestrel", FACT) for i in range(6)],
]


def _factory(kind: str, root: Path) -> Callable[..., Any]:
    if kind == "edge":
        return lambda sparse=True: QdrantEdgeBackend(str(root / "edge"), sparse=sparse)
    return lambda sparse=True: QdrantClientBackend(location=str(root / "client"), collection="c", sparse=sparse)


@pytest.fixture(params=["edge", "client"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    made: list[Any] = []
    base = _factory(request.param, tmp_path)

    def new(sparse: bool = True) -> Any:
        for b in made:
            b.close()
        made.append(base(sparse))
        made[-1].open(DIM)
        return made[-1]

    yield new
    for b in made:
        b.close()


def doc(ns: str, mid: str, text: str, kind: MemoryType | None) -> LexicalDoc:
    return LexicalDoc(mid, ns, text, None, kind)


def record(ns: str, mid: str, text: str, kind: MemoryType | None, sparse: bool = True) -> VectorRecord:
    payload = {"memory_id": mid, "namespace": ns, "text": text, "predicate": None, "context": None,
               "type": kind.value if kind else None}
    vector = ENC.encode(doc(ns, mid, text, kind)) if sparse else None
    return VectorRecord(mid, ns, (1.0, 0.0, 0.0, 0.0), payload, vector)


def fill(b: Any, corpus: list[tuple[str, str, str, MemoryType]] = CORPUS, sparse: bool = True) -> None:
    b.upsert([record(*row, sparse=sparse) for row in corpus])


def hand_score(text: str, query: list[str], n: int, df: dict[str, int]) -> float:
    """BM25 of one memory by hand: sum of idf(t) * w(t, d) over the query's terms it holds, over
    sum of idf(t) of every query term (an absent one at df = 1)."""
    terms = text.split()
    dl = len(terms)
    raw = sum(engine_idf(n, df[t]) * terms.count(t) * 1.9 / (terms.count(t) + 0.9 * (0.6 + 0.4 * dl / DEFAULT_AVGDL))
              for t in query if t in terms)
    return min(1.0, raw / sum(engine_idf(n, df.get(t, 1)) for t in query))


def test_stored_dense_vectors_read_back_beside_the_sparse_one(make: Callable[..., Any]) -> None:
    """`VectorReader` gives the dense vector only, though the engine returns both by name."""
    b = make()
    fill(b)
    assert b.vectors("a", ["d1", "d2", "nope"]) == {"d1": [1.0, 0.0, 0.0, 0.0], "d2": [1.0, 0.0, 0.0, 0.0]}
    assert b.vectors("b", ["d1"]) == {}  # another namespace's id reads nothing


# ---------------------------------------------------------------- the engine's BM25, by hand
def test_scores_are_bm25_with_idf_over_the_namespace_by_hand(make: Callable[..., Any]) -> None:
    b = make()
    assert isinstance(b, SparseSearch) and b.sparse_enabled
    fill(b)
    index = EngineLexicalIndex(b)
    got = dict(index.search("a", "kestrel budget zebra", 10))
    df_a = {"kestrel": 2, "budget": 1}  # namespace b's six memories holding both terms do not count
    assert got == pytest.approx({"d2": hand_score("kestrel budget review", ["kestrel", "budget", "zebra"], 3, df_a),
                                 "d1": hand_score("kestrel launch slipped", ["kestrel", "budget", "zebra"], 3, df_a)},
                                rel=1e-5)
    assert list(got) == ["d2", "d1"]


def test_probed_idf_is_the_engines_own(make: Callable[..., Any]) -> None:
    b = make()
    fill(b)
    query = SparseVector(tuple(sorted((term_id("kestrel"), term_id("zebra")))), (1.0, 1.0))
    answer = b.sparse_search([SparseQuery(query, VectorFilter("a"), 5)])[0]
    idf = dict(zip(query.indices, answer.idf, strict=True))
    assert idf[term_id("kestrel")] == pytest.approx(engine_idf(3, 2), rel=1e-6)
    assert idf[term_id("zebra")] is None  # no memory of the namespace holds it


def test_type_filter_in_the_same_search_keeps_the_namespaces_idf(make: Callable[..., Any]) -> None:
    b = make()
    fill(b)
    index = EngineLexicalIndex(b)
    every = dict(index.search("a", "kestrel", 10))
    facts = index.search("a", "kestrel", 10, frozenset({FACT}))
    assert [m for m, _ in facts] == ["d2"] and facts[0][1] == pytest.approx(every["d2"])  # IDF still over "a"
    assert index.search("a", "kestrel", 10, frozenset()) == index.search("a", "kestrel", 10)  # empty: no filter
    assert b.sparse_search([SparseQuery(ENC.query("kestrel"), VectorFilter("a", frozenset()), 5)])[0].hits == ()


def test_deletes_and_overwrites_count_at_once(make: Callable[..., Any]) -> None:
    b = make()
    fill(b)
    index = EngineLexicalIndex(b)
    b.delete("a", ["d1"])
    assert [m for m, _ in index.search("a", "kestrel", 10)] == ["d2"]
    expected = hand_score("kestrel budget review", ["kestrel", "zebra"], 2, {"kestrel": 1})  # N and df without d1
    assert index.search("a", "kestrel zebra", 10) == [("d2", pytest.approx(expected, rel=1e-5))] and expected < 1
    b.upsert([record("a", "d2", "tom budget", FACT)])
    assert index.search("a", "kestrel", 10) == []


def test_namespaces_never_mix(make: Callable[..., Any]) -> None:
    b = make()
    fill(b)
    index = EngineLexicalIndex(b)
    assert {m for m, _ in index.search("b", "kestrel lunch", 10)} == {f"b{i}" for i in range(6)}
    assert index.search("nobody", "kestrel", 10) == [] and index.search("a", "zebra", 10) == []
    assert index.search("a", "the of", 10) == [] and index.search("a", "kestrel", 0) == []


def test_type_counts_from_the_engine(make: Callable[..., Any]) -> None:
    b = make()
    fill(b)
    assert isinstance(b, FacetCounter) and b.facet("a", "type") == {"fact": 2, "event": 1}
    index = EngineLexicalIndex(b, ttl_s=None)
    assert isinstance(index, TypeCounter) and index.type_counts("a") == {FACT: 2, EVENT: 1}
    b.upsert([record("a", "d4", "untyped", None)])
    assert index.type_counts("a") == {FACT: 2, EVENT: 1}  # cached until this process writes ...
    index.add([doc("a", "d4", "untyped", None)])
    assert index.type_counts("a") == {FACT: 2, EVENT: 1, None: 1}  # ... which drops the namespace's counts
    assert index.count("a") == 4


def test_sparse_vector_survives_reopen(make: Callable[..., Any]) -> None:
    fill(make())
    again = make(sparse=False)  # a collection that has it keeps it, whatever the new opener asks
    assert again.sparse_enabled and not again.sparse_added
    assert [m for m, _ in EngineLexicalIndex(again).search("a", "lunch", 5)] == ["d3"]


def test_an_older_collection_gets_the_vector_and_a_backfill(make: Callable[..., Any]) -> None:
    old = make(sparse=False)
    assert not old.sparse_enabled
    fill(old, sparse=True)  # offered, but the collection keeps no sparse vector: dense only
    with pytest.raises(BackendError, match="sparse"):
        old.sparse_search([SparseQuery(ENC.query("kestrel"), VectorFilter("a"), 5)])
    b = make(sparse=True)
    assert b.sparse_enabled and b.sparse_added
    index = EngineLexicalIndex(b)
    assert index.search("a", "kestrel", 10) == []  # written before: nothing to find yet
    missing = sorted(p["memory_id"] for p in b.missing_sparse("a"))
    assert missing == ["d1", "d2", "d3"]
    b.delete("a", ["d3"])  # deleted meanwhile (another process): skipped, not re-created
    b.upsert([record("a", "d2", "tom budget", FACT)])  # rewritten meanwhile, with its new vector: kept
    b.set_sparse("a", [(m, ENC.encode(doc("a", m, t, k))) for ns, m, t, k in CORPUS if ns == "a"])
    assert list(b.missing_sparse("a")) == [] and b.count("a") == 2
    assert [m for m, _ in index.search("a", "kestrel", 10)] == ["d1"]
    reopened = make(sparse=True)
    assert reopened.sparse_enabled and not reopened.sparse_added


def test_bad_sparse_vectors_are_refused_before_any_write(make: Callable[..., Any]) -> None:
    b = make()
    good = record("a", "ok", "kestrel", FACT)
    for bad in (SparseVector((2, 1), (1.0, 1.0)), SparseVector((1, 1), (1.0, 1.0)), SparseVector((1,), (0.0,)),
                SparseVector((1,), (math.nan,)), SparseVector((2 ** 32,), (1.0,)), SparseVector((1, 2), (1.0,))):
        with pytest.raises(InvalidMemory, match="sparse vector of memory 'x'"):
            b.upsert([good, VectorRecord("x", "a", (1.0, 0.0, 0.0, 0.0), {"text": "x"}, bad)])
    assert b.count("a") == 0


# ---------------------------------------------------------------- server versions
def test_a_server_that_would_ignore_namespace_idf_is_refused() -> None:
    for old in ("1.18.2", "1.10.0", "0.11.0"):
        with pytest.raises(ConfigurationError, match=r"older than 1\.19.*lexical=\"bm25\""):
            check_server_version(old, "http://q:6333")
    for ok in ("1.19.0", "1.20.1", "2.0.0", "1.19.0-rc1", "dev"):
        check_server_version(ok, "http://q:6333")


class _OldServer(QdrantClient):
    """qdrant-client's local mode reporting the version of a server before 1.19 (no such server can
    run here); every other call is local mode's own."""

    def info(self) -> Any:
        real = super().info()
        return real.model_copy(update={"version": "1.18.0"})


def test_opening_on_an_old_server_says_what_to_do() -> None:
    client = _OldServer(location=":memory:")
    with pytest.raises(ConfigurationError, match="older than 1.19"):
        QdrantClientBackend(client=client, sparse=True).open(DIM)
    assert not client.collection_exists("fused_memory")  # refused before anything was created
    plain = QdrantClientBackend(client=client)  # the in-process lexical index needs no sparse vector
    plain.open(DIM)
    assert not plain.sparse_enabled


def test_time_window_and_namespace_in_the_same_engine_search(make: Callable[..., Any]) -> None:
    """The engine call takes the dense arms' whole filter: a window narrows the hits, not the IDF."""
    from datetime import datetime, timedelta, timezone

    from fused_memory.types import TimeWindow

    b = make()
    t0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
    rows = [("a", f"e{i}", "kestrel review", EVENT) for i in range(3)]
    b.upsert([VectorRecord(r.memory_id, "a", r.vector, {**r.payload, "event_at": (t0 + timedelta(days=i)).timestamp()},
                           r.sparse) for i, r in enumerate(record(*row) for row in rows)])
    window = TimeWindow(t0 + timedelta(hours=12), t0 + timedelta(days=1, hours=12))
    every = b.sparse_search([SparseQuery(ENC.query("kestrel"), VectorFilter("a"), 5)])[0]
    inside = b.sparse_search([SparseQuery(ENC.query("kestrel"), VectorFilter("a", event_window=window), 5)])[0]
    assert [m for m, _ in inside.hits] == ["e1"] and inside.idf == every.idf
    assert inside.hits[0][1] == pytest.approx(dict(every.hits)["e1"])
