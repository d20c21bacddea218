"""One contract for every `VectorBackend`: qdrant-edge (embedded, in a tmp dir) and qdrant-client
(local mode), run with identical expectations. Vectors are tiny and hand-made so every ranking and
every filter result is exact. Backend-specific behaviour (edge index policy, server errors) is at
the end, clearly separated."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fused_memory.backends.protocols import (
    OrderedScan,
    PayloadLister,
    PayloadWriter,
    VectorBackend,
    VectorFilter,
    VectorQuery,
    VectorRecord,
)
from fused_memory.backends.vector.common import POINT_ID_NAMESPACE, SCROLL_PAGE, point_id
from fused_memory.backends.vector.edge import QdrantEdgeBackend
from fused_memory.backends.vector.server import QdrantClientBackend
from fused_memory.errors import BackendError, BackendUnavailable, EmbeddingMismatch, InvalidMemory
from fused_memory.types import MemoryType, TimeWindow

Factory = Callable[[], VectorBackend]
T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
DIM = 4


# ---------------------------------------------------------------- fixtures
def _factory(kind: str, root: Path) -> Factory:
    """Each call makes a *new* backend object on the same storage (for reopen tests)."""
    if kind == "edge":
        return lambda: QdrantEdgeBackend(str(root / "edge"))
    if kind == "client-path":
        return lambda: QdrantClientBackend(location=str(root / "client"), collection="contract")
    return lambda: QdrantClientBackend(location=":memory:", collection="contract")


@pytest.fixture
def _made() -> Iterator[list[VectorBackend]]:
    made: list[VectorBackend] = []
    yield made
    for b in made:
        b.close()


def _tracking(factory: Factory, made: list[VectorBackend]) -> Factory:
    def make() -> VectorBackend:
        made.append(factory())
        return made[-1]
    return make


@pytest.fixture(params=["edge", "client-memory"])
def make_vb(request: pytest.FixtureRequest, tmp_path: Path, _made: list[VectorBackend]) -> Factory:
    return _tracking(_factory(request.param, tmp_path), _made)


@pytest.fixture(params=["edge", "client-path"])
def make_persistent_vb(request: pytest.FixtureRequest, tmp_path: Path, _made: list[VectorBackend]) -> Factory:
    """Reopenable storage: ":memory:" dies with its client, so the client side uses a folder."""
    return _tracking(_factory(request.param, tmp_path), _made)


@pytest.fixture
def vb(make_vb: Factory) -> VectorBackend:
    b = make_vb()
    b.open(DIM)
    return b


# ---------------------------------------------------------------- helpers
def payload(ns: str, mid: str, *, text: str | None = None, type: str | None = "fact",
            event_at: datetime | None = None, **extra: Any) -> dict[str, Any]:
    """The payload shape the store writes (see fused_memory/backends/codec.py)."""
    return {"memory_id": mid, "namespace": ns, "text": text or f"text of {mid}", "predicate": None,
            "type": type, "event_at": event_at.timestamp() if event_at else None,
            "event_at_iso": event_at.isoformat() if event_at else None, "created_at": 1714521600.5,
            "entities": ["ent:a"], "session_id": "s1", "metadata": {"k": [1, 2.5, None, True]}, **extra}


def rec(ns: str, mid: str, vec: tuple[float, ...], **kw: Any) -> VectorRecord:
    return VectorRecord(mid, ns, vec, payload(ns, mid, **kw))


def q(vec: tuple[float, ...], ns: str = "a", limit: int = 10, **flt: Any) -> VectorQuery:
    return VectorQuery(vec, VectorFilter(ns, **flt), limit)


def ids(hits: list[Any]) -> list[str]:
    return [h.payload["memory_id"] for h in hits]


X, Y, Z, W = (1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0)


def search(b: VectorBackend, query: VectorQuery) -> list[str]:
    return ids(b.query_batch([query])[0])


# ---------------------------------------------------------------- contract
def test_is_a_vector_backend(make_vb: Factory) -> None:
    b = make_vb()
    assert isinstance(b, VectorBackend) and isinstance(b.name, str) and b.name


def test_constructors_do_no_io(tmp_path: Path) -> None:
    QdrantEdgeBackend(str(tmp_path / "nowhere"))
    QdrantClientBackend(location=str(tmp_path / "nowhere-either"))
    QdrantClientBackend(url="http://127.0.0.1:1")  # nobody listens; must not be contacted yet
    assert list(tmp_path.iterdir()) == []


def test_upsert_then_get_round_trips_payload(vb: VectorBackend) -> None:
    r = rec("a", "m1", X, event_at=T0)
    vb.upsert([r, rec("a", "m2", Y)])
    assert vb.get("a", ["m2", "missing", "m1"]) == [dict(rec("a", "m2", Y).payload), dict(r.payload)]


def test_upsert_same_id_updates_one_point(vb: VectorBackend) -> None:
    vb.upsert([rec("a", "m1", X, text="old")])
    vb.upsert([rec("a", "m1", Y, text="new")])
    vb.upsert([rec("a", "m2", Z, text="x"), rec("a", "m2", W, text="last wins")])
    assert vb.count("a") == 2
    assert [p["text"] for p in vb.get("a", ["m1", "m2"])] == ["new", "last wins"]
    top = vb.query_batch([q(Y, limit=1)])[0][0]
    assert top.payload["memory_id"] == "m1" and top.score == pytest.approx(1.0, abs=1e-5)


def test_delete(vb: VectorBackend) -> None:
    vb.upsert([rec("a", "m1", X), rec("a", "m2", Y)])
    vb.delete("a", ["m1", "never-existed"])
    assert vb.get("a", ["m1", "m2"]) == [dict(rec("a", "m2", Y).payload)]
    assert vb.count("a") == 1 and search(vb, q(X)) == ["m2"]


def test_namespace_isolation(vb: VectorBackend) -> None:
    vb.upsert([rec("a", "m1", X, text="alice"), rec("b", "m1", X, text="bob"), rec("b", "m2", Y)])
    assert [p["text"] for p in vb.get("a", ["m1", "m2"])] == ["alice"]
    assert [h.payload["text"] for h in vb.query_batch([q(X, "a")])[0]] == ["alice"]
    assert sorted(p["namespace"] for p in vb.scroll("a")) == ["a"]
    assert vb.count("a") == 1 and vb.count("b") == 2 and vb.count("nobody") == 0
    vb.delete("a", ["m1", "m2"])  # b's m1 and m2 must survive
    assert vb.count("b") == 2 and [p["text"] for p in vb.get("b", ["m1"])] == ["bob"]
    assert vb.query_batch([q(X, "a")]) == [[]]


def test_type_filter(vb: VectorBackend) -> None:
    vb.upsert([rec("a", "f", X, type="fact"), rec("a", "p", X, type="preference"),
               rec("a", "e", X, type="event"), rec("a", "n", X, type=None), rec("b", "f2", X, type="fact")])
    assert search(vb, q(X, types=frozenset({MemoryType.FACT}))) == ["f"]
    assert sorted(search(vb, q(X, types=frozenset({MemoryType.FACT, MemoryType.EVENT})))) == ["e", "f"]
    assert search(vb, q(X, types=frozenset())) == []  # "any of nothing" matches nothing


def test_event_window_is_inclusive_and_needs_event_at(vb: VectorBackend) -> None:
    start, end = T0, T0 + timedelta(days=7)
    vb.upsert([rec("a", "at-start", X, event_at=start), rec("a", "at-end", X, event_at=end),
               rec("a", "inside", X, event_at=start + timedelta(days=3)),
               rec("a", "before", X, event_at=start - timedelta(seconds=1)),
               rec("a", "after", X, event_at=end + timedelta(seconds=1)),
               rec("a", "no-time", X), VectorRecord("x", "a", X, {"memory_id": "x", "namespace": "a"})])
    got = search(vb, q(X, event_window=TimeWindow(start, end)))
    assert sorted(got) == ["at-end", "at-start", "inside"]


def test_ordered_scan_is_newest_first_inside_the_filter_without_a_vector(vb: VectorBackend) -> None:
    """`OrderedScan` (what a query that is only a time reads, `retrievers.scan`): the filter's points
    by `event_at`, newest first (or oldest), at most `limit`, this namespace only, no vector asked."""
    assert isinstance(vb, OrderedScan)
    days = [3, 1, 6, 0, 5, 2]  # written out of order
    vb.upsert([rec("a", f"d{d}", X if d % 2 else Y, type="event", event_at=T0 + timedelta(days=d)) for d in days]
              + [rec("a", "fact-in-window", X, type="fact", event_at=T0 + timedelta(days=4)),
                 rec("a", "no-time", X, type="event"),
                 rec("b", "other-tenant", X, type="event", event_at=T0 + timedelta(days=4))])
    week = TimeWindow(T0 + timedelta(days=1), T0 + timedelta(days=5))
    window = VectorFilter("a", frozenset({MemoryType.EVENT}), week)
    newest = [p["memory_id"] for p in vb.scan_ordered(window, "event_at", 10)]
    assert newest == ["d5", "d3", "d2", "d1"]
    assert [p["memory_id"] for p in vb.scan_ordered(window, "event_at", 2)] == ["d5", "d3"]
    assert [p["memory_id"] for p in vb.scan_ordered(window, "event_at", 3, descending=False)] == ["d1", "d2", "d3"]
    assert vb.scan_ordered(VectorFilter("a", frozenset()), "event_at", 10) == []  # any of nothing: nothing
    assert [p["memory_id"] for p in vb.scan_ordered(VectorFilter("b"), "event_at", 10)] == ["other-tenant"]


def _span(start_day: float, end_day: float) -> dict[str, float]:
    return {"start": (T0 + timedelta(days=start_day)).timestamp(), "end": (T0 + timedelta(days=end_day)).timestamp()}


def test_a_stated_time_matches_a_window_only_when_one_of_them_overlaps_it(vb: VectorBackend) -> None:
    """A memory "states a time in the window" when one stated time overlaps it, start and end of
    the same time. A memory stating a time before the window and another after it does not, even
    when it is the closest to the query vector and the search asks for one answer: the coarse
    filter the embedded engine searches with lets it through, and its answers are checked."""
    week = TimeWindow(T0 + timedelta(days=10), T0 + timedelta(days=17))
    s = 1 / math.sqrt(2)
    vb.upsert([rec("a", "straddles", X, stated=[_span(1, 2), _span(20, 21)]),
               rec("a", "inside", (s, s, 0.0, 0.0), stated=[_span(1, 2), _span(12, 13)]),
               rec("a", "covers", Y, stated=[_span(2.5, 30)]),
               rec("a", "happened", Z, type="event", event_at=T0 + timedelta(days=11)),
               rec("a", "nothing-stated", X, stated=[]), rec("a", "old", X),
               rec("b", "other-ns", X, stated=[_span(12, 13)])])
    stated = frozenset({"stated"})
    assert search(vb, q(X, limit=1, time_window=week, times=stated)) == ["inside"]
    assert search(vb, q(X, time_window=week, times=stated)) == ["inside", "covers"]
    assert search(vb, q(X, time_window=week)) == ["inside", "covers", "happened"]  # or the event's time
    early = TimeWindow(T0 + timedelta(days=3), T0 + timedelta(days=4))  # all three pass the coarse filter
    assert search(vb, q(X, time_window=early, times=stated)) == ["covers"]
    assert search(vb, q(X, limit=1, time_window=early, times=stated)) == ["covers"]
    batch = vb.query_batch([q(Z, limit=1), q(X, limit=1, time_window=early, times=stated),
                            q(X, limit=1, time_window=week, times=stated)])
    assert [ids(r) for r in batch] == [["happened"], ["covers"], ["inside"]]  # each checked on its own


def test_an_ordered_scan_for_a_stated_time_checks_the_same_way(vb: VectorBackend) -> None:
    """The ordered scan (a query that is only a time) keeps the same exact reading of "states a
    time in the window", whatever order the points come in."""
    week = TimeWindow(T0 + timedelta(days=10), T0 + timedelta(days=17))
    vb.upsert([rec("a", "straddles", X, stated=[_span(1, 2), _span(20, 21)], created_at=3000.0),
               rec("a", "inside", X, stated=[_span(12, 13)], created_at=2000.0),
               rec("a", "covers", X, stated=[_span(5, 30)], created_at=1000.0)])
    window = VectorFilter("a", time_window=week, times=frozenset({"stated"}))
    assert isinstance(vb, OrderedScan)
    assert [p["memory_id"] for p in vb.scan_ordered(window, "created_at", 1)] == ["inside"]
    assert [p["memory_id"] for p in vb.scan_ordered(window, "created_at", 10)] == ["inside", "covers"]
    assert [p["memory_id"] for p in vb.scan_ordered(window, "created_at", 10, descending=False)] == ["covers", "inside"]


