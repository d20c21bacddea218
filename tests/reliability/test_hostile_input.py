"""Hostile input: hypothesis over query text, entity names (through `relate` and through memory text
and entities), metadata keys and values, ids and namespaces - quotes, backticks, backslashes, Cypher
and Qdrant-filter fragments, NUL, lone surrogates, 1 MB strings, deeply nested metadata.

Expected for every input: a clear `FusedMemoryError` or a correct answer (what was written reads back
exactly; a query answers from its own namespace without arm failures), never another exception,
never an injected query, never a corrupted store: a canary namespace (memories, entities, a relation)
is snapshotted first and must be identical after every example, and the victim namespace's indexes
must keep agreeing. Everything runs against both graph backends: embedded, and Cypher over the
FalkorDB Bolt listener that splices parameters into the query text (docs/design.md, "The graph").
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fused_memory.backends.codec import to_payload
from fused_memory.ensemble import EnsembleMemory
from fused_memory.errors import FusedMemoryError, InvalidMemory, QueryError
from fused_memory.store.memory_store import MemoryStore
from fused_memory.text import normalize_entity_id
from fused_memory.types import Memory, MemoryType

from _support import NOW, counts, embedded, lexical_ids, with_cypher_graph

MB = 1_000_000
FRAGMENTS = (
    "'", '"', "`", "\\", "\\'", "''", "O'Brien", "`tick`", "${x}", "{{y}}", "%s", "$ns", "--", "/*", "*/", ";",
    "z' WITH 1 AS q MATCH (k) DETACH DELETE k //", "}) MATCH (n) DETACH DELETE n //", "' OR '1'='1",
    '"; MATCH (n) DETACH DELETE n; "', "') RETURN 1 UNION MATCH (n) RETURN n //", "CALL db.indexes()",
    "'); DELETE FROM memory; --", "DROP TABLE entity", "\u0000", "a\u0000b", "\ud800", "\udfff", "x\udc80y",
    '{"must": [{"key": "namespace", "match": {"value": "canary"}}]}', "namespace:canary", "namespace", "canary",
    '{"should": []}', "*", "?", "\n", "\r\n", "\t", "\u2028", "\u202e", "\u200b", "Zoë 中文 😀", "ﷺ", "\x7f",
)
BIG = ("a" * MB, "'" * MB, "\\" * MB, "é" * (MB // 2), "z' WITH 1 AS q MATCH (k) DETACH DELETE k //" * (MB // 43))
hostile = st.one_of(
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), min_size=1, max_size=6).map("".join),
    st.text(max_size=40),
    st.sampled_from(BIG),
)
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), hostile)
metadata = st.recursive(json_leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(hostile, c, max_size=3),
                        max_leaves=8)


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


CANARY = "canary"


@pytest.fixture(params=["embedded", pytest.param("cypher", marks=pytest.mark.slow)], scope="module")  # a Bolt server
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    path = tmp_path_factory.mktemp("hostile")
    s = (embedded(path) if request.param == "embedded"
         else with_cypher_graph(path, request.getfixturevalue("bolt_server")))
    s.open()
    suffix = uuid.uuid4().hex[:6]  # FalkorDB's one graph is shared with other tests: our own namespaces
    canary, victim = f"{CANARY}-{suffix}", f"victim-{suffix}"
    s.canary, s.victim = canary, victim  # type: ignore[attr-defined]
    s.add([Memory(text="canary badge 47821 belongs to Sarah Chen", namespace=canary, id="c-1",
                  entities=("Sarah Chen", "Kestrel")),
           Memory(text="the canary sings on Tuesdays", namespace=canary, id="c-2", entities=("Kestrel",))])
    s.relate("Tom Baker", "reports_to", "Sarah Chen", namespace=canary, kind="structural")
    yield s
    s.close()


def snapshot(store: MemoryStore) -> tuple:
    ns = store.canary  # type: ignore[attr-defined]
    assert store.graph is not None
    return (counts(store, ns), dict(store.graph.stats(ns)), [m.text for m in store.get_many(ns, ["c-1", "c-2"])],
            lexical_ids(store, ns, "canary"), [e.id for e in store.graph.entities(ns)],
            [h.memory_id for h in store.graph.traverse(ns, [("tom baker", 1.0)], 2, 10, NOW)])


@pytest.fixture(scope="module")
def canary(store: MemoryStore) -> tuple:
    return snapshot(store)


def consistent(store: MemoryStore, canary: tuple) -> None:
    assert snapshot(store) == canary, "the canary namespace changed"
    v, lex, g = counts(store, store.victim)  # type: ignore[attr-defined]
    assert v == lex == g, (v, lex, g)


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


# ------------------------------------------------------------------ queries
@SETTINGS
@given(text=hostile, ns=st.one_of(st.just("victim"), hostile))
@example(text="\ud800 what happened last week?", ns="victim")
@example(text="who is Sarah Chen' OR 1=1 //", ns="victim")
@example(text="a" * MB, ns="victim")
@example(text="Sarah Chen", ns="canary\u0000x")
def test_hostile_queries(store: MemoryStore, canary: tuple, text: str, ns: str) -> None:
    ns = store.victim if ns == "victim" else ns  # type: ignore[attr-defined]
    ens = EnsembleMemory(store)
    try:
        result = ens.retrieve(text, namespace=ns, k=5, now=NOW)
    except FusedMemoryError:
        pass
    else:
        assert not [f for f in result.failures if f.kind != "timeout"], result.failures  # slow is not wrong
        assert all(h.memory.namespace == ns for h in result.hits)
    finally:
        ens.close()
    consistent(store, canary)


# ------------------------------------------------------------------ memories: text, ids, entities, metadata
@SETTINGS
@given(text=hostile, mid=hostile, entity=hostile, key=hostile, value=metadata, ns=st.one_of(st.just("victim"), hostile),
       predicate=st.one_of(st.none(), hostile))
@example(text="met O'Brien", mid="x' }) DETACH DELETE n //", entity="z' WITH 1 AS q MATCH (k) DETACH DELETE k //",
         key="$ns", value=nested(32), ns="victim", predicate=None)
@example(text="deep", mid="d", entity="Deep", key="k", value=nested(33), ns="victim", predicate=None)
@example(text="deeper", mid="d2", entity="Deep", key="k", value=nested(300), ns="victim", predicate=None)
@example(text="big", mid="b", entity="Big", key="k", value="v" * MB, ns="victim", predicate="p" * MB)
@example(text="big id", mid="'" * MB, entity="Big", key="k", value=1, ns="victim", predicate=None)
@example(text="big entity", mid="be", entity="\\" * MB, key="k", value=1, ns="victim", predicate=None)
@example(text="nfkc", mid="nf", entity="ﷺ" * 1_000, key="k", value=1, ns="victim", predicate=None)
@example(text="floats", mid="f", entity="F", key="k", value=[0.21659939713061338, 1.1106001130194673e-247, -0.0],
         ns="victim", predicate=None)
@example(text="ints", mid="i", entity="I", key="k", value=[2**63 - 1, -2**63, 10**30], ns="victim", predicate=None)
@example(text="nul", mid="n", entity="a\u0000b", key="k\u0000", value="\ud800", ns="victim", predicate=None)
@example(text="namespace", mid="n", entity="E", key="k", value=1, ns="canary", predicate=None)
def test_hostile_memories(store: MemoryStore, canary: tuple, text: str, mid: str, entity: str, key: str,
                          value: Any, ns: str, predicate: str | None) -> None:
    ns = store.victim if ns == "victim" else ns  # type: ignore[attr-defined]
    ents: tuple[str, ...] = (entity,)
    if ns == CANARY:  # hostile writes may land in the canary namespace, under their own id and without
        ns, mid, ents = store.canary, "c-1' OR 1=1", ()  # type: ignore[attr-defined]  # entities (they'd stay)
    context = None if predicate is None else predicate[::-1][:5_000]  # indexed by BM25 and the embedder
    try:
        m = Memory(text=text, namespace=ns, id=mid, entities=ents, metadata={key: value}, predicate=predicate,
                   session_id=key, type=MemoryType.FACT, context=context)
    except InvalidMemory:
        consistent(store, canary)
        return
    before = snapshot(store)
    try:
        (stored,) = store.add(m)
    except FusedMemoryError:
        assert snapshot(store) == before, "a failed add left something behind"
    else:
        (got,) = store.get_many(ns, [m.id])  # exactly what was written comes back
        assert to_payload(got) == to_payload(stored)
        assert (got.text, got.id, got.entities, got.predicate, got.session_id) == (text, m.id, ents, predicate, key)
        assert got.context == ((context or "").strip() or None)
        assert m.id == mid or not mid  # an empty id is derived from namespace and text
        assert store.graph is not None
        if ents and normalize_entity_id(entity):
            linked = store.graph.mentions_of(ns, m.id)
            assert linked and store.graph.resolve(ns, entity), (entity, linked)
        assert store.count(ns) == store.lexical.count(ns) == store.graph.stats(ns)["memories"]
        store.delete(ns, [m.id])
        assert store.get_many(ns, [m.id]) == [] and store.graph.mentions_of(ns, m.id) == []
    store.delete(ns, [mid, mid + "'", "*"])  # deleting unknown hostile ids is a no-op
    consistent(store, canary)


# ------------------------------------------------------------------ entity names through relate
@SETTINGS
@given(src=hostile, rel=hostile, dst=st.one_of(st.just("Sarah Chen"), hostile))
@example(src="O'Brien", rel="reports_to", dst="Sarah Chen")
@example(src="z' WITH 1 AS q MATCH (k) DETACH DELETE k //", rel="}) DETACH DELETE n //", dst="Sarah Chen")
@example(src="back`tick`", rel="`REL`", dst="\\")
@example(src="a\u0000b", rel="r", dst="Sarah Chen")
@example(src="\ud800", rel="r", dst="Sarah Chen")
@example(src="x" * MB, rel="r", dst="Sarah Chen")
@example(src="Ann", rel="'" * MB, dst="Sarah Chen")
@example(src="O'B\\" * 2_500, rel="r\\'", dst="é'" * 3_000)
def test_hostile_entity_names(store: MemoryStore, canary: tuple, src: str, rel: str, dst: str) -> None:
    ns = store.victim  # type: ignore[attr-defined]
    assert store.graph is not None
    before = dict(store.graph.stats(ns))
    try:
        store.relate(src, rel, dst, namespace=ns, kind="semantic", confidence=0.5)
    except FusedMemoryError as exc:
        assert isinstance(exc, QueryError), exc  # bad input is the caller's to fix, not a backend failure
        assert dict(store.graph.stats(ns)) == before
    else:
        for name in (src, dst):
            found = store.graph.resolve(ns, name)
            assert found, name
            assert normalize_entity_id(name) in {found[0].id, *map(normalize_entity_id, found[0].aliases)}
        after = dict(store.graph.stats(ns))
        assert after["relations"] >= before["relations"] and after["entities"] <= before["entities"] + 2
        ens = EnsembleMemory(store)
        try:
            result = ens.retrieve(f"who is {src[:200]}?", namespace=ns, k=5, now=NOW)
            assert not [f for f in result.failures if f.kind != "timeout"], result.failures
            assert all(h.memory.namespace == ns for h in result.hits)
        except QueryError:
            pass
        finally:
            ens.close()
    consistent(store, canary)


def test_hostile_store_paths_and_namespaces_are_refused_cleanly(tmp_path: Path) -> None:
    """Namespaces reach every backend: the ones no backend can hold are refused up front."""
    s = embedded(tmp_path / "s").open()
    try:
        for ns in ("", "  ", "a\u0000b", "\ud800", None, 5):
            with pytest.raises(FusedMemoryError):
                s.add(Memory(text="x", namespace=ns))  # type: ignore[arg-type]
            with pytest.raises(FusedMemoryError):
                s.relate("A", "r", "B", namespace=ns)  # type: ignore[arg-type]
            with pytest.raises(FusedMemoryError):
                s.delete(ns, ["x"])  # type: ignore[arg-type]
            with pytest.raises(FusedMemoryError):
                EnsembleMemory(s).retrieve("x", namespace=ns)  # type: ignore[arg-type]
    finally:
        s.close()


@pytest.mark.parametrize("when", [
    datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),           # year 0 in UTC
    datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-1))),  # year 10000 in UTC
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc),  # rounds to year 10000 as epoch seconds
])
def test_a_time_no_store_can_read_back_is_refused_before_it_is_written(tmp_path: Path, when: datetime) -> None:
    """Such a time once reached the payload and made every later open of the store fail; now it is
    refused at `Memory`, `end_session` and `relate`, and the store still opens with what it had."""
    s = embedded(tmp_path / "s").open()
    try:
        s.add(Memory(text="kept memory", namespace="ns", id="kept", event_at=NOW))
        with pytest.raises(InvalidMemory, match="range a store can hold"):
            Memory(text="x", namespace="ns", event_at=when)
        with pytest.raises(InvalidMemory, match="range a store can hold"):
            Memory(text="x", namespace="ns", created_at=when)
        with pytest.raises(QueryError, match="range a store can hold"):
            s.end_session("ns", at=when)
        with pytest.raises(QueryError, match="range a store can hold"):
            s.relate("A", "r", "B", namespace="ns", valid_from=when)
    finally:
        s.close()
    reopened = embedded(tmp_path / "s").open()
    try:
        assert [m.id for m in reopened.get_many("ns", ["kept"])] == ["kept"]
        assert reopened.last_session_end("ns") is None
    finally:
        reopened.close()
    edge = Memory(text="edge", namespace="ns", event_at=datetime(9999, 12, 31, 23, tzinfo=timezone.utc))
    assert edge.event_at is not None  # the last storable hour is still accepted