@pytest.mark.parametrize("straddlers", [2, 6])
def test_memories_straddling_the_window_ahead_of_the_answer_never_take_its_place(
        vb: VectorBackend, straddlers: int) -> None:
    """However many memories whose stated times straddle the window rank ahead of the one that
    states a time inside it (nearer the query vector, or newer), the answer is that one: found by a
    deeper coarse search (2 ahead) or by the exact filter (6 ahead, past the deeper search's reach)."""
    week = TimeWindow(T0 + timedelta(days=10), T0 + timedelta(days=17))
    s = 1 / math.sqrt(2)
    vb.upsert([rec("a", f"straddles-{i}", X, stated=[_span(1, 2), _span(20, 21)], created_at=3000.0 + i)
               for i in range(straddlers)]
              + [rec("a", "inside", (s, s, 0.0, 0.0), stated=[_span(12, 13)], created_at=1000.0),
                 rec("a", "elsewhere", Y, stated=[_span(40, 41)], created_at=5000.0)])
    stated = frozenset({"stated"})
    assert search(vb, q(X, limit=1, time_window=week, times=stated)) == ["inside"]
    assert search(vb, q(X, limit=3, time_window=week, times=stated)) == ["inside"]
    window = VectorFilter("a", time_window=week, times=stated)
    assert isinstance(vb, OrderedScan)
    assert [p["memory_id"] for p in vb.scan_ordered(window, "created_at", 1)] == ["inside"]


def test_answers_filter_matches_any_element_of_the_list(vb: VectorBackend) -> None:
    """`answers` is a list payload field: the filter keeps points whose list holds the value; a
    point written before the field existed (no `answers` key) never matches."""
    vb.upsert([rec("a", "timed", X, answers=["time"]), rec("a", "two", Y, answers=["place", "time"]),
               rec("a", "untimed", X, answers=[]), rec("a", "old", X), rec("b", "other-ns", X, answers=["time"])])
    assert search(vb, q(X, answers="time")) == ["timed", "two"]
    assert search(vb, q(X, answers="place")) == ["two"]
    assert search(vb, q(X, answers="time", types=frozenset({MemoryType.EVENT}))) == []


def test_set_payload_merges_keys_into_those_memories_only(vb: VectorBackend) -> None:
    """`PayloadWriter`: what open uses to tag memories written before a payload field existed."""
    vb.upsert([rec("a", "m1", X), rec("a", "m2", Y), rec("b", "m1", X)])
    assert isinstance(vb, PayloadWriter)
    vb.set_payload("a", ["m1", "m1"], {"answers": ["time"]})
    vb.set_payload("a", [], {"answers": ["never"]})
    assert vb.get("a", ["m1"]) == [{**payload("a", "m1"), "answers": ["time"]}]  # nothing else changed
    assert "answers" not in vb.get("a", ["m2"])[0] and "answers" not in vb.get("b", ["m1"])[0]
    assert search(vb, q(X, answers="time")) == ["m1"]  # the indexed filter sees it
    assert search(vb, q(X, limit=1)) == ["m1"]  # and the vector is untouched


def test_memory_ids_filter(vb: VectorBackend) -> None:
    vb.upsert([rec("a", "m1", X), rec("a", "m2", Y), rec("a", "m3", Z), rec("b", "m1", X)])
    got = vb.query_batch([q(X, memory_ids=("m2", "m1", "m1"))])[0]
    assert ids(got) == ["m1", "m2"] and all(h.payload["namespace"] == "a" for h in got)
    assert search(vb, q(X, memory_ids=())) == []


def test_entities_filter_matches_any_mention_exactly(vb: VectorBackend) -> None:
    """`entities` is a list payload field of names as written: a point matches when its list shares
    a name with the filter's, compared exactly (the caller supplies the case forms it wants)."""
    vb.upsert([rec("a", "sarah", X, entities=["Sarah", "Berlin"]), rec("a", "mel", Y, entities=["Mel"]),
               rec("a", "lower", X, entities=["sarah"]), rec("a", "none", X, entities=[]),
               rec("b", "other-ns", X, entities=["Sarah"])])
    assert search(vb, q(X, entities=("Sarah",))) == ["sarah"]
    got = search(vb, q(X, entities=("Sarah", "sarah", "Mel")))
    assert sorted(got[:2]) == ["lower", "sarah"] and got[2:] == ["mel"]  # equal cosines first, in any order
    assert search(vb, q(X, entities=("Berlin",), types=frozenset({MemoryType.EVENT}))) == []
    assert search(vb, q(X, entities=())) == []


def test_filters_combine(vb: VectorBackend) -> None:
    vb.upsert([rec("a", "e1", X, type="event", event_at=T0), rec("a", "e2", Y, type="event"),
               rec("a", "f1", X, type="fact", event_at=T0)])
    got = search(vb, q(X, types=frozenset({MemoryType.EVENT}), event_window=TimeWindow(T0, T0),
                       memory_ids=("e1", "e2", "f1")))
    assert got == ["e1"]


def test_query_batch_keeps_query_order_and_ranks_by_cosine(vb: VectorBackend) -> None:
    s = 1 / math.sqrt(2)
    vb.upsert([rec("a", "x", X), rec("a", "xy", (s, s, 0.0, 0.0)), rec("a", "y", Y),
               rec("a", "-x", (-1.0, 0.0, 0.0, 0.0)), rec("b", "bx", X)])
    res = vb.query_batch([q(X), q(Y, limit=2), q(X, "b"), q(Z, "empty-ns"), q(X, types=frozenset())])
    assert [ids(r) for r in res] == [["x", "xy", "y", "-x"], ["y", "xy"], ["bx"], [], []]
    scores = [h.score for h in res[0]]
    assert scores == sorted(scores, reverse=True) and all(-1.0 <= v <= 1.0 for v in scores)
    assert scores == pytest.approx([1.0, s, 0.0, -1.0], abs=1e-5)


def test_limit_is_respected(vb: VectorBackend) -> None:
    vb.upsert([rec("a", f"m{i}", (1.0, i / 10, 0.0, 0.0)) for i in range(10)])
    assert search(vb, q(X, limit=3)) == ["m0", "m1", "m2"]


def test_scroll_returns_every_payload_across_pages(vb: VectorBackend) -> None:
    n = SCROLL_PAGE * 2 + 7
    vb.upsert([rec("a", f"m{i}", (1.0, float(i), 0.0, 1.0)) for i in range(n)] + [rec("b", "other", X)])
    got = [p["memory_id"] for p in vb.scroll("a")]
    assert sorted(got) == sorted(f"m{i}" for i in range(n)) and len(got) == n
    assert len(list(vb.scroll())) == n + 1 and vb.count("a") == n


def test_namespaces(vb: VectorBackend) -> None:
    assert vb.namespaces() == []
    vb.upsert([rec("zeta", "m", X), rec("alpha", "m", X), rec("alpha", "n", Y), rec("émoji 🧠", "m", X)])
    assert vb.namespaces() == sorted(["zeta", "alpha", "émoji 🧠"])
    vb.delete("zeta", ["m"])
    assert vb.namespaces() == sorted(["alpha", "émoji 🧠"])


def test_meta_round_trip(make_vb: Factory) -> None:
    b = make_vb()
    assert b.read_meta() is None  # readable before open: the store may need it to learn the dim
    b.open(DIM)
    meta = {"layout": 1, "embedder": {"name": "hash", "dim": DIM, "weights_hash": "ab"}, "sessions": {"a": 1.5}}
    b.write_meta(meta)
    assert b.read_meta() == meta
    b.write_meta({**meta, "sessions": {}})
    assert b.read_meta() == {**meta, "sessions": {}}


HOSTILE = [
    "O'Brien said \"hi\" \\ `tick` ${x} {{y}} %s -- ; DROP TABLE memories; /* */",
    "z' WITH 1 AS q MATCH (k) DETACH DELETE k //",
    "émoji 🧠🔥 中文 العربية עברית \u200b\u200d \u2028 \u2029 \t\r\n",
    "x" * 10_240,
    "",
]


def test_hostile_strings_round_trip_exactly(vb: VectorBackend) -> None:
    recs = []
    for i, s in enumerate(HOSTILE):
        ns, mid = f"ns {s[:40]}" if s else "ns", f"id-{i}-{s[:60]}"
        recs.append(VectorRecord(mid, ns, X, payload(ns, mid, text=s or " ", metadata={s[:50]: s, "nested": [s]},
                                                     entities=[s], predicate=s)))
    vb.upsert(recs)
    for r in recs:
        assert vb.get(r.namespace, [r.memory_id]) == [dict(r.payload)]
        assert ids(vb.query_batch([q(X, r.namespace)])[0]) == [r.memory_id]
        assert vb.count(r.namespace) == 1
        assert vb.query_batch([q(X, r.namespace, memory_ids=(r.memory_id,))])[0][0].payload == r.payload


def test_frozen_payload_values_are_written_as_plain_json(vb: VectorBackend) -> None:
    frozen = MappingProxyType({"tags": ("x", "y"), "inner": MappingProxyType({"n": (1, (2.5,))})})
    vb.upsert([VectorRecord("m", "a", X, MappingProxyType({**payload("a", "m"), "metadata": frozen}))])
    assert vb.get("a", ["m"])[0]["metadata"] == {"tags": ["x", "y"], "inner": {"n": [1, [2.5]]}}


def test_empty_inputs_are_no_ops(vb: VectorBackend) -> None:
    vb.upsert([])
    vb.delete("a", [])
    assert vb.get("a", []) == [] and vb.query_batch([]) == [] and list(vb.scroll()) == []
    assert vb.count("a") == 0


def test_payload_namespace_comes_from_the_record(vb: VectorBackend) -> None:
    vb.upsert([VectorRecord("m", "a", X, {"text": "bare"})])
    assert vb.get("a", ["m"]) == [{"text": "bare", "namespace": "a", "memory_id": "m"}]
    with pytest.raises(InvalidMemory):
        vb.upsert([VectorRecord("m", "a", X, {"namespace": "b", "memory_id": "m"})])


def test_wrong_dimension_is_an_embedding_mismatch(vb: VectorBackend) -> None:
    with pytest.raises(EmbeddingMismatch):
        vb.upsert([VectorRecord("m", "a", (1.0, 0.0), {})])
    with pytest.raises(EmbeddingMismatch):
        vb.query_batch([q((1.0, 0.0, 0.0))])
    with pytest.raises(EmbeddingMismatch):
        vb.open(DIM + 1)
    assert vb.count("a") == 0


def test_reopen_keeps_data_and_refuses_another_dimension(make_persistent_vb: Factory) -> None:
    b = make_persistent_vb()
    b.open(DIM)
    b.upsert([rec("a", "m1", X, event_at=T0), rec("b", "m2", Y)])
    b.write_meta({"layout": 1})
    b.flush()
    b.close()
    b.close()  # idempotent
    with pytest.raises(BackendError):
        b.count("a")
    again = make_persistent_vb()
    assert again.read_meta() == {"layout": 1}
    again.open(DIM)
    assert again.get("a", ["m1"]) == [dict(rec("a", "m1", X, event_at=T0).payload)]
    assert sorted(again.namespaces()) == ["a", "b"]
    assert search(again, q(X, event_window=TimeWindow(T0, T0))) == ["m1"]
    again.close()
    other = make_persistent_vb()
    with pytest.raises(EmbeddingMismatch):
        other.open(DIM * 2)


def test_queries_from_threads_while_a_writer_upserts(vb: VectorBackend) -> None:
    vb.upsert([rec("a", "anchor", X)])
    errors: list[BaseException] = []
    done = threading.Event()

    def reader() -> None:
        try:
            while not done.is_set():
                res = vb.query_batch([q(X, limit=1), q(Y, "b", limit=3)])
                assert ids(res[0]) == ["anchor"] and all(h.payload["namespace"] == "b" for h in res[1])
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for i in range(0, 300, 30):
        vb.upsert([rec("b", f"m{j}", (0.0, 1.0, j / 300, 0.0)) for j in range(i, i + 30)])
    done.set()
    for t in threads:
        t.join()
    assert errors == [] and vb.count("b") == 300


# ---------------------------------------------------------------- listing (PayloadLister)
#: Namespaces that are string prefixes of one another, or differ only by a separator or a case: a
#: filter that matched by prefix, or anything looser than equality, would mix their memories.
NEIGHBOURS = ["u1", "u10", "u1.x", "u1.", "U1", "u1 ", "users.u1", "users.u10", "users.u1.notes"]


def test_is_a_payload_lister(vb: VectorBackend) -> None:
    assert isinstance(vb, PayloadLister)


def test_scroll_where_keeps_each_namespace_apart_from_its_neighbours(vb: VectorBackend) -> None:
    vb.upsert([rec(ns, f"m{i}", X, text=ns) for i, ns in enumerate(NEIGHBOURS)] + [rec(ns, "shared", Y, text=ns)
                                                                                   for ns in NEIGHBOURS])
    for i, ns in enumerate(NEIGHBOURS):
        listed = list(vb.scroll_where(VectorFilter(ns)))  # type: ignore[attr-defined]
        assert sorted(p["memory_id"] for p in listed) == sorted([f"m{i}", "shared"]), ns
        assert {p["namespace"] for p in listed} == {ns} and {p["text"] for p in listed} == {ns}
        assert sorted(p["memory_id"] for p in vb.scroll(ns)) == sorted([f"m{i}", "shared"])
        assert [p["text"] for p in vb.get(ns, ["shared"])] == [ns]
    assert vb.namespaces() == sorted(NEIGHBOURS)
    vb.delete("u1", ["shared"])  # the same id in every neighbour survives
    assert all(vb.get(ns, ["shared"]) for ns in NEIGHBOURS if ns != "u1") and vb.get("u1", ["shared"]) == []


def test_scroll_where_filters_a_session_and_the_other_fields(vb: VectorBackend) -> None:
    vb.upsert([rec("a", "s1-fact", X, session_id="s1"), rec("a", "s1-event", Y, session_id="s1", type="event"),
               rec("a", "s10", Z, session_id="s10"), rec("a", "none", W, session_id=None),
               rec("b", "other-ns", X, session_id="s1")])

    def listed(**flt: Any) -> list[str]:
        return sorted(p["memory_id"] for p in vb.scroll_where(VectorFilter("a", **flt)))  # type: ignore[attr-defined]

    assert listed(session_id="s1") == ["s1-event", "s1-fact"]
    assert listed(session_id="s10") == ["s10"] and listed(session_id="S1") == [] and listed(session_id="s") == []
    assert listed(session_id="s1", types=frozenset({MemoryType.EVENT})) == ["s1-event"]
    assert listed(memory_ids=("none", "other-ns")) == ["none"]
    assert listed(types=frozenset()) == []  # "any of nothing" matches nothing, as in a search
    assert listed() == ["none", "s1-event", "s1-fact", "s10"]
    assert search(vb, q(X, session_id="s1")) == ["s1-fact", "s1-event"]  # the same filter in a search


def test_scroll_where_returns_every_match_across_pages(vb: VectorBackend) -> None:
    n = SCROLL_PAGE + 3
    vb.upsert([rec("a", f"m{i}", (1.0, float(i), 0.0, 1.0), session_id="long" if i % 2 else "other")
               for i in range(2 * n)])
    got = [p["memory_id"] for p in vb.scroll_where(VectorFilter("a", session_id="long"))]  # type: ignore[attr-defined]
    assert len(got) == n and sorted(got) == sorted(f"m{i}" for i in range(2 * n) if i % 2)


# ---------------------------------------------------------------- qdrant-edge specifics
def test_edge_builds_hnsw_after_index_after_writes_and_stays_correct(tmp_path: Path) -> None:
    b = QdrantEdgeBackend(str(tmp_path / "e"), index_after=300)
    b.open(8)
    try:
        recs = [VectorRecord(f"m{i}", "a", tuple(float((i >> k) & 1) + 0.01 * k for k in range(8)),
                             payload("a", f"m{i}")) for i in range(400)]
        b.upsert(recs[:250])
        assert b.index_status().indexed == 0  # below the threshold: brute force only, nothing built
        b.upsert(recs[250:])
        st = b.index_status()
        assert st.indexed >= 300 and st.unindexed < 300 and st.points == 400
        assert search(b, VectorQuery(recs[399].vector, VectorFilter("a", memory_ids=("m399",)), 1)) == ["m399"]
        assert b.count("a") == 400 and len(list(b.scroll("a"))) == 400
    finally:
        b.close()


def test_edge_second_open_of_same_path_is_a_backend_error(tmp_path: Path) -> None:
    first, second = QdrantEdgeBackend(str(tmp_path / "e")), QdrantEdgeBackend(str(tmp_path / "e"))
    first.open(DIM)
    try:
        with pytest.raises(BackendError, match="already open"):
            second.open(DIM)
    finally:
        first.close()
        second.close()


def test_edge_point_ids_are_deterministic_per_namespace() -> None:
    assert point_id("a", "m") == point_id("a", "m") != point_id("b", "m")
    assert point_id("a:b", "c") != point_id("a", "b:c")


_ANY = st.text(st.characters(exclude_categories=())  # lone surrogates too
               | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=()), max_size=60)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=20) | _ANY, st.text(max_size=60) | _ANY)
def test_point_ids_are_the_uuid5_of_the_json_pair(namespace: str, memory_id: str) -> None:
    """Stores written before point ids were built without `uuid`/`json` keep their ids: the id is
    exactly uuid5 of the JSON-encoded pair, for any strings (surrogates, quotes, NUL included)."""
    assert point_id(namespace, memory_id) == str(uuid.uuid5(POINT_ID_NAMESPACE, json.dumps([namespace, memory_id])))


def test_a_point_id_of_another_type_than_str_is_the_one_it_always_was() -> None:
    assert point_id("ns", 5) == str(uuid.uuid5(POINT_ID_NAMESPACE, json.dumps(["ns", 5])))  # type: ignore[arg-type]


# ---------------------------------------------------------------- qdrant-client specifics
def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_client_unreachable_server_is_backend_unavailable_quickly() -> None:
    b = QdrantClientBackend(url=f"http://127.0.0.1:{_dead_port()}", timeout=2)
    t = time.perf_counter()
    with pytest.raises(BackendUnavailable):
        b.open(DIM)
    with pytest.raises(BackendUnavailable):
        b.read_meta()
    assert time.perf_counter() - t < 5
    b.close()


def test_client_needs_exactly_one_of_url_and_location() -> None:
    from fused_memory.errors import ConfigurationError
    with pytest.raises(ConfigurationError):
        QdrantClientBackend()
    with pytest.raises(ConfigurationError):
        QdrantClientBackend(url="http://x", location=":memory:")
